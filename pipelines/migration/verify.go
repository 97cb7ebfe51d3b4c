package migration

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/records"
	"boxd/pipelines/migration/figures"
	"boxd/pipelines/migration/scoring"
)

// Check names this package adds to a record's checks.
const (
	CheckReceipts  = "receipts"  // every model call's embedded receipt verifies and hashes its answer
	CheckRecompute = "recompute" // every stated number recomputes from the per-example entries
)

// Verification is POST /migration/verify's answer.
type Verification struct {
	OK        bool          `json:"ok"`
	Record    records.Check `json:"record"`
	Recompute Recompute     `json:"recompute"`
}

// Recompute says whether every number recomputes, and where not.
type Recompute struct {
	OK    bool   `json:"ok"`
	Diffs []Diff `json:"diffs"`
	// Rescored: examples whose score was recomputed from the texts (0
	// when the texts were removed: the scores are then taken as signed).
	Rescored int `json:"rescored"`
}

// Diff is one figure that does not recompute: the entry (1-based), what
// it is, the figure stated and the figure recomputed.
type Diff struct {
	Entry      int    `json:"entry"`
	Type       string `json:"type"`
	Candidate  string `json:"candidate,omitempty"`
	Example    string `json:"example,omitempty"`
	Field      string `json:"field"`
	Stated     string `json:"stated"`
	Recomputed string `json:"recomputed"`
}

// registry is the records registry with the migration kind: the
// generic checks, then the receipts check.
var registry = func() *records.Registry {
	r := records.NewRegistry()
	r.Register(Kind, checkReceipts)
	return r
}()

// Verify checks a migration record: the chain and signature, every model
// call's receipt (signed by the record's signer, the answer's hash its
// output hash) and every number, recomputed from the per-example entries
// (and the scores themselves from the texts where the record keeps them).
func Verify(raw []byte, trusted ed25519.PublicKey) Verification {
	v := registry.Verify(raw, trusted)
	out := Verification{Record: records.CheckOf(v)}
	var rec attest.Record
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Kind != Kind {
		out.Recompute.Diffs = append(out.Recompute.Diffs, Diff{Type: "record", Field: "kind", Stated: rec.Kind, Recomputed: Kind})
		return out
	}
	out.Recompute = recompute(&rec)
	out.OK = v.OK && out.Recompute.OK
	return out
}

// checkReceipts is the kind's records.Verifier.
func checkReceipts(s records.Subject) []attest.Check {
	rec := s.Record
	var signer ed25519.PublicKey
	if k, err := hexKey(rec.Signer.PubKey); err == nil {
		signer = k
	}
	n, bad := 0, ""
	for i, e := range rec.Entries {
		if e.Type != records.TypeModelCall {
			continue
		}
		n++
		raw, err := json.Marshal(e.Data["receipt"])
		var sm attest.SignedModelCall
		if err == nil {
			err = json.Unmarshal(raw, &sm)
		}
		switch {
		case err != nil || sm.ID == "":
			bad = fmt.Sprintf("entry %d: no receipt", i+1)
		case sm.ID != e.Data["receipt_id"]:
			bad = fmt.Sprintf("entry %d: the receipt is %s, the entry names %v", i+1, sm.ID, e.Data["receipt_id"])
		case sm.OutputHash != e.TextSHA256:
			bad = fmt.Sprintf("entry %d: the receipt's output hash is not the SHA-256 of the answer", i+1)
		default:
			for _, c := range attest.CheckModelCall(sm, signer) {
				if !c.OK {
					bad = fmt.Sprintf("entry %d: receipt %s: %s: %s", i+1, sm.ID, c.Name, c.Detail)
					break
				}
			}
		}
		if bad != "" {
			return []attest.Check{{Name: CheckReceipts, OK: false, Detail: bad}}
		}
	}
	return []attest.Check{{Name: CheckReceipts, OK: true, Detail: fmt.Sprintf("%d model-call receipts verify, signed by the record's signer, each hashing its answer", n)}}
}

