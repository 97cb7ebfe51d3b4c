package clinical

// The clinical after-visit pass 2 (contract document 1, section 6).
// Steps (1) diarization and (2) the role map run in the session core on
// stop (pipelines/live/diarized.go: the vertical's Roles are Doctor,
// Patient and Other); the numbered, role-labelled lines then stand for the
// transcript. Steps (3) the cited note and (4) the claim check run as the
// vertical's after-stop lanes, in order:
//
//   - final_transcript (no model, live.FinalTranscriptLane): the diarized
//     transcript (live.Final; speakers and roles null where diarization
//     failed);
//   - final_note (one model call, Pass2): the note in five sections, each
//     claim one sentence citing transcript lines; boxd renders the body
//     and checks that the cited lines exist;
//   - verifier (model calls of at most verifierBatch claims each, Pass2):
//     each claim is labelled against the text of the lines it cites, which
//     boxd supplies as evidence.
//
// When a Pass2 lane fails, Stop sends the error event, the note falls back
// to the single-pass SOAP note and summary.pass2 gives the reason. Shapes
// and choices are in docs/decisions.md ("Live lanes: clinical and sales").

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/cite"
	"boxd/pipelines/live"
	"boxd/pipelines/schema"
)

// The note's sections, the model's key for each, and the most claims each
// holds (11 in all, so that the longest answer stays within 2,000 tokens).
var noteSections = []struct {
	key, title string
	max        int
	what       string
}{
	{"cc", "CHIEF COMPLAINT", 1, "the reason for the visit"},
	{"hpi", "HISTORY OF PRESENT ILLNESS", 3, "the symptoms, their course, and the history, medications and allergies the patient reports"},
	{"exam", "PHYSICAL EXAM", 2, "vital signs and examination findings"},
	{"results", "RESULTS", 2, "tests done or reviewed and their results"},
	{"plan", "ASSESSMENT AND PLAN", 3, "the clinician's assessment, and tests, treatments, prescriptions, referrals and follow-up"},
}

// Answer sizes: a claim's words, the claims one judge call labels, and a
// judge's reason.
const (
	noteClaimChars      = 72
	verifierBatch       = 4
	verifierReasonChars = 100
	// verifierLineChars bounds each cited line in a judge prompt (the
	// evidence in the lane's data is the whole line).
	verifierLineChars = 600
)

// The verifier's labels.
const (
	labelSupported   = "SUPPORTED"
	labelPartial     = "PARTIAL"
	labelUnsupported = "UNSUPPORTED"
	labelError       = "ERROR"
)

// clinicalPass2Fallback ends the error event when pass 2 fails.
const clinicalPass2Fallback = "note is the single-pass SOAP note from the live transcript"

// clinicalRan is summary.pass2.reason when pass 2 ran.
const clinicalRan = "pass 2 ran: speakers diarized, roles mapped, the cited note written on final_transcript's lines and its claims checked"

// clinicalPass2Empty is summary.pass2.reason when nothing was transcribed.
const clinicalPass2Empty = "the cited note and the claim check did not run: there was no transcript to cite"

// --- final_note ---------------------------------------------------------

// NoteClaim is one sentence of the cited note: its number (from 1, in
// note order), the section, the sentence and the transcript lines it
// cites (sorted, as the model cited them, existing or not).
type NoteClaim struct {
	I       int    `json:"i"`
	Section string `json:"section"`
	Claim   string `json:"claim"`
	Cites   []int  `json:"cites"`
}

// FinalNote is the final_note lane's data: the note as plain text and its
// claims.
type FinalNote struct {
	Note   string      `json:"note"`
	Claims []NoteClaim `json:"claims"`
}

func emptyFinalNote() any { return FinalNote{Note: "", Claims: []NoteClaim{}} }

