// Package live runs live audio sessions (contract document 1, sections 2, 3
// and 6): audio in, transcript events out, and lanes (per-vertical model
// calls over the transcript so far) that fill in while people talk, then a
// finished artifact on stop. It is transport-agnostic: the WebSocket route
// and the replay route (pipelines/replay) drive a Session and forward its
// events.
//
// This package is the session core: the Session, its events, the lane
// runner and what lanes share (State, LaneSpec, Vertical, the numbered
// transcript, final_transcript and the pass-2 summary parts). Each vertical
// is a package of its own (clinical, sales, field, translate), and package
// verticals builds the set a box serves.
package live

import (
	"encoding/json"
)

// Event types, as the contract names them.
const (
	TypeReady      = "ready"
	TypeTranscript = "transcript"
	TypeLane       = "lane"
	TypeReceipt    = "receipt"
	TypeBudget     = "budget"
	TypeError      = "error"
	TypeDone       = "done"
)

// Event is one server event: its type, milliseconds since the session
// began, and the type's fields. It marshals flat: {"type", "at_ms", ...}.
type Event struct {
	Type string
	AtMS int64
	Body any // one of the *Body structs below
}

// MarshalJSON writes the envelope and the body's fields in one object.
func (e Event) MarshalJSON() ([]byte, error) {
	body, err := json.Marshal(e.Body)
	if err != nil {
		return nil, err
	}
	head, _ := json.Marshal(struct {
		Type string `json:"type"`
		AtMS int64  `json:"at_ms"`
	}{e.Type, e.AtMS})
	if len(body) <= 2 { // {} or null
		return head, nil
	}
	out := make([]byte, 0, len(head)+len(body))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	out = append(out, body[1:]...)
	return out, nil
}

// Models names the models a session uses.
type Models struct {
	ASR string `json:"asr"`
	LLM string `json:"llm"`
}

// ReadyBody is the first event of a session.
type ReadyBody struct {
	Vertical string `json:"vertical"`
	Models   Models `json:"models"`
	Receipts string `json:"receipts"` // "signed": the box signs every receipt with its own key
	Banner   string `json:"banner,omitempty"`
	Locale   string `json:"locale,omitempty"`
	Lang     string `json:"lang,omitempty"`
	Target   string `json:"target,omitempty"`
}

// TranscriptBody is one transcript update: final false carries the
// cumulative text of sentence I in progress, final true the finished
// sentence, which replaces it.
type TranscriptBody struct {
	I     int     `json:"i"`
	T     float64 `json:"t"`
	Text  string  `json:"text"`
	Final bool    `json:"final"`
}

// LaneBody is a lane's whole state (translation: one source sentence).
type LaneBody struct {
	Lane      string `json:"lane"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	Data      any    `json:"data,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
}

// ReceiptBody is one model call's receipt.
type ReceiptBody struct {
	ID         string  `json:"id"`
	Model      string  `json:"model"`
	GatewaySig string  `json:"gateway_sig"`
	Provider   string  `json:"provider"`
	Status     string  `json:"status"`
	KeyID      *string `json:"key_id"`
}

// BudgetBody is what is left of the caller's budgets.
type BudgetBody struct {
	SecondsAudioLeft int64   `json:"seconds_audio_left"`
	LLMTokensLeft    int64   `json:"llm_tokens_left"`
	KeyID            *string `json:"key_id,omitempty"`
	Period           string  `json:"period,omitempty"` // "day" with a key
}

// ErrorBody says what went wrong; it precedes every close.
type ErrorBody struct {
	Message string `json:"message"`
}

// DoneBody carries the session's final artifact.
type DoneBody struct {
	Summary map[string]any `json:"summary"`
}
