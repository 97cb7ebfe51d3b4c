package figures

import (
	"boxd/pipelines/migration/scoring"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
)

// Verdicts (contract section 3).
const (
	VerdictGo           = "go"
	VerdictNoGo         = "no-go"
	VerdictInconclusive = "inconclusive"
)

// UnscorableLimit: more than this share of unscorable examples makes the
// verdict inconclusive (contract section 3).
const UnscorableLimit = 0.10

// DecidingInterval names the interval the verdict is read from.
const DecidingInterval = "wilson"

// Params are the numbers a summary is computed with besides the scores;
// the record's params entry holds them (as strings).
type Params struct {
	Task        string
	PassRate    float64
	SchemaValid float64 // 0: no schema_valid threshold
	Seed        uint64
	Resamples   int
	// Incumbent price, dollars per million tokens, and where it came from.
	InputPerM, OutputPerM float64
	PriceSource           string
	// HourDollars is the box's cost of an hour of model time (0: unset).
	HourDollars float64
	// JudgeControls is how many judge controls a freetext check asked,
	// JudgeControlsPassed how many the judge got right.
	JudgeControls, JudgeControlsPassed int
}

// Summary is one candidate's result (contract: migration run summary).
// Every figure is a decimal string, as in the signed record.
type Summary struct {
	Pass          Rate                         `json:"pass"`
	Unscorable    Count                        `json:"unscorable"`
	Clusters      []Cluster                    `json:"clusters"`
	SchemaValid   *Rate                        `json:"schema_valid"`
	Fields        map[string]FieldAgreement    `json:"fields"`
	Labels        *Labels                      `json:"labels"`
	Confusion     map[string]map[string]string `json:"confusion"`
	JudgeOutcomes map[string]string            `json:"judge_outcomes"`
	JudgeControls *Count2                      `json:"judge_controls"`
	LatencyMS     Latency                      `json:"latency_ms"`
	Cost          Cost                         `json:"cost"`
	Verdict       string                       `json:"verdict"`
	Reasons       []string                     `json:"reasons"`
	Stability     Stability                    `json:"stability"`
}

// Rate is k of n with its 95% intervals.
type Rate struct {
	K          string    `json:"k"`
	N          string    `json:"n"`
	Rate       string    `json:"rate"`
	CI95       [2]string `json:"ci95"`       // Wilson: decides the verdict
	CI95Exact  [2]string `json:"ci95_exact"` // Clopper–Pearson, beside it
	Interval   string    `json:"interval"`   // "wilson"
	Threshold  string    `json:"threshold,omitempty"`
	ExactLabel string    `json:"exact_interval"` // "clopper-pearson"
}

// Count is a count and its share of the examples.
type Count struct {
	Count string `json:"count"`
	Share string `json:"share"`
}

// Cluster is a group of failing examples.
type Cluster struct {
	Cluster  string   `json:"cluster"`
	Count    string   `json:"count"`
	Share    string   `json:"share"` // of the failures
	Examples []string `json:"examples"`
}

// Count2 is k passed of n.
type Count2 struct {
	Passed string `json:"passed"`
	Total  string `json:"total"`
}

// FieldAgreement is a json field's agreement.
type FieldAgreement struct {
	Agree string `json:"agree"`
	N     string `json:"n"`
	Rate  string `json:"rate"`
}

// Labels counts each label given by the current model and the candidate.
type Labels struct {
	Current   map[string]string `json:"current"`
	Candidate map[string]string `json:"candidate"`
}

// Latency is the candidate's call times and the logged ones where given.
type Latency struct {
	P50        string `json:"p50"`
	P95        string `json:"p95"`
	CurrentP50 string `json:"current_p50"` // "" when no example gave latency_ms
	CurrentP95 string `json:"current_p95"`
	CurrentN   string `json:"current_n"`
}

// Cost is per 1,000 requests, in dollars.
type Cost struct {
	Per1K        string `json:"per_1k"`         // the candidate's ("" when migration.hour_cost is unset)
	CurrentPer1K string `json:"current_per_1k"` // the incumbent's
	Basis        string `json:"basis"`
	TokensGiven  string `json:"tokens_given"` // examples whose token counts were logged
}

