package oral

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/internal/run"
	"boxd/pipelines/cite"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/schema"
)

// Consent bases a minor's assessment may rest on.
var ConsentBases = []string{"school_official", "parental_consent"}

// ScoreRequest is POST /oral/score's body.
type ScoreRequest struct {
	RubricID     string   `json:"rubric_id"`
	Rubric       *Rubric  `json:"rubric"`
	Lines        []InLine `json:"lines"`
	Transcript   string   `json:"transcript"`
	SampleID     string   `json:"sample_id"`
	Names        []string `json:"names"`
	Minor        bool     `json:"minor"`
	ConsentBasis string   `json:"consent_basis"`
	Stream       bool     `json:"stream"`

	rubric *Rubric
	lines  []Line
	// order is the criteria's scoring order (tests of order invariance;
	// nil: the rubric's).
	order []string
}

// Streaming reports the body's stream flag.
func (r ScoreRequest) Streaming() bool { return r.Stream }

// Service scores transcripts, takes reviews and verifies bundles.
type Service struct {
	Key  *attest.Key
	Chat *llmcall.Model
	Now  func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// rubricOf resolves a body's rubric: a shipped id or its own object.
func rubricOf(id string, own *Rubric) (*Rubric, error) {
	switch {
	case id != "" && own != nil:
		return nil, problem.New(problem.Invalid, "give rubric_id or rubric, not both")
	case own != nil:
		r := *own
		r.Criteria = append([]Criterion{}, own.Criteria...)
		return &r, r.Validate()
	case id != "":
		return RubricByID(id)
	}
	return nil, problem.New(problem.Invalid, "rubric_id (intro-stats-viva or support-specialist-interview) or rubric is required")
}

// Validate checks the body: the rubric, the transcript and its limits,
// the names, and a minor's consent basis.
func (s *Service) Validate(r *ScoreRequest) error {
	if r.SampleID != "" {
		smp := SampleByID(r.SampleID)
		if smp == nil {
			return problem.New(problem.NotFound, "no sample %q (GET /oral/samples lists them)", r.SampleID)
		}
		if len(r.Lines) > 0 || r.Transcript != "" {
			return problem.New(problem.Invalid, "give sample_id, lines or transcript: one of them")
		}
		r.Lines = smp.Lines
		if r.RubricID == "" && r.Rubric == nil {
			r.RubricID = smp.Rubric
		}
	}
	rb, err := rubricOf(r.RubricID, r.Rubric)
	if err != nil {
		return err
	}
	r.rubric = rb
	if r.lines, err = ReadLines(r.Lines, r.Transcript); err != nil {
		return err
	}
	switch {
	case r.Minor && r.ConsentBasis == "":
		return problem.New(problem.Invalid, "minor: true needs consent_basis: school_official or parental_consent")
	case r.ConsentBasis != "" && r.ConsentBasis != ConsentBases[0] && r.ConsentBasis != ConsentBases[1]:
		return problem.New(problem.Invalid, "consent_basis: school_official or parental_consent")
	case r.ConsentBasis != "" && !r.Minor:
		return problem.New(problem.Invalid, "consent_basis goes with minor: true")
	}
	return nil
}

// Ready is the score stream's ready event (and the answer's ready): what
// will be scored, the blinding report and the examiner's flagged
// questions.
type Ready struct {
	DraftID        string   `json:"draft_id"`
	Rubric         string   `json:"rubric"`
	Criteria       []string `json:"criteria"`
	Lines          int      `json:"lines"`
	CandidateLines int      `json:"candidate_lines"`
	Blinding       Blinding `json:"blinding"`
	Leading        []Flag   `json:"leading"`
	Personal       []Flag   `json:"personal"`
	Minor          bool     `json:"minor"`
}

// Score is one criterion's drafted score (contract section 2).
type Score struct {
	Criterion string     `json:"criterion"`
	Level     int        `json:"level"`
	MaxLevel  int        `json:"max_level"`
	P         *float64   `json:"p"`
	Reason    string     `json:"reason"`
	Evidence  []Evidence `json:"evidence"`
	Grounding string     `json:"grounding"`
	Flags     []string   `json:"flags"`
	Receipt   string     `json:"receipt,omitempty"`
}

// Evidence is a cited candidate line and the words quoted from it.
type Evidence struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// Score flags.
const (
	FlagNoEvidence    = "no_evidence"
	FlagNotVerbatim   = "quote_not_verbatim"
	FlagExaminerLine  = "examiner_line"
	FlagLineMissing   = "line_missing"
	FlagLowConfidence = "low_confidence"
	FlagModelFailed   = "model_failed"
	// Grounded is the grounding of a score whose every cited line exists,
	// is the candidate's and holds its quote verbatim.
	Grounded = "verified"
)

// Draft is the scoring's result: the scores, a summary, the signed record
// and its check.
type Draft struct {
	ID          string         `json:"id"`
	Scores      []Score        `json:"scores"`
	Summary     DraftSummary   `json:"summary"`
	Record      *attest.Record `json:"record"`
	RecordCheck records.Check  `json:"record_check"`
}

// DraftSummary sums the draft; the final total is the examiner's.
type DraftSummary struct {
	Rubric     string `json:"rubric"`
	DraftTotal int    `json:"draft_total"`
	MaxTotal   int    `json:"max_total"`
	Flagged    int    `json:"flagged"`
	// Cited is how many lines the model cited, Verified how many of them
	// passed the grounding check (and are the evidence).
	Cited    int    `json:"cited"`
	Verified int    `json:"verified"`
	Note     string `json:"note"`
}

// ScoreAnswer is POST /oral/score's answer with stream: false.
type ScoreAnswer struct {
	Ready Ready `json:"ready"`
	Draft Draft `json:"draft"`
	run.Tally
}

// scoreSystem is the scorer's instruction.
const scoreSystem = "You score one criterion of an oral assessment from the candidate's answers only; names are hidden as [name]. " +
	"Choose the level whose descriptor best matches what the candidate said. Give a short reason, and cite up to three candidate lines " +
	"as evidence, each as [n] followed by words copied exactly from that line."

// Score drafts a score for every criterion (one grammar-bound call each
// over the blinded candidate lines), checks every citation, and signs the
// draft record. Events: ready, a receipt per call, a score per criterion,
// draft, budget, done.
func (s *Service) Score(ctx context.Context, r ScoreRequest, env run.Env) (*ScoreAnswer, error) {
	if !s.Chat.Ready() {
		return nil, problem.New(problem.Unavailable, "scoring needs the chat model, and this box has none loaded (models.llm.path)")
	}
	blinded, bl, err := Blind(r.lines, r.Names)
	if err != nil {
		return nil, err
	}
	leading, personal := FlagQuestions(blinded)
	ans := &ScoreAnswer{}
	rd := Ready{DraftID: ids.New("oral-", 12), Rubric: r.rubric.ID, Lines: len(blinded), Blinding: bl, Leading: leading, Personal: personal, Minor: r.Minor}
	for _, c := range r.rubric.Criteria {
		rd.Criteria = append(rd.Criteria, c.ID)
	}
	for _, l := range blinded {
		if l.Role == Candidate {
			rd.CandidateLines++
		}
	}
	ans.Ready = rd
	env.Events.Emit("ready", rd)
	order := r.order
	if order == nil {
		order = rd.Criteria
	}
	scores := map[string]*scored{}
	for _, id := range order {
		c := r.rubric.Criterion(id)
		sc := s.scoreOne(ctx, env, c, blinded)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		scores[id] = sc
		env.Events.Emit("score", sc.Score)
	}
	d := Draft{ID: rd.DraftID, Summary: DraftSummary{Rubric: r.rubric.ID, MaxTotal: r.rubric.MaxTotal(),
		Note: "a draft: the examiner confirms or overrides every score (POST /oral/review); the final total is the examiner's"}}
	var ordered []*scored
	for _, c := range r.rubric.Criteria {
		sc := scores[c.ID]
		ordered = append(ordered, sc)
		d.Scores = append(d.Scores, sc.Score)
		d.Summary.DraftTotal += sc.Level
		if len(sc.Flags) > 0 {
			d.Summary.Flagged++
		}
		d.Summary.Cited += sc.cited
		d.Summary.Verified += len(sc.Evidence)
	}
	rec, err := s.draftRecord(&r, rd, blinded, ordered, d.Summary)
	if err != nil {
		return nil, fmt.Errorf("oral: the draft record: %w", err)
	}
	d.Record = rec
	d.RecordCheck = checkOf(rec, s.Key)
	ans.Draft = d
	env.Events.Emit("draft", d)
	env.Events.Emit(run.TypeBudget, run.BudgetOf(ctx, env.Budget))
	env.Events.End(run.TypeDone, map[string]any{"draft_id": d.ID, "draft_total": d.Summary.DraftTotal, "max_total": d.Summary.MaxTotal})
	return ans, nil
}

// scored is a score with its call's raw answer (for the record).
type scored struct {
	Score
	raw    string
	result *llmcall.Result
	cited  int // citations the model wrote
}

// scoreOne scores one criterion.
func (s *Service) scoreOne(ctx context.Context, env run.Env, c *Criterion, lines []Line) *scored {
	sch, maxTokens := criterionSchema(c)
	var desc strings.Builder
	for _, l := range c.Levels {
		fmt.Fprintf(&desc, "%d: %s\n", l.Level, l.Descriptor)
	}
	var cand strings.Builder
	cl := cite.Lines{}
	for _, l := range lines {
		if l.Role == Candidate {
			fmt.Fprintf(&cand, "[%d] %s\n", l.N, l.Text)
		}
		cl = append(cl, cite.Line{N: l.N, Text: l.Text})
	}
	user := fmt.Sprintf("Criterion: %s. %s\nLevels:\n%s\nThe candidate's lines:\n%s", c.Title, c.Description, desc.String(), cand.String())
	raw, res, err := s.Chat.JSON(ctx, env.Budget, sch, llmcall.Request{
		Messages:  []llmcall.Message{{Role: "system", Content: scoreSystem}, {Role: "user", Content: user}},
		MaxTokens: maxTokens, TopLogprobs: 5, Events: env.Events,
		Params: map[string]string{"purpose": "oral_score", "criterion": c.ID},
	})
	out := &scored{Score: Score{Criterion: c.ID, MaxLevel: c.MaxLevel, Evidence: []Evidence{}, Flags: []string{}}, result: res}
	if res != nil {
		out.raw = res.Text
		if res.Receipt != nil {
			out.Receipt = res.Receipt.ID
		}
	}
	if err != nil {
		out.Flags = append(out.Flags, FlagModelFailed)
		out.Grounding = "no score: the model call failed (" + errText(err) + "); the examiner scores this criterion"
		return out
	}
	var a struct {
		Level    string
		Reason   string
		Evidence []string
	}
	_ = json.Unmarshal(raw, &a)
	out.Level, _ = strconv.Atoi(a.Level)
	out.Reason = a.Reason
	out.P = levelP(res.Logprobs, a.Level, c.MaxLevel)
	if out.P != nil && *out.P < 0.5 {
		out.Flags = append(out.Flags, FlagLowConfidence)
	}
	out.cited = len(a.Evidence)
	out.Grounding, out.Evidence, out.Flags = ground(a.Evidence, lines, cl, out.Flags)
	return out
}

// criterionSchema is a criterion's answer schema (its level first, so the
// level's token comes early; a reason; up to three citations) and the
// tokens that always fit it.
func criterionSchema(c *Criterion) (json.RawMessage, int) {
	lvls := make([]string, c.MaxLevel+1)
	for i := range lvls {
		lvls[i] = strconv.Itoa(i)
	}
	return schema.Lane(schema.Object(schema.Prop("level", schema.Enum(lvls...)), schema.Prop("reason", schema.Text(240)),
		schema.Prop("evidence", schema.Array(schema.Cite(100), 3))))
}

// Estimate is the generated tokens a scoring may spend: every criterion's
// call at its bound (the 402 test before any call).
func Estimate(r *Rubric) int64 {
	var n int64
	for i := range r.Criteria {
		_, mt := criterionSchema(&r.Criteria[i])
		n += int64(mt)
	}
	return n
}

// EstimateFor is Estimate of a validated request's rubric.
func (r *ScoreRequest) EstimateFor() int64 {
	if r.rubric == nil {
		return 0
	}
	return Estimate(r.rubric)
}

// ground checks each cited line: it exists, it is the candidate's, and
// its quote is verbatim there. Verified evidence is kept; the grounding
// says what failed.
func ground(cites []string, lines []Line, cl cite.Lines, flags []string) (string, []Evidence, []string) {
	role := map[int]string{}
	for _, l := range lines {
		role[l.N] = l.Role
	}
	ev := []Evidence{}
	var why []string
	add := func(f string) {
		for _, x := range flags {
			if x == f {
				return
			}
		}
		flags = append(flags, f)
	}
	for _, c := range cites {
		ns, quote, ok := cite.Parse(c)
		if !ok {
			add(FlagNotVerbatim)
			why = append(why, "an evidence item is not a citation of a line ([n] words)") // never the model's text: a minor's record keeps this
			continue
		}
		bad := false
		for _, n := range ns {
			switch role[n] {
			case "":
				add(FlagLineMissing)
				why = append(why, fmt.Sprintf("line %d does not exist", n))
				bad = true
			case Examiner:
				add(FlagExaminerLine)
				why = append(why, fmt.Sprintf("line %d is the examiner's, not the candidate's", n))
				bad = true
			}
		}
		if bad {
			continue
		}
		if p := cite.Problem(cl, quote, ns); p != "" {
			add(FlagNotVerbatim)
			why = append(why, fmt.Sprintf("line %d: %s", ns[0], p))
			continue
		}
		ev = append(ev, Evidence{N: ns[0], Text: quote})
	}
	if len(ev) == 0 {
		add(FlagNoEvidence)
		if len(why) == 0 {
			return "no evidence cited: the examiner should look for it", ev, flags
		}
	}
	if len(why) > 0 {
		return "not grounded: " + strings.Join(why, "; ") + " (left out of the evidence)", ev, flags
	}
	return Grounded, ev, flags
}

// levelP is the model's probability for the chosen level, from the
// engine's log probabilities at the token that wrote it: that token's
// probability divided by the sum over the level tokens among the
// likeliest five there (the grammar allows only levels). nil when the
// engine gave no probabilities or the token is not found.
func levelP(lps []llm.TokenLogprob, level string, maxLevel int) *float64 {
	text := ""
	for _, t := range lps {
		before := text
		text += t.Token
		if !strings.Contains(before, `"level"`) || strings.Trim(strings.TrimSpace(t.Token), `":`) != level {
			continue
		}
		sum, chosen := 0.0, math.Exp(t.Logprob)
		seen := false
		for _, top := range t.Top {
			v := strings.Trim(strings.TrimSpace(top.Token), `":`)
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > maxLevel {
				continue
			}
			sum += math.Exp(top.Logprob)
			if v == level {
				seen = true
			}
		}
		if !seen {
			sum += chosen
		}
		p := math.Round(chosen/sum*1000) / 1000
		return &p
	}
	return nil
}

func errText(err error) string {
	if e, ok := problem.As(err); ok {
		return e.Message
	}
	return "the model failed"
}
