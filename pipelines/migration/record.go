package migration

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/records"
	"boxd/pipelines/migration/figures"
	"boxd/pipelines/migration/scoring"
)

// Entry types of a migration record beyond records' input, output and
// model_call (README "Migration check" lists the whole layout).
const (
	EntryParams     = "params"      // the numbers the summaries are computed with
	EntryCallFailed = "call_failed" // a candidate call that failed before it was receipted
	EntryScore      = "score"       // one example for one candidate
	EntrySummary    = "summary"     // one candidate's figures
	EntryVerdicts   = "verdicts"    // the verdicts, the recommendation, the headline
)

// taskText is the task as the record keeps it (canonical JSON).
func taskText(t *scoring.Task) string {
	b, _ := json.Marshal(t)
	return string(b)
}

// record builds and signs the run's service.record.v1 chain: the params,
// the prompt and task, each example's rendered input and logged answer,
// every call with its signed receipt and its answer, every judgment, every
// score, each candidate's summary and the verdicts. Numbers are strings;
// the texts (prompt, inputs, answers) can be removed without breaking it.
func (s *Service) record(rep *Report, req *Request, p figures.Params, maxTokens int, controls []*control, calls []*call) (*attest.Record, error) {
	r := records.NewRun(Kind, rep.ReportID, map[string]string{"title": req.Title, "task": req.Task.Type})
	r.Add(EntryParams, nil, paramsData(p, req, maxTokens, len(req.Examples)))
	r.Input(records.Text("prompt", req.Prompt.System+"\n\n"+req.Prompt.Template))
	r.Input(records.Text("task", taskText(&req.Task)))
	for i := range req.Examples {
		ex := &req.Examples[i]
		r.Input(records.Artifact{Name: "input:" + ex.ID, Text: ptr(Render(req.Prompt.Template, ex.fields)), Data: map[string]string{"example": ex.ID}})
		data := map[string]string{"example": ex.ID}
		if ex.Label != nil {
			data["label"] = *ex.Label
		}
		r.Output(records.Artifact{Name: "current:" + ex.ID, Text: ptr(ex.Output), Data: data})
	}
	for _, c := range controls {
		for _, j := range c.Judged {
			controlEntry(r, c, j)
		}
	}
	for _, c := range calls {
		callEntry(r, c)
		for _, j := range c.judged {
			if j.Order != "" { // asked (freetext, with a logged and a candidate answer)
				judgeEntry(r, c, j)
			}
		}
		r.Add(EntryScore, nil, scoreData(c.score))
	}
	for _, id := range req.Candidates {
		r.Add(EntrySummary, nil, map[string]any{"candidate": id, "summary": plain(rep.Candidates[id])})
	}
	r.Add(EntryVerdicts, nil, verdictsData(rep))
	return r.Sign(s.Key, s.now())
}

func ptr(s string) *string { return &s }

func paramsData(p figures.Params, req *Request, maxTokens, n int) map[string]any {
	d := map[string]any{
		"task": p.Task, "pass_rate": num(p.PassRate), "schema_valid": num(p.SchemaValid), "seed": strconv.FormatUint(p.Seed, 10),
		"resamples": itoa(p.Resamples), "input_per_m": num(p.InputPerM), "output_per_m": num(p.OutputPerM), "price_source": p.PriceSource,
		"hour_dollars": num(p.HourDollars), "unscorable_limit": num(figures.UnscorableLimit), "interval": figures.DecidingInterval,
		"candidates": strings.Join(req.Candidates, ","), "examples": itoa(n), "max_output_tokens": itoa(maxTokens),
	}
	if p.Task == scoring.TaskFreetext {
		d["judge_version"], d["judge_prompt_sha256"] = JudgeVersion, JudgePromptSHA256()
		d["judge_controls"], d["judge_controls_passed"] = itoa(p.JudgeControls), itoa(p.JudgeControlsPassed)
	}
	return d
}

func callEntry(r *records.Run, c *call) {
	data := map[string]any{"example": c.ex.ID, "candidate": c.cand.ID, "purpose": "candidate", "latency_ms": i64(c.score.LatencyMS)}
	if c.err != nil {
		data["error"] = callError(c.err)
	}
	if c.result == nil || c.result.Receipt == nil {
		r.Add(EntryCallFailed, nil, data)
		return
	}
	data["prompt_tokens"], data["completion_tokens"] = i64(c.score.PromptTokens), i64(c.score.CompletionTokens)
	data["finish_reason"] = c.result.FinishReason
	data["receipt"] = plain(c.result.Receipt.Signed)
	text := c.result.Text
	r.Add(records.TypeModelCall, &text, withCall(data, c.result.Receipt.ID, c.cand.Model.ModelID))
}

func judgeEntry(r *records.Run, c *call, j judgment) {
	data := map[string]any{"example": c.ex.ID, "candidate": c.cand.ID, "purpose": "judge", "order": j.Order, "verdict": j.Verdict}
	if j.Err != nil {
		data["error"] = callError(j.Err)
	}
	if j.Result == nil || j.Result.Receipt == nil {
		r.Add(EntryCallFailed, nil, data)
		return
	}
	data["receipt"] = plain(j.Result.Receipt.Signed)
	text := j.Result.Text
	r.Add(records.TypeModelCall, &text, withCall(data, j.Result.Receipt.ID, j.Result.Receipt.Model))
}