// Stability is the verdict's bootstrap.
type Stability struct {
	BootstrapSameVerdict string `json:"bootstrap_same_verdict"`
	Resamples            string `json:"resamples"`
	Seed                 string `json:"seed"`
}

// maxClusterExamples is how many example ids a cluster lists.
const maxClusterExamples = 5

// Summarize computes a candidate's summary from its scores, in example
// order, and the params. It is deterministic: the verifier calls it on the
// record's score entries and compares every figure.
func Summarize(scores []scoring.Score, p Params) Summary {
	var s Summary
	n := len(scores)
	var outcomes []bool
	unscorable := 0
	for _, sc := range scores {
		switch sc.Outcome {
		case scoring.Pass:
			outcomes = append(outcomes, true)
		case scoring.Fail:
			outcomes = append(outcomes, false)
		default:
			unscorable++
		}
	}
	k := count(outcomes)
	s.Pass = rate(k, len(outcomes))
	s.Pass.Threshold = num(p.PassRate)
	s.Unscorable = Count{Count: itoa(unscorable), Share: share(unscorable, n)}
	s.Clusters = clusters(scores)
	switch p.Task {
	case scoring.TaskJSON:
		s.SchemaValid, s.Fields = jsonFigures(scores, p)
	case scoring.TaskLabel:
		s.Labels, s.Confusion = labelFigures(scores)
	case scoring.TaskFreetext:
		s.JudgeOutcomes = map[string]string{}
		for _, o := range scoring.JudgeOutcomes {
			s.JudgeOutcomes[o] = "0"
		}
		for _, sc := range scores {
			if sc.Judge != "" {
				c, _ := strconv.Atoi(s.JudgeOutcomes[sc.Judge])
				s.JudgeOutcomes[sc.Judge] = itoa(c + 1)
			}
		}
		s.JudgeControls = &Count2{Passed: itoa(p.JudgeControlsPassed), Total: itoa(p.JudgeControls)}
	}
	s.LatencyMS = latency(scores)
	s.Cost = cost(scores, p)
	verdictOf := func(k, n int) string { return passVerdict(k, n, p.PassRate) }
	s.Verdict, s.Reasons = verdict(s, k, len(outcomes), unscorable, n, p)
	resamples := p.Resamples
	if resamples <= 0 {
		resamples = BootstrapResamples
	}
	if len(outcomes) > 0 {
		s.Stability.BootstrapSameVerdict = Dec(SameVerdictShare(outcomes, resamples, p.Seed, verdictOf))
	} else {
		s.Stability.BootstrapSameVerdict = "0"
	}
	s.Stability.Resamples, s.Stability.Seed = itoa(resamples), strconv.FormatUint(p.Seed, 10)
	return s
}

// passVerdict reads the verdict from the pass rate's Wilson interval.
func passVerdict(k, n int, threshold float64) string {
	if n == 0 {
		return VerdictInconclusive
	}
	ci := Wilson(k, n)
	switch {
	case ci.Lo >= threshold:
		return VerdictGo
	case ci.Hi < threshold:
		return VerdictNoGo
	}
	return VerdictInconclusive
}