// recompute recomputes every score it can and every summary and verdict.
func recompute(rec *attest.Record) Recompute {
	var rc Recompute
	diff := func(d Diff) { rc.Diffs = append(rc.Diffs, d) }
	if len(rec.Entries) == 0 || rec.Entries[0].Type != EntryParams {
		diff(Diff{Entry: 1, Type: EntryParams, Field: "type", Stated: firstType(rec), Recomputed: EntryParams})
		return rc
	}
	p, cands, nEx, task, err := readParams(rec)
	if err != nil {
		diff(Diff{Entry: 1, Type: EntryParams, Field: "params", Stated: err.Error(), Recomputed: "readable params"})
		return rc
	}
	current := map[string]attest.Entry{}
	var order []string
	scores := map[string][]scoring.Score{}
	stated := map[string]int{} // candidate → its summary entry
	var verdicts = -1
	lastCall := map[string]attest.Entry{} // example|candidate → its candidate call
	judges := map[string][]string{}       // example|candidate → the judge verdicts
	controls := map[string][]string{}     // control|example|other → its two verdicts
	var controlOrder []string
	for i, e := range rec.Entries {
		str := func(k string) string { s, _ := e.Data[k].(string); return s }
		key := str("example") + "|" + str("candidate")
		switch e.Type {
		case records.TypeOutput:
			if id := str("example"); strings.HasPrefix(str("name"), "current:") {
				current[id] = e
				order = append(order, id)
			}
		case records.TypeModelCall, EntryCallFailed:
			switch str("purpose") {
			case "judge":
				judges[key] = append(judges[key], judgeVerdict(&rc, i+1, e))
			case "judge_control":
				ck := str("control") + "|" + str("example") + "|" + str("other")
				if _, seen := controls[ck]; !seen {
					controlOrder = append(controlOrder, ck)
				}
				controls[ck] = append(controls[ck], judgeVerdict(&rc, i+1, e))
			default:
				lastCall[key] = e
			}
		case EntryScore:
			sc, err := readScore(e.Data)
			if err != nil {
				diff(Diff{Entry: i + 1, Type: EntryScore, Example: str("example"), Candidate: str("candidate"), Field: "score", Stated: err.Error(), Recomputed: "a readable score"})
				continue
			}
			checkScore(&rc, i+1, sc, task, p.Task, current[sc.Example], lastCall[key], judges[key])
			scores[sc.Candidate] = append(scores[sc.Candidate], sc)
		case EntrySummary:
			stated[str("candidate")] = i
		case EntryVerdicts:
			verdicts = i
		}
	}
	if p.Task == scoring.TaskFreetext {
		passed := 0
		for _, k := range controlOrder {
			v := controls[k]
			kind, _, _ := strings.Cut(k, "|")
			if len(v) == 2 && v[0] == kind && v[1] == kind {
				passed++
			}
		}
		if len(controlOrder) != p.JudgeControls || passed != p.JudgeControlsPassed {
			diff(Diff{Entry: 1, Type: EntryParams, Field: "judge_controls_passed/judge_controls",
				Stated: fmt.Sprintf("%d/%d", p.JudgeControlsPassed, p.JudgeControls), Recomputed: fmt.Sprintf("%d/%d", passed, len(controlOrder))})
		}
	}
	sums := map[string]figures.Summary{}
	for _, id := range cands {
		sc := scores[id]
		if len(sc) != nEx || len(order) != nEx {
			diff(Diff{Type: EntryScore, Candidate: id, Field: "count", Stated: itoa(len(sc)), Recomputed: itoa(nEx)})
		}
		for j := range min(len(sc), len(order)) {
			if sc[j].Example != order[j] {
				diff(Diff{Type: EntryScore, Candidate: id, Example: sc[j].Example, Field: "order", Stated: sc[j].Example, Recomputed: order[j]})
				break
			}
		}
		sum := figures.Summarize(sc, p)
		sums[id] = sum
		at, ok := stated[id]
		if !ok {
			diff(Diff{Type: EntrySummary, Candidate: id, Field: "summary", Stated: "(missing)", Recomputed: "a summary"})
			continue
		}
		compare(&rc, at+1, EntrySummary, id, rec.Entries[at].Data["summary"], plain(sum))
	}
	if verdicts < 0 {
		diff(Diff{Type: EntryVerdicts, Field: "verdicts", Stated: "(missing)", Recomputed: "the verdicts"})
	} else {
		rep := &Report{Verdicts: map[string]string{}}
		for id, s := range sums {
			rep.Verdicts[id] = s.Verdict
		}
		rep.Recommended, rep.Headline = recommend(cands, sums)
		compare(&rc, verdicts+1, EntryVerdicts, "", rec.Entries[verdicts].Data, verdictsData(rep))
	}
	rc.OK = len(rc.Diffs) == 0
	if rc.Diffs == nil {
		rc.Diffs = []Diff{}
	}
	return rc
}

