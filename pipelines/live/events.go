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

import "boxd/internal/run"

// Event types, as the contract names them; receipt, budget, error and
// done are every run's (package run).
const (
	TypeReady      = "ready"
	TypeTranscript = "transcript"
	TypeLane       = "lane"
	TypeReceipt    = run.TypeReceipt
	TypeBudget     = run.TypeBudget
	TypeError      = run.TypeError
	TypeDone       = run.TypeDone
)

// Event is one server event, run's envelope: {"type", "at_ms", ...}.
type Event = run.Event

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

// ReceiptBody is run.ReceiptBody (every run sends it).
type ReceiptBody = run.ReceiptBody

// BudgetBody is run.BudgetBody (every run sends it).
type BudgetBody = run.BudgetBody

// ErrorBody is run.ErrorBody (every run sends it).
type ErrorBody = run.ErrorBody

// DoneBody carries the session's final artifact.
type DoneBody struct {
	Summary map[string]any `json:"summary"`
}
