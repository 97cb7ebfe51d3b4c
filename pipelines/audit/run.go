package audit

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/internal/store"
)

// Lanes of the stream.
const (
	LaneIdentity    = "identity"
	LaneQuality     = "quality"
	LanePerformance = "performance"
	LaneVerdict     = "verdict"
)

// ReadyBody is the ready event.
type ReadyBody struct {
	Target       string     `json:"target"`
	ClaimedModel string     `json:"claimed_model"`
	Reference    *string    `json:"reference"`
	Suite        ReadySuite `json:"suite"`
}

// ReadySuite names the suite.
type ReadySuite struct {
	ID       string `json:"id"`
	SHA256   string `json:"sha256"`
	Goldens  int    `json:"goldens"`
	Canaries int    `json:"canaries"`
	Probes   int    `json:"probes"`
}

// LaneBody is a lane event: the lane's whole state (replace).
type LaneBody struct {
	Lane string   `json:"lane"`
	Data LaneData `json:"data"`
}

// LaneData is a lane's checks and progress.
type LaneData struct {
	Checks   []Check  `json:"checks"`
	Progress Progress `json:"progress"`
}

// Progress is probes done of total in a lane.
type Progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// VerdictBody is the verdict lane event.
type VerdictBody struct {
	Lane string      `json:"lane"`
	Data VerdictData `json:"data"`
}

// VerdictData is the verdict: status, reasons, the report's id and URL.
type VerdictData struct {
	Status    string   `json:"status"`
	Reasons   []string `json:"reasons"`
	Report    string   `json:"report"`
	ReportURL string   `json:"report_url"`
}

// DoneBody is the done event.
type DoneBody struct {
	Summary DoneSummary `json:"summary"`
}

// DoneSummary is the run's outcome.
type DoneSummary struct {
	Verdict   string `json:"verdict"`
	Report    string `json:"report"`
	ReportURL string `json:"report_url"`
}

// audit is one run's state.
type audit struct {
	s        *Service
	req      Request
	env      run.Env
	ep       Endpoint
	fx       *Fixture
	target   ReportTarget
	sent     int
	errs     int
	mu       sync.Mutex
	receipt  []string
	notes    []string
	deadline time.Time // probes are not sent after it (RunTimeout)
	seed     int64     // the identity lane's first pass
	code     string    // the context probe's code word ("" without one)
}

// Run audits the request's endpoint, emitting ready, lane events, the
// verdict, done and budget on env.Events; it returns the signed report.
func (s *Service) Run(ctx context.Context, req Request, env run.Env) (*Report, error) {
	a := &audit{s: s, req: req, env: env, deadline: time.Now().Add(s.runTimeout())}
	if err := a.resolve(); err != nil {
		return nil, err
	}
	return s.runWith(ctx, a)
}

