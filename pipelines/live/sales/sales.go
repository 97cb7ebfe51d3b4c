// Package sales is the sales live vertical (contract document 1, section
// 6). Live lanes: objection, next_question and crm (the CRM record's
// fields). After stop pass 2 runs its steps 1 and 2 (the session core
// diarizes the call and maps its speakers to Seller and Buyer:
// pipelines/live/diarized.go), then, in order: followup (the follow-up
// email, written from the role-labelled lines) and final_transcript. The
// final artifact, done.summary, holds every lane's state, the diarized
// final_transcript, pass2 and pass2_timing (diarize_s and roles_s; note_s
// and verifier_s null: the sales pass has no note). Payload shapes are in
// docs/decisions.md ("Live lanes: clinical and sales").
package sales

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/live"
	"boxd/pipelines/schema"
)

// New is the sales vertical.
func New() *live.Vertical {
	return &live.Vertical{
		ID:            "sales",
		Live:          []*live.LaneSpec{objectionLane(), nextQuestionLane(), crmLane()},
		Final:         []*live.LaneSpec{followupLane(), live.FinalTranscriptLane()},
		Summary:       salesSummary,
		Pass2Fallback: salesPass2Fallback,
		Roles: &live.Roles{
			Names: []string{"Seller", "Buyer"},
			Setting: "The transcript is a sales call. Seller is the person selling (who asks discovery questions and presents the offer); " +
				"Buyer is the prospect or customer, and anyone on the buying side.",
			Asker: "Seller", Answerer: "Buyer", Rest: "Buyer",
		},
	}
}

// salesPass2Fallback ends the error event when pass 2 fails.
const salesPass2Fallback = "final_transcript is the live transcript without speakers or roles"

// salesRan is summary.pass2.reason when pass 2 ran.
const salesRan = "pass 2 ran its steps 1 and 2: speakers diarized and mapped to Seller and Buyer"

// diarizedSpeakers replaces what salesSystem says of speakers once pass 2
// has labelled them.
const diarizedSpeakers = "each line begins with its speaker's role (Seller or Buyer, from a speaker diarization that may err)"

const salesSystem = "You assist a seller during a live sales call. The user message holds the live " +
	"speech-recognition transcript so far, one numbered line per sentence ([n] text); speakers are not " +
	"labelled (seller or buyer) and words may be misrecognised. Use only what the transcript says and " +
	"never invent facts. Answer with one JSON object in the given schema: concise plain-ASCII strings on " +
	"one line each, no quotation marks, empty strings or lists for what is not known.\n\nTask: "

// salesPrompt is the shared prompt: the task, the numbered transcript and,
// for lanes that use it, the CRM fields known so far.
func salesPrompt(task string, withCRM bool) func(st *live.State, _ int) (string, string) {
	return func(st *live.State, _ int) (string, string) {
		lines := live.NumberedTranscript(st)
		if lines == "" {
			return "", ""
		}
		user := "Transcript:\n" + lines
		if lb, ok := st.Lanes["crm"]; ok && withCRM && lb.Data != nil {
			if b, err := json.Marshal(lb.Data); err == nil {
				user += "\nCRM fields so far: " + string(b) + "\n"
			}
		}
		system := salesSystem
		if st.Diarized != nil {
			system = strings.Replace(system, "speakers are not labelled (seller or buyer)", diarizedSpeakers, 1)
		}
		return system + task, user
	}
}

// --- objection ----------------------------------------------------------

var objectionCategories = []string{"price", "budget", "timing", "authority", "need", "competitor", "trust", "contract", "other"}

// Objection is one buyer objection and a suggested response.
type Objection struct {
	Objection string `json:"objection"`
	Category  string `json:"category"`
	Response  string `json:"response"`
}

// Objections is the objection lane's data, latest objection first.
type Objections struct {
	Objections []Objection `json:"objections"`
}

func emptyObjections() any { return Objections{Objections: []Objection{}} }

func objectionLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("objections", schema.Array(schema.Object(
			schema.Prop("objection", schema.Text(90)),
			schema.Prop("category", schema.Enum(objectionCategories...)),
			schema.Prop("response", schema.Text(140)),
		), 3)),
	))
	return &live.LaneSpec{
		ID: "objection", Title: "Objections", Schema: sch, MaxTokens: maxTok,
		Prompt: salesPrompt("list the buyer's objections and concerns still open, the latest first (at most "+
			"three), each with a short response the seller could give now.", false),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a Objections
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			out := emptyObjections().(Objections)
			for _, o := range a.Objections {
				o.Objection, o.Response = live.CleanText(o.Objection), live.CleanText(o.Response)
				if o.Objection == "" || !slices.Contains(objectionCategories, o.Category) {
					continue
				}
				out.Objections = append(out.Objections, o)
			}
			if len(out.Objections) == 0 {
				return "_No objections yet._\n", out, nil
			}
			var b strings.Builder
			for _, o := range out.Objections {
				fmt.Fprintf(&b, "- **%s** (%s)\n  Response: %s\n", o.Objection, o.Category, o.Response)
			}
			return b.String(), out, nil
		},
	}
}

// --- next_question ------------------------------------------------------

var questionTopics = []string{"need", "budget", "authority", "timeline", "competition", "next_step", "other"}

// NextQuestion is the next_question lane's data: the question the seller
// could ask next, what it uncovers and why now.
type NextQuestion struct {
	Question *string `json:"question"` // null before the first run
	Topic    *string `json:"topic"`
	Reason   string  `json:"reason"`
}

func emptyNextQuestion() any { return NextQuestion{} }

func nextQuestionLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("question", schema.Text(140)),
		schema.Prop("topic", schema.Enum(questionTopics...)),
		schema.Prop("reason", schema.Text(120)),
	))
	return &live.LaneSpec{
		ID: "next_question", Title: "Next question", Schema: sch, MaxTokens: maxTok,
		Prompt: salesPrompt("suggest the one question the seller should ask next to move the deal forward, "+
			"preferring what is still unknown (need, budget, decision makers, timeline, competition, next "+
			"step), what it uncovers (topic) and why now.", true),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct{ Question, Topic, Reason string }
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			q := NextQuestion{Question: orNull(a.Question), Reason: live.CleanText(a.Reason)}
			if slices.Contains(questionTopics, a.Topic) {
				q.Topic = new(a.Topic)
			}
			if q.Question == nil {
				return "_No question yet._\n", q, nil
			}
			topic := "other"
			if q.Topic != nil {
				topic = *q.Topic
			}
			return fmt.Sprintf("**%s**\n\n%s: %s\n", *q.Question, topic, q.Reason), q, nil
		},
	}
}

// --- crm ----------------------------------------------------------------

// CRMFields is the crm lane's data: fields for the CRM record, null (or an
// empty list) while not mentioned.
type CRMFields struct {
	Company        *string  `json:"company"`
	ContactRole    *string  `json:"contact_role"`
	Needs          []string `json:"needs"`
	Budget         *string  `json:"budget"`
	Timeline       *string  `json:"timeline"`
	DecisionMakers []string `json:"decision_makers"`
	Competitors    []string `json:"competitors"`
	NextStep       *string  `json:"next_step"`
}

func emptyCRM() any {
	return CRMFields{Needs: []string{}, DecisionMakers: []string{}, Competitors: []string{}}
}

func crmLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("company", schema.Text(50)),
		schema.Prop("contact_role", schema.Text(50)),
		schema.Prop("needs", schema.Array(schema.Text(70), 3)),
		schema.Prop("budget", schema.Text(50)),
		schema.Prop("timeline", schema.Text(50)),
		schema.Prop("decision_makers", schema.Array(schema.Text(40), 3)),
		schema.Prop("competitors", schema.Array(schema.Text(40), 3)),
		schema.Prop("next_step", schema.Text(80)),
	))
	return &live.LaneSpec{
		ID: "crm", Title: "CRM fields", Schema: sch, MaxTokens: maxTok,
		Prompt: salesPrompt("fill in the CRM record of the buyer from the call: company, the contact's role, "+
			"needs and pain points, budget, timeline, decision makers (names or roles), competitors or "+
			"current vendors mentioned, and the agreed next step.", false),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Company        string   `json:"company"`
				ContactRole    string   `json:"contact_role"`
				Needs          []string `json:"needs"`
				Budget         string   `json:"budget"`
				Timeline       string   `json:"timeline"`
				DecisionMakers []string `json:"decision_makers"`
				Competitors    []string `json:"competitors"`
				NextStep       string   `json:"next_step"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			c := CRMFields{Company: orNull(a.Company), ContactRole: orNull(a.ContactRole), Needs: live.CleanList(a.Needs),
				Budget: orNull(a.Budget), Timeline: orNull(a.Timeline), DecisionMakers: live.CleanList(a.DecisionMakers),
				Competitors: live.CleanList(a.Competitors), NextStep: orNull(a.NextStep)}
			return crmMarkdown(c), c, nil
		},
	}
}

func crmMarkdown(c CRMFields) string {
	var b strings.Builder
	one := func(label string, v *string) {
		s := "_unknown_"
		if v != nil {
			s = *v
		}
		fmt.Fprintf(&b, "- **%s:** %s\n", label, s)
	}
	many := func(label string, v []string) {
		s := "_unknown_"
		if len(v) > 0 {
			s = strings.Join(v, "; ")
		}
		fmt.Fprintf(&b, "- **%s:** %s\n", label, s)
	}
	one("Company", c.Company)
	one("Contact role", c.ContactRole)
	many("Needs", c.Needs)
	one("Budget", c.Budget)
	one("Timeline", c.Timeline)
	many("Decision makers", c.DecisionMakers)
	many("Competitors", c.Competitors)
	one("Next step", c.NextStep)
	return b.String()
}

// --- followup (after stop) ----------------------------------------------

// FollowupEmail is the followup lane's data: the email the seller sends
// after the call.
type FollowupEmail struct {
	Subject    *string  `json:"subject"` // null when the lane did not run
	Body       string   `json:"body"`    // paragraphs separated by blank lines
	Paragraphs []string `json:"paragraphs"`
}

func emptyFollowup() any { return FollowupEmail{Paragraphs: []string{}} }

func followupLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("subject", schema.Text(90)),
		schema.Prop("paragraphs", schema.Array(schema.Text(300), 4)),
	))
	return &live.LaneSpec{
		ID: "followup", Title: "Follow-up email", Schema: sch, MaxTokens: maxTok,
		Prompt: salesPrompt("the call has ended. Write the seller's follow-up email to the buyer: a subject "+
			"line and up to four short paragraphs (a greeting with thanks, a recap of the buyer's needs, "+
			"answers to open objections, and the agreed next step with a date when one was said). Plain "+
			"text; no placeholders for facts the call did not give.", true),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Subject    string   `json:"subject"`
				Paragraphs []string `json:"paragraphs"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			e := FollowupEmail{Subject: orNull(a.Subject), Paragraphs: live.CleanList(a.Paragraphs)}
			e.Body = strings.Join(e.Paragraphs, "\n\n")
			subject := "(no subject)"
			if e.Subject != nil {
				subject = *e.Subject
			}
			return fmt.Sprintf("**Subject:** %s\n\n%s\n", subject, e.Body), e, nil
		},
	}
}

// orNull is nil for "" (a field not mentioned yet), else the string.
func orNull(s string) *string {
	if s = live.CleanText(s); s == "" {
		return nil
	}
	return &s
}

// --- summary ------------------------------------------------------------

// salesSummary is done.summary: objection, next_question, crm and followup
// (each lane's data), final_transcript, pass2 {ran, diarized, reason} and
// pass2_timing.
func salesSummary(st *live.State) map[string]any {
	pass2 := map[string]any{"ran": st.Diarized != nil, "diarized": st.Diarized != nil, "reason": salesRan}
	if st.Pass2Failed != "" {
		pass2["reason"] = st.Pass2Failed
	}
	return map[string]any{
		"objection":        live.LaneData(st, "objection", emptyObjections),
		"next_question":    live.LaneData(st, "next_question", emptyNextQuestion),
		"crm":              live.LaneData(st, "crm", emptyCRM),
		"followup":         live.LaneData(st, "followup", emptyFollowup),
		"final_transcript": live.Final(st),
		"pass2":            pass2,
		"pass2_timing":     live.Pass2Timing(st),
	}
}
