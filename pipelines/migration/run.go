package migration

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/migration/figures"
	"boxd/pipelines/migration/scoring"
)

// Report is POST /migration/runs' answer (contract: response fields); its
// report field is the signed record.
type Report struct {
	ReportID    string                     `json:"report_id"`
	Title       string                     `json:"title,omitempty"`
	Headline    string                     `json:"headline"`
	Recommended *string                    `json:"recommended"`
	Verdicts    map[string]string          `json:"verdicts"`
	Candidates  map[string]figures.Summary `json:"candidates"`
	Identity    Identity                   `json:"identity"`
	Examples    []ExampleResult            `json:"examples"`
	Report      *attest.Record             `json:"report"`
	run.Tally
}

// Identity says what ran: the candidates' weights, the judge, the
// incumbent's price and the scoring rules.
type Identity struct {
	Candidates []CandidateIdentity `json:"candidates"`
	Judge      *JudgeIdentity      `json:"judge"`
	Incumbent  IncumbentIdentity   `json:"incumbent"`
	Task       string              `json:"task"`
	TaskSHA256 string              `json:"task_sha256"`
	// PromptSHA256 is the SHA-256 of the prompt's system text, a blank
	// line and its template.
	PromptSHA256    string `json:"prompt_sha256"`
	MaxOutputTokens int    `json:"max_output_tokens"`
	Interval        string `json:"interval"`
	Seed            string `json:"seed"`
}

// CandidateIdentity names a candidate's weights.
type CandidateIdentity struct {
	ID          string `json:"id"`
	Model       string `json:"model"`
	WeightsRoot string `json:"weights_root"`
	File        string `json:"file"`
}

// JudgeIdentity names the freetext judge.
type JudgeIdentity struct {
	Model        string `json:"model"`
	WeightsRoot  string `json:"weights_root"`
	Version      string `json:"version"`
	PromptSHA256 string `json:"prompt_sha256"`
}

// IncumbentIdentity is the incumbent's price and where it came from.
type IncumbentIdentity struct {
	Model          string `json:"model,omitempty"`
	InputPerM      string `json:"input_per_m"`
	OutputPerM     string `json:"output_per_m"`
	Source         string `json:"source"`
	PriceTableDate string `json:"price_table_date,omitempty"`
}