func finalNoteLane() *live.LaneSpec {
	props := make([]schema.Property, len(noteSections))
	var parts []string
	for i, sec := range noteSections {
		props[i] = schema.Prop(sec.key, schema.Array(schema.Cite(noteClaimChars), sec.max))
		parts = append(parts, fmt.Sprintf("%s (%s; at most %d)", sec.key, sec.what, sec.max))
	}
	sch, maxTok := schema.Lane(schema.Object(props...))
	return &live.LaneSpec{
		ID: "final_note", Title: "Cited note", Schema: sch, MaxTokens: maxTok, Pass2: true,
		Prompt: clinicalPrompt("the visit is over: write its note from the whole transcript, in five sections: "+
			strings.Join(parts, ", ")+". Each entry is one short sentence, at most 12 words, that starts with the "+
			"numbers of the transcript lines that state it in brackets, then a space and the sentence, such as "+
			"[2] Burning on urination for three days ([3,4] when it rests on two lines). Write only what the cited "+
			"lines state; leave a section's list empty when the visit did not cover it.", nil),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a map[string][]string
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			fn := buildFinalNote(st, a)
			return renderFinalNote(st, fn.Claims, true), fn, nil
		},
	}
}

// buildFinalNote reads the model's sections ("[n] sentence" or "[n,m]
// sentence" each): entries that are not citations or say nothing are
// dropped, a sentence the grammar cut loses its last word, and each
// sentence ends in . ? or !.
func buildFinalNote(st *live.State, a map[string][]string) FinalNote {
	claims := []NoteClaim{}
	for _, sec := range noteSections {
		for _, raw := range a[sec.key] {
			lines, text, ok := cite.Parse(raw)
			if !ok {
				continue
			}
			text = claimSentence(cite.Cut(text, noteClaimChars))
			if text == "" {
				continue
			}
			claims = append(claims, NoteClaim{I: len(claims) + 1, Section: sec.title, Claim: text, Cites: lines})
		}
	}
	return FinalNote{Note: renderFinalNote(st, claims, false), Claims: claims}
}

// claimSentence is a claim as the note's sentence: no citation of its own,
// ending in . ? or !; "" when it holds no letter or digit.
func claimSentence(s string) string {
	s = live.CleanText(cite.StripRefs(s))
	if !strings.ContainsFunc(s, cite.IsWordRune) {
		return ""
	}
	s = strings.TrimRight(s, " ,;:-")
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}

// missingLines are the cited lines the transcript does not have.
func missingLines(st *live.State, cites []int) []int {
	_, missing := st.CiteLines().Cited(cites)
	return missing
}

// renderFinalNote is the note: each section's title, then its sentences,
// each ending in its citation (a citation of a line that does not exist is
// kept and marked after it); "(not discussed)" for an empty section. md
// makes the titles Markdown headings (the lane body and summary.note); the
// plain text is data.note.
func renderFinalNote(st *live.State, claims []NoteClaim, md bool) string {
	var b strings.Builder
	for k, sec := range noteSections {
		if k > 0 {
			b.WriteString("\n")
		}
		if md {
			fmt.Fprintf(&b, "### %s\n\n", sec.title)
		} else {
			fmt.Fprintf(&b, "%s\n", sec.title)
		}
		n := 0
		for _, c := range claims {
			if c.Section != sec.title {
				continue
			}
			n++
			claim := c.Claim
			if m := missingLines(st, c.Cites); len(m) > 0 {
				// Inside the sentence, so that it still ends in its
				// citation.
				end := len(claim)
				if end > 0 && strings.ContainsRune(".!?", rune(claim[end-1])) {
					end--
				}
				claim = fmt.Sprintf("%s (%s)%s", claim[:end], cite.MissingText(m), claim[end:])
			}
			fmt.Fprintf(&b, "%s %s\n", claim, cite.Ref(c.Cites))
		}
		if n == 0 {
			b.WriteString("(not discussed)\n")
		}
	}
	return b.String()
}

// --- verifier -----------------------------------------------------------

// ClaimCounts counts the verifier's labels.
type ClaimCounts struct {
	Supported   int `json:"SUPPORTED"`
	Partial     int `json:"PARTIAL"`
	Unsupported int `json:"UNSUPPORTED"`
	Error       int `json:"ERROR"`
}

// CheckedClaim is a claim of the note with the verifier's judgement:
// evidence is the text of its cited lines (joined with one space, computed
// by boxd), label SUPPORTED, PARTIAL, UNSUPPORTED or ERROR (the judge's
// answer could not be read), leak whether it holds health information
// about someone other than the patient.
type CheckedClaim struct {
	NoteClaim
	Evidence string `json:"evidence"`
	Label    string `json:"label"`
	Leak     bool   `json:"leak"`
	Reason   string `json:"reason"`
}

