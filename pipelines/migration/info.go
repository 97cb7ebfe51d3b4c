package migration

import (
	"boxd/pipelines/migration/figures"
	"boxd/pipelines/migration/scoring"
)

// Info is GET /migration/info: the tasks and how each is scored, the
// limits, the statistics, the judge and its prompt, the candidates and
// the price table.
type Info struct {
	Tasks      []TaskInfo     `json:"tasks"`
	Limits     LimitsInfo     `json:"limits"`
	Statistics StatisticsInfo `json:"statistics"`
	Judge      JudgeInfo      `json:"judge"`
	Candidates []CandInfo     `json:"candidates"`
	Prices     PriceTable     `json:"price_table"`
	HourCost   string         `json:"hour_cost"`
	Estimate   string         `json:"estimate"`
	Record     string         `json:"record"`
}

// TaskInfo describes a task type.
type TaskInfo struct {
	Type    string   `json:"type"`
	Scoring string   `json:"scoring"`
	Fields  []string `json:"fields"`
	Extract []string `json:"extract,omitempty"`
	// Schema keywords and types (json).
	SchemaKeywords []string `json:"schema_keywords,omitempty"`
	SchemaTypes    []string `json:"schema_types,omitempty"`
}

// LimitsInfo are the body's limits.
type LimitsInfo struct {
	MinExamples     int     `json:"min_examples"`
	MaxExamples     int     `json:"max_examples"`
	MaxDemoExamples int     `json:"max_demo_examples"`
	MaxInputChars   int     `json:"max_input_chars"`
	MaxOutputChars  int     `json:"max_output_chars"`
	MaxOutputTokens int     `json:"max_output_tokens"`
	MaxCandidates   int     `json:"max_candidates"`
	MaxLabels       int     `json:"max_labels"`
	MaxFields       int     `json:"max_fields"`
	UnscorableLimit float64 `json:"unscorable_limit"`
	DefaultPassRate float64 `json:"default_pass_rate"`
}

// StatisticsInfo says how the figures are computed.
type StatisticsInfo struct {
	Interval   string `json:"interval"`
	Beside     string `json:"beside"`
	Verdict    string `json:"verdict"`
	Bootstrap  string `json:"bootstrap"`
	Clusters   string `json:"clusters"`
	Latency    string `json:"latency"`
	Cost       string `json:"cost"`
	Resamples  int    `json:"resamples"`
	Seed       uint64 `json:"default_seed"`
	Unscorable string `json:"unscorable"`
}

// JudgeInfo is the pinned freetext judge.
type JudgeInfo struct {
	Version      string   `json:"version"`
	Model        string   `json:"model"`
	WeightsRoot  string   `json:"weights_root"`
	Ready        bool     `json:"ready"`
	System       string   `json:"system"`
	Template     string   `json:"template"`
	PromptSHA256 string   `json:"prompt_sha256"`
	Rule         string   `json:"rule"`
	Outcomes     []string `json:"outcomes"`
}

// CandInfo is a candidate model.
type CandInfo struct {
	ID          string `json:"id"`
	Model       string `json:"model"`
	WeightsRoot string `json:"weights_root"`
	File        string `json:"file"`
	Ready       bool   `json:"ready"`
	Note        string `json:"note"`
	Default     bool   `json:"default"`
}

