package oral

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strconv"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/records"
)

// Check names of the oral kinds.
const (
	CheckScores    = "scores"
	CheckDecisions = "decisions"
)

// registry verifies the oral records: the generic checks, then each
// kind's own (a draft's levels and total; a review's link to its draft,
// one decision per criterion and the final total recomputed).
var registry = func() *records.Registry {
	r := records.NewRegistry()
	r.Register(KindDraft, checkDraft)
	r.Register(KindReview, checkReview)
	return r
}()

func checkDraft(s records.Subject) []attest.Check {
	total, maxTotal := 0, 0
	for i, e := range s.Record.Entries {
		switch e.Type {
		case EntryScore:
			l, err1 := strconv.Atoi(str(e.Data["level"]))
			m, err2 := strconv.Atoi(str(e.Data["max_level"]))
			if err1 != nil || err2 != nil || l < 0 || l > m {
				return []attest.Check{{Name: CheckScores, OK: false, Detail: fmt.Sprintf("entry %d: level %q is not within 0 to max_level %q", i+1, str(e.Data["level"]), str(e.Data["max_level"]))}}
			}
			total += l
			maxTotal += m
		case EntryTotal:
			if str(e.Data["draft_total"]) != itoa(total) || str(e.Data["max_total"]) != itoa(maxTotal) {
				return []attest.Check{{Name: CheckScores, OK: false, Detail: fmt.Sprintf("entry %d: the totals %s of %s are not the scores' %d of %d", i+1, str(e.Data["draft_total"]), str(e.Data["max_total"]), total, maxTotal)}}
			}
		}
	}
	return []attest.Check{{Name: CheckScores, OK: true, Detail: fmt.Sprintf("every level within its criterion's range; the draft total %d of %d is their sum", total, maxTotal)}}
}

func checkReview(s records.Subject) []attest.Check {
	out := records.Continues(KindDraft)(s)
	var draft []draftScore
	if s.Previous != nil {
		draft = draftScores(s.Previous)
	}
	decided := map[string]bool{}
	final, maxTotal, overrides := 0, 0, 0
	for i, e := range s.Record.Entries {
		switch e.Type {
		case EntryDecision:
			c := str(e.Data["criterion"])
			l, err := strconv.Atoi(str(e.Data["level"]))
			m, _ := strconv.Atoi(str(e.Data["max_level"]))
			if decided[c] || err != nil || l < 0 || l > m {
				return append(out, attest.Check{Name: CheckDecisions, OK: false, Detail: fmt.Sprintf("entry %d: criterion %q decided twice, or level %q outside 0 to %d", i+1, c, str(e.Data["level"]), m)})
			}
			decided[c] = true
			if str(e.Data["action"]) == Override {
				overrides++
				if e.TextSHA256 == "" && str(e.Data["reason_sha256"]) == "" {
					return append(out, attest.Check{Name: CheckDecisions, OK: false, Detail: fmt.Sprintf("entry %d: an override without a reason", i+1)})
				}
			} else if str(e.Data["level"]) != str(e.Data["draft_level"]) {
				return append(out, attest.Check{Name: CheckDecisions, OK: false, Detail: fmt.Sprintf("entry %d: a confirmation that changes the level", i+1)})
			}
			final += l
			maxTotal += m
		case EntryTotal:
			if str(e.Data["final_total"]) != itoa(final) || str(e.Data["max_total"]) != itoa(maxTotal) || str(e.Data["overrides"]) != itoa(overrides) {
				return append(out, attest.Check{Name: CheckDecisions, OK: false, Detail: fmt.Sprintf("entry %d: the final total %s of %s (%s overrides) is not the decisions' %d of %d (%d)", i+1,
					str(e.Data["final_total"]), str(e.Data["max_total"]), str(e.Data["overrides"]), final, maxTotal, overrides)})
			}
		}
	}
	if s.Previous != nil {
		for _, d := range draft {
			if !decided[d.criterion] {
				return append(out, attest.Check{Name: CheckDecisions, OK: false, Detail: fmt.Sprintf("no decision for the draft's criterion %q", d.criterion)})
			}
		}
		if len(decided) != len(draft) {
			return append(out, attest.Check{Name: CheckDecisions, OK: false, Detail: "a decision for a criterion the draft does not have"})
		}
	}
	return append(out, attest.Check{Name: CheckDecisions, OK: true, Detail: fmt.Sprintf("one decision per criterion; the final total %d of %d comes from the decisions (%d overrides)", final, maxTotal, overrides)})
}

