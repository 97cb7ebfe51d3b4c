package migration

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/llmcall/llmcalltest"
	"boxd/pipelines/migration/figures"
	"boxd/pipelines/migration/scoring"
)

// signer issues receipts signed with the test key, as the box's book
// does (llmcalltest's issuer signs with a placeholder).
type signer struct{ k *attest.Key }

func (s signer) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	return attest.IssueModelCall(s.k, mc)
}

func testKey() *attest.Key {
	s := make([]byte, ed25519.SeedSize)
	s[0] = 40
	return attest.NewKey(ed25519.NewKeyFromSeed(s))
}

// events records a run's events.
type events struct {
	mu    sync.Mutex
	types []string
	last  map[string]any
	ended bool
}

func (e *events) Emit(typ string, body any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		panic("event after the end: " + typ)
	}
	e.types = append(e.types, typ)
	if e.last == nil {
		e.last = map[string]any{}
	}
	e.last[typ] = body
}

func (e *events) End(typ string, body any) bool {
	e.Emit(typ, body)
	e.mu.Lock()
	e.ended = true
	e.mu.Unlock()
	return true
}

// service is a check service over the tiny chat model, which is both the
// candidate and the judge.
func service(t testing.TB) (*Service, *attest.Key) {
	t.Helper()
	m, _ := llmcalltest.Tiny(t, false)
	key := testKey()
	m.Receipts, m.ModelID, m.Provider = signer{key}, "tiny-chat", key.ID()
	return &Service{Key: key, Candidates: []Candidate{{ID: "tiny-chat", Model: m, File: "tiny-chat.gguf"}}, Judge: m,
		Prices: ShippedPrices(), HourDollars: 1.2}, key
}