// Info describes the service.
func (s *Service) Info() Info {
	in := Info{
		Tasks: []TaskInfo{
			{Type: scoring.TaskExact, Fields: []string{}, Scoring: "pass when both answers are the same after normalising: the text inside a code fence that wraps the answer, curly quotes made straight and quotes around the whole answer removed, white space collapsed, lower case, one trailing full stop dropped"},
			{Type: scoring.TaskLabel, Fields: []string{"labels", "extract"}, Extract: []string{scoring.ExtractWhole, scoring.ExtractFirst, scoring.ExtractLast, scoring.ExtractDoubleBracket},
				Scoring: "pass when the candidate's label is the example's label (or, without one, the label of the logged answer); whole: the normalised answer is a label; first/last: the label met first/last as whole words; double_bracket: the last [[X]]. A logged answer without a label is unscorable; a candidate answer without one fails (no_label)"},
			{Type: scoring.TaskJSON, Fields: []string{"schema", "fields"}, SchemaKeywords: scoring.SchemaKeywords, SchemaTypes: scoring.SchemaTypes,
				Scoring: "the answer (inside a code fence or not) must be JSON valid under the schema (schema_valid), and every field (dotted paths; default the schema's top-level properties) must equal the logged answer's: numbers by value, strings exactly. A logged answer that is not valid JSON under the schema is unscorable"},
			{Type: scoring.TaskFreetext, Fields: []string{"rubric"}, Scoring: "the pinned judge is asked, with the rubric, whether the two answers agree on what matters, once with each answer first"},
		},
		Limits: LimitsInfo{MinExamples: MinExamples, MaxExamples: MaxExamples, MaxDemoExamples: MaxDemoExamples, MaxInputChars: MaxInputChars,
			MaxOutputChars: MaxOutputChars, MaxOutputTokens: MaxOutputTokenCap, MaxCandidates: MaxCandidates, MaxLabels: scoring.MaxLabels,
			MaxFields: scoring.MaxFields, UnscorableLimit: figures.UnscorableLimit, DefaultPassRate: DefaultPassRate},
		Statistics: StatisticsInfo{
			Interval:  "95% Wilson score interval of k passes in n scored examples (R: prop.test(k, n, correct = FALSE)); it decides the verdict",
			Beside:    "95% Clopper-Pearson interval (R: binom.test(k, n)), reported as ci95_exact",
			Verdict:   "go when the whole interval is at or above thresholds.pass_rate; no-go when it is whole below; otherwise inconclusive; inconclusive too when more than 10% of examples are unscorable; a json task's thresholds.schema_valid is read the same way from the schema-valid rate's interval and can only lower the verdict",
			Bootstrap: "share of 10,000 resamples of the scored examples (with replacement, PCG seeded with the run's seed) whose verdict is the observed one",
			Clusters:  "failures grouped by kind, then detail (the first differing field, the label pair current->candidate, the schema place with array indexes as *, or the shape of an exact mismatch: empty, extra_text, truncated, different); largest first, then by name; up to 5 example ids each",
			Latency:   "p50 and p95 (R: quantile type 7) of the candidate's call times in ms; of the logged latency_ms where examples give it",
			Cost:      "per 1,000 requests in dollars: the incumbent's from the mean prompt and completion tokens (logged where given, else 4 bytes a token) at its price; the candidate's from its mean call time at migration.hour_cost dollars an hour",
			Resamples: figures.BootstrapResamples, Seed: figures.DefaultSeed,
			Unscorable: "an example is unscorable when the logged answer cannot be scored against (empty, no label, not valid JSON under the schema) or the judge cannot decide (position_biased, judge_error); a failed candidate call is a fail",
		},
		Judge: JudgeInfo{Version: JudgeVersion, System: JudgeSystem, Template: JudgeTemplate, PromptSHA256: JudgePromptSHA256(), Outcomes: scoring.JudgeOutcomes,
			Rule: "the judge answers same or different (JSON, grammar-constrained) with the current model's answer first, then with the candidate's first: same in both orders is agree (pass); different in both is disagree (fail); anything else is position_biased, and a failed judgment judge_error (both unscorable)"},
		Candidates: []CandInfo{},
		Prices:     s.Prices,
		HourCost:   num(s.HourDollars),
		Estimate:   "before any call, the generated tokens a run may spend: examples × candidates × max_output_tokens (default: twice the longest logged answer's estimated tokens and 16, within 16 to 1,024), and for freetext 2 judgments × 64 tokens each; over the caller's budget is 402",
		Record:     "service.record.v1, kind migration-check: params, the prompt and task, each example's rendered input and logged answer, every call with its signed receipt, every judgment, every score, each candidate's summary, the verdicts; POST /migration/verify recomputes every figure",
	}
	if s.Judge.Ready() {
		in.Judge.Model, in.Judge.WeightsRoot, in.Judge.Ready = s.Judge.ModelID, s.Judge.WeightsRoot, true
	}
	for i, c := range s.Candidates {
		ci := CandInfo{ID: c.ID, File: c.File, Note: c.Note, Default: i == 0}
		if c.Model != nil {
			ci.Model, ci.WeightsRoot, ci.Ready = c.Model.ModelID, c.Model.WeightsRoot, c.Model.Ready()
		}
		in.Candidates = append(in.Candidates, ci)
	}
	return in
}
