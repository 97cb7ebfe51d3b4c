package oral

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/cite"
	"boxd/pipelines/llmcall/llmcalltest"
)

type signer struct{ k *attest.Key }

func (s signer) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	return attest.IssueModelCall(s.k, mc)
}

type events struct {
	mu    sync.Mutex
	types []string
}

func (e *events) Emit(typ string, _ any) { e.mu.Lock(); e.types = append(e.types, typ); e.mu.Unlock() }
func (e *events) End(typ string, b any) bool {
	e.Emit(typ, b)
	return true
}

func testService(t testing.TB) *Service {
	t.Helper()
	m, _ := llmcalltest.Tiny(t, false)
	s := make([]byte, ed25519.SeedSize)
	s[0] = 41
	key := attest.NewKey(ed25519.NewKeyFromSeed(s))
	m.Receipts, m.Provider = signer{key}, key.ID()
	return &Service{Key: key, Chat: m}
}

func score(t testing.TB, s *Service, r ScoreRequest) (*ScoreAnswer, *events) {
	t.Helper()
	if err := s.Validate(&r); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	ans, err := s.Score(context.Background(), r, run.Env{Events: ev, Budget: &llmcalltest.Budget{}})
	if err != nil {
		t.Fatal(err)
	}
	return ans, ev
}

// TestScoreSamples: every sample scored end to end on the tiny model: the
// events in order, a score per criterion whose evidence is only verified
// candidate lines, a signed draft that verifies, no name anywhere in it.
func TestScoreSamples(t *testing.T) {
	s := testService(t)
	for _, smp := range Samples() {
		t.Run(smp.ID, func(t *testing.T) {
			ans, ev := score(t, s, ScoreRequest{SampleID: smp.ID})
			r, _ := RubricByID(smp.Rubric)
			want := append([]string{"ready"}, slices.Repeat([]string{"receipt", "score"}, len(r.Criteria))...)
			want = append(want, "draft", "budget", "done")
			if strings.Join(ev.types, ",") != strings.Join(want, ",") {
				t.Errorf("events %v", ev.types)
			}
			if len(ans.Draft.Scores) != len(r.Criteria) || ans.Draft.Summary.MaxTotal != r.MaxTotal() {
				t.Fatalf("draft %+v", ans.Draft.Summary)
			}
			cand := map[int]string{}
			for i, l := range smp.Lines {
				if l.Role == Candidate {
					cand[i+1] = l.Text
				}
			}
			for _, sc := range ans.Draft.Scores {
				if sc.Level < 0 || sc.Level > sc.MaxLevel || sc.Grounding == "" || sc.Receipt == "" {
					t.Errorf("score %+v", sc)
				}
				for _, e := range sc.Evidence {
					text, ok := cand[e.N]
					if !ok || !cite.ContainsWords(cite.Norm(text), cite.Norm(e.Text)) {
						t.Errorf("evidence %+v is not a candidate line's words", e)
					}
				}
				if sc.P != nil && (*sc.P <= 0 || *sc.P > 1) {
					t.Errorf("p %v", *sc.P)
				}
			}
			if c := ans.Draft.RecordCheck; !c.OK || !c.SignedByThisBox {
				t.Errorf("record check %+v", c)
			}
			raw, _ := json.Marshal(ans.Draft.Record)
			for _, name := range []string{"Maria", "Lopez", "Tom", "Priya"} {
				if strings.Contains(string(raw), name) {
					t.Errorf("the record holds the name %s", name)
				}
			}
			if smp.ID == "stats-strong" && (ans.Ready.Blinding.Detected < 2 || ans.Ready.Blinding.Replaced < 3) {
				t.Errorf("blinding %+v", ans.Ready.Blinding)
			}
			if smp.ID == "stats-weak" && len(ans.Ready.Leading) != 2 {
				t.Errorf("leading %+v", ans.Ready.Leading)
			}
			if smp.ID == "support-weak" && (len(ans.Ready.Personal) != 1 || len(ans.Ready.Leading) != 1) {
				t.Errorf("personal %+v leading %+v", ans.Ready.Personal, ans.Ready.Leading)
			}
		})
	}
}

