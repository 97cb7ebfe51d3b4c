package scoring

import (
	"strings"
)

// Outcomes of an example for a candidate.
const (
	Pass       = "pass"
	Fail       = "fail"
	Unscorable = "unscorable"
)

// Kinds say why (the first part of a failure's cluster).
const (
	KindMatch        = "match"         // exact: same after normalising
	KindMismatch     = "mismatch"      // exact: different (detail: the shape)
	KindSameLabel    = "same_label"    // label: the same label
	KindWrongLabel   = "wrong_label"   // label: another label (detail: current->candidate)
	KindNoLabel      = "no_label"      // label: the candidate's answer gives none
	KindFieldsAgree  = "fields_agree"  // json: valid, every field the same
	KindInvalidJSON  = "invalid_json"  // json: the candidate's answer is not JSON
	KindSchema       = "schema"        // json: it breaks the schema (detail: where)
	KindFieldDiffers = "field_differs" // json: a field differs (detail: the first such field)
	KindModelError   = "model_error"   // the candidate's call failed: a fail
	KindNoReference  = "no_reference"  // the logged answer cannot be scored against: unscorable
)

// Score is how one example scored for one candidate: what the record's
// score entry holds and the summary is computed from.
type Score struct {
	Example   string
	Candidate string
	Outcome   string
	Kind      string
	Detail    string
	// SchemaValid: "true" or "false" for a json task whose candidate
	// answered, "" otherwise.
	SchemaValid string
	// Fields: field path → "agree" or "differ" (json tasks with a
	// reference).
	Fields map[string]string
	// LabelCurrent and LabelCandidate: the labels (label tasks; "" for
	// none).
	LabelCurrent, LabelCandidate string
	// Judge: the freetext outcome (JudgeOutcomes), "" for other tasks.
	Judge string
	// LatencyMS is the candidate call's time; PromptTokens and
	// CompletionTokens its usage.
	LatencyMS, PromptTokens, CompletionTokens int64
	// CurrentLatencyMS is the logged latency (-1: not given);
	// CurrentPromptTokens and CurrentCompletionTokens the logged usage,
	// or estimates (TokensSource "estimated": 4 bytes a token).
	CurrentLatencyMS                          int64
	CurrentPromptTokens, CurrentCompletionTok int64
	TokensSource                              string
}

// Code scores a candidate's answer against the logged one for the
// tasks scored in code (exact, label, json). ref is the example's label
// (label tasks; nil: the logged answer's). callFailed: the candidate's
// call failed, which is a fail.
func Code(t *Task, logged string, ref *string, answer string, callFailed bool, sc *Score) {
	switch t.Type {
	case TaskExact:
		if strings.TrimSpace(logged) == "" {
			sc.Outcome, sc.Kind = Unscorable, KindNoReference
			return
		}
		if callFailed {
			sc.Outcome, sc.Kind = Fail, KindModelError
			return
		}
		a, b := Normalize(logged), Normalize(answer)
		if a == b {
			sc.Outcome, sc.Kind = Pass, KindMatch
			return
		}
		sc.Outcome, sc.Kind, sc.Detail = Fail, KindMismatch, shape(a, b)
	case TaskLabel:
		cur := -1
		if ref != nil {
			cur = Extract(*ref, t.Labels, ExtractWhole)
		} else {
			cur = Extract(logged, t.Labels, t.Extract)
		}
		if cur < 0 {
			sc.Outcome, sc.Kind = Unscorable, KindNoReference
			return
		}
		sc.LabelCurrent = t.Labels[cur]
		if callFailed {
			sc.Outcome, sc.Kind = Fail, KindModelError
			return
		}
		got := Extract(answer, t.Labels, t.Extract)
		switch {
		case got < 0:
			sc.Outcome, sc.Kind = Fail, KindNoLabel
		case got == cur:
			sc.LabelCandidate = t.Labels[got]
			sc.Outcome, sc.Kind = Pass, KindSameLabel
		default:
			sc.LabelCandidate = t.Labels[got]
			sc.Outcome, sc.Kind, sc.Detail = Fail, KindWrongLabel, t.Labels[cur]+"->"+t.Labels[got]
		}
	case TaskJSON:
		want, err := ParseJSON(logged)
		if err != nil || t.schema.Validate(want) != nil {
			sc.Outcome, sc.Kind = Unscorable, KindNoReference
			return
		}
		if callFailed {
			sc.Outcome, sc.Kind = Fail, KindModelError
			return
		}
		got, err := ParseJSON(answer)
		if err != nil {
			sc.SchemaValid = "false"
			sc.Outcome, sc.Kind = Fail, KindInvalidJSON
			return
		}
		if err := t.schema.Validate(got); err != nil {
			sc.SchemaValid = "false"
			sc.Outcome, sc.Kind, sc.Detail = Fail, KindSchema, schemaPlace(err.Error())
			return
		}
		sc.SchemaValid = "true"
		sc.Fields = map[string]string{}
		first := ""
		for _, f := range t.Fields {
			a, okA := At(want, f)
			b, okB := At(got, f)
			if okA == okB && (!okA || SameJSON(a, b)) {
				sc.Fields[f] = "agree"
				continue
			}
			sc.Fields[f] = "differ"
			if first == "" {
				first = f
			}
		}
		if first == "" {
			sc.Outcome, sc.Kind = Pass, KindFieldsAgree
			return
		}
		sc.Outcome, sc.Kind, sc.Detail = Fail, KindFieldDiffers, first
	}
}

// shape describes how two normalised answers differ (an exact mismatch's
// cluster detail): empty, extra_text (the candidate's holds the logged
// one), truncated (the logged one holds the candidate's), or different.
func shape(logged, answer string) string {
	switch {
	case answer == "":
		return "empty"
	case strings.Contains(answer, logged):
		return "extra_text"
	case strings.Contains(logged, answer):
		return "truncated"
	}
	return "different"
}

// schemaPlace is where a schema error is (its path), the cluster's
// detail: "/items/0: missing property 'sku'" → "/items/0".
func schemaPlace(msg string) string {
	if i := strings.Index(msg, ": "); i > 0 {
		return msg[:i]
	}
	return msg
}
