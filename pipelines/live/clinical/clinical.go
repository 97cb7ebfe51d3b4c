// Package clinical is the clinical live vertical (contract document 1,
// section 6). Live lanes: note (the SOAP note), codes (ICD-10-CM and RxNorm
// suggested by the model and kept only when the code tables hold them),
// priorauth and visit_level. After stop, the steps of pass 2 this box can
// run (pass2.go), in order: final_transcript, final_note (the cited note)
// and verifier (the claim check). The final artifact, done.summary, holds
// the note (the cited note when pass 2 ran, else the SOAP note),
// note_sections and every lane's state, pass2 and pass2_timing. Payload
// shapes are in docs/decisions.md ("Live lanes: clinical and sales").
package clinical

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/codes"
	"boxd/pipelines/live"
	"boxd/pipelines/schema"
)

// New is the clinical vertical; t is the ICD-10-CM and RxNorm tables the
// codes and priorauth lanes check the model's suggestions against (only
// their Prompt and Finish use them).
func New(t *codes.Tables) *live.Vertical {
	return &live.Vertical{
		ID:            "clinical",
		Live:          []*live.LaneSpec{noteLane(), codesLane(t), priorAuthLane(t), visitLevelLane()},
		Final:         []*live.LaneSpec{live.FinalTranscriptLane(), finalNoteLane(), verifierLane()},
		Summary:       clinicalSummary,
		Pass2Fallback: clinicalPass2Fallback,
		Roles: &live.Roles{
			Names: []string{"Doctor", "Patient", "Other"},
			Setting: "The transcript is an outpatient visit. Doctor is the clinician who asks about symptoms, examines and plans; " +
				"Patient is the person being seen; Other is anyone else (a relative, an interpreter, a nurse).",
			Asker: "Doctor", Answerer: "Patient", Rest: "Other",
		},
	}
}

// diarizedSpeakers replaces what clinicalSystem says of speakers once pass
// 2 has labelled them.
const diarizedSpeakers = "each line begins with its speaker's role (Doctor, Patient or Other, from a speaker diarization that may err)"

const clinicalSystem = "You assist a US outpatient clinician during a visit. The user message holds the live " +
	"speech-recognition transcript so far, one numbered line per sentence ([n] text); speakers are not " +
	"labelled and words may be misrecognised. Use only what the transcript says and never invent findings. " +
	"Answer with one JSON object in the given schema: concise plain-ASCII strings on one line each, no " +
	"quotation marks, empty strings or lists for what was not discussed.\n\nTask: "

// clinicalPrompt is the shared prompt: the task and the numbered
// transcript; nothing to do before the first sentence.
func clinicalPrompt(task string, extra func(st *live.State) string) func(st *live.State, _ int) (string, string) {
	return func(st *live.State, _ int) (string, string) {
		lines := live.NumberedTranscript(st)
		if lines == "" {
			return "", ""
		}
		user := "Transcript:\n" + lines
		if extra != nil {
			if x := extra(st); x != "" {
				user += "\n" + x
			}
		}
		system := clinicalSystem
		if st.Diarized != nil {
			system = strings.Replace(system, "speakers are not labelled", diarizedSpeakers, 1)
		}
		return system + task, user
	}
}

// --- note ---------------------------------------------------------------

// SOAPNote is the note lane's data: the SOAP sections as short bullets.
type SOAPNote struct {
	Subjective []string `json:"subjective"`
	Objective  []string `json:"objective"`
	Assessment []string `json:"assessment"`
	Plan       []string `json:"plan"`
}

func emptyNote() any {
	return SOAPNote{Subjective: []string{}, Objective: []string{}, Assessment: []string{}, Plan: []string{}}
}

