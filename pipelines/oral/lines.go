package oral

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"boxd/internal/problem"
)

// Roles of a transcript line.
const (
	Examiner  = "examiner"
	Candidate = "candidate"
)

// Line is one turn of the transcript, numbered from 1.
type Line struct {
	N    int    `json:"n"`
	Role string `json:"role"`
	Text string `json:"text"`
}

// InLine is a line as a request gives it.
type InLine struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// roleNames are the speaker labels a transcript string may use.
var roleNames = map[string]string{
	"examiner": Examiner, "interviewer": Examiner, "teacher": Examiner, "assessor": Examiner, "e": Examiner, "q": Examiner,
	"candidate": Candidate, "student": Candidate, "applicant": Candidate, "interviewee": Candidate, "c": Candidate, "a": Candidate,
}

// ReadLines reads the transcript from lines or a transcript string (one
// turn per line, "Examiner: ..." or "Candidate: ..."), checking the limits:
// at most 400 lines and 60,000 characters (413), roles examiner or
// candidate, no empty turn (400).
func ReadLines(in []InLine, transcript string) ([]Line, error) {
	if len(in) > 0 && transcript != "" {
		return nil, problem.New(problem.Invalid, "give lines or transcript, not both")
	}
	if transcript != "" {
		if len(transcript) > MaxChars*4 {
			return nil, problem.New(problem.TooLarge, "transcript: over %d characters", MaxChars)
		}
		for i, raw := range strings.Split(strings.ReplaceAll(transcript, "\r\n", "\n"), "\n") {
			raw = strings.TrimSpace(raw)
			if raw == "" {
				continue
			}
			label, text, ok := strings.Cut(raw, ":")
			role := roleNames[strings.ToLower(strings.TrimSpace(label))]
			if !ok || role == "" {
				return nil, problem.New(problem.Invalid, "transcript line %d: label each turn with its speaker, like \"Examiner: ...\" or \"Candidate: ...\"", i+1)
			}
			in = append(in, InLine{Role: role, Text: strings.TrimSpace(text)})
		}
	}
	if len(in) == 0 {
		return nil, problem.New(problem.Invalid, "lines, transcript or sample_id is required")
	}
	if len(in) > MaxLines {
		return nil, problem.New(problem.TooLarge, "%d lines: a transcript has at most %d", len(in), MaxLines)
	}
	out := make([]Line, 0, len(in))
	chars, cand := 0, 0
	for i, l := range in {
		role := strings.ToLower(strings.TrimSpace(l.Role))
		if role != Examiner && role != Candidate {
			return nil, problem.New(problem.Invalid, "lines[%d].role: examiner or candidate, not %q", i, l.Role)
		}
		if strings.TrimSpace(l.Text) == "" {
			return nil, problem.New(problem.Invalid, "lines[%d].text is empty", i)
		}
		chars += utf8.RuneCountInString(l.Text)
		if role == Candidate {
			cand++
		}
		out = append(out, Line{N: i + 1, Role: role, Text: strings.TrimSpace(l.Text)})
	}
	if chars > MaxChars {
		return nil, problem.New(problem.TooLarge, "%d characters: a transcript has at most %d", chars, MaxChars)
	}
	if cand == 0 {
		return nil, problem.New(problem.Invalid, "the transcript has no candidate line: there is nothing to score")
	}
	return out, nil
}

// Blinding says what was removed before any model saw the transcript:
// counts and hashes, never the names.
type Blinding struct {
	Given        int      `json:"given"`
	Detected     int      `json:"detected"`
	Replaced     int      `json:"replaced"`
	LinesChanged int      `json:"lines_changed"`
	NameSHA256   []string `json:"name_sha256"` // of each name, lower-cased
	Placeholder  string   `json:"placeholder"`
	Rule         string   `json:"rule"`
}

// NamePlaceholder stands where a name was.
const NamePlaceholder = "[name]"