func verdict(s Summary, k, scored, unscorable, n int, p Params) (string, []string) {
	v := passVerdict(k, scored, p.PassRate)
	var reasons []string
	switch v {
	case VerdictGo:
		reasons = append(reasons, fmt.Sprintf("the whole 95%% interval of the pass rate [%s, %s] is at or above %s", s.Pass.CI95[0], s.Pass.CI95[1], num(p.PassRate)))
	case VerdictNoGo:
		reasons = append(reasons, fmt.Sprintf("the whole 95%% interval of the pass rate [%s, %s] is below %s", s.Pass.CI95[0], s.Pass.CI95[1], num(p.PassRate)))
	default:
		if scored == 0 {
			reasons = append(reasons, "no example could be scored")
		} else {
			reasons = append(reasons, fmt.Sprintf("the 95%% interval of the pass rate [%s, %s] straddles %s: more examples would narrow it", s.Pass.CI95[0], s.Pass.CI95[1], num(p.PassRate)))
		}
	}
	if p.SchemaValid > 0 && s.SchemaValid != nil {
		sk, _ := strconv.Atoi(s.SchemaValid.K)
		sn, _ := strconv.Atoi(s.SchemaValid.N)
		switch sv := passVerdict(sk, sn, p.SchemaValid); sv {
		case VerdictNoGo:
			v = VerdictNoGo
			reasons = append(reasons, fmt.Sprintf("the whole 95%% interval of the schema-valid rate [%s, %s] is below %s", s.SchemaValid.CI95[0], s.SchemaValid.CI95[1], num(p.SchemaValid)))
		case VerdictInconclusive:
			if v == VerdictGo {
				v = VerdictInconclusive
			}
			reasons = append(reasons, fmt.Sprintf("the 95%% interval of the schema-valid rate [%s, %s] straddles %s", s.SchemaValid.CI95[0], s.SchemaValid.CI95[1], num(p.SchemaValid)))
		}
	}
	if p.Task == scoring.TaskFreetext && p.JudgeControlsPassed < p.JudgeControls {
		v = VerdictInconclusive
		reasons = append(reasons, fmt.Sprintf("the judge failed %d of its %d controls (an answer against itself must be the same, two different answers different, in both orders): its judgments cannot decide", p.JudgeControls-p.JudgeControlsPassed, p.JudgeControls))
	}
	if n > 0 && float64(unscorable) > UnscorableLimit*float64(n) {
		v = VerdictInconclusive
		reasons = append(reasons, fmt.Sprintf("%d of %d examples could not be scored, more than %s", unscorable, n, "10%"))
	}
	return v, reasons
}

func rate(k, n int) Rate {
	r := Rate{K: itoa(k), N: itoa(n), Interval: DecidingInterval, ExactLabel: "clopper-pearson"}
	if n == 0 {
		r.Rate, r.CI95, r.CI95Exact = "0", [2]string{"0", "1"}, [2]string{"0", "1"}
		return r
	}
	w, cp := Wilson(k, n), ClopperPearson(k, n)
	r.Rate = Dec(float64(k) / float64(n))
	r.CI95 = [2]string{Dec(w.Lo), Dec(w.Hi)}
	r.CI95Exact = [2]string{Dec(cp.Lo), Dec(cp.Hi)}
	return r
}

var index = regexp.MustCompile(`/\d+(/|$)`)

// clusters groups the failures: by kind, then by its detail (the field,
// the label pair, the schema place with array indexes as *, the shape of
// an exact mismatch). Largest first, then by name; each lists its first
// example ids in example order.
func clusters(scores []scoring.Score) []Cluster {
	failed := 0
	ids := map[string][]string{}
	for _, sc := range scores {
		if sc.Outcome != scoring.Fail {
			continue
		}
		failed++
		key := sc.Kind
		if sc.Detail != "" {
			key += ":" + index.ReplaceAllString(index.ReplaceAllString(sc.Detail, "/*$1"), "/*$1")
		}
		ids[key] = append(ids[key], sc.Example)
	}
	out := make([]Cluster, 0, len(ids))
	for k, v := range ids {
		ex := v[:min(len(v), maxClusterExamples)]
		out = append(out, Cluster{Cluster: k, Count: itoa(len(v)), Share: share(len(v), failed), Examples: slices.Clone(ex)})
	}
	sort.Slice(out, func(i, j int) bool {
		ci, _ := strconv.Atoi(out[i].Count)
		cj, _ := strconv.Atoi(out[j].Count)
		if ci != cj {
			return ci > cj
		}
		return out[i].Cluster < out[j].Cluster
	})
	return out
}