// ClaimCheck is the verifier lane's data; flagged counts the claims
// labelled PARTIAL or UNSUPPORTED or with leak true.
type ClaimCheck struct {
	Counts  ClaimCounts    `json:"counts"`
	Flagged int            `json:"flagged"`
	Claims  []CheckedClaim `json:"claims"`
}

func emptyClaimCheck() any { return ClaimCheck{Claims: []CheckedClaim{}} }

// flagged: PARTIAL, UNSUPPORTED or a leak (the contract's rule; ERROR is
// counted apart and never as supported).
func (c CheckedClaim) flagged() bool {
	return c.Label == labelPartial || c.Label == labelUnsupported || c.Leak
}

// tally computes counts and flagged from the claims.
func tally(claims []CheckedClaim) ClaimCheck {
	out := ClaimCheck{Claims: claims}
	for _, c := range claims {
		switch c.Label {
		case labelSupported:
			out.Counts.Supported++
		case labelPartial:
			out.Counts.Partial++
		case labelUnsupported:
			out.Counts.Unsupported++
		default:
			out.Counts.Error++
		}
		if c.flagged() {
			out.Flagged++
		}
	}
	return out
}

// judgeSchema is the answer of one judge call on n claims: exactly n
// judgements, in the claims' order.
func judgeSchema(n int) (json.RawMessage, int) {
	item := schema.Object(
		schema.Prop("label", schema.Enum(labelSupported, labelPartial, labelUnsupported)),
		schema.Prop("leak", schema.Enum("no", "yes")),
		schema.Prop("reason", schema.Text(verifierReasonChars)),
	)
	return schema.Lane(schema.Object(schema.Prop("claims", schema.ExactArray(item, n))))
}

const verifierSystem = "You check a clinical visit note against the visit's speech-recognition transcript (speakers are " +
	"not labelled and words may be misrecognised). Each claim below is one sentence of the note, followed by the " +
	"transcript lines it cites. Judge every claim, in the order given, only against its cited lines: label " +
	"SUPPORTED when they state everything the claim says, PARTIAL when they state only part of it, UNSUPPORTED " +
	"when they do not state it or contradict it; leak yes when the claim gives health information about someone " +
	"other than the patient (a relative, another patient), else no; reason: a few words saying why. Answer with " +
	"one JSON object in the given schema: plain-ASCII strings on one line, no quotation marks."

// judgePrompt is the user message of one judge call.
func judgePrompt(st *live.State, claims []CheckedClaim) string {
	var b strings.Builder
	for k, c := range claims {
		if k > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Claim %d (%s): %s\nCited lines:\n", k+1, c.Section, c.Claim)
		for _, n := range c.Cites {
			s, _ := st.Line(n)
			text := s.Text
			if s.Role != "" {
				text = s.Role + ": " + text
			}
			if len(text) > verifierLineChars {
				text = strings.ToValidUTF8(text[:verifierLineChars], "") + "..."
			}
			fmt.Fprintf(&b, "[%d] %s\n", n, text)
		}
	}
	return b.String()
}

func verifierLane() *live.LaneSpec {
	sch, maxTok := judgeSchema(verifierBatch)
	return &live.LaneSpec{
		ID: "verifier", Title: "Claim check", Schema: sch, MaxTokens: maxTok, Pass2: true,
		Run: runVerifier,
	}
}

