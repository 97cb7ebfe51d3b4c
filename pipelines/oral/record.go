package oral

import (
	"crypto/ed25519"
	"encoding/json"
	"strconv"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/records"
)

// Record kinds.
const (
	KindDraft  = "oral-draft"
	KindReview = "oral-review"
)

// Entry types of the draft and review records.
const (
	EntryBlinding = "blinding"
	EntryFlag     = "flag"
	EntryScore    = "score"
	EntryTotal    = "total"
	EntryDecision = "decision"
)

func itoa(n int) string { return strconv.Itoa(n) }

// draftRecord signs the draft: the rubric, the blinding report, every
// (blinded) line, the flagged questions, each criterion's model call and
// score, and the draft total. A minor's record keeps hashes only: no line
// text, reason, quote or model answer, and never a name.
func (s *Service) draftRecord(r *ScoreRequest, rd Ready, lines []Line, scores []*scored, sum DraftSummary) (*attest.Record, error) {
	meta := map[string]string{"rubric": r.rubric.ID, "minor": strconv.FormatBool(r.Minor)}
	if r.Minor {
		meta["consent_basis"] = r.ConsentBasis
	}
	rec := records.NewRun(KindDraft, rd.DraftID, meta)
	rj, _ := json.Marshal(r.rubric)
	rec.Input(records.Text("rubric", string(rj)))
	hashes := make([]any, len(rd.Blinding.NameSHA256))
	for i, h := range rd.Blinding.NameSHA256 {
		hashes[i] = h
	}
	rec.Add(EntryBlinding, nil, map[string]any{"given": itoa(rd.Blinding.Given), "detected": itoa(rd.Blinding.Detected),
		"replaced": itoa(rd.Blinding.Replaced), "lines_changed": itoa(rd.Blinding.LinesChanged), "name_sha256": hashes})
	keep := func(name, text string, data map[string]string) records.Artifact {
		if r.Minor {
			a := records.Hashed(name, []byte(text))
			a.Data = data
			return a
		}
		a := records.Text(name, text)
		a.Data = data
		return a
	}
	for _, l := range lines {
		rec.Input(keep("line:"+itoa(l.N), l.Text, map[string]string{"n": itoa(l.N), "role": l.Role}))
	}
	for _, f := range append(append([]Flag{}, rd.Leading...), rd.Personal...) {
		rec.Add(EntryFlag, nil, map[string]any{"n": itoa(f.N), "kind": f.Kind, "why": f.Why})
	}
	for _, sc := range scores {
		if sc.result != nil && sc.result.Receipt != nil {
			data := map[string]string{"criterion": sc.Criterion, "purpose": "oral_score"}
			var text *string
			if !r.Minor {
				t := sc.raw
				text = &t
			} else {
				data["answer_sha256"] = attest.HashText(sc.raw)
			}
			rec.ModelCall(records.ModelCall{ReceiptID: sc.result.Receipt.ID, Model: sc.result.Receipt.Model, Data: data, Text: text})
		}
		body, _ := json.Marshal(struct {
			Reason   string     `json:"reason"`
			Evidence []Evidence `json:"evidence"`
		}{sc.Reason, sc.Evidence})
		ns := make([]string, len(sc.Evidence))
		for i, e := range sc.Evidence {
			ns[i] = itoa(e.N)
		}
		data := map[string]any{"criterion": sc.Criterion, "level": itoa(sc.Level), "max_level": itoa(sc.MaxLevel),
			"grounding": sc.Grounding, "flags": strings.Join(sc.Flags, ","), "evidence_lines": strings.Join(ns, ",")}
		if sc.P != nil {
			data["p"] = strconv.FormatFloat(*sc.P, 'f', -1, 64)
		}
		if r.Minor {
			data["reason_sha256"] = attest.HashText(string(body))
			rec.Add(EntryScore, nil, data)
		} else {
			rec.AddText(EntryScore, string(body), data)
		}
	}
	rec.Add(EntryTotal, nil, map[string]any{"draft_total": itoa(sum.DraftTotal), "max_total": itoa(sum.MaxTotal)})
	return rec.Sign(s.Key, s.now())
}

// checkOf verifies a record just signed, as the answer's record_check.
func checkOf(rec *attest.Record, key *attest.Key) records.Check {
	raw, _ := json.Marshal(rec)
	return records.CheckOf(registry.Verify(raw, ed25519.PublicKey(key.PublicKey())))
}