// TestMinorRecordHashesOnly: a minor's draft and review keep hashes only:
// no line text, reason, quote, model answer or name.
func TestMinorRecordHashesOnly(t *testing.T) {
	s := testService(t)
	if err := s.Validate(&ScoreRequest{SampleID: "stats-strong", Minor: true}); err == nil || !strings.Contains(err.Error(), "consent_basis") {
		t.Errorf("a minor without consent_basis: %v", err)
	}
	ans, _ := score(t, s, ScoreRequest{SampleID: "stats-strong", Minor: true, ConsentBasis: "school_official", Names: []string{"Maria Lopez"}})
	raw, _ := json.Marshal(ans.Draft.Record)
	smp := SampleByID("stats-strong")
	rubric, _ := json.Marshal(Rubrics()["intro-stats-viva"])
	for _, l := range smp.Lines {
		for _, w := range strings.Fields(l.Text) {
			if len(w) > 7 && strings.Contains(string(raw), w) && !strings.Contains(strings.ToLower(string(rubric)), strings.ToLower(w)) {
				t.Errorf("the minor's record holds %q", w)
			}
		}
	}
	for _, sc := range ans.Draft.Scores {
		if sc.Reason != "" && strings.Contains(string(raw), sc.Reason) {
			t.Errorf("the minor's record holds a reason")
		}
	}
	var rec attest.Record
	_ = json.Unmarshal(raw, &rec)
	for i, e := range rec.Entries {
		if e.Text != nil && e.Data["name"] != "rubric" {
			t.Errorf("entry %d (%s) keeps text", i+1, e.Type)
		}
	}
	rv, err := s.Review(context.Background(), ReviewRequest{Draft: raw, Examiner: "Ms Examiner", Decisions: confirmAll(ans.Draft.Scores, "level looks right")})
	if err != nil {
		t.Fatal(err)
	}
	rr, _ := json.Marshal(rv.Bundle.Review)
	if strings.Contains(string(rr), "level looks right") || strings.Contains(string(rr), "Ms Examiner") {
		t.Errorf("the minor's review keeps a reason or a name: %s", rr)
	}
}

func confirmAll(scores []Score, reason string) []Decision {
	var out []Decision
	for _, sc := range scores {
		out = append(out, Decision{Criterion: sc.Criterion, Action: Confirm, Reason: reason})
	}
	return out
}

func TestGrounding(t *testing.T) {
	lines := []Line{
		{N: 1, Role: Examiner, Text: "What is the median here?"},
		{N: 2, Role: Candidate, Text: "The median is 12 because the data is skewed."},
		{N: 3, Role: Candidate, Text: "I would use a rank test."},
	}
	cl := cite.Lines{}
	for _, l := range lines {
		cl = append(cl, cite.Line{N: l.N, Text: l.Text})
	}
	for _, c := range []struct {
		name     string
		cites    []string
		grounded bool
		flag     string
		kept     int
	}{
		{"verbatim", []string{"[2] the data is skewed", "[3] use a rank test"}, true, "", 2},
		{"fabricated quote", []string{"[2] the mean is 12"}, false, FlagNotVerbatim, 0},
		{"examiner line", []string{"[1] What is the median here"}, false, FlagExaminerLine, 0},
		{"missing line", []string{"[9] anything"}, false, FlagLineMissing, 0},
		{"not a citation", []string{"the data is skewed"}, false, FlagNotVerbatim, 0},
		{"none", nil, false, FlagNoEvidence, 0},
		{"one good one bad", []string{"[2] the median is 12", "[3] a t-test"}, false, FlagNotVerbatim, 1},
	} {
		g, ev, flags := ground(c.cites, lines, cl, []string{})
		if (g == Grounded) != c.grounded || len(ev) != c.kept || (c.flag != "" && !slices.Contains(flags, c.flag)) {
			t.Errorf("%s: %q %v %v", c.name, g, ev, flags)
		}
	}
}