func noteLane() *live.LaneSpec {
	bullet := schema.Text(72)
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("subjective", schema.Array(bullet, 4)),
		schema.Prop("objective", schema.Array(bullet, 3)),
		schema.Prop("assessment", schema.Array(bullet, 3)),
		schema.Prop("plan", schema.Array(bullet, 3)),
	))
	return &live.LaneSpec{
		ID: "note", Title: "SOAP note", Schema: sch, MaxTokens: maxTok,
		Prompt: clinicalPrompt("draft the SOAP note of the visit so far as short bullets: subjective "+
			"(chief complaint, history, symptoms, medications and allergies the patient reports), objective "+
			"(vital signs, examination findings, results), assessment (the clinician's impressions and "+
			"diagnoses), plan (tests, treatments, prescriptions, referrals, follow-up).", nil),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var n SOAPNote
			if err := live.DecodeAnswer(answer, &n); err != nil {
				return "", nil, err
			}
			n = SOAPNote{Subjective: live.CleanList(n.Subjective), Objective: live.CleanList(n.Objective),
				Assessment: live.CleanList(n.Assessment), Plan: live.CleanList(n.Plan)}
			return noteMarkdown(n), n, nil
		},
	}
}

// noteMarkdown renders the note: a heading and bullets per section.
func noteMarkdown(n SOAPNote) string {
	var b strings.Builder
	for i, sec := range []struct {
		title string
		items []string
	}{{"Subjective", n.Subjective}, {"Objective", n.Objective}, {"Assessment", n.Assessment}, {"Plan", n.Plan}} {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n", sec.title)
		if len(sec.items) == 0 {
			b.WriteString("_Nothing yet._\n")
		}
		for _, it := range sec.items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	return b.String()
}

// --- codes --------------------------------------------------------------

// ICDCode is a validated ICD-10-CM code with its official description.
type ICDCode struct {
	Code        string `json:"code"` // with its dot: E11.9
	Description string `json:"description"`
	Suggested   string `json:"suggested"` // as the model wrote it
}

// RxNormDrug is a validated RxNorm concept: the table's name and term type,
// what the model suggested and how it was matched (name, rxcui or
// ingredient).
type RxNormDrug struct {
	RxCUI     string `json:"rxcui"`
	Name      string `json:"name"`
	TTY       string `json:"tty"`
	Suggested string `json:"suggested"`
	Match     string `json:"match"`
}

// RejectedCode is a suggestion the tables do not hold.
type RejectedCode struct {
	System    string `json:"system"` // ICD-10-CM or RxNorm
	Suggested string `json:"suggested"`
	Reason    string `json:"reason"`
}

// CodeSuggestions is the codes lane's data.
type CodeSuggestions struct {
	ICD10CM  []ICDCode         `json:"icd10cm"`
	RxNorm   []RxNormDrug      `json:"rxnorm"`
	Rejected []RejectedCode    `json:"rejected"`
	Versions map[string]string `json:"versions"`
}

func emptyCodes() any {
	return CodeSuggestions{ICD10CM: []ICDCode{}, RxNorm: []RxNormDrug{}, Rejected: []RejectedCode{},
		Versions: map[string]string{"icd10cm": codes.ICD10CMVersion, "rxnorm": codes.RxNormVersion}}
}

func codesLane(t *codes.Tables) *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("diagnoses", schema.Array(schema.Pattern(`[A-Za-z][0-9A-Za-z]{2}(\.?[0-9A-Za-z]{1,4})?`, 8), 6)),
		schema.Prop("medications", schema.Array(schema.Text(60), 6)),
	))
	return &live.LaneSpec{
		ID: "codes", Title: "Codes", Schema: sch, MaxTokens: maxTok,
		Prompt: clinicalPrompt("suggest codes for what was discussed: diagnoses as ICD-10-CM codes (the most "+
			"specific billable code the transcript supports, with its dot, such as E11.9) and the medications "+
			"the patient takes or is prescribed as RxNorm names (generic name, with strength and dose form "+
			"when said, such as metformin 500 MG Oral Tablet) or RxCUIs. Every code is checked against the "+
			"official tables and unknown ones are dropped.", func(st *live.State) string {
			return drugHints(t, st)
		}),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Diagnoses   []string `json:"diagnoses"`
				Medications []string `json:"medications"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			out := emptyCodes().(CodeSuggestions)
			for _, raw := range live.CleanList(a.Diagnoses) {
				dx, ok := t.ICD10CM(raw)
				switch {
				case ok && slices.ContainsFunc(out.ICD10CM, func(c ICDCode) bool { return c.Code == dx.Code }):
				case ok:
					out.ICD10CM = append(out.ICD10CM, ICDCode{Code: dx.Code, Description: dx.Description, Suggested: raw})
				case t.ICD10CMCategory(raw):
					out.Rejected = appendRejected(out.Rejected, RejectedCode{System: "ICD-10-CM", Suggested: raw,
						Reason: "a category, not a billable code: a more specific code is needed"})
				default:
					out.Rejected = appendRejected(out.Rejected, RejectedCode{System: "ICD-10-CM", Suggested: raw,
						Reason: "no such billable code in ICD-10-CM FY2026"})
				}
			}
			for _, raw := range live.CleanList(a.Medications) {
				name, cui := raw, ""
				if isRxCUI(raw) {
					name, cui = "", raw
				}
				d, how, reason := t.Resolve(name, cui)
				switch {
				case how != "" && slices.ContainsFunc(out.RxNorm, func(r RxNormDrug) bool { return r.RxCUI == d.RxCUI }):
				case how != "":
					out.RxNorm = append(out.RxNorm, RxNormDrug{RxCUI: d.RxCUI, Name: d.Name, TTY: d.TTY, Suggested: raw, Match: how})
				default:
					out.Rejected = appendRejected(out.Rejected, RejectedCode{System: "RxNorm", Suggested: raw, Reason: reason})
				}
			}
			return codesMarkdown(out), out, nil
		},
	}
}

// isRxCUI: all digits (an RxCUI rather than a name).
func isRxCUI(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func appendRejected(list []RejectedCode, r RejectedCode) []RejectedCode {
	if slices.ContainsFunc(list, func(x RejectedCode) bool { return x.System == r.System && x.Suggested == r.Suggested }) {
		return list
	}
	return append(list, r)
}

// drugHints lists ingredient names the transcript mentions, with their
// RxCUIs, for the model to code.
func drugHints(t *codes.Tables, st *live.State) string {
	var text strings.Builder
	for _, s := range st.Sentences {
		text.WriteString(s.Text)
		text.WriteString("\n")
	}
	found := t.Mentions(text.String(), 12)
	if len(found) == 0 {
		return ""
	}
	parts := make([]string, len(found))
	for i, d := range found {
		parts[i] = fmt.Sprintf("%s (RxCUI %s)", d.Name, d.RxCUI)
	}
	return "RxNorm ingredients named in the transcript (they may be mentioned without being taken): " + strings.Join(parts, "; ") + "."
}

func codesMarkdown(c CodeSuggestions) string {
	var b strings.Builder
	b.WriteString("**ICD-10-CM**\n")
	if len(c.ICD10CM) == 0 {
		b.WriteString("_None yet._\n")
	}
	for _, x := range c.ICD10CM {
		fmt.Fprintf(&b, "- %s %s\n", x.Code, x.Description)
	}
	b.WriteString("\n**RxNorm**\n")
	if len(c.RxNorm) == 0 {
		b.WriteString("_None yet._\n")
	}
	for _, x := range c.RxNorm {
		fmt.Fprintf(&b, "- %s %s (RxCUI %s)\n", x.Name, x.TTY, x.RxCUI)
	}
	if len(c.Rejected) > 0 {
		b.WriteString("\n**Not in the code tables (dropped)**\n")
		for _, x := range c.Rejected {
			fmt.Fprintf(&b, "- %s %s: %s\n", x.System, x.Suggested, x.Reason)
		}
	}
	return b.String()
}

// --- priorauth ----------------------------------------------------------

// PriorAuthItem is one medication or service that may need prior
// authorization.
type PriorAuthItem struct {
	Item       string  `json:"item"`
	Kind       string  `json:"kind"`       // medication, procedure, imaging, referral, equipment
	Likelihood string  `json:"likelihood"` // likely, possible, unlikely
	Reason     string  `json:"reason"`
	RxCUI      *string `json:"rxcui"` // medications found in RxNorm, else null
}

// PriorAuth is the priorauth lane's data.
type PriorAuth struct {
	Items []PriorAuthItem `json:"items"`
}

func emptyPriorAuth() any { return PriorAuth{Items: []PriorAuthItem{}} }

var (
	priorAuthKinds       = []string{"medication", "procedure", "imaging", "referral", "equipment"}
	priorAuthLikelihoods = []string{"likely", "possible", "unlikely"}
)

func priorAuthLane(t *codes.Tables) *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("items", schema.Array(schema.Object(
			schema.Prop("item", schema.Text(60)),
			schema.Prop("kind", schema.Enum(priorAuthKinds...)),
			schema.Prop("likelihood", schema.Enum(priorAuthLikelihoods...)),
			schema.Prop("reason", schema.Text(100)),
		), 3)),
	))
	return &live.LaneSpec{
		ID: "priorauth", Title: "Prior authorization", Schema: sch, MaxTokens: maxTok,
		Prompt: clinicalPrompt("list the medications, procedures, imaging, referrals and medical equipment "+
			"ordered or proposed in the visit that a US health plan may require prior authorization for, with "+
			"how likely that is and why (for example specialty or brand-name drugs, biologics, GLP-1 agonists, "+
			"advanced imaging such as MRI or CT, elective surgery, durable medical equipment). Leave out "+
			"routine generics and office tests.", nil),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Items []PriorAuthItem `json:"items"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			out := emptyPriorAuth().(PriorAuth)
			for _, it := range a.Items {
				it.Item, it.Reason = live.CleanText(it.Item), live.CleanText(it.Reason)
				if it.Item == "" || !slices.Contains(priorAuthKinds, it.Kind) || !slices.Contains(priorAuthLikelihoods, it.Likelihood) {
					continue
				}
				it.RxCUI = nil
				if it.Kind == "medication" {
					if d, how, _ := t.Resolve(it.Item, ""); how != "" {
						it.RxCUI = &d.RxCUI
					}
				}
				out.Items = append(out.Items, it)
			}
			return priorAuthMarkdown(out), out, nil
		},
	}
}

