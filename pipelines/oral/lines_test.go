package oral

import (
	"strings"
	"testing"

	"boxd/internal/problem"
)

func TestReadLinesLimits(t *testing.T) {
	if _, err := ReadLines(nil, "Examiner: Hello\nCandidate: Hi there\n\nInterviewer: Next\nStudent: Yes"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		in         []InLine
		transcript string
		kind       problem.Kind
		says       string
	}{
		{"401 lines", many(401, 5), "", problem.TooLarge, "at most 400"},
		{"60,001 characters", many(200, 301), "", problem.TooLarge, "at most 60000"},
		{"bad role", []InLine{{Role: "judge", Text: "x"}}, "", problem.Invalid, "examiner or candidate"},
		{"empty text", []InLine{{Role: "candidate", Text: " "}}, "", problem.Invalid, "empty"},
		{"unlabelled turn", nil, "Examiner: hi\nwell I think so", problem.Invalid, "line 2"},
		{"no candidate", []InLine{{Role: "examiner", Text: "hello"}}, "", problem.Invalid, "no candidate line"},
		{"nothing", nil, "", problem.Invalid, "required"},
		{"both", []InLine{{Role: "candidate", Text: "x"}}, "Candidate: y", problem.Invalid, "not both"},
	} {
		_, err := ReadLines(c.in, c.transcript)
		if !problem.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := ReadLines(many(400, 150), ""); err != nil {
		t.Errorf("400 lines of 150 characters: %v", err)
	}
}

func many(n, chars int) []InLine {
	out := make([]InLine, n)
	for i := range out {
		out[i] = InLine{Role: Candidate, Text: strings.Repeat("a", chars)}
	}
	return out
}

// TestBlindNamesInEveryPosition: given names and names the transcript
// says are replaced wherever they stand (start, middle, end, possessive,
// any case, full name and parts), and the report holds counts and hashes
// only.
func TestBlindNamesInEveryPosition(t *testing.T) {
	lines, err := ReadLines([]InLine{
		{Role: Examiner, Text: "Good morning, please introduce yourself."},
		{Role: Candidate, Text: "My name is Maria Lopez, I study nursing."},
		{Role: Examiner, Text: "Thanks, Maria. MARIA, how would Lopez's data look?"},
		{Role: Candidate, Text: "Maria thinks the median is right"},
		{Role: Examiner, Text: "Dr. Okafor will ask the next question."},
		{Role: Candidate, Text: "Ask Jin, my classmate, he knows it, said Jin"},
		{Role: Candidate, Text: "I'm Sure I'm right, Mariana is someone else"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	out, b, err := Blind(lines, []string{"Jin"})
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, l := range out {
		all += l.Text + "\n"
	}
	for _, name := range []string{"Maria ", "Maria,", "Maria.", "MARIA", "Lopez", "Okafor", "Jin"} {
		if strings.Contains(all, name) {
			t.Errorf("%q left:\n%s", name, all)
		}
	}
	if !strings.Contains(all, "Mariana") || !strings.Contains(all, "I'm Sure") || !strings.Contains(all, "[name]'s data") {
		t.Errorf("blinded too much or too little:\n%s", all)
	}
	if b.Given != 1 || b.Detected < 3 || b.Replaced < 8 || len(b.NameSHA256) != b.Detected+1 {
		t.Errorf("report %+v", b)
	}
	for _, h := range b.NameSHA256 {
		if len(h) != 64 || strings.Contains(strings.ToLower(h), "maria") {
			t.Errorf("hash %q", h)
		}
	}
	if h := hashHex("maria"); !contains(b.NameSHA256, h) {
		t.Error("maria's hash is not in the report")
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// TestFlagQuestions: planted leading and personal questions are flagged
// with their lines; neutral ones and the candidate's lines are not.
func TestFlagQuestions(t *testing.T) {
	ex := []string{
		"How would you describe the spread?",                              // 1 neutral
		"The p-value is the chance the null is true, isn't it?",           // 2 leading
		"Don't you think the median is better here?",                      // 3 leading
		"So you're saying the test is invalid?",                           // 4 leading
		"Surely the data must be normal?",                                 // 5 leading
		"You'd agree that escalation matters?",                            // 6 leading
		"Where are you originally from?",                                  // 7 personal
		"Do you have children?",                                           // 8 personal
		"How old are you?",                                                // 9 personal
		"What would you check first, and why?",                            // 10 neutral
		"The mean is 4, correct?",                                         // 11 leading
		"Could you walk me through the steps, isn't that what you'd do?",  // 12 leading
		"Tell me about a time you handled an upset customer.",             // 13 neutral
		"Is there anything about your health we should know for the job?", // 14 personal
	}
	var lines []Line
	for i, t := range ex {
		lines = append(lines, Line{N: i + 1, Role: Examiner, Text: t})
	}
	lines = append(lines, Line{N: 15, Role: Candidate, Text: "Isn't it obvious, surely it is right?"})
	leading, personal := FlagQuestions(lines)
	got := func(fs []Flag) []int {
		var out []int
		for _, f := range fs {
			out = append(out, f.N)
		}
		return out
	}
	if l := got(leading); !equal(l, []int{2, 3, 4, 5, 6, 11, 12}) {
		t.Errorf("leading %v", l)
	}
	if p := got(personal); !equal(p, []int{7, 8, 9, 14}) {
		t.Errorf("personal %v", p)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestExaminerPrompt(t *testing.T) {
	r, _ := RubricByID("intro-stats-viva")
	lines := []Line{
		{N: 1, Role: Examiner, Text: "How would you describe the centre and the spread of this data?"},
		{N: 2, Role: Candidate, Text: "I would use the median because the data is skewed."},
		{N: 3, Role: Examiner, Text: "The answer is the mean, right?"},
	}
	p := ExaminerPrompt(r, lines)
	if !contains(p.Evidenced, "concepts") || !contains(p.Evidenced, "communication") || len(p.Pending) != 3 || len(p.Leading) != 1 || p.Leading[0].N != 3 {
		t.Fatalf("%+v", p)
	}
	for _, q := range p.Pending {
		if q.FollowUp == "" || q.Criterion == "concepts" {
			t.Errorf("pending %+v", q)
		}
	}
}

func TestRubrics(t *testing.T) {
	for id, r := range Rubrics() {
		if err := r.Validate(); err != nil || r.ID != id {
			t.Errorf("%s: %v", id, err)
		}
	}
	r, _ := RubricByID("support-specialist-interview")
	if r.MaxTotal() != 12 {
		t.Errorf("max total %d", r.MaxTotal())
	}
	base := func() *Rubric { r, _ := RubricByID("intro-stats-viva"); return r }
	for _, c := range []struct {
		name string
		mod  func(r *Rubric)
		says string
	}{
		{"13 criteria", func(r *Rubric) {
			for len(r.Criteria) < 13 {
				x := r.Criteria[0]
				x.ID = "c" + itoa(len(r.Criteria))
				r.Criteria = append(r.Criteria, x)
			}
		}, "at most 12"},
		{"no criteria", func(r *Rubric) { r.Criteria = nil }, "at least one"},
		{"duplicate id", func(r *Rubric) { r.Criteria[1].ID = r.Criteria[0].ID }, "used twice"},
		{"missing level", func(r *Rubric) { r.Criteria[0].Levels = r.Criteria[0].Levels[:3] }, "one for each level"},
		{"level twice", func(r *Rubric) { r.Criteria[0].Levels[1].Level = 0 }, "each of 0 to 4 once"},
		{"long title", func(r *Rubric) { r.Criteria[0].Title = strings.Repeat("x", 121) }, "title"},
		{"max level 11", func(r *Rubric) { r.Criteria[0].MaxLevel = 11 }, "max_level"},
		{"empty descriptor", func(r *Rubric) { r.Criteria[0].Levels[2].Descriptor = "" }, "descriptor"},
	} {
		r := base()
		c.mod(r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestBlindHeldOut: the held-out evaluation's cases: full names after
// "I'm" and a title are blinded whole; titles, demonyms and ordinary
// capitalised words are not names.
func TestBlindHeldOut(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"I'm Priya Raman and I work on a service desk.", "I'm [name] [name] and I work on a service desk."},
		{"Please welcome Dr Helen Okafor.", "Please welcome Dr [name] [name]."},
		{"I am Dr Chen and this is Mr. Novak", "I am Dr [name] and this is Mr. [name]"},
		{"Thank you, Ms Lopez.", "Thank you, Ms [name]."},
		{"This is Question Three.", "This is Question Three."},
		{"I'm British, by the way.", "I'm British, by the way."},
	} {
		lines := []Line{{N: 1, Role: Candidate, Text: c.in}}
		out, b, err := Blind(lines, nil)
		if err != nil || out[0].Text != c.want {
			t.Errorf("%q → %q, want %q (%+v)", c.in, out[0].Text, c.want, b)
		}
	}
	_, personal := FlagQuestions([]Line{{N: 1, Role: Examiner, Text: "How old is the dataset you used?"}, {N: 2, Role: Examiner, Text: "How old are you?"}})
	if len(personal) != 1 || personal[0].N != 2 {
		t.Errorf("personal %+v", personal)
	}
}