// runVerifier labels every claim of the final note. A claim citing no
// line or a line that does not exist is UNSUPPORTED without a model call;
// the others are judged verifierBatch at a time. An answer that cannot be
// read (cut, not the schema's JSON, a label outside the scale) makes its
// claims ERROR; a call that fails (the model, the budget) fails the lane.
func runVerifier(st *live.State, ask live.Ask) (string, any, error) {
	lb, ok := st.Lanes["final_note"]
	if !ok {
		return "", nil, live.ErrSkip
	}
	fn, ok := lb.Data.(FinalNote)
	if !ok {
		return "", nil, live.ErrSkip
	}
	lines := st.CiteLines()
	claims := make([]CheckedClaim, len(fn.Claims))
	var judge []int
	for k, c := range fn.Claims {
		texts, m := lines.Cited(c.Cites)
		claims[k] = CheckedClaim{NoteClaim: c, Evidence: strings.Join(texts, " ")}
		switch {
		case len(c.Cites) == 0:
			claims[k].Label, claims[k].Reason = labelUnsupported, "no line cited"
		case len(m) > 0:
			claims[k].Label, claims[k].Reason = labelUnsupported, "cited "+cite.MissingText(m)
		default:
			judge = append(judge, k)
		}
	}
	for batch := range slices.Chunk(judge, verifierBatch) {
		part := make([]CheckedClaim, len(batch))
		for j, k := range batch {
			part[j] = claims[k]
		}
		sch, maxTok := judgeSchema(len(batch))
		answer, err := ask(sch, maxTok, verifierSystem, judgePrompt(st, part))
		if err != nil && !errors.Is(err, live.ErrAnswerCut) {
			return "", nil, err
		}
		labels := readJudgements(answer, err, len(batch))
		for j, k := range batch {
			claims[k].Label, claims[k].Leak, claims[k].Reason = labels[j].label, labels[j].leak, labels[j].reason
		}
	}
	out := tally(claims)
	return claimCheckMarkdown(out), out, nil
}

type judgement struct {
	label  string
	leak   bool
	reason string
}

// readJudgements reads a judge's answer on n claims; every claim whose
// judgement cannot be read is ERROR with the reason.
func readJudgements(answer json.RawMessage, callErr error, n int) []judgement {
	out := make([]judgement, n)
	fail := func(why string) []judgement {
		for j := range out {
			out[j] = judgement{label: labelError, reason: "the judge's answer could not be read: " + why}
		}
		return out
	}
	if callErr != nil {
		return fail(callErr.Error())
	}
	var a struct {
		Claims []struct {
			Label  string `json:"label"`
			Leak   string `json:"leak"`
			Reason string `json:"reason"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return fail("it is not the schema's JSON")
	}
	if len(a.Claims) != n {
		return fail(fmt.Sprintf("%d judgements for %d claims", len(a.Claims), n))
	}
	for j, c := range a.Claims {
		switch {
		case c.Label != labelSupported && c.Label != labelPartial && c.Label != labelUnsupported:
			out[j] = judgement{label: labelError, reason: "the judge's answer could not be read: no label"}
		case c.Leak != "yes" && c.Leak != "no":
			out[j] = judgement{label: labelError, reason: "the judge's answer could not be read: leak is neither yes nor no"}
		default:
			out[j] = judgement{label: c.Label, leak: c.Leak == "yes", reason: live.CleanText(c.Reason)}
		}
	}
	return out
}

// claimCheckMarkdown is the verifier lane's body: the counts, then every
// claim with its label, flagged ones marked.
func claimCheckMarkdown(c ClaimCheck) string {
	if len(c.Claims) == 0 {
		return "_The note makes no claim to check._\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%d claims:** %d supported, %d partial, %d unsupported, %d not checked (the judge's answer could not be read); **%d flagged**.\n\n",
		len(c.Claims), c.Counts.Supported, c.Counts.Partial, c.Counts.Unsupported, c.Counts.Error, c.Flagged)
	for _, x := range c.Claims {
		mark := ""
		if x.flagged() {
			mark = " (flagged)"
		}
		leak := ""
		if x.Leak {
			leak = ", about someone other than the patient"
		}
		fmt.Fprintf(&b, "- %d. **%s**%s%s: %s %s", x.I, x.Label, leak, mark, x.Claim, cite.Ref(x.Cites))
		if x.Reason != "" {
			fmt.Fprintf(&b, " _%s_", x.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// --- summary ------------------------------------------------------------

// clinicalPass2 is summary.pass2 {ran, diarized, reason} and whether the
// cited note replaces the SOAP note: pass 2 ran when the diarization, the
// note and the claim check did.
func clinicalPass2(st *live.State) (map[string]any, bool) {
	_, note := st.Lanes["final_note"]
	_, check := st.Lanes["verifier"]
	diarized := st.Diarized != nil
	switch {
	case st.Pass2Failed != "":
		return map[string]any{"ran": false, "diarized": diarized, "reason": st.Pass2Failed}, false
	case note && check:
		return map[string]any{"ran": true, "diarized": diarized, "reason": clinicalRan}, true
	}
	return map[string]any{"ran": false, "diarized": diarized, "reason": clinicalPass2Empty}, false
}
