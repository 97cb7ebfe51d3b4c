package figures

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"boxd/pipelines/migration/scoring"
)

// scores makes n scores: pass passes, then fail fails (model errors for
// the first errs of them), then unscorable ones.
func scores(pass, fail, errs, unscorable int) []scoring.Score {
	var out []scoring.Score
	add := func(outcome, kind string) {
		out = append(out, scoring.Score{Example: fmt.Sprintf("e%03d", len(out)+1), Candidate: "c", Outcome: outcome, Kind: kind,
			LatencyMS: int64(100 + len(out)), CurrentLatencyMS: -1, CurrentPromptTokens: 100, CurrentCompletionTok: 20, TokensSource: "estimated"})
	}
	for range pass {
		add(scoring.Pass, scoring.KindMatch)
	}
	for i := range fail {
		if i < errs {
			add(scoring.Fail, scoring.KindModelError)
		} else {
			add(scoring.Fail, scoring.KindMismatch)
		}
	}
	for range unscorable {
		add(scoring.Unscorable, scoring.KindNoReference)
	}
	return out
}

// TestVerdictRules: the contract's section 3, each row.
func TestVerdictRules(t *testing.T) {
	p := Params{Task: scoring.TaskExact, PassRate: 0.8, Seed: DefaultSeed, Resamples: 2000, InputPerM: 1, OutputPerM: 2}
	for _, c := range []struct {
		name                     string
		pass, fail, errs, unsc   int
		want                     string
		reasonHas                string
		threshold                float64
		wantK, wantN, wantUnscor string
	}{
		{"whole interval at or above", 100, 0, 0, 0, VerdictGo, "at or above", 0.8, "100", "100", "0"},
		{"whole interval below", 10, 90, 0, 0, VerdictNoGo, "below", 0.8, "10", "100", "0"},
		{"straddles", 17, 3, 0, 0, VerdictInconclusive, "straddles", 0.8, "17", "20", "0"},
		// 100 of 100 would be go; 12 unscorable of 112 is over 10%.
		{"too many unscorable", 100, 0, 0, 12, VerdictInconclusive, "could not be scored", 0.8, "100", "100", "12"},
		// 10% exactly is not more than 10%.
		{"unscorable at 10%", 90, 0, 0, 10, VerdictGo, "at or above", 0.8, "90", "90", "10"},
		// failed calls count as fails: 60 passes and 40 failed calls.
		{"failed calls are fails", 60, 40, 40, 0, VerdictNoGo, "below", 0.8, "60", "100", "0"},
	} {
		p.PassRate = c.threshold
		s := Summarize(scores(c.pass, c.fail, c.errs, c.unsc), p)
		if s.Verdict != c.want || !strings.Contains(strings.Join(s.Reasons, "; "), c.reasonHas) {
			t.Errorf("%s: %s %v, want %s (%s)", c.name, s.Verdict, s.Reasons, c.want, c.reasonHas)
		}
		if s.Pass.K != c.wantK || s.Pass.N != c.wantN || s.Unscorable.Count != c.wantUnscor {
			t.Errorf("%s: pass %s/%s unscorable %s", c.name, s.Pass.K, s.Pass.N, s.Unscorable.Count)
		}
	}
}