// VerifyAnswer is POST /oral/verify's answer.
type VerifyAnswer struct {
	OK      bool           `json:"ok"`
	Checks  []attest.Check `json:"checks"`
	Summary VerifySummary  `json:"summary"`
	// FirstBadEntry names the entry of the review (or, prefixed draft,
	// of the draft) that was changed.
	FirstBadEntry *string `json:"first_bad_entry"`
	Problem       string  `json:"problem,omitempty"`
}

// VerifySummary is what a verified bundle says.
type VerifySummary struct {
	Rubric     string `json:"rubric"`
	DraftTotal string `json:"draft_total"`
	FinalTotal string `json:"final_total"`
	MaxTotal   string `json:"max_total"`
	Overrides  string `json:"overrides"`
	Minor      bool   `json:"minor"`
}

// VerifyBody is POST /oral/verify's body.
type VerifyBody struct {
	Bundle *struct {
		Draft  json.RawMessage `json:"draft"`
		Review json.RawMessage `json:"review"`
	} `json:"bundle"`
}

// VerifyBundle checks a bundle: the draft and the review each verify
// (chain, signature by the trusted key, their kinds' rules), the review
// continues exactly this draft, and the totals recompute. A changed text
// or reason fails naming its entry.
func VerifyBundle(b VerifyBody, trusted ed25519.PublicKey) (*VerifyAnswer, error) {
	if b.Bundle == nil || len(b.Bundle.Draft) == 0 || len(b.Bundle.Review) == 0 {
		return nil, problem.New(problem.Invalid, "send {\"bundle\": {\"draft\": ..., \"review\": ...}} as POST /oral/review returned it")
	}
	v := registry.VerifyContinuation(b.Bundle.Review, b.Bundle.Draft, trusted)
	dv := registry.Verify(b.Bundle.Draft, trusted)
	out := &VerifyAnswer{OK: v.OK && dv.OK, Checks: v.Checks, Problem: v.Problem}
	for _, c := range dv.Checks {
		c.Name = "draft " + c.Name
		out.Checks = append(out.Checks, c)
	}
	linkBroken := false
	for _, c := range v.Checks {
		if (c.Name == records.CheckContinues || c.Name == records.CheckContinuesKind) && !c.OK {
			linkBroken = true
		}
	}
	switch {
	case dv.FirstBadEntry != nil:
		s := fmt.Sprintf("draft entry %d", *dv.FirstBadEntry)
		out.FirstBadEntry = &s
	case v.FirstBadEntry != nil:
		s := fmt.Sprintf("review entry %d", *v.FirstBadEntry)
		out.FirstBadEntry = &s
	case linkBroken: // the review's first entry names another draft
		s := "review entry 1"
		out.FirstBadEntry = &s
	}
	if out.Problem == "" && !dv.OK {
		out.Problem = "draft: " + dv.Problem
	}
	var d, r attest.Record
	_ = json.Unmarshal(b.Bundle.Draft, &d)
	_ = json.Unmarshal(b.Bundle.Review, &r)
	out.Summary = VerifySummary{Rubric: d.Meta["rubric"], Minor: d.Meta["minor"] == "true"}
	for _, e := range d.Entries {
		if e.Type == EntryTotal {
			out.Summary.DraftTotal = str(e.Data["draft_total"])
		}
	}
	for _, e := range r.Entries {
		if e.Type == EntryTotal {
			out.Summary.FinalTotal, out.Summary.MaxTotal, out.Summary.Overrides = str(e.Data["final_total"]), str(e.Data["max_total"]), str(e.Data["overrides"])
		}
	}
	return out, nil
}