// TestReviewRules: one decision per criterion, an override with level and
// reason; the final total from the decisions; the bundle verifies, and an
// edited reason or line text fails naming its entry.
func TestReviewRules(t *testing.T) {
	s := testService(t)
	ans, _ := score(t, s, ScoreRequest{SampleID: "support-strong"})
	draft, _ := json.Marshal(ans.Draft.Record)
	sc := ans.Draft.Scores
	lvl := func(n int) *int { return &n }
	other := (sc[0].Level + 1) % (sc[0].MaxLevel + 1)
	for _, c := range []struct {
		name string
		mod  func(ds []Decision) []Decision
		says string
	}{
		{"missing decision", func(ds []Decision) []Decision { return ds[1:] }, "no decision for criterion"},
		{"override without level", func(ds []Decision) []Decision {
			ds[0] = Decision{Criterion: sc[0].Criterion, Action: Override, Reason: "x"}
			return ds
		}, "needs level and reason"},
		{"override without reason", func(ds []Decision) []Decision {
			ds[0] = Decision{Criterion: sc[0].Criterion, Action: Override, Level: lvl(0)}
			return ds
		}, "needs level and reason"},
		{"override out of range", func(ds []Decision) []Decision {
			ds[0] = Decision{Criterion: sc[0].Criterion, Action: Override, Level: lvl(99), Reason: "x"}
			return ds
		}, "outside 0 to"},
		{"confirm changing the level", func(ds []Decision) []Decision { ds[0].Level = lvl(other); return ds }, "confirm keeps"},
		{"unknown action", func(ds []Decision) []Decision { ds[0].Action = "accept"; return ds }, "confirm or override"},
		{"twice", func(ds []Decision) []Decision { return append(ds, ds[0]) }, "decided twice"},
		{"unknown criterion", func(ds []Decision) []Decision { return append(ds, Decision{Criterion: "x", Action: Confirm}) }, "not in the draft"},
	} {
		_, err := s.Review(context.Background(), ReviewRequest{Draft: draft, Examiner: "J. Okafor", Decisions: c.mod(confirmAll(sc, ""))})
		if !problem.Is(err, problem.Invalid) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := s.Review(context.Background(), ReviewRequest{Draft: draft, Decisions: confirmAll(sc, "")}); err == nil {
		t.Error("a review without an examiner")
	}
	forged := strings.Replace(string(draft), `"level":"`, `"level":"1`, 1)
	if _, err := s.Review(context.Background(), ReviewRequest{Draft: []byte(forged), Examiner: "x", Decisions: confirmAll(sc, "")}); err == nil {
		t.Error("a changed draft was reviewed")
	}

	ds := confirmAll(sc, "")
	ds[0] = Decision{Criterion: sc[0].Criterion, Action: Override, Level: lvl(other), Reason: "the candidate isolated the cause in line 5"}
	rv, err := s.Review(context.Background(), ReviewRequest{Draft: draft, Examiner: "J. Okafor", Decisions: ds})
	if err != nil {
		t.Fatal(err)
	}
	want := other
	for _, x := range sc[1:] {
		want += x.Level
	}
	if rv.FinalTotal != want || rv.Overrides != 1 || rv.MaxTotal != 12 || !rv.Check.OK {
		t.Fatalf("review %+v", rv)
	}
	review, _ := json.Marshal(rv.Bundle.Review)
	ok, err := VerifyBundle(bundleBody(draft, review), s.Key.PublicKey())
	if err != nil || !ok.OK || ok.Summary.FinalTotal != itoa(want) || ok.Summary.Overrides != "1" {
		t.Fatalf("verify %+v %v", ok, err)
	}
	// an edited reason (review) and an edited line (draft) fail, named.
	edited := strings.Replace(string(review), "isolated the cause", "guessed the cause", 1)
	v, _ := VerifyBundle(bundleBody(draft, []byte(edited)), s.Key.PublicKey())
	if v.OK || v.FirstBadEntry == nil || !strings.HasPrefix(*v.FirstBadEntry, "review entry ") {
		t.Errorf("edited reason: %+v", v)
	}
	// another draft this box signed, swapped in: the link names it.
	second, _ := score(t, s, ScoreRequest{SampleID: "support-weak"})
	otherDraft, _ := json.Marshal(second.Draft.Record)
	v, _ = VerifyBundle(bundleBody(otherDraft, review), s.Key.PublicKey())
	if v.OK || v.FirstBadEntry == nil || *v.FirstBadEntry != "review entry 1" {
		t.Errorf("swapped draft: %+v", v)
	}
	editedDraft := strings.Replace(string(draft), "reproduce it", "guess it", 1)
	v, _ = VerifyBundle(bundleBody([]byte(editedDraft), review), s.Key.PublicKey())
	if v.OK || v.FirstBadEntry == nil || !strings.HasPrefix(*v.FirstBadEntry, "draft entry ") {
		t.Errorf("edited line: %+v", v)
	}
}

func bundleBody(draft, review []byte) VerifyBody {
	var b VerifyBody
	_ = json.Unmarshal([]byte(`{"bundle":{"draft":`+string(draft)+`,"review":`+string(review)+`}}`), &b)
	return b
}

// TestOrderInvariance scores two samples with their criteria in reverse
// order and compares the levels (goal: at least 95% keep theirs; make
// bench measures all four).
func TestOrderInvariance(t *testing.T) {
	s := testService(t)
	same, total := 0, 0
	for _, smp := range []Sample{*SampleByID("stats-weak"), *SampleByID("support-weak")} {
		a, _ := score(t, s, ScoreRequest{SampleID: smp.ID})
		r, _ := RubricByID(smp.Rubric)
		var rev []string
		for i := len(r.Criteria) - 1; i >= 0; i-- {
			rev = append(rev, r.Criteria[i].ID)
		}
		b, _ := score(t, s, ScoreRequest{SampleID: smp.ID, order: rev})
		for i := range a.Draft.Scores {
			total++
			if a.Draft.Scores[i].Level == b.Draft.Scores[i].Level {
				same++
			}
		}
	}
	t.Logf("order invariance: %d of %d criteria keep their level", same, total)
	if float64(same) < 0.95*float64(total) {
		t.Errorf("order invariance %d of %d", same, total)
	}
}