// notNames are capitalised words that follow "I'm", "Hi" and the like
// without being names.
var notNames = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`I Im The A An So Yes No Okay Ok Well Everyone Everybody All There Here Sir Madam Again Very For And But Not Sure Just Really
		Fine Good Great Sorry Afraid Happy Glad Ready Done Going Trying Thinking Looking Back New Now Today Also Actually Basically Honestly
		Thanks Thank You Hello Hi Welcome Morning Afternoon Evening Team Folks Guys Doctor Professor Student Candidate Examiner Interviewer
		Mr Mrs Ms Miss Mx Dr Prof Question Part Section Number One Two Three Four Five Six Seven Eight Nine Ten
		Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October November December
		English Statistics Python Excel Windows Mac Linux Chrome
		British English Scottish Welsh Irish American Canadian Mexican Brazilian Argentinian French German Spanish Italian Portuguese Dutch Belgian Swiss
		Austrian Swedish Norwegian Danish Finnish Polish Czech Hungarian Romanian Greek Turkish Russian Ukrainian Indian Pakistani Chinese Japanese Korean
		Vietnamese Thai Filipino Indonesian Australian Nigerian Kenyan Ghanaian Egyptian Moroccan African European Asian Catholic Christian Muslim Jewish Hindu`) {
		notNames[w] = true
	}
}

// fullName is one or two capitalised words (a first name and a surname,
// hyphenated parts kept together), after an optional title.
const fullName = `(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor)\.?\s+)?([A-Z][a-z]+(?:-[A-Z][a-z]+)?(?:\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?)?)`

var namePatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i:\bmy name is|\bmy name's|\bcall me)\s+` + fullName),
	regexp.MustCompile(`(?i:\bI'm|\bI am)\s+` + fullName),
	regexp.MustCompile(`\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor)\.?\s+([A-Z][a-z]+(?:-[A-Z][a-z]+)?(?:\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?)?)`),
	regexp.MustCompile(`\b(?:Hi|Hello|Hey|Thanks|Welcome|Morning|Afternoon|Evening|Thank you|Good morning|Good afternoon|Well done|Okay|OK|Right|Great),?\s+` + fullName),
}

// Blind replaces every given name and every name the transcript says
// (introductions, titles, greetings) by [name], in every line and in any
// case, before any model call.
func Blind(lines []Line, given []string) ([]Line, Blinding, error) {
	b := Blinding{Placeholder: NamePlaceholder, Rule: "names given in names, and names said in an introduction (my name is, I'm, call me), after a title (Mr, Ms, Dr, ...) or a greeting (Hi, Thanks, Welcome, ...), replaced by [name] as whole words in any case, in every line"}
	if len(given) > 50 {
		return nil, b, problem.New(problem.Invalid, "names: at most 50")
	}
	names := map[string]bool{}
	for i, n := range given {
		n = strings.TrimSpace(n)
		if n == "" || utf8.RuneCountInString(n) > 80 {
			return nil, b, problem.New(problem.Invalid, "names[%d]: 1 to 80 characters", i)
		}
		names[strings.ToLower(n)] = true
		// each part of a full name too ("Maria Lopez": Maria, Lopez)
		for _, p := range strings.Fields(n) {
			if utf8.RuneCountInString(p) >= 2 {
				names[strings.ToLower(p)] = true
			}
		}
	}
	b.Given = len(given)
	detected := map[string]bool{}
	for _, l := range lines {
		for _, re := range namePatterns {
			for _, m := range re.FindAllStringSubmatch(l.Text, -1) {
				for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ' ' || r == '-' }) {
					if !notNames[p] && !names[strings.ToLower(p)] {
						detected[strings.ToLower(p)] = true
					}
				}
			}
		}
	}
	b.Detected = len(detected)
	for n := range detected {
		names[n] = true
	}
	all := make([]string, 0, len(names))
	for n := range names {
		all = append(all, n)
	}
	// longest first, so a full name goes before its parts
	slices.SortFunc(all, func(a, c string) int { return len(c) - len(a) })
	out := make([]Line, len(lines))
	copy(out, lines)
	if len(all) > 0 {
		quoted := make([]string, len(all))
		for i, n := range all {
			quoted[i] = regexp.QuoteMeta(n)
		}
		re := regexp.MustCompile(`(?i)\b(?:` + strings.Join(quoted, "|") + `)\b`)
		for i := range out {
			n := 0
			out[i].Text = re.ReplaceAllStringFunc(out[i].Text, func(string) string { n++; return NamePlaceholder })
			if n > 0 {
				b.Replaced += n
				b.LinesChanged++
			}
		}
	}
	for _, n := range all {
		b.NameSHA256 = append(b.NameSHA256, hashHex(n))
	}
	slices.Sort(b.NameSHA256)
	if b.NameSHA256 == nil {
		b.NameSHA256 = []string{}
	}
	return out, b, nil
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Flag is an examiner line flagged: a leading question, or a personal one.
type Flag struct {
	N    int    `json:"n"`
	Kind string `json:"kind"` // leading or personal
	Why  string `json:"why"`
	Text string `json:"text,omitempty"`
}