// checkScore compares a score entry with its call, its logged answer and,
// where the texts are kept, with the score recomputed from them.
func checkScore(rc *Recompute, at int, sc scoring.Score, task *scoring.Task, taskType string, cur, callE attest.Entry, judged []string) {
	diff := func(field, stated, want string) {
		if stated != want {
			rc.Diffs = append(rc.Diffs, Diff{Entry: at, Type: EntryScore, Candidate: sc.Candidate, Example: sc.Example, Field: field, Stated: stated, Recomputed: want})
		}
	}
	str := func(e attest.Entry, k string) string { s, _ := e.Data[k].(string); return s }
	if callE.Type != "" {
		diff("latency_ms", i64(sc.LatencyMS), str(callE, "latency_ms"))
		if callE.Type == records.TypeModelCall {
			diff("prompt_tokens", i64(sc.PromptTokens), str(callE, "prompt_tokens"))
			diff("completion_tokens", i64(sc.CompletionTokens), str(callE, "completion_tokens"))
		}
	} else {
		diff("call", "(none)", "the candidate's call entry before the score")
	}
	if taskType == scoring.TaskFreetext && len(judged) == 2 {
		diff("judge", sc.Judge, scoring.JudgeOutcome(judged[0], judged[1]))
		o, k := scoring.JudgeScore(scoring.JudgeOutcome(judged[0], judged[1]))
		diff("outcome", sc.Outcome, o)
		diff("kind", sc.Kind, k)
		rc.Rescored++
	}
	if task == nil || taskType == scoring.TaskFreetext || cur.Text == nil || (callE.Type == records.TypeModelCall && callE.Text == nil) {
		return // texts removed: the score stands as signed
	}
	var want scoring.Score
	answer := ""
	if callE.Text != nil {
		answer = *callE.Text
	}
	var label *string
	if l, ok := cur.Data["label"].(string); ok {
		label = &l
	}
	scoring.Code(task, *cur.Text, label, answer, callE.Type != records.TypeModelCall || callE.Data["error"] != nil, &want)
	rc.Rescored++
	diff("outcome", sc.Outcome, want.Outcome)
	diff("kind", sc.Kind, want.Kind)
	diff("detail", sc.Detail, want.Detail)
	diff("schema_valid", sc.SchemaValid, want.SchemaValid)
	diff("label_current", sc.LabelCurrent, want.LabelCurrent)
	diff("label_candidate", sc.LabelCandidate, want.LabelCandidate)
	for _, f := range slices.Sorted(maps.Keys(want.Fields)) {
		diff("fields."+f, sc.Fields[f], want.Fields[f])
	}
}

// judgeVerdict is a judgment's verdict: read again from the judge's
// answer where the record keeps it (a diff when the entry's data says
// otherwise), else the entry's.
func judgeVerdict(rc *Recompute, at int, e attest.Entry) string {
	stated, _ := e.Data["verdict"].(string)
	if e.Text == nil || e.Type != records.TypeModelCall {
		return stated
	}
	var v struct{ Verdict string }
	read := ""
	if json.Unmarshal([]byte(*e.Text), &v) == nil && (v.Verdict == "same" || v.Verdict == "different") {
		read = v.Verdict
	}
	if read != stated {
		rc.Diffs = append(rc.Diffs, Diff{Entry: at, Type: records.TypeModelCall, Field: "verdict", Stated: stated, Recomputed: read})
	}
	return read
}