// ExampleResult is one example scored for one candidate (the example
// event, and the answer's examples).
type ExampleResult struct {
	Example   string `json:"example"`
	Candidate string `json:"candidate"`
	Outcome   string `json:"outcome"`
	Kind      string `json:"kind"`
	Detail    string `json:"detail,omitempty"`
	Judge     string `json:"judge,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
	Receipt   string `json:"receipt,omitempty"`
	Output    string `json:"output"`
	Error     string `json:"error,omitempty"`
}

// ReadyBody is the ready event.
type ReadyBody struct {
	ReportID        string   `json:"report_id"`
	Task            string   `json:"task"`
	Examples        int      `json:"examples"`
	Candidates      []string `json:"candidates"`
	MaxOutputTokens int      `json:"max_output_tokens"`
	EstimatedTokens int64    `json:"estimated_tokens"`
	Estimate        string   `json:"estimate"`
}

// SummaryBody is a summary event: one per candidate.
type SummaryBody struct {
	Candidate string          `json:"candidate"`
	Summary   figures.Summary `json:"summary"`
}

// RecordBody is the record event: the signed record's id, head and size
// (the record itself is the report's report field).
type RecordBody struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Head    string `json:"head"`
	Entries int    `json:"entries"`
}

// DoneBody is the done event.
type DoneBody struct {
	ReportID    string            `json:"report_id"`
	Verdicts    map[string]string `json:"verdicts"`
	Recommended *string           `json:"recommended"`
}

// call is one candidate call on one example, and its scoring.
type call struct {
	cand    *Candidate
	ex      *Example
	input   string // the rendered user message
	answer  string
	result  *llmcall.Result
	err     error
	latency time.Duration
	judged  [2]judgment
	score   scoring.Score
}

// Run runs a validated check: every candidate on every example, scored
// as they finish (example events), then the summaries, the signed
// record, the report, budget and done.
func (s *Service) Run(ctx context.Context, req Request, env run.Env) (*Report, error) {
	if err := s.ready(&req); err != nil {
		return nil, err
	}
	unlock, err := s.lockKey(req.key)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p := s.params(&req)
	maxTokens := s.maxTokens(&req)
	rep := &Report{ReportID: ids.New("mig-", 12), Title: req.Title, Verdicts: map[string]string{}, Candidates: map[string]figures.Summary{}}
	est, how := s.Estimate(&req)
	env.Events.Emit("ready", ReadyBody{ReportID: rep.ReportID, Task: req.Task.Type, Examples: len(req.Examples), Candidates: req.Candidates,
		MaxOutputTokens: maxTokens, EstimatedTokens: est, Estimate: how})

	var calls []*call
	for _, id := range req.Candidates {
		c := s.candidate(id)
		for i := range req.Examples {
			ex := &req.Examples[i]
			calls = append(calls, &call{cand: c, ex: ex, input: Render(req.Prompt.Template, ex.fields)})
		}
	}
	var controls []*control
	if req.Task.Type == scoring.TaskFreetext {
		controls = s.runControls(ctx, &req, env)
		for _, c := range controls {
			p.JudgeControls++
			if c.Passed() {
				p.JudgeControlsPassed++
			}
		}
	}
	if err := s.runCalls(ctx, &req, calls, maxTokens, env); err != nil {
		return nil, err
	}

	rep.Identity = s.identity(&req, p, maxTokens)
	env.Events.Emit("identity", rep.Identity)
	byCand := map[string][]scoring.Score{}
	for _, c := range calls {
		byCand[c.cand.ID] = append(byCand[c.cand.ID], c.score)
		rep.Examples = append(rep.Examples, exampleResult(c))
	}
	for _, id := range req.Candidates {
		sum := figures.Summarize(byCand[id], p)
		rep.Candidates[id], rep.Verdicts[id] = sum, sum.Verdict
		env.Events.Emit("summary", SummaryBody{Candidate: id, Summary: sum})
	}
	rep.Recommended, rep.Headline = recommend(req.Candidates, rep.Candidates)

	rec, err := s.record(rep, &req, p, maxTokens, controls, calls)
	if err != nil {
		return nil, fmt.Errorf("migration: the record: %w", err)
	}
	rep.Report = rec
	env.Events.Emit("record", RecordBody{ID: rec.ID, Kind: rec.Kind, Head: rec.Head, Entries: len(rec.Entries)})
	env.Events.Emit("report", rep)
	env.Events.Emit(run.TypeBudget, run.BudgetOf(ctx, env.Budget))
	env.Events.End(run.TypeDone, DoneBody{ReportID: rep.ReportID, Verdicts: rep.Verdicts, Recommended: rep.Recommended})
	return rep, nil
}

// runCalls runs the calls Workers at a time, each scored when it ends
// (its example event then). A call that fails counts as a fail; the run
// stops only when the caller goes.
func (s *Service) runCalls(ctx context.Context, req *Request, calls []*call, maxTokens int, env run.Env) error {
	workers := s.Workers
	if workers <= 0 {
		workers = 4
	}
	if req.demo {
		workers = min(workers, DemoWorkers)
	}
	next := make(chan *call)
	var wg sync.WaitGroup
	var mu sync.Mutex // one example event at a time
	for range min(workers, len(calls)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				s.runOne(ctx, req, c, maxTokens, env)
				mu.Lock()
				env.Events.Emit("example", exampleResult(c))
				mu.Unlock()
			}
		}()
	}
	for _, c := range calls {
		if ctx.Err() != nil {
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}

func (s *Service) runOne(ctx context.Context, req *Request, c *call, maxTokens int, env run.Env) {
	msgs := []llmcall.Message{}
	if req.Prompt.System != "" {
		msgs = append(msgs, llmcall.Message{Role: "system", Content: req.Prompt.System})
	}
	msgs = append(msgs, llmcall.Message{Role: "user", Content: c.input})
	start := time.Now()
	c.result, c.err = c.cand.Model.Text(ctx, env.Budget, llmcall.Request{Messages: msgs, MaxTokens: maxTokens, Events: env.Events,
		Params: map[string]string{"purpose": "migration_candidate", "example_sha256": attest.HashText(c.ex.ID)}})
	c.latency = time.Since(start)
	if c.err == nil && c.result != nil {
		c.answer = c.result.Text
	}
	failed := c.err != nil || c.result == nil
	sc := &c.score
	sc.Example, sc.Candidate = c.ex.ID, c.cand.ID
	sc.LatencyMS = c.latency.Milliseconds()
	if c.result != nil {
		sc.PromptTokens, sc.CompletionTokens = int64(c.result.Usage.PromptTokens), int64(c.result.Usage.CompletionTokens)
	}
	s.current(req, c)
	if req.Task.Type == scoring.TaskFreetext {
		scoreFreetext(c, failed)
		if sc.Outcome == "" {
			c.judged = s.judge(ctx, env.Budget, env.Events, req.Task.Rubric, c.input, c.ex.Output, c.answer)
			sc.Judge = scoring.JudgeOutcome(c.judged[0].Verdict, c.judged[1].Verdict)
			sc.Outcome, sc.Kind = scoring.JudgeScore(sc.Judge)
		}
		return
	}
	scoring.Code(&req.Task, c.ex.Output, c.ex.Label, c.answer, failed, sc)
}

// scoreFreetext settles a freetext example before the judge: an empty
// logged answer is unscorable, a failed call a fail.
func scoreFreetext(c *call, failed bool) {
	switch {
	case strings.TrimSpace(c.ex.Output) == "":
		c.score.Outcome, c.score.Kind = scoring.Unscorable, scoring.KindNoReference
	case failed:
		c.score.Outcome, c.score.Kind = scoring.Fail, scoring.KindModelError
	}
}

// current fills the logged side of a score: latency and token counts as
// given, else estimated at 4 bytes a token (of the system prompt and the
// rendered input; of the logged answer).
func (s *Service) current(req *Request, c *call) {
	sc, ex := &c.score, c.ex
	sc.CurrentLatencyMS = -1
	if ex.LatencyMS != nil {
		sc.CurrentLatencyMS = int64(*ex.LatencyMS + 0.5)
	}
	sc.TokensSource = "given"
	if ex.PromptTokens != nil {
		sc.CurrentPromptTokens = int64(*ex.PromptTokens)
	} else {
		sc.CurrentPromptTokens, sc.TokensSource = estimateTokens(req.Prompt.System)+estimateTokens(c.input), "estimated"
	}
	if ex.CompletionTokens != nil {
		sc.CurrentCompletionTok = int64(*ex.CompletionTokens)
	} else {
		sc.CurrentCompletionTok, sc.TokensSource = estimateTokens(ex.Output), "estimated"
	}
}

// estimateTokens is OpenAI's rule of thumb: about 4 bytes a token.
func estimateTokens(s string) int64 { return int64((len(s) + 3) / 4) }

func exampleResult(c *call) ExampleResult {
	r := ExampleResult{Example: c.ex.ID, Candidate: c.cand.ID, Outcome: c.score.Outcome, Kind: c.score.Kind, Detail: c.score.Detail,
		Judge: c.score.Judge, LatencyMS: c.score.LatencyMS, Output: c.answer}
	if c.result != nil && c.result.Receipt != nil {
		r.Receipt = c.result.Receipt.ID
	}
	if c.err != nil {
		r.Error = callError(c.err)
	}
	return r
}

// callError is what a failed call's entry and example event say.
func callError(err error) string {
	if e, ok := problem.As(err); ok {
		return e.Message
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	return "the model call failed"
}

// maxTokens is max_output_tokens, or twice the longest logged answer's
// estimated tokens and 16 more, within 16 to 1,024.
func (s *Service) maxTokens(r *Request) int {
	if r.MaxOutputTokens > 0 {
		return r.MaxOutputTokens
	}
	longest := int64(0)
	for _, e := range r.Examples {
		longest = max(longest, estimateTokens(e.Output))
	}
	return int(min(max(2*longest+16, 16), 1024))
}

// Estimate is the generated tokens a check may spend, decided before any
// call (the 402 test): every candidate's answer to every example at the
// answer's bound, and for freetext two judgments of each at theirs.
func (s *Service) Estimate(r *Request) (int64, string) {
	n := int64(len(r.Examples)) * int64(max(len(r.Candidates), 1))
	mt := int64(s.maxTokens(r))
	est := n * mt
	how := fmt.Sprintf("%d examples × %d candidates × %d max output tokens", len(r.Examples), max(len(r.Candidates), 1), mt)
	if r.Task.Type == scoring.TaskFreetext {
		controls := int64(len(controlPairs(r)))
		est += (n + controls) * 2 * judgeMaxTokens
		how += fmt.Sprintf(" + 2 judgments of each answer and of %d judge controls, %d tokens each", controls, judgeMaxTokens)
	}
	return est, how
}

func (s *Service) params(r *Request) figures.Params {
	p := figures.Params{Task: r.Task.Type, PassRate: DefaultPassRate, Seed: r.Seed, Resamples: figures.BootstrapResamples, HourDollars: s.HourDollars}
	if p.Seed == 0 {
		p.Seed = figures.DefaultSeed
	}
	if t := r.Thresholds; t != nil {
		if t.PassRate != nil {
			p.PassRate = *t.PassRate
		}
		if t.SchemaValid != nil {
			p.SchemaValid = *t.SchemaValid
		}
	}
	if pr := r.Incumbent.Price; pr != nil {
		p.InputPerM, p.OutputPerM, p.PriceSource = pr.InputPerM, pr.OutputPerM, "the request's price"
	} else if e := s.Prices.Find(r.Incumbent.Model); e != nil {
		p.InputPerM, p.OutputPerM = e.InputPerM, e.OutputPerM
		p.PriceSource = fmt.Sprintf("%s's list price in the price table of %s", e.Model, s.Prices.Date)
	}
	return p
}

func (s *Service) identity(r *Request, p figures.Params, maxTokens int) Identity {
	id := Identity{Task: r.Task.Type, TaskSHA256: attest.HashText(taskText(&r.Task)), PromptSHA256: attest.HashText(r.Prompt.System + "\n\n" + r.Prompt.Template),
		MaxOutputTokens: maxTokens, Interval: figures.DecidingInterval, Seed: fmt.Sprint(p.Seed)}
	for _, cid := range r.Candidates {
		c := s.candidate(cid)
		id.Candidates = append(id.Candidates, CandidateIdentity{ID: c.ID, Model: c.Model.ModelID, WeightsRoot: c.Model.WeightsRoot, File: c.File})
	}
	if r.Task.Type == scoring.TaskFreetext {
		id.Judge = &JudgeIdentity{Model: s.Judge.ModelID, WeightsRoot: s.Judge.WeightsRoot, Version: JudgeVersion, PromptSHA256: JudgePromptSHA256()}
	}
	id.Incumbent = IncumbentIdentity{Model: r.Incumbent.Model, InputPerM: num(p.InputPerM), OutputPerM: num(p.OutputPerM), Source: p.PriceSource}
	if r.Incumbent.Price == nil {
		id.Incumbent.PriceTableDate = s.Prices.Date
	}
	return id
}

// recommend names the candidate to move to: of those with a go verdict,
// the one with the highest lower bound of its pass rate (then the id).
func recommend(order []string, sums map[string]figures.Summary) (*string, string) {
	var goes []string
	for _, id := range order {
		if sums[id].Verdict == figures.VerdictGo {
			goes = append(goes, id)
		}
	}
	if len(goes) == 0 {
		parts := make([]string, 0, len(order))
		for _, id := range order {
			parts = append(parts, id+": "+sums[id].Verdict)
		}
		return nil, "No candidate is ready to replace the current model (" + strings.Join(parts, "; ") + ")."
	}
	sort.SliceStable(goes, func(i, j int) bool {
		a, b := sums[goes[i]].Pass.CI95[0], sums[goes[j]].Pass.CI95[0]
		if a != b {
			return parseDec(a) > parseDec(b)
		}
		return goes[i] < goes[j]
	})
	best := goes[0]
	sum := sums[best]
	return &best, fmt.Sprintf("%s can replace the current model: it passed %s of %s examples (95%% interval %s to %s, threshold %s).",
		best, sum.Pass.K, sum.Pass.N, sum.Pass.CI95[0], sum.Pass.CI95[1], sum.Pass.Threshold)
}
