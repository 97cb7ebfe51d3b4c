package migration

import (
	"context"
	"encoding/json"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/migration/scoring"
)

// The pinned freetext judge: one prompt, versioned, its SHA-256 in
// GET /migration/info and in every record that used it. The judge is
// asked the same symmetric question twice, the answers in both orders:
// do the two answers agree on what the rubric says matters?
const (
	JudgeVersion = "boxd-migration-judge-1"
	JudgeSystem  = "You compare two answers to the same request. Decide whether they agree on everything the rubric says matters. " +
		"Differences in wording, order or length that the rubric does not care about do not count. " +
		"Reply with JSON only: {\"verdict\": \"same\"} or {\"verdict\": \"different\"}."
	JudgeTemplate = "Rubric: {{rubric}}\n\nRequest:\n{{request}}\n\nAnswer 1:\n{{first}}\n\nAnswer 2:\n{{second}}"
	// judgeMaxTokens bounds a judgment ({"verdict": "different"} with the
	// grammar's whitespace).
	judgeMaxTokens = 64
)

// judgeSchema constrains the judge's answer to the two verdicts.
var judgeSchema = json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["same","different"]}},"required":["verdict"],"additionalProperties":false}`)

// JudgePromptSHA256 is the SHA-256 of the judge's system prompt, a blank
// line and its template.
func JudgePromptSHA256() string { return attest.HashText(JudgeSystem + "\n\n" + JudgeTemplate) }

// judgment is one judge call's result.
type judgment struct {
	Order   string // "current_first" or "candidate_first"
	Verdict string // same, different, "" when the call failed
	Result  *llmcall.Result
	Err     error
}

// judge asks the pinned judge in both orders.
func (s *Service) judge(ctx context.Context, b run.Budget, ev llmcall.Events, rubric, request, current, candidate string) [2]judgment {
	var out [2]judgment
	pairs := [2][2]string{{current, candidate}, {candidate, current}}
	for i, p := range pairs {
		j := judgment{Order: "current_first"}
		if i == 1 {
			j.Order = "candidate_first"
		}
		user := strings.NewReplacer("{{rubric}}", rubric, "{{request}}", request, "{{first}}", p[0], "{{second}}", p[1]).Replace(JudgeTemplate)
		raw, res, err := s.Judge.JSON(ctx, b, judgeSchema, llmcall.Request{
			Messages:  []llmcall.Message{{Role: "system", Content: JudgeSystem}, {Role: "user", Content: user}},
			MaxTokens: judgeMaxTokens, Events: ev,
			Params: map[string]string{"purpose": "migration_judge", "judge": JudgeVersion, "judge_prompt_sha256": JudgePromptSHA256(), "order": j.Order},
		})
		j.Result, j.Err = res, err
		if err == nil {
			var v struct{ Verdict string }
			if json.Unmarshal(raw, &v) == nil && (v.Verdict == "same" || v.Verdict == "different") {
				j.Verdict = v.Verdict
			}
		}
		out[i] = j
	}
	return out
}

// Judge controls: before a freetext check trusts its judge, the judge is
// asked about pairs whose answer is known: an answer against itself
// ("same" in both orders) and two different examples' logged answers
// ("different" in both). A judge that fails any control cannot decide a
// migration: every candidate's verdict is then inconclusive.
const (
	ControlSame      = "same"
	ControlDifferent = "different"
	maxControls      = 2 // of each kind
)

// control is one judge control: its kind, the example whose request is
// shown, the other example (a different control's second answer) and
// the two judgments.
type control struct {
	Kind    string
	Example *Example
	Other   *Example
	Input   string
	Judged  [2]judgment
}

// Passed: the judge gave the known answer in both orders.
func (c *control) Passed() bool {
	return c.Judged[0].Verdict == c.Kind && c.Judged[1].Verdict == c.Kind
}

// controlPairs picks the controls: the first examples with a logged
// answer, against themselves; the first neighbouring pairs whose logged
// answers differ once normalised, against each other.
func controlPairs(r *Request) []*control {
	var out []*control
	same, diff := 0, 0
	for i := range r.Examples {
		a := &r.Examples[i]
		if scoring.Normalize(a.Output) == "" {
			continue
		}
		if same < maxControls {
			out = append(out, &control{Kind: ControlSame, Example: a, Other: a})
			same++
		}
		if diff < maxControls && i+1 < len(r.Examples) {
			b := &r.Examples[i+1]
			if n := scoring.Normalize(b.Output); n != "" && n != scoring.Normalize(a.Output) {
				out = append(out, &control{Kind: ControlDifferent, Example: a, Other: b})
				diff++
			}
		}
	}
	return out
}

// runControls asks the judge about every control.
func (s *Service) runControls(ctx context.Context, r *Request, env run.Env) []*control {
	cs := controlPairs(r)
	for _, c := range cs {
		c.Input = Render(r.Prompt.Template, c.Example.fields)
		c.Judged = s.judge(ctx, env.Budget, env.Events, r.Task.Rubric, c.Input, c.Example.Output, c.Other.Output)
	}
	return cs
}