// compare diffs two plain values leaf by leaf.
func compare(rc *Recompute, at int, typ, cand string, stated, want any) {
	a, b := map[string]string{}, map[string]string{}
	flatten("", stated, a)
	flatten("", want, b)
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if a[k] != b[k] || !has(a, k) {
			rc.Diffs = append(rc.Diffs, Diff{Entry: at, Type: typ, Candidate: cand, Field: k, Stated: orMissing(a, k), Recomputed: b[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !has(b, k) && k != "candidate" {
			rc.Diffs = append(rc.Diffs, Diff{Entry: at, Type: typ, Candidate: cand, Field: k, Stated: a[k], Recomputed: "(not a figure of the summary)"})
		}
	}
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func orMissing(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "(missing)"
}

func firstType(rec *attest.Record) string {
	if len(rec.Entries) == 0 {
		return "(no entries)"
	}
	return rec.Entries[0].Type
}

// readParams reads the params entry and, where the record keeps its
// text, the task entry (for rescoring).
func readParams(rec *attest.Record) (figures.Params, []string, int, *scoring.Task, error) {
	d := rec.Entries[0].Data
	str := func(k string) string { s, _ := d[k].(string); return s }
	f := func(k string) (float64, error) {
		v, err := strconv.ParseFloat(str(k), 64)
		if err != nil {
			return 0, fmt.Errorf("params %s is not a number", k)
		}
		return v, nil
	}
	var p figures.Params
	var err error
	p.Task = str("task")
	for _, x := range []struct {
		k string
		v *float64
	}{{"pass_rate", &p.PassRate}, {"schema_valid", &p.SchemaValid}, {"input_per_m", &p.InputPerM}, {"output_per_m", &p.OutputPerM}, {"hour_dollars", &p.HourDollars}} {
		if *x.v, err = f(x.k); err != nil {
			return p, nil, 0, nil, err
		}
	}
	if p.Seed, err = strconv.ParseUint(str("seed"), 10, 64); err != nil {
		return p, nil, 0, nil, fmt.Errorf("params seed is not an integer")
	}
	if p.Resamples, err = strconv.Atoi(str("resamples")); err != nil || p.Resamples <= 0 || p.Resamples > 1_000_000 {
		return p, nil, 0, nil, fmt.Errorf("params resamples must be 1 to 1,000,000")
	}
	n, err := strconv.Atoi(str("examples"))
	if err != nil {
		return p, nil, 0, nil, fmt.Errorf("params examples is not an integer")
	}
	p.PriceSource = str("price_source")
	if p.Task == scoring.TaskFreetext {
		if p.JudgeControls, err = strconv.Atoi(str("judge_controls")); err != nil {
			return p, nil, 0, nil, fmt.Errorf("params judge_controls is not an integer")
		}
		if p.JudgeControlsPassed, err = strconv.Atoi(str("judge_controls_passed")); err != nil {
			return p, nil, 0, nil, fmt.Errorf("params judge_controls_passed is not an integer")
		}
	}
	cands := strings.Split(str("candidates"), ",")
	var task *scoring.Task
	for _, e := range rec.Entries {
		if e.Type == records.TypeInput && e.Data["name"] == "task" && e.Text != nil {
			var t scoring.Task
			if json.Unmarshal([]byte(*e.Text), &t) == nil && t.Validate() == nil && t.Type == p.Task {
				task = &t
			}
			break
		}
	}
	return p, cands, n, task, nil
}

func hexKey(s string) (ed25519.PublicKey, error) {
	b := make([]byte, 0, ed25519.PublicKeySize)
	for i := 0; i+1 < len(s); i += 2 {
		v, err := strconv.ParseUint(s[i:i+2], 16, 8)
		if err != nil {
			return nil, err
		}
		b = append(b, byte(v))
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("not an Ed25519 key")
	}
	return b, nil
}