var leadingPatterns = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)\b(don't|do not|wouldn't|would not|won't|can't|couldn't|shouldn't) you (think|agree|say|accept|feel)\b`), "asks the candidate to agree with the examiner's view"},
	{regexp.MustCompile(`(?i)\byou('d| would) agree\b|\bwe (both )?agree\b|\bagree that\b`), "asks the candidate to agree with a stated answer"},
	{regexp.MustCompile(`(?i)\b(isn't|is not|aren't|wasn't|doesn't|didn't|don't|won't|wouldn't|shouldn't|can't) (it|that|this|they|there|he|she|we|you)\b[^?]*\?\s*$`), "a tag or negative question that presumes its answer"},
	{regexp.MustCompile(`(?i),\s*(right|correct|yes|no|true|surely)\s*\?\s*$`), "ends by asking the candidate to confirm the examiner's statement"},
	{regexp.MustCompile(`(?i)\bsurely\b|\bobviously\b|\bclearly\b[^.]*\?`), "presents the answer as obvious"},
	{regexp.MustCompile(`(?i)\bso (you're|you are|you'd be|you would be) saying\b`), "puts words in the candidate's mouth"},
	{regexp.MustCompile(`(?i)\bthe (right|correct) answer is\b|\bthe answer is\b[^?]*\?`), "gives the answer in the question"},
	{regexp.MustCompile(`(?i)\bisn't it true\b|\bis it not (true|the case)\b`), "presumes its answer"},
}