// controlEntry is one judgment of a judge control.
func controlEntry(r *records.Run, c *control, j judgment) {
	data := map[string]any{"example": c.Example.ID, "other": c.Other.ID, "purpose": "judge_control", "control": c.Kind, "order": j.Order, "verdict": j.Verdict}
	if j.Err != nil {
		data["error"] = callError(j.Err)
	}
	if j.Result == nil || j.Result.Receipt == nil {
		r.Add(EntryCallFailed, nil, data)
		return
	}
	data["receipt"] = plain(j.Result.Receipt.Signed)
	text := j.Result.Text
	r.Add(records.TypeModelCall, &text, withCall(data, j.Result.Receipt.ID, j.Result.Receipt.Model))
}

func withCall(data map[string]any, receiptID, model string) map[string]any {
	data["receipt_id"], data["model"] = receiptID, model
	return data
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func scoreData(sc scoring.Score) map[string]any {
	d := map[string]any{
		"example": sc.Example, "candidate": sc.Candidate, "outcome": sc.Outcome, "kind": sc.Kind, "detail": sc.Detail,
		"schema_valid": sc.SchemaValid, "label_current": sc.LabelCurrent, "label_candidate": sc.LabelCandidate, "judge": sc.Judge,
		"latency_ms": i64(sc.LatencyMS), "prompt_tokens": i64(sc.PromptTokens), "completion_tokens": i64(sc.CompletionTokens),
		"current_latency_ms": i64(sc.CurrentLatencyMS), "current_prompt_tokens": i64(sc.CurrentPromptTokens),
		"current_completion_tokens": i64(sc.CurrentCompletionTok), "tokens_source": sc.TokensSource,
	}
	if sc.Fields != nil {
		f := make(map[string]any, len(sc.Fields))
		for k, v := range sc.Fields {
			f[k] = v
		}
		d["fields"] = f
	}
	return d
}

// readScore reads a score entry back.
func readScore(d map[string]any) (scoring.Score, error) {
	str := func(k string) string { s, _ := d[k].(string); return s }
	n := func(k string) (int64, error) {
		v, err := strconv.ParseInt(str(k), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not an integer", k)
		}
		return v, nil
	}
	sc := scoring.Score{Example: str("example"), Candidate: str("candidate"), Outcome: str("outcome"), Kind: str("kind"), Detail: str("detail"),
		SchemaValid: str("schema_valid"), LabelCurrent: str("label_current"), LabelCandidate: str("label_candidate"), Judge: str("judge"),
		TokensSource: str("tokens_source")}
	var err error
	for _, f := range []struct {
		k string
		v *int64
	}{{"latency_ms", &sc.LatencyMS}, {"prompt_tokens", &sc.PromptTokens}, {"completion_tokens", &sc.CompletionTokens},
		{"current_latency_ms", &sc.CurrentLatencyMS}, {"current_prompt_tokens", &sc.CurrentPromptTokens},
		{"current_completion_tokens", &sc.CurrentCompletionTok}} {
		if *f.v, err = n(f.k); err != nil {
			return sc, err
		}
	}
	if f, ok := d["fields"].(map[string]any); ok {
		sc.Fields = map[string]string{}
		for k, v := range f {
			s, _ := v.(string)
			sc.Fields[k] = s
		}
	}
	switch sc.Outcome {
	case scoring.Pass, scoring.Fail, scoring.Unscorable:
	default:
		return sc, fmt.Errorf("outcome %q is not pass, fail or unscorable", sc.Outcome)
	}
	return sc, nil
}

func verdictsData(rep *Report) map[string]any {
	v := make(map[string]any, len(rep.Verdicts))
	for k, x := range rep.Verdicts {
		v[k] = x
	}
	rec := ""
	if rep.Recommended != nil {
		rec = *rep.Recommended
	}
	return map[string]any{"verdicts": v, "recommended": rec, "headline": rep.Headline}
}

// plain turns a value into what a record's data holds: its JSON as maps,
// lists and strings, with nulls left out (numbers would be refused by
// the record builder).
func plain(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return nil
	}
	return dropEmpty(x)
}

func dropEmpty(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			v[k] = dropEmpty(e)
		}
	case []any:
		for i := range v {
			v[i] = dropEmpty(v[i])
		}
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return x
}

// flatten lists a plain value's leaves as dotted paths.
func flatten(prefix string, x any, out map[string]string) {
	switch v := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flatten(join(prefix, k), v[k], out)
		}
	case []any:
		if len(v) == 0 {
			out[prefix] = "[]"
		}
		for i, e := range v {
			flatten(join(prefix, strconv.Itoa(i)), e, out)
		}
	case string:
		out[prefix] = v
	case bool:
		out[prefix] = strconv.FormatBool(v)
	default:
		out[prefix] = fmt.Sprint(v)
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func parseDec(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func itoa(i int) string { return strconv.Itoa(i) }

// num writes a parameter so that it reads back exactly.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