// runWith runs the audit a (its endpoint and fixture resolved).
func (s *Service) runWith(ctx context.Context, a *audit) (*Report, error) {
	req, env := a.req, a.env
	suite := s.suite()
	var refID *string
	if a.fx != nil {
		refID = &a.fx.ID
	}
	env.Events.Emit("ready", ReadyBody{Target: a.targetName(), ClaimedModel: a.target.ClaimedModel, Reference: refID,
		Suite: ReadySuite{ID: suite.ID, SHA256: suite.SHA256(), Goldens: suite.Count(KindGolden), Canaries: suite.Count(KindCanary), Probes: len(suite.Probes)}})

	ident := suite.Of(KindGolden, KindCanary, KindIdentity)
	if a.fx == nil {
		// Nothing to compare with: the provider is not billed for it.
		ident = nil
	}
	a.seed = seed()
	identAns := a.lane(ctx, LaneIdentity, ident, a.seed, a.identityChecks)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	qual := suite.Of(KindArithmetic, KindJSON, KindTool)
	qualAns := a.lane(ctx, LaneQuality, qual, seed(), a.qualityChecks)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	perf := suite.Of(KindThroughput)
	if n := req.ContextTokens; n != nil && *n > 0 {
		a.code = codeWord()
		perf = append(perf, ContextProbe(*n, a.code))
	}
	perfAns := a.lane(ctx, LanePerformance, perf, seed(), func(p []Probe, as []answer) []Check {
		return a.performanceChecks(p, as, identAns)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := a.verdict(ctx, ident, identAns, qual, qualAns, perf, perfAns)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := rep.Sign(s.Key); err != nil {
		return nil, problem.Wrap(problem.Internal, err, "signing the report failed: %v", err)
	}
	if err := a.keep(ctx, rep); err != nil {
		return nil, err
	}
	url := ReportURL(rep.ID)
	env.Events.Emit("lane", VerdictBody{Lane: LaneVerdict, Data: VerdictData{Status: rep.Verdict, Reasons: rep.Reasons, Report: rep.ID, ReportURL: url}})
	env.Events.Emit(run.TypeDone, DoneBody{Summary: DoneSummary{Verdict: rep.Verdict, Report: rep.ID, ReportURL: url}})
	env.Events.End(run.TypeBudget, run.BudgetOf(ctx, env.Budget))
	return rep, nil
}

// resolve picks the endpoint and the fixture.
func (a *audit) resolve() error {
	s, req := a.s, a.req
	claimed := req.ClaimedModel
	if req.Target != "" {
		t, ok := s.target(req.Target)
		if !ok {
			return problem.New(problem.NotFound, "no demo target %q; GET /audit/targets lists them", req.Target)
		}
		if !t.Available {
			return problem.New(problem.Unavailable, "demo target %q is not available now: %s", t.ID, t.Note)
		}
		if claimed == "" {
			claimed = t.ClaimedModel
		}
		a.target = ReportTarget{Kind: "demo", ID: t.ID, Model: t.ClaimedModel, ClaimedModel: claimed}
		if t.Kind == "box" {
			a.ep = &Local{Model: s.Chat, Budget: a.env.Budget, Events: a.env.Events}
		} else {
			a.target.BaseURL, a.target.Model = t.baseURL, t.model
			a.ep = NewHTTPEndpoint(t.baseURL, t.model, "", s.Poster)
		}
	} else {
		if s.Poster == nil {
			return problem.New(problem.Unavailable, "endpoint audits are off: the box has no outbound client (check the outbound settings)")
		}
		if claimed == "" {
			claimed = req.Model
		}
		a.target = ReportTarget{Kind: "endpoint", BaseURL: strings.TrimRight(req.BaseURL, "/"), Model: req.Model, ClaimedModel: claimed}
		a.ep = NewHTTPEndpoint(req.BaseURL, req.Model, string(req.APIKey), s.Poster)
	}
	if s.Refs != nil {
		a.fx = s.Refs.Find(claimed)
	}
	return nil
}

func (a *audit) targetName() string {
	if a.target.ID != "" {
		return a.target.ID
	}
	return a.target.BaseURL + " " + a.target.Model
}

// lane runs probes one by one, emitting the lane's state after each.
func (a *audit) lane(ctx context.Context, lane string, probes []Probe, sd int64, checks func([]Probe, []answer) []Check) []answer {
	out := make([]answer, len(probes))
	emit := func(done int) {
		a.env.Events.Emit("lane", LaneBody{Lane: lane, Data: LaneData{Checks: checks(probes[:done], out[:done]), Progress: Progress{Done: done, Total: len(probes)}}})
	}
	emit(0)
	for i, p := range probes {
		if ctx.Err() != nil {
			return out
		}
		if a.failing() {
			// The verdict is inconclusive already: the rest are not sent.
			out[i] = answer{err: errGaveUp}
			continue
		}
		if time.Now().After(a.deadline) {
			out[i] = answer{err: errTooLong}
			continue
		}
		out[i] = a.probe(ctx, p, sd)
		emit(i + 1)
	}
	if a.failing() {
		emit(len(probes))
	}
	return out
}

// errTooLong is a probe not sent because the audit ran past RunTimeout.
var errTooLong = errors.New("not sent: the audit ran past its time limit")

// errGaveUp is a probe not sent because too many had failed.
var errGaveUp = errors.New("not sent: more than a quarter of the probes had failed")

// failing reports whether more requests failed than a verdict allows of
// the first pass (a quarter of its 24): the audit stops probing.
func (a *audit) failing() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return float64(a.errs) > ErrorShareMax*float64(len(a.s.suite().Probes))
}

// probe sends one probe.
func (a *audit) probe(ctx context.Context, p Probe, sd int64) answer {
	c := Call{Probe: p, Seed: sd, Stream: p.Kind != KindTool}
	if p.Kind == KindGolden || p.Kind == KindCanary {
		c.TopLogprobs = topN
	}
	pctx, cancel := context.WithTimeout(ctx, min(a.s.probeTimeout(p), max(time.Until(a.deadline), time.Second)))
	defer cancel()
	rep, err := a.ep.Chat(pctx, c)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent++
	if err != nil {
		var budget *problem.Error
		if errors.As(err, &budget) && budget.Kind == problem.Budget {
			a.notes = append(a.notes, "the caller's token budget ran out during the audit")
		}
		a.errs++
		return answer{err: err}
	}
	if rep.Receipt != nil {
		a.receipt = append(a.receipt, rep.Receipt.ID)
	}
	if rep.Model != "" && a.target.ServedModel == "" {
		a.target.ServedModel = rep.Model
	}
	return answer{rep: rep}
}

// runTimeout bounds a whole audit's probing (RunTimeout, default 20
// minutes): probes not sent by then count as failed.
func (s *Service) runTimeout() time.Duration {
	if s.RunTimeout > 0 {
		return s.RunTimeout
	}
	return 20 * time.Minute
}

// probeTimeout bounds one probe: ProbeTimeout (90 s), five times that for
// the context probe.
func (s *Service) probeTimeout(p Probe) time.Duration {
	d := s.ProbeTimeout
	if d <= 0 {
		d = 90 * time.Second
	}
	if p.Kind == KindContext {
		return 5 * d
	}
	return d
}

// identityChecks are the identity lane's checks over the answers so far.
func (a *audit) identityChecks(probes []Probe, as []answer) []Check {
	if a.fx == nil {
		return []Check{{ID: "reference", Title: "Reference fixture", Status: StatusFail, Value: "none", Band: "a fixture of the claimed model",
			Detail: fmt.Sprintf("this box holds no fixture for %q; GET /audit/references lists them (boxd audit record writes one)", a.target.ClaimedModel)}}
	}
	var cmpP []Probe
	var cmpA []answer
	var idText string
	for i, p := range probes {
		if p.Kind == KindIdentity {
			if as[i].err == nil {
				idText = as[i].rep.Text
			}
			continue
		}
		cmpP, cmpA = append(cmpP, p), append(cmpA, as[i])
	}
	c := compareIdentity(a.fx, cmpP, cmpA)
	t := thresholdsOf(a.fx.Noise)
	status := func(ok, warn bool) string {
		switch {
		case c.n == 0:
			return StatusSkip
		case ok:
			return StatusPass
		case warn:
			return StatusWarn
		}
		return StatusFail
	}
	checks := []Check{
		{ID: "exact", Title: "Greedy answers identical to the fixture", Status: status(c.exact >= t.passExact, c.first >= DriftFirstMin),
			Value: fig(c.exact), Band: "≥ " + fig(t.passExact), Detail: fmt.Sprintf("%d probes compared, %d failed", c.n-c.errors, c.errors)},
		{ID: "first-token", Title: "Answers starting with the fixture's first token", Status: status(c.first >= DriftFirstMin, false),
			Value: fig(c.first), Band: "≥ " + fig(DriftFirstMin), Detail: "the same weights keep their greedy first token under quantisation"},
	}
	lp := Check{ID: "logprob-delta", Title: "Mean |Δ logprob| of the chosen tokens", Band: "≤ " + fig(t.passLP) + " (pass), ≤ " + fig(DriftLogprobMax) + " (drift)"}
	ov := Check{ID: "top-overlap", Title: "Top-5 alternatives shared at the first position", Band: "≥ " + fig(DriftOverlapMin)}
	if c.lpN == 0 {
		lp.Status, lp.Value, lp.Detail = StatusSkip, "", "the endpoint gave no logprobs (or none compared yet): numerics are judged from the tokens alone"
		ov.Status, ov.Value, ov.Detail = StatusSkip, "", lp.Detail
	} else {
		lp.Status, lp.Value, lp.Detail = status(c.lp <= t.passLP, c.lp <= DriftLogprobMax), fig(c.lp), fmt.Sprintf("%d probes with logprobs on both sides", c.lpN)
		ov.Status, ov.Value, ov.Detail = status(c.overlap >= DriftOverlapMin, false), fig(c.overlap), ""
	}
	checks = append(checks, lp, ov)
	idc := Check{ID: "self-report", Title: "What the model says it is", Status: StatusSkip, Band: "reported, not scored", Value: oneLine(idText, 120)}
	if a.target.ServedModel != "" {
		idc.Detail = "the endpoint named the answering model " + strconv.Quote(a.target.ServedModel)
	}
	return append(checks, idc)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// qualityChecks compare the quality scores with the fixture's.
func (a *audit) qualityChecks(probes []Probe, as []answer) []Check {
	if len(probes) == 0 {
		return []Check{}
	}
	got := scoreQuality(&Suite{Probes: probes}, byID(probes, as))
	var ref QualityScores
	if a.fx != nil {
		ref = scoreQuality(&Suite{Probes: probes}, a.fx.answers())
	}
	line := func(id, title, g, r string) Check {
		c := Check{ID: id, Title: title, Value: g}
		gv, gerr := strconv.ParseFloat(g, 64)
		rv, rerr := strconv.ParseFloat(r, 64)
		switch {
		case gerr != nil:
			c.Status, c.Detail = StatusSkip, "no probe of this kind answered yet"
		case a.fx == nil || rerr != nil:
			c.Status, c.Detail = StatusPass, "no fixture to compare with: reported"
		case gv >= rv-1e-9:
			c.Status, c.Band = StatusPass, "≥ "+r+" (the fixture)"
		case rv-gv <= QualityDropMax:
			c.Status, c.Band = StatusWarn, "≥ "+r+" (the fixture)"
		default:
			c.Status, c.Band = StatusFail, "≥ "+r+" (the fixture)"
		}
		return c
	}
	return []Check{
		line("arithmetic", "Arithmetic answers right", got.Arithmetic, ref.Arithmetic),
		line("json-schema", "JSON answers valid against their schema", got.JSONSchema, ref.JSONSchema),
		line("json-fields", "JSON fields that agree with the task", got.JSONFields, ref.JSONFields),
		line("tool-f1", "Tool-call trigger F1 (K2-Vendor-Verifier)", got.ToolF1, ref.ToolF1),
		line("tool-schema", "Tool calls valid against the tool's schema", got.ToolSchema, ref.ToolSchema),
		line("tool-arguments", "Expected tool calls with the right arguments", got.ToolArguments, ref.ToolArguments),
	}
}

func byID(probes []Probe, as []answer) map[string]answer {
	m := map[string]answer{}
	for i, p := range probes {
		m[p.ID] = as[i]
	}
	return m
}

// performanceChecks report time to first token (the streamed goldens),
// tokens per second and the context probe.
func (a *audit) performanceChecks(probes []Probe, as []answer, ident []answer) []Check {
	code := a.code
	var ttft []float64
	for _, x := range ident {
		if x.err == nil && x.rep.FirstToken > 0 {
			ttft = append(ttft, float64(x.rep.FirstToken.Milliseconds()))
		}
	}
	checks := []Check{{ID: "ttft-p50", Title: "Time to first token, median of the streamed goldens and canaries", Status: StatusSkip, Band: "reported"}}
	if len(ttft) > 0 {
		slices.Sort(ttft)
		checks[0].Status, checks[0].Value, checks[0].Detail = StatusPass, fmt.Sprintf("%.0f ms", ttft[len(ttft)/2]), fmt.Sprintf("%d streamed probes", len(ttft))
	}
	tps := Check{ID: "tokens-per-s", Title: "Generation speed of the throughput probe", Status: StatusSkip, Band: "reported"}
	ctxc := Check{ID: "context", Title: "Context probe", Status: StatusSkip, Band: "answers without error and recalls the code word", Detail: "context_tokens was 0"}
	if code != "" {
		ctxc.Detail = "not run yet"
	}
	for i, p := range probes {
		x := as[i]
		switch p.Kind {
		case KindThroughput:
			if x.err != nil {
				tps.Status, tps.Detail = StatusFail, x.err.Error()
				continue
			}
			gen := x.rep.Total - x.rep.FirstToken
			if x.rep.CompletionTokens > 1 && gen > 0 {
				tps.Status, tps.Value = StatusPass, fmt.Sprintf("%.1f", float64(x.rep.CompletionTokens-1)/gen.Seconds())
				tps.Detail = fmt.Sprintf("%d tokens in %d ms after the first", x.rep.CompletionTokens, gen.Milliseconds())
			} else {
				tps.Detail = "the endpoint reported no token count"
			}
		case KindContext:
			ctxc.Value = strconv.Itoa(*a.req.ContextTokens) + " tokens asked"
			switch {
			case x.err != nil:
				ctxc.Status, ctxc.Detail = StatusFail, "the endpoint did not take the long prompt: "+x.err.Error()
			case strings.Contains(x.rep.Text, code):
				ctxc.Status, ctxc.Detail = StatusPass, fmt.Sprintf("recalled the code word; the endpoint counted %d prompt tokens", x.rep.PromptTokens)
			default:
				ctxc.Status, ctxc.Detail = StatusWarn, fmt.Sprintf("answered without the code word; the endpoint counted %d prompt tokens", x.rep.PromptTokens)
			}
		}
	}
	return append(checks, tps, ctxc)
}

// verdict decides, runs the second pass for drift and fail, and builds
// the unsigned report.
func (a *audit) verdict(ctx context.Context, ident []Probe, identAns []answer, qual []Probe, qualAns []answer, perf []Probe, perfAns []answer) *Report {
	s := a.s
	suite := s.suite()
	rep := &Report{ID: ids.New("aud_", 16), Format: ReportFormat, CreatedAt: s.now().UTC().Format(time.RFC3339),
		Auditor: ReportAuditor{Software: s.Software, Suite: suite.ID, SuiteSHA256: suite.SHA256()},
		Target:  a.target, Reasons: []string{}, Passes: []PassSummary{}}
	var cmpP []Probe
	var cmpA []answer
	for i, p := range ident {
		if p.Kind != KindIdentity {
			cmpP, cmpA = append(cmpP, p), append(cmpA, identAns[i])
		}
	}
	rep.Lanes = ReportLanes{Identity: a.identityChecks(ident, identAns), Quality: a.qualityChecks(qual, qualAns),
		Performance: a.performanceChecks(perf, perfAns, identAns)}
	q := scoreQuality(&Suite{Probes: qual}, byID(qual, qualAns))
	rep.Quality = &q
	for i, p := range append(append(slices.Clone(ident), qual...), perf...) {
		var x answer
		switch {
		case i < len(ident):
			x = identAns[i]
		case i < len(ident)+len(qual):
			x = qualAns[i-len(ident)]
		default:
			x = perfAns[i-len(ident)-len(qual)]
		}
		rep.Probes.Each = append(rep.Probes.Each, outcome(a.fx, p, x))
	}
	switch {
	case a.fx == nil:
		rep.Verdict = VerdictInconclusive
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("no reference: this box holds no fixture for %q (GET /audit/references; boxd audit record writes one)", a.target.ClaimedModel))
	default:
		rep.Reference = &ReportRef{ID: a.fx.ID, Model: a.fx.Model, Engine: a.fx.Engine, FixtureSHA256: a.fx.FixtureSHA256, Noise: a.fx.Noise}
		t := thresholdsOf(a.fx.Noise)
		c := compareIdentity(a.fx, cmpP, cmpA)
		v, why := classify(c, t)
		rep.Passes = append(rep.Passes, passSummary(strconv.FormatInt(a.seed, 10), v, c, t))
		if v == VerdictPass && failedQuality(rep.Lanes.Quality) {
			v, why = VerdictDrift, []string{"greedy answers match the fixture but a quality score fell below it (see the quality lane)"}
		}
		if v == VerdictDrift || v == VerdictFail {
			// The second pass: the same probes with a fresh seed, before
			// anything is signed.
			sd := seed()
			again := make([]answer, len(cmpP))
			for i, p := range cmpP {
				again[i] = a.probe(ctx, p, sd)
			}
			c2 := compareIdentity(a.fx, cmpP, again)
			v2, why2 := classify(c2, t)
			rep.Passes = append(rep.Passes, passSummary(strconv.FormatInt(sd, 10), v2, c2, t))
			if v2 == VerdictPass && failedQuality(rep.Lanes.Quality) {
				v2 = VerdictDrift
			}
			if v2 != v {
				why = []string{fmt.Sprintf("a re-check disagreed: the first pass said %s (%s), the second %s (%s)", v, strings.Join(why, "; "), v2, strings.Join(why2, "; "))}
				v = VerdictInconclusive
			} else {
				why = append(why, "a second pass with a fresh seed agreed")
			}
		}
		rep.Verdict, rep.Reasons = v, append(rep.Reasons, why...)
	}
	a.mu.Lock()
	rep.Probes.Sent, rep.Probes.Errors, rep.Receipts = a.sent, a.errs, slices.Clone(a.receipt)
	rep.Probes.Notes = slices.Clone(a.notes)
	a.mu.Unlock()
	if rep.Receipts == nil {
		rep.Receipts = []string{}
	}
	if rep.Probes.Notes == nil {
		rep.Probes.Notes = []string{}
	}
	if rep.Verdict != VerdictInconclusive && rep.Probes.Sent > 0 && float64(rep.Probes.Errors)/float64(rep.Probes.Sent) > ErrorShareMax {
		rep.Reasons = []string{fmt.Sprintf("too many probe errors: %d of %d requests failed (more than %s); the verdict would have been %s", rep.Probes.Errors, rep.Probes.Sent, fig(ErrorShareMax), rep.Verdict)}
		rep.Verdict = VerdictInconclusive
	}
	return rep
}

func failedQuality(cs []Check) bool {
	for _, c := range cs {
		if c.Status == StatusFail {
			return true
		}
	}
	return false
}

func passSummary(sd, v string, c identity, t thresholds) PassSummary {
	p := PassSummary{Seed: sd, Verdict: v, Probes: c.n, Errors: c.errors, Exact: fig(c.exact), First: fig(c.first), Prefix: fig(c.prefix),
		WithLogprobs: c.lpN, PassLogprob: fig(t.passLP), PassExactMin: fig(t.passExact), DriftFirstMin: fig(DriftFirstMin)}
	if c.lpN > 0 {
		p.LogprobDelta, p.TopOverlap = fig(c.lp), fig(c.overlap)
	}
	return p
}

// outcome is one probe's line in the report.
func outcome(f *Fixture, p Probe, x answer) ProbeOutcome {
	o := ProbeOutcome{ID: p.ID, Kind: p.Kind, Outcome: "answered"}
	if x.err != nil {
		o.Outcome, o.Error = "error", oneLine(x.err.Error(), 200)
		return o
	}
	if f != nil && (p.Kind == KindGolden || p.Kind == KindCanary) {
		if ref := f.probe(p.ID); ref != nil {
			switch {
			case Normalize(ref.Text) == Normalize(x.rep.Text):
				o.Outcome = "identical"
			case strings.HasPrefix(Normalize(x.rep.Text), Normalize(firstToken(ref))):
				o.Outcome = "first-token"
			default:
				o.Outcome = "differs"
			}
		}
	}
	return o
}

// keep stores the signed report and lists it when the target is a demo.
func (a *audit) keep(ctx context.Context, rep *Report) error {
	s := a.s
	if s.Reports == nil {
		return nil
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return problem.Wrap(problem.Internal, err, "encoding the report failed: %v", err)
	}
	now := s.now()
	if err := s.Reports.Put(ctx, store.Reports, store.Kept{ID: rep.ID, Family: family, Created: now, Expires: now.Add(s.keep()), Body: body}); err != nil {
		return problem.Wrap(problem.Internal, err, "keeping the report failed: %v", err)
	}
	if rep.Target.Kind == "demo" {
		s.remember(ReportListing{ID: rep.ID, Target: rep.Target.ID, Verdict: rep.Verdict, CreatedAt: rep.CreatedAt, ReportURL: ReportURL(rep.ID)})
	}
	if s.Log != nil {
		s.Log.Info("endpoint audit", "report", rep.ID, "target_kind", rep.Target.Kind, "verdict", rep.Verdict, "probes", rep.Probes.Sent, "errors", rep.Probes.Errors)
	}
	return nil
}

// seed is a fresh positive 31-bit seed.
func seed() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return int64(binary.LittleEndian.Uint32(b[:]) >> 1)
}

// codeWord is the context probe's word to recall.
func codeWord() string {
	words := []string{"amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "juniper"}
	var b [2]byte
	_, _ = rand.Read(b[:])
	return words[int(b[0])%len(words)] + "-" + strconv.Itoa(100+int(b[1])%900)
}