var personalPatterns = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)\bhow old (are|were) you\b|\byour age\b|\bwhen were you born\b|\bwhat year were you born\b`), "age"},
	{regexp.MustCompile(`(?i)\b(are you|you) (married|single|divorced|engaged)\b|\bhusband\b|\bwife\b|\bboyfriend\b|\bgirlfriend\b|\bpartner\b.*\?`), "marital status or partner"},
	{regexp.MustCompile(`(?i)\b(do you have|have you got|planning (to have|on having)|any) (kids|children)\b|\bpregnan`), "children or pregnancy"},
	{regexp.MustCompile(`(?i)\breligio|\bchurch\b|\bmosque\b|\bsynagogue\b|\btemple\b|\bpray\b|\bfaith\b`), "religion"},
	{regexp.MustCompile(`(?i)\bwhere are you (really |originally )?from\b|\bnationality\b|\bcitizen(ship)?\b|\bimmigra|\bnative (language|tongue)\b|\byour accent\b`), "origin or nationality"},
	{regexp.MustCompile(`(?i)\b(race|ethnic|ethnicity)\b`), "race or ethnicity"},
	{regexp.MustCompile(`(?i)\bdisab|\billness\b|\bmedication\b|\byour health\b|\bhealth (problem|condition|issue)s?\b|\bsick days\b|\bmental health\b`), "health or disability"},
	{regexp.MustCompile(`(?i)\bsexual orientation\b|\bare you (gay|straight|lesbian|bisexual)\b`), "sexual orientation"},
	{regexp.MustCompile(`(?i)\bwho did you vote\b|\bpolitical (party|views)\b|\bunion member`), "politics or union membership"},
}

// FlagQuestions flags the examiner's leading questions and personal
// questions, by patterns in code (no model): each with the line and why.
func FlagQuestions(lines []Line) (leading, personal []Flag) {
	leading, personal = []Flag{}, []Flag{}
	for _, l := range lines {
		if l.Role != Examiner {
			continue
		}
		for _, p := range leadingPatterns {
			if p.re.MatchString(l.Text) {
				leading = append(leading, Flag{N: l.N, Kind: "leading", Why: p.why, Text: l.Text})
				break
			}
		}
		for _, p := range personalPatterns {
			if p.re.MatchString(l.Text) {
				personal = append(personal, Flag{N: l.N, Kind: "personal", Why: "a personal question (" + p.why + "): not part of the assessment", Text: l.Text})
				break
			}
		}
	}
	return leading, personal
}

// words lower-cases s and keeps letters, digits and single spaces.
func words(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r > 127 {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return " " + strings.TrimSpace(b.String()) + " "
}

// Evidenced reports, per criterion, the candidate lines that hold one of
// its keywords (whole words).
func Evidenced(r *Rubric, lines []Line) map[string][]int {
	out := map[string][]int{}
	for _, c := range r.Criteria {
		for _, l := range lines {
			if l.Role != Candidate {
				continue
			}
			w := words(l.Text)
			for _, k := range c.Keywords {
				if strings.Contains(w, words(k)) {
					out[c.ID] = append(out[c.ID], l.N)
					break
				}
			}
		}
	}
	return out
}

// Prompt is POST /oral/prompt's answer and the live prompt lane's state:
// the criteria without evidence yet, with a neutral follow-up for each,
// and the examiner's leading and personal questions so far.
type Prompt struct {
	Pending   []Pending `json:"pending"`
	Evidenced []string  `json:"evidenced"`
	Leading   []Flag    `json:"leading"`
	Personal  []Flag    `json:"personal"`
	Method    string    `json:"method"`
}

// Pending is a criterion with no candidate line evidencing it yet.
type Pending struct {
	Criterion string `json:"criterion"`
	Title     string `json:"title"`
	FollowUp  string `json:"follow_up"`
}

// ExaminerPrompt builds the examiner prompt for a transcript so far, in
// code: a criterion is evidenced once a candidate line holds one of its
// keywords; each pending one gets the first of its neutral follow-ups
// the examiner has not asked yet; the criteria are never shown with
// evidence or scores (the prompt must not steer the examiner).
func ExaminerPrompt(r *Rubric, lines []Line) Prompt {
	ev := Evidenced(r, lines)
	p := Prompt{Pending: []Pending{}, Evidenced: []string{},
		Method: "keywords of each criterion in the candidate's lines (whole words); follow-ups are the rubric's own neutral questions, the first not yet asked"}
	asked := map[string]bool{}
	for _, l := range lines {
		if l.Role == Examiner {
			asked[words(l.Text)] = true
		}
	}
	for _, c := range r.Criteria {
		if len(ev[c.ID]) > 0 {
			p.Evidenced = append(p.Evidenced, c.ID)
			continue
		}
		q := ""
		for _, f := range c.FollowUps {
			if !asked[words(f)] {
				q = f
				break
			}
		}
		if q == "" {
			q = fmt.Sprintf("Could you tell me more about %s?", strings.ToLower(c.Title))
		}
		p.Pending = append(p.Pending, Pending{Criterion: c.ID, Title: c.Title, FollowUp: q})
	}
	p.Leading, p.Personal = FlagQuestions(lines)
	return p
}

// PromptRequest is POST /oral/prompt's body: the rubric and the
// transcript so far (names to blind, as for scoring).
type PromptRequest struct {
	RubricID   string   `json:"rubric_id"`
	Rubric     *Rubric  `json:"rubric"`
	Lines      []InLine `json:"lines"`
	Transcript string   `json:"transcript"`
	Names      []string `json:"names"`
}

// PromptFor answers POST /oral/prompt: the transcript is read and blinded
// (so a flagged question never repeats a name), then ExaminerPrompt.
func PromptFor(r PromptRequest) (*Prompt, error) {
	rb, err := rubricOf(r.RubricID, r.Rubric)
	if err != nil {
		return nil, err
	}
	if len(r.Lines) == 0 && r.Transcript == "" {
		p := ExaminerPrompt(rb, nil)
		return &p, nil
	}
	lines, err := ReadLinesSoFar(r.Lines, r.Transcript)
	if err != nil {
		return nil, err
	}
	blinded, _, err := Blind(lines, r.Names)
	if err != nil {
		return nil, err
	}
	p := ExaminerPrompt(rb, blinded)
	return &p, nil
}

// ReadLinesSoFar is ReadLines for a transcript in progress: it may have no
// candidate line yet.
func ReadLinesSoFar(in []InLine, transcript string) ([]Line, error) {
	var lines []Line
	var err error
	switch {
	case len(in) > 0 && transcript != "":
		return nil, problem.New(problem.Invalid, "give lines or transcript, not both")
	case transcript != "":
		lines, err = ReadLines(nil, transcript+"\nCandidate: -")
	default:
		lines, err = ReadLines(append(append([]InLine{}, in...), InLine{Role: Candidate, Text: "-"}), "")
	}
	if err != nil {
		return nil, err
	}
	return lines[:len(lines)-1], nil
}