func TestSummaryFigures(t *testing.T) {
	p := Params{Task: scoring.TaskExact, PassRate: 0.9, Seed: 7, Resamples: 1000, InputPerM: 2.5, OutputPerM: 10, HourDollars: 3.6, PriceSource: "test"}
	sc := scores(8, 2, 1, 0)
	sc[9].Detail = "extra_text"
	sc[0].CurrentLatencyMS, sc[1].CurrentLatencyMS = 300, 500
	s := Summarize(sc, p)
	// Wilson 8/10 (R: prop.test(8, 10, correct = FALSE)$conf.int).
	if s.Pass.Rate != "0.8" || s.Pass.CI95 != [2]string{"0.490162", "0.943318"} || s.Pass.Interval != "wilson" {
		t.Errorf("pass: %+v", s.Pass)
	}
	// Clopper–Pearson 8/10 (R: binom.test(8, 10)$conf.int).
	if s.Pass.CI95Exact != [2]string{"0.443905", "0.974789"} {
		t.Errorf("exact: %+v", s.Pass.CI95Exact)
	}
	if len(s.Clusters) != 2 || s.Clusters[0].Cluster != "mismatch:extra_text" && s.Clusters[0].Cluster != "model_error" || s.Clusters[0].Share != "0.5" {
		t.Errorf("clusters: %+v", s.Clusters)
	}
	// latencies 100..109 ms: type 7 p50 104.5, p95 108.55.
	if s.LatencyMS.P50 != "104.5" || s.LatencyMS.P95 != "108.55" || s.LatencyMS.CurrentP50 != "400" || s.LatencyMS.CurrentN != "2" {
		t.Errorf("latency: %+v", s.LatencyMS)
	}
	// incumbent: 1000 × (100 × 2.5 + 20 × 10) / 1e6 = 0.45 dollars;
	// candidate: mean 104.5 ms at 3.6 $/h = 1000 × 0.1045 s × 0.001 $/s = 0.1045.
	if s.Cost.CurrentPer1K != "0.45" || s.Cost.Per1K != "0.1045" {
		t.Errorf("cost: %+v", s.Cost)
	}
	again := Summarize(sc, p)
	if !reflect.DeepEqual(s, again) {
		t.Error("the summary is not deterministic")
	}
	p.Seed = 8
	if other := Summarize(sc, p); other.Stability.Seed != "8" {
		t.Errorf("seed not reported: %+v", other.Stability)
	}
}

func TestClustersOrder(t *testing.T) {
	var sc []scoring.Score
	for i, k := range []string{"b", "a", "b", "c", "a", "b"} {
		sc = append(sc, scoring.Score{Example: fmt.Sprint(i), Outcome: scoring.Fail, Kind: scoring.KindFieldDiffers, Detail: k})
	}
	sc = append(sc, scoring.Score{Example: "s", Outcome: scoring.Fail, Kind: scoring.KindSchema, Detail: "/items/3/sku"}, scoring.Score{Example: "t", Outcome: scoring.Fail, Kind: scoring.KindSchema, Detail: "/items/12/sku"})
	got := clusters(sc)
	var names []string
	for _, c := range got {
		names = append(names, c.Cluster+"="+c.Count)
	}
	want := "field_differs:b=3 field_differs:a=2 schema:/items/*/sku=2 field_differs:c=1"
	if strings.Join(names, " ") != want {
		t.Errorf("clusters %s, want %s", strings.Join(names, " "), want)
	}
	if strings.Join(got[0].Examples, ",") != "0,2,5" {
		t.Errorf("examples %v", got[0].Examples)
	}
}

func TestLabelFigures(t *testing.T) {
	sc := []scoring.Score{
		{Outcome: scoring.Pass, LabelCurrent: "yes", LabelCandidate: "yes"},
		{Outcome: scoring.Fail, LabelCurrent: "yes", LabelCandidate: "no"},
		{Outcome: scoring.Fail, LabelCurrent: "no"},
		{Outcome: scoring.Unscorable},
	}
	l, conf := labelFigures(sc)
	if l.Current["yes"] != "2" || l.Current["no"] != "1" || l.Candidate["no"] != "1" || conf["yes"]["no"] != "1" || conf["no"]["(none)"] != "1" {
		t.Errorf("labels %+v confusion %+v", l, conf)
	}
}

func TestJudgeControlsRule(t *testing.T) {
	p := Params{Task: scoring.TaskFreetext, PassRate: 0.5, Seed: 1, Resamples: 100, JudgeControls: 4, JudgeControlsPassed: 4}
	sc := scores(40, 0, 0, 0)
	if s := Summarize(sc, p); s.Verdict != VerdictGo || s.JudgeControls.Passed != "4" {
		t.Errorf("controls passed: %s", s.Verdict)
	}
	p.JudgeControlsPassed = 3
	if s := Summarize(sc, p); s.Verdict != VerdictInconclusive || !strings.Contains(strings.Join(s.Reasons, ";"), "failed 1 of its 4 controls") {
		t.Errorf("a failed control: %s %v", s.Verdict, s.Reasons)
	}
}