func priorAuthMarkdown(p PriorAuth) string {
	if len(p.Items) == 0 {
		return "_Nothing that usually needs prior authorization yet._\n"
	}
	var b strings.Builder
	for _, it := range p.Items {
		fmt.Fprintf(&b, "- **%s** (%s): %s. %s\n", it.Item, it.Kind, it.Likelihood, it.Reason)
	}
	b.WriteString("\n_Estimate only: rules differ between health plans; check the patient's plan._\n")
	return b.String()
}

// --- visit_level --------------------------------------------------------

// The three elements of medical decision making (AMA office visit
// guidelines, 2021), each in the AMA's words, from least to most.
var (
	mdmProblems = []string{"minimal", "low", "moderate", "high"}
	mdmData     = []string{"minimal", "limited", "moderate", "extensive"}
	mdmRisk     = []string{"minimal", "low", "moderate", "high"}
	mdmLevels   = []string{"straightforward", "low", "moderate", "high"}
	emCodes     = []string{"99212", "99213", "99214", "99215"}
)

// VisitLevel is the visit_level lane's data: the E/M level of an
// established-patient office visit from medical decision making.
type VisitLevel struct {
	Level     *string `json:"level"` // 99212 to 99215; null before the first run
	MDM       *string `json:"mdm"`   // straightforward, low, moderate, high
	Problems  *string `json:"problems"`
	Data      *string `json:"data"`
	Risk      *string `json:"risk"`
	Rationale string  `json:"rationale"`
	Basis     string  `json:"basis"`
}