func jsonFigures(scores []scoring.Score, p Params) (*Rate, map[string]FieldAgreement) {
	valid, answered := 0, 0
	agree, seen := map[string]int{}, map[string]int{}
	for _, sc := range scores {
		if sc.SchemaValid != "" {
			answered++
			if sc.SchemaValid == "true" {
				valid++
			}
		}
		for f, v := range sc.Fields {
			seen[f]++
			if v == "agree" {
				agree[f]++
			}
		}
	}
	r := rate(valid, answered)
	if p.SchemaValid > 0 {
		r.Threshold = num(p.SchemaValid)
	}
	fields := make(map[string]FieldAgreement, len(seen))
	for f, n := range seen {
		fields[f] = FieldAgreement{Agree: itoa(agree[f]), N: itoa(n), Rate: share(agree[f], n)}
	}
	return &r, fields
}

func labelFigures(scores []scoring.Score) (*Labels, map[string]map[string]string) {
	l := &Labels{Current: map[string]string{}, Candidate: map[string]string{}}
	conf := map[string]map[string]string{}
	inc := func(m map[string]string, k string) {
		c, _ := strconv.Atoi(m[k])
		m[k] = itoa(c + 1)
	}
	for _, sc := range scores {
		if sc.LabelCurrent != "" {
			inc(l.Current, sc.LabelCurrent)
		}
		if sc.LabelCandidate != "" {
			inc(l.Candidate, sc.LabelCandidate)
		}
		if sc.LabelCurrent != "" && sc.Outcome != scoring.Unscorable {
			got := sc.LabelCandidate
			if got == "" {
				got = "(none)"
			}
			if conf[sc.LabelCurrent] == nil {
				conf[sc.LabelCurrent] = map[string]string{}
			}
			inc(conf[sc.LabelCurrent], got)
		}
	}
	return l, conf
}

func latency(scores []scoring.Score) Latency {
	var cand, cur []float64
	for _, sc := range scores {
		cand = append(cand, float64(sc.LatencyMS))
		if sc.CurrentLatencyMS >= 0 {
			cur = append(cur, float64(sc.CurrentLatencyMS))
		}
	}
	l := Latency{P50: Dec(Percentile(cand, 0.5)), P95: Dec(Percentile(cand, 0.95)), CurrentN: itoa(len(cur))}
	if len(cur) > 0 {
		l.CurrentP50, l.CurrentP95 = Dec(Percentile(cur, 0.5)), Dec(Percentile(cur, 0.95))
	}
	return l
}

// cost: the incumbent's per 1,000 requests from the mean logged (or
// estimated) token counts at its price; the candidate's from its mean call
// time at migration.hour_cost.
func cost(scores []scoring.Score, p Params) Cost {
	var in, out, ms float64
	given := 0
	for _, sc := range scores {
		in += float64(sc.CurrentPromptTokens)
		out += float64(sc.CurrentCompletionTok)
		ms += float64(sc.LatencyMS)
		if sc.TokensSource == "given" {
			given++
		}
	}
	n := float64(max(len(scores), 1))
	c := Cost{TokensGiven: itoa(given)}
	c.CurrentPer1K = Dec(roundCents(1000 * (in/n*p.InputPerM + out/n*p.OutputPerM) / 1e6))
	c.Basis = "incumbent: mean prompt and completion tokens (logged where given, else 4 bytes a token) at " + p.PriceSource
	if p.HourDollars > 0 {
		c.Per1K = Dec(roundCents(1000 * (ms / n) / 3.6e6 * p.HourDollars))
		c.Basis += "; candidate: mean call time at " + num(p.HourDollars) + " dollars an hour (migration.hour_cost)"
	} else {
		c.Basis += "; candidate: migration.hour_cost is not set"
	}
	return c
}

// roundCents keeps a dollar figure to a hundredth of a cent.
func roundCents(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func count(b []bool) int {
	k := 0
	for _, v := range b {
		if v {
			k++
		}
	}
	return k
}

func share(k, n int) string {
	if n == 0 {
		return "0"
	}
	return Dec(float64(k) / float64(n))
}

func itoa(i int) string { return strconv.Itoa(i) }

// num writes a parameter so that it reads back exactly.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