func sample(t testing.TB, id string) Request {
	t.Helper()
	for _, s := range Samples() {
		if s.ID == id {
			// a copy through JSON, as a caller would send it
			b, _ := json.Marshal(s.Body)
			var r Request
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("no sample %s", id)
	return Request{}
}

func runCheck(t *testing.T, s *Service, req Request, b run.Budget) (*Report, *events) {
	t.Helper()
	if err := s.Validate(&req); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	if b == nil {
		b = &llmcalltest.Budget{}
	}
	rep, err := s.Run(context.Background(), req, run.Env{Events: ev, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	return rep, ev
}

func recordJSON(t *testing.T, rec *attest.Record) []byte {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSampleRunPerTaskType: every sample end to end on the tiny model: the
// events in the contract's order, a summary per candidate, a record that
// verifies and recomputes, rescored from its texts for the code tasks.
func TestSampleRunPerTaskType(t *testing.T) {
	s, key := service(t)
	for _, smp := range Samples() {
		t.Run(smp.ID, func(t *testing.T) {
			req := sample(t, smp.ID)
			rep, ev := runCheck(t, s, req, nil)
			checkOrder(t, ev.types, len(req.Examples))
			sum, ok := rep.Candidates["tiny-chat"]
			if !ok || rep.Verdicts["tiny-chat"] != sum.Verdict || sum.Pass.N == "" || len(rep.Examples) != len(req.Examples) {
				t.Fatalf("report: %+v", rep)
			}
			if sum.Stability.Resamples != "10000" || sum.Stability.BootstrapSameVerdict == "" {
				t.Errorf("stability %+v", sum.Stability)
			}
			switch smp.Task {
			case scoring.TaskJSON:
				if sum.SchemaValid == nil || sum.Fields == nil {
					t.Errorf("json figures missing: %+v", sum)
				}
			case scoring.TaskLabel:
				if sum.Labels == nil || len(sum.Labels.Current) == 0 {
					t.Errorf("label figures missing: %+v", sum)
				}
			case scoring.TaskFreetext:
				total := 0
				for _, o := range scoring.JudgeOutcomes {
					var n int
					fmt.Sscan(sum.JudgeOutcomes[o], &n)
					total += n
				}
				if total != len(req.Examples) || rep.Identity.Judge == nil || rep.Identity.Judge.PromptSHA256 != JudgePromptSHA256() {
					t.Errorf("judge outcomes %v (of %d), identity %+v", sum.JudgeOutcomes, len(req.Examples), rep.Identity.Judge)
				}
			}
			v := Verify(recordJSON(t, rep.Report), key.PublicKey())
			if !v.OK || !v.Recompute.OK {
				t.Fatalf("record does not verify: %+v", v)
			}
			if smp.Task != scoring.TaskFreetext && v.Recompute.Rescored != len(req.Examples) {
				t.Errorf("rescored %d of %d", v.Recompute.Rescored, len(req.Examples))
			}
			if !hasCheck(v.Record.Checks, CheckReceipts) {
				t.Errorf("no receipts check: %+v", v.Record.Checks)
			}
		})
	}
}

func hasCheck(cs []attest.Check, name string) bool {
	for _, c := range cs {
		if c.Name == name && c.OK {
			return true
		}
	}
	return false
}

// checkOrder: ready, then receipt and example events, identity, summary,
// record, report, budget, done.
func checkOrder(t *testing.T, types []string, n int) {
	t.Helper()
	if len(types) < 7 || types[0] != "ready" || types[len(types)-1] != run.TypeDone {
		t.Fatalf("events %v", types)
	}
	tail := strings.Join(types[len(types)-5:], ",")
	if tail != "summary,record,report,budget,done" {
		t.Errorf("the last events are %s", tail)
	}
	id := slices.Index(types, "identity")
	examples := 0
	for i, typ := range types[1:id] {
		if typ != run.TypeReceipt && typ != "example" {
			t.Errorf("event %d before identity is %s", i+1, typ)
		}
		if typ == "example" {
			examples++
		}
	}
	if examples != n || types[id+1] != "summary" {
		t.Errorf("%d example events of %d; after identity %s", examples, n, types[id+1])
	}
}

// TestGoWhenTheCandidateAnswersAsLogged: logged outputs that are the
// tiny model's own greedy answers all pass: go.
func TestGoWhenTheCandidateAnswersAsLogged(t *testing.T) {
	s, key := service(t)
	req := sample(t, "faq-exact")
	first, _ := runCheck(t, s, req, nil)
	for i := range req.Examples {
		req.Examples[i].Output = first.Examples[i].Output
		if first.Examples[i].Example != req.Examples[i].ID {
			t.Fatal("examples out of order")
		}
	}
	low := 0.7
	req.Thresholds = &Thresholds{PassRate: &low}
	rep, _ := runCheck(t, s, req, nil)
	sum := rep.Candidates["tiny-chat"]
	if sum.Verdict != figures.VerdictGo || sum.Pass.K != "12" || rep.Recommended == nil || *rep.Recommended != "tiny-chat" {
		t.Fatalf("verdict %s (%s/%s), recommended %v: %v", sum.Verdict, sum.Pass.K, sum.Pass.N, rep.Recommended, sum.Reasons)
	}
	if v := Verify(recordJSON(t, rep.Report), key.PublicKey()); !v.OK {
		t.Fatalf("%+v", v)
	}
}

// TestUnscorableMakesItInconclusive: 2 empty logged answers of 12 (more
// than 10%) make even a perfect pass rate inconclusive.
func TestUnscorableMakesItInconclusive(t *testing.T) {
	s, _ := service(t)
	req := sample(t, "faq-exact")
	first, _ := runCheck(t, s, req, nil)
	for i := range req.Examples {
		req.Examples[i].Output = first.Examples[i].Output
	}
	req.Examples[3].Output, req.Examples[7].Output = "", "  "
	low := 0.5
	req.Thresholds = &Thresholds{PassRate: &low}
	rep, _ := runCheck(t, s, req, nil)
	sum := rep.Candidates["tiny-chat"]
	if sum.Verdict != figures.VerdictInconclusive || sum.Unscorable.Count != "2" || !strings.Contains(strings.Join(sum.Reasons, ";"), "could not be scored") {
		t.Fatalf("%s unscorable %s: %v", sum.Verdict, sum.Unscorable.Count, sum.Reasons)
	}
}

// failingBudget refuses every reservation after the first few: those
// calls fail before generating.
type failingBudget struct {
	llmcalltest.Budget
	left atomic.Int64
}

func (b *failingBudget) Reserve(ctx context.Context, want int64) (int64, func(int64), error) {
	if b.left.Add(-1) < 0 {
		return 0, nil, problem.New(problem.Budget, "the session's token budget is used up")
	}
	return b.Budget.Reserve(ctx, want)
}

// TestFailedCallsCountAsFails: calls refused by the budget are fails
// (model_error), kept in the record as call_failed entries, and the record
// still verifies and recomputes.
func TestFailedCallsCountAsFails(t *testing.T) {
	s, key := service(t)
	s.Workers = 1
	req := sample(t, "faq-exact")
	b := &failingBudget{}
	b.left.Store(4)
	rep, _ := runCheck(t, s, req, b)
	sum := rep.Candidates["tiny-chat"]
	errs := 0
	for _, e := range rep.Examples {
		if e.Kind == scoring.KindModelError {
			errs++
			if e.Error == "" || e.Outcome != scoring.Fail {
				t.Errorf("failed call example: %+v", e)
			}
		}
	}
	if errs != 8 || sum.Pass.N != "12" || sum.Verdict != figures.VerdictNoGo {
		t.Fatalf("%d model errors, n %s, verdict %s", errs, sum.Pass.N, sum.Verdict)
	}
	failed := 0
	for _, e := range rep.Report.Entries {
		if e.Type == EntryCallFailed {
			failed++
		}
	}
	if failed != 8 {
		t.Errorf("%d call_failed entries", failed)
	}
	if v := Verify(recordJSON(t, rep.Report), key.PublicKey()); !v.OK {
		t.Fatalf("%+v", v)
	}
}

// TestRecordMutations: a changed score, a changed number, a removed entry
// and a reordered entry each fail, naming the entry; every text removed
// still verifies; a wrong figure signed by the box's own key verifies as a
// chain but not as a recomputation, which names the entry and field.
func TestRecordMutations(t *testing.T) {
	s, key := service(t)
	req := sample(t, "ticket-label")
	rep, _ := runCheck(t, s, req, nil)
	raw := recordJSON(t, rep.Report)
	find := func(rec map[string]any, typ string) int {
		for i, e := range rec["entries"].([]any) {
			if e.(map[string]any)["type"] == typ {
				return i
			}
		}
		t.Fatalf("no %s entry", typ)
		return -1
	}
	mutate := func(f func(rec map[string]any) int) ([]byte, int) {
		var rec map[string]any
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		at := f(rec)
		b, _ := json.Marshal(rec)
		return b, at + 1
	}
	entries := func(rec map[string]any) []any { return rec["entries"].([]any) }
	data := func(rec map[string]any, i int) map[string]any {
		return entries(rec)[i].(map[string]any)["data"].(map[string]any)
	}
	for _, c := range []struct {
		name string
		f    func(rec map[string]any) int
	}{
		{"changed score", func(rec map[string]any) int {
			i := find(rec, EntryScore)
			d := data(rec, i)
			if d["outcome"] == scoring.Pass {
				d["outcome"] = scoring.Fail
			} else {
				d["outcome"] = scoring.Pass
			}
			return i
		}},
		{"changed number", func(rec map[string]any) int {
			i := find(rec, EntrySummary)
			data(rec, i)["summary"].(map[string]any)["pass"].(map[string]any)["k"] = "11"
			return i
		}},
		{"removed entry", func(rec map[string]any) int {
			i := find(rec, EntryScore)
			rec["entries"] = slices.Delete(entries(rec), i, i+1)
			return i
		}},
		{"reordered entries", func(rec map[string]any) int {
			i := find(rec, EntryScore)
			es := entries(rec)
			es[i], es[i-1] = es[i-1], es[i]
			return i - 1
		}},
	} {
		b, at := mutate(c.f)
		v := Verify(b, key.PublicKey())
		if v.OK || v.Record.OK || v.Record.FirstBadEntry == nil || *v.Record.FirstBadEntry != at {
			t.Errorf("%s at entry %d: ok %v, first bad entry %v, problem %s", c.name, at, v.OK, v.Record.FirstBadEntry, v.Record.Problem)
		}
	}

	// every text removed: still verifies and recomputes (no rescoring).
	stripped, _ := mutate(func(rec map[string]any) int {
		for _, e := range entries(rec) {
			delete(e.(map[string]any), "text")
		}
		return 0
	})
	if strings.Contains(string(stripped), `"text":`) {
		t.Fatal("a text is left")
	}
	if v := Verify(stripped, key.PublicKey()); !v.OK || v.Recompute.Rescored != 0 {
		t.Fatalf("without texts: %+v", v)
	}

	// a wrong figure, signed: the chain holds, the recomputation does not.
	bad := *rep
	bad.Candidates = map[string]figures.Summary{}
	sum := rep.Candidates["tiny-chat"]
	sum.Pass.K = "99"
	bad.Candidates["tiny-chat"] = sum
	if err := s.Validate(&req); err != nil {
		t.Fatal(err)
	}
	rec, err := s.record(&bad, &req, s.params(&req), s.maxTokens(&req), nil, callsOf(&req, rep, s))
	if err != nil {
		t.Fatal(err)
	}
	v := Verify(recordJSON(t, rec), key.PublicKey())
	if v.OK || !v.Record.OK || v.Recompute.OK || len(v.Recompute.Diffs) != 1 {
		t.Fatalf("signed wrong figure: %+v", v)
	}
	d := v.Recompute.Diffs[0]
	if d.Type != EntrySummary || d.Field != "pass.k" || d.Stated != "99" || rec.Entries[d.Entry-1].Type != EntrySummary {
		t.Errorf("diff %+v", d)
	}

	// another kind of record, or a key this box does not hold.
	if v := Verify([]byte(`{"format":"service.record.v1","kind":"site-check"}`), key.PublicKey()); v.OK {
		t.Error("a record of another kind passed")
	}
	other := attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, 32)))
	if v := Verify(raw, other.PublicKey()); v.OK || v.Record.SignedByThisBox {
		t.Error("a record signed by another key passed")
	}
}

// callsOf rebuilds a run's calls from its report (for re-signing a
// record in a test).
func callsOf(req *Request, rep *Report, s *Service) []*call {
	var out []*call
	for _, e := range rep.Examples {
		for i := range req.Examples {
			if req.Examples[i].ID != e.Example {
				continue
			}
			c := &call{cand: s.candidate(e.Candidate), ex: &req.Examples[i], answer: e.Output}
			for _, r := range rep.Report.Entries {
				if r.Type == EntryScore && r.Data["example"] == e.Example {
					c.score, _ = readScore(r.Data)
				}
				if r.Type == "model_call" && r.Data["example"] == e.Example {
					var sm attest.SignedModelCall
					b, _ := json.Marshal(r.Data["receipt"])
					_ = json.Unmarshal(b, &sm)
					c.result = &llmcall.Result{Text: *r.Text, Receipt: &llmcall.Receipt{ID: sm.ID, Model: sm.Model, Signed: sm}}
					fmt.Sscan(r.Data["prompt_tokens"].(string), &c.result.Usage.PromptTokens)
					fmt.Sscan(r.Data["completion_tokens"].(string), &c.result.Usage.CompletionTokens)
					c.result.FinishReason, _ = r.Data["finish_reason"].(string)
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// TestValidate: every bad input says what to fix, with the contract's
// status kind.
func TestValidate(t *testing.T) {
	s, _ := service(t)
	base := func() Request { return sample(t, "faq-exact") }
	many := func(n int) []Example {
		var out []Example
		for i := range n {
			out = append(out, Example{ID: fmt.Sprint(i), Input: strInput("q"), Output: "a"})
		}
		return out
	}
	for _, c := range []struct {
		name string
		mod  func(r *Request)
		kind problem.Kind
		says string
	}{
		{"fewer than 10", func(r *Request) { r.Examples = r.Examples[:9] }, problem.Invalid, "at least 10"},
		{"more than 200", func(r *Request) { r.Examples = many(201) }, problem.TooLarge, "at most 200"},
		{"unknown task type", func(r *Request) { r.Task.Type = "regex" }, problem.Invalid, "unknown type"},
		{"no task type", func(r *Request) { r.Task.Type = "" }, problem.Invalid, "type is required"},
		{"template without placeholder", func(r *Request) { r.Prompt.Template = "Answer the question." }, problem.Invalid, "placeholder"},
		{"named field missing", func(r *Request) { r.Prompt.Template = "{{question}}" }, problem.Invalid, "{{input}}"},
		{"schema outside the subset", func(r *Request) {
			r.Task = scoring.Task{Type: scoring.TaskJSON, Schema: json.RawMessage(`{"type":"object","anyOf":[{"type":"object"}]}`)}
		}, problem.Invalid, "outside the supported subset"},
		{"json without schema", func(r *Request) { r.Task = scoring.Task{Type: scoring.TaskJSON} }, problem.Invalid, "needs schema"},
		{"label without labels", func(r *Request) { r.Task = scoring.Task{Type: scoring.TaskLabel} }, problem.Invalid, "labels"},
		{"bad extract", func(r *Request) {
			r.Task = scoring.Task{Type: scoring.TaskLabel, Labels: []string{"a", "b"}, Extract: "middle"}
		}, problem.Invalid, "double_bracket"},
		{"freetext without rubric", func(r *Request) { r.Task = scoring.Task{Type: scoring.TaskFreetext} }, problem.Invalid, "rubric"},
		{"unknown candidate", func(r *Request) { r.Candidates = []string{"gpt-4o"} }, problem.NotFound, "no candidate"},
		{"candidate twice", func(r *Request) { r.Candidates = []string{"tiny-chat", "tiny-chat"} }, problem.Invalid, "twice"},
		{"unknown incumbent", func(r *Request) { r.Incumbent = Incumbent{Model: "gpt-2"} }, problem.Invalid, "price table"},
		{"no incumbent", func(r *Request) { r.Incumbent = Incumbent{} }, problem.Invalid, "incumbent is required"},
		{"duplicate id", func(r *Request) { r.Examples[1].ID = r.Examples[0].ID }, problem.Invalid, "twice"},
		{"pass rate out of range", func(r *Request) { x := 1.5; r.Thresholds = &Thresholds{PassRate: &x} }, problem.Invalid, "pass_rate"},
		{"max tokens too high", func(r *Request) { r.MaxOutputTokens = 5000 }, problem.Invalid, "max_output_tokens"},
		{"array input", func(r *Request) { r.Examples[0].Input = json.RawMessage(`[1]`) }, problem.Invalid, "examples[0].input"},
		{"label not in labels", func(r *Request) {
			r.Task = scoring.Task{Type: scoring.TaskLabel, Labels: []string{"a", "b"}}
			x := "c"
			r.Examples[0].Label = &x
		}, problem.Invalid, "not one of task.labels"},
	} {
		r := base()
		c.mod(&r)
		err := s.Validate(&r)
		var pe *problem.Error
		if !errors.As(err, &pe) || pe.Kind != c.kind || !strings.Contains(pe.Message, c.says) {
			t.Errorf("%s: %v, want kind %v saying %q", c.name, err, c.kind, c.says)
		}
	}
	r := base()
	r.Examples = many(41)
	if err := s.Validate(&r); err != nil {
		t.Fatal(err)
	}
	if err := ValidateFor("", &r); !problem.Is(err, problem.TooLarge) || !strings.Contains(err.Error(), "at most 40") {
		t.Errorf("demo limit: %v", err)
	}
	if err := ValidateFor("dk_test", &r); err != nil {
		t.Errorf("key limit: %v", err)
	}
	// Models are checked when the run starts (after admission's 409 and
	// 402): a freetext check without a judge, a candidate without a model.
	s.Judge = nil
	r = sample(t, "message-freetext")
	if err := s.Validate(&r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), r, run.Env{Events: &events{}, Budget: &llmcalltest.Budget{}}); !problem.Is(err, problem.Unavailable) || !strings.Contains(err.Error(), "judge") {
		t.Errorf("freetext without a judge: %v", err)
	}
	s.Candidates[0].Model = &llmcall.Model{ModelID: "tiny-chat"}
	r = sample(t, "faq-exact")
	_ = s.Validate(&r)
	if _, err := s.Run(context.Background(), r, run.Env{Events: &events{}, Budget: &llmcalltest.Budget{}}); !problem.Is(err, problem.Unavailable) || !strings.Contains(err.Error(), "no model loaded") {
		t.Errorf("a candidate without a model: %v", err)
	}
}

// TestEstimate: the 402 estimate is examples × candidates × max output
// tokens, plus two judgments for freetext.
func TestEstimate(t *testing.T) {
	s, _ := service(t)
	r := sample(t, "faq-exact")
	if n, how := s.Estimate(&r); n != 12*16 || !strings.Contains(how, "12 examples") {
		t.Errorf("%d %s", n, how)
	}
	r.MaxOutputTokens = 0
	r.Examples[0].Output = strings.Repeat("x", 400) // 100 tokens: 2×100+16
	if n, _ := s.Estimate(&r); n != 12*216 {
		t.Errorf("default max tokens: %d", n)
	}
	f := sample(t, "message-freetext")
	if err := s.Validate(&f); err != nil {
		t.Fatal(err)
	}
	if c := len(controlPairs(&f)); c != 2*maxControls {
		t.Errorf("%d judge controls", c)
	}
	if n, _ := s.Estimate(&f); n != 10*48+(10+2*maxControls)*2*judgeMaxTokens {
		t.Errorf("freetext %d", n)
	}
}

// resign signs a record's entries again with key, as a box that wrote
// them would: the chain holds, only the recomputation can object.
func resign(t *testing.T, rec *attest.Record, key *attest.Key) []byte {
	t.Helper()
	r := records.NewRun(rec.Kind, rec.ID, rec.Meta)
	for _, e := range rec.Entries {
		r.Add(e.Type, e.Text, e.Data)
	}
	out, err := r.Sign(key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return recordJSON(t, out)
}

// TestFreetextJudgeRecomputed: the verifier reads every judgment again
// from the judge's kept answer, and the judge controls from theirs; a
// judgment changed and signed again is a diff naming its entry, and the
// outcome it fed is one too.
func TestFreetextJudgeRecomputed(t *testing.T) {
	s, key := service(t)
	req := sample(t, "message-freetext")
	rep, _ := runCheck(t, s, req, nil)
	sum := rep.Candidates["tiny-chat"]
	if sum.JudgeControls == nil || sum.JudgeControls.Total != "4" {
		t.Fatalf("judge controls %+v", sum.JudgeControls)
	}
	if sum.JudgeControls.Passed != "4" && (sum.Verdict != figures.VerdictInconclusive || !strings.Contains(strings.Join(sum.Reasons, ";"), "controls")) {
		t.Errorf("a judge that failed a control: %s %v", sum.Verdict, sum.Reasons)
	}
	v := Verify(recordJSON(t, rep.Report), key.PublicKey())
	if !v.OK || v.Recompute.Rescored != len(req.Examples) {
		t.Fatalf("%+v", v)
	}
	for _, purpose := range []string{"judge", "judge_control"} {
		var rec attest.Record
		_ = json.Unmarshal(recordJSON(t, rep.Report), &rec)
		at := -1
		for i, e := range rec.Entries {
			if e.Type == records.TypeModelCall && e.Data["purpose"] == purpose && e.Text != nil {
				flipped := `{"verdict":"different"}`
				if strings.Contains(*e.Text, "different") {
					flipped = `{"verdict":"same"}`
				}
				rec.Entries[i].Text = &flipped
				at = i + 1
				break
			}
		}
		if at < 0 {
			t.Fatalf("no %s entry", purpose)
		}
		v := Verify(resign(t, &rec, key), key.PublicKey())
		// The receipt no longer hashes the answer, and the verdict read
		// again from it is not the one the record states.
		if v.OK || v.Record.OK || v.Recompute.OK {
			t.Fatalf("%s changed: %+v", purpose, v)
		}
		if d := v.Recompute.Diffs[0]; d.Entry != at || d.Field != "verdict" {
			t.Errorf("%s: first diff %+v, want entry %d's verdict", purpose, d, at)
		}
	}
}
