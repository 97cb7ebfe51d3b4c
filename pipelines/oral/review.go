package oral

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/records"
)

// Review actions.
const (
	Confirm  = "confirm"
	Override = "override"
)

// ReviewRequest is POST /oral/review's body.
type ReviewRequest struct {
	Draft     json.RawMessage `json:"draft"`
	Examiner  string          `json:"examiner"`
	Decisions []Decision      `json:"decisions"`
}

// Decision is the examiner's decision on one criterion.
type Decision struct {
	Criterion string `json:"criterion"`
	Action    string `json:"action"`
	Level     *int   `json:"level"`
	Reason    string `json:"reason"`
}

// ReviewAnswer is POST /oral/review's answer.
type ReviewAnswer struct {
	FinalTotal int           `json:"final_total"`
	MaxTotal   int           `json:"max_total"`
	Overrides  int           `json:"overrides"`
	Bundle     Bundle        `json:"bundle"`
	Check      records.Check `json:"check"`
}

// Bundle is the draft and the review that continues it.
type Bundle struct {
	Draft  *attest.Record `json:"draft"`
	Review *attest.Record `json:"review"`
}

// draftScore is a score as the signed draft states it.
type draftScore struct {
	criterion       string
	level, maxLevel int
}

// draftScores reads the scores of a verified draft record.
func draftScores(rec *attest.Record) []draftScore {
	var out []draftScore
	for _, e := range rec.Entries {
		if e.Type != EntryScore {
			continue
		}
		c, _ := e.Data["criterion"].(string)
		l, _ := strconv.Atoi(str(e.Data["level"]))
		m, _ := strconv.Atoi(str(e.Data["max_level"]))
		out = append(out, draftScore{criterion: c, level: l, maxLevel: m})
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// Review records the examiner's decisions: the draft must be a draft this
// box signed and that verifies; one decision per criterion; an override
// needs a level and a reason. The final total comes from the decisions
// only. The review record continues the draft's.
func (s *Service) Review(_ context.Context, r ReviewRequest) (*ReviewAnswer, error) {
	raw := []byte(strings.TrimSpace(string(r.Draft)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, problem.New(problem.Invalid, "draft is required: the draft's record (draft.record of POST /oral/score, or done.summary.record of a live session)")
	}
	ex := strings.TrimSpace(r.Examiner)
	if ex == "" || utf8.RuneCountInString(ex) > 120 {
		return nil, problem.New(problem.Invalid, "examiner: the person who decides, 1 to 120 characters")
	}
	v := registry.Verify(raw, ed25519.PublicKey(s.Key.PublicKey()))
	if !v.OK || !v.SignedByTrustedKey {
		return nil, problem.New(problem.Invalid, "draft: not a draft this box signed that verifies (%s)", v.Problem)
	}
	var draft attest.Record
	if err := json.Unmarshal(raw, &draft); err != nil || draft.Kind != KindDraft {
		return nil, problem.New(problem.Invalid, "draft: a record of kind %s is needed, not %q", KindDraft, draft.Kind)
	}
	scores := draftScores(&draft)
	byID := map[string]Decision{}
	for i, d := range r.Decisions {
		if _, dup := byID[d.Criterion]; dup {
			return nil, problem.New(problem.Invalid, "decisions[%d]: criterion %q is decided twice", i, d.Criterion)
		}
		byID[d.Criterion] = d
	}
	minor := draft.Meta["minor"] == "true"
	out := &ReviewAnswer{}
	rec := records.Continue(&draft, KindReview, ids.New("orv-", 12), map[string]string{"examiner_sha256": attest.HashText(ex), "minor": draft.Meta["minor"]})
	if !minor {
		rec.Add("examiner", &ex, map[string]any{"role": "examiner"})
	} else {
		rec.Add("examiner", nil, map[string]any{"role": "examiner", "name_sha256": attest.HashText(ex)})
	}
	for _, sc := range scores {
		d, ok := byID[sc.criterion]
		if !ok {
			return nil, problem.New(problem.Invalid, "decisions: no decision for criterion %q; the examiner decides every criterion (confirm, or override with level and reason)", sc.criterion)
		}
		delete(byID, sc.criterion)
		final := sc.level
		switch d.Action {
		case Confirm:
			if d.Level != nil && *d.Level != sc.level {
				return nil, problem.New(problem.Invalid, "decision on %q: confirm keeps the draft's level %d; to change it, override with level and reason", sc.criterion, sc.level)
			}
		case Override:
			if d.Level == nil || strings.TrimSpace(d.Reason) == "" {
				return nil, problem.New(problem.Invalid, "decision on %q: an override needs level and reason", sc.criterion)
			}
			if *d.Level < 0 || *d.Level > sc.maxLevel {
				return nil, problem.New(problem.Invalid, "decision on %q: level %d is outside 0 to %d", sc.criterion, *d.Level, sc.maxLevel)
			}
			final = *d.Level
			out.Overrides++
		default:
			return nil, problem.New(problem.Invalid, "decision on %q: action is confirm or override, not %q", sc.criterion, d.Action)
		}
		if utf8.RuneCountInString(d.Reason) > 2000 {
			return nil, problem.New(problem.TooLarge, "decision on %q: the reason is over 2,000 characters", sc.criterion)
		}
		data := map[string]any{"criterion": sc.criterion, "action": d.Action, "draft_level": itoa(sc.level), "level": itoa(final), "max_level": itoa(sc.maxLevel)}
		reason := strings.TrimSpace(d.Reason)
		switch {
		case reason == "":
			rec.Add(EntryDecision, nil, data)
		case minor:
			data["reason_sha256"] = attest.HashText(reason)
			rec.Add(EntryDecision, nil, data)
		default:
			rec.Add(EntryDecision, &reason, data)
		}
		out.FinalTotal += final
		out.MaxTotal += sc.maxLevel
	}
	for id := range byID {
		return nil, problem.New(problem.Invalid, "decisions: criterion %q is not in the draft", id)
	}
	rec.Add(EntryTotal, nil, map[string]any{"final_total": itoa(out.FinalTotal), "max_total": itoa(out.MaxTotal), "overrides": itoa(out.Overrides)})
	signed, err := rec.Sign(s.Key, s.now())
	if err != nil {
		return nil, fmt.Errorf("oral: the review record: %w", err)
	}
	out.Bundle = Bundle{Draft: &draft, Review: signed}
	rj, _ := json.Marshal(signed)
	out.Check = records.CheckOf(registry.VerifyContinuation(rj, raw, ed25519.PublicKey(s.Key.PublicKey())))
	return out, nil
}