const visitLevelBasis = "AMA 2021 office visit guidelines: the level of medical decision making is the one that 2 of its 3 elements meet (established patient, 99212 to 99215); time-based coding is not estimated"

func emptyVisitLevel() any { return VisitLevel{Basis: visitLevelBasis} }

func visitLevelLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("problems", schema.Enum(mdmProblems...)),
		schema.Prop("data", schema.Enum(mdmData...)),
		schema.Prop("risk", schema.Enum(mdmRisk...)),
		schema.Prop("rationale", schema.Text(200)),
	))
	return &live.LaneSpec{
		ID: "visit_level", Title: "Visit level", Schema: sch, MaxTokens: maxTok,
		Prompt: clinicalPrompt("rate the three elements of medical decision making for this established-"+
			"patient office visit under the 2021 AMA E/M guidelines: number and complexity of problems "+
			"addressed (minimal, low, moderate, high), amount and complexity of data reviewed and analysed "+
			"(minimal, limited, moderate, extensive), and risk of complications of patient management "+
			"(minimal, low, moderate, high); give a one-sentence rationale citing lines.", nil),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct{ Problems, Data, Risk, Rationale string }
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			v, err := visitLevelOf(a.Problems, a.Data, a.Risk)
			if err != nil {
				return "", nil, err
			}
			v.Rationale = live.CleanText(a.Rationale)
			return fmt.Sprintf("**%s**: %s medical decision making (problems %s, data %s, risk %s). %s\n\n_%s._\n",
				*v.Level, *v.MDM, *v.Problems, *v.Data, *v.Risk, v.Rationale, v.Basis), v, nil
		},
	}
}

