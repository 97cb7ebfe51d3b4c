// Package run is the shape every route family's work shares: the event
// envelope and the event types all families send (receipt, budget, error,
// done), an ordered bounded emitter that delivers them, the budget a run
// spends, and a store of finished runs kept for a time and readable only by
// their owner.
//
// A family's pipeline emits events and returns *problem.Error; the web
// package turns the same events into server-sent events, WebSocket frames
// or (for stream: false) one JSON answer. Nothing here knows HTTP.
package run

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Event types every family shares (contract document 1 section 6,
// documents 2 and 3 "SSE events").
const (
	TypeReceipt = "receipt"
	TypeBudget  = "budget"
	TypeError   = "error"
	TypeDone    = "done"
)

// Event is one server event: its type, milliseconds since the run began,
// and the type's fields. It marshals flat: {"type", "at_ms", ...fields}.
type Event struct {
	Type string
	AtMS int64
	Body any // a struct or map whose fields join the envelope
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
	if len(body) <= 2 || string(body) == "null" { // {} or null
		return head, nil
	}
	if body[0] != '{' {
		return nil, &json.UnsupportedValueError{Str: "event body of type " + e.Type + " is not a JSON object"}
	}
	if k := envelopeKey(body); k != "" {
		// The envelope's type is the event's: a payload's own kind goes
		// in a field of its own ("kind"), never over the envelope.
		return nil, &json.UnsupportedValueError{Str: "event body of type " + e.Type + " has its own " + strconv.Quote(k) + " field"}
	}
	out := make([]byte, 0, len(head)+len(body))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	out = append(out, body[1:]...)
	return out, nil
}

// envelopeKey returns "type" or "at_ms" when the object body has such a
// top-level key ("" when it has neither).
func envelopeKey(body []byte) string {
	if !bytes.Contains(body, []byte(`"type"`)) && !bytes.Contains(body, []byte(`"at_ms"`)) {
		return ""
	}
	d := json.NewDecoder(bytes.NewReader(body))
	if _, err := d.Token(); err != nil { // {
		return ""
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return ""
		}
		if k == "type" || k == "at_ms" {
			return k.(string)
		}
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}

// ReceiptBody is one model call's receipt (contract document 1 section 2).
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

// Tally is what a stream: false answer carries of its run's events: the
// receipts of its model calls, in order, and the last budget. Answers embed
// it (the contract's "receipts" and "budget" fields); the transport fills
// it from the same events a stream would have sent.
type Tally struct {
	Receipts []ReceiptBody `json:"receipts,omitempty"`
	Budget   *BudgetBody   `json:"budget,omitempty"`
}

// Add counts one event.
func (t *Tally) Add(ev Event) {
	switch b := ev.Body.(type) {
	case ReceiptBody:
		if ev.Type == TypeReceipt {
			t.Receipts = append(t.Receipts, b)
		}
	case BudgetBody:
		if ev.Type == TypeBudget {
			bb := b
			t.Budget = &bb
		}
	}
}

// SetTally replaces the tally (answers that embed Tally implement Tallied).
func (t *Tally) SetTally(x Tally) { *t = x }

// Tallied is an answer that carries its run's tally.
type Tallied interface{ SetTally(Tally) }