// visitLevelOf applies the 2-of-3 rule: the MDM level is the middle of the
// three elements' ranks, and 99212 to 99215 follow it.
func visitLevelOf(problems, data, risk string) (VisitLevel, error) {
	ranks := make([]int, 3)
	for i, e := range []struct {
		v     string
		scale []string
	}{{problems, mdmProblems}, {data, mdmData}, {risk, mdmRisk}} {
		ranks[i] = slices.Index(e.scale, e.v)
		if ranks[i] < 0 {
			return VisitLevel{}, fmt.Errorf("the model's answer has %q where one of %v belongs", e.v, e.scale)
		}
	}
	sorted := slices.Clone(ranks)
	slices.Sort(sorted)
	mid := sorted[1]
	return VisitLevel{Level: new(emCodes[mid]), MDM: new(mdmLevels[mid]), Problems: new(mdmProblems[ranks[0]]),
		Data: new(mdmData[ranks[1]]), Risk: new(mdmRisk[ranks[2]]), Basis: visitLevelBasis}, nil
}

// --- summary ------------------------------------------------------------

// clinicalSummary is done.summary: note (the cited note's Markdown when
// pass 2 ran, else the SOAP note's, the contract's fallback),
// note_sections (the SOAP note as data), codes, priorauth and visit_level
// (each lane's data), final_transcript, final_note and verifier (the
// after-stop lanes' data), pass2 and pass2_timing.
func clinicalSummary(st *live.State) map[string]any {
	note := live.LaneData(st, "note", emptyNote)
	body := ""
	if lb, ok := st.Lanes["note"]; ok {
		body = lb.Body
	} else if n, ok := note.(SOAPNote); ok {
		body = noteMarkdown(n)
	}
	pass2, ran := clinicalPass2(st)
	if ran {
		body = st.Lanes["final_note"].Body
	}
	return map[string]any{
		"note":             body,
		"note_sections":    note,
		"codes":            live.LaneData(st, "codes", emptyCodes),
		"priorauth":        live.LaneData(st, "priorauth", emptyPriorAuth),
		"visit_level":      live.LaneData(st, "visit_level", emptyVisitLevel),
		"final_transcript": live.LaneData(st, "final_transcript", func() any { return live.Final(st) }),
		"final_note":       live.LaneData(st, "final_note", emptyFinalNote),
		"verifier":         live.LaneData(st, "verifier", emptyClaimCheck),
		"pass2":            pass2,
		"pass2_timing":     live.Pass2Timing(st),
	}
}
