package run

// Env is what a run is given besides its request, always as a parameter
// (never a field of the wire request): where its events go and the budget
// it spends. The transport picks Events (a stream when the caller asked
// for one, else a collector whose receipts and budget fill the answer);
// the pipeline emits its events there in the contract's order and ends
// the run with done itself (End), always.
type Env struct {
	Events Events
	// Budget is the caller's (nil: a public route, nothing to spend).
	Budget Budget
}

// Events is where a run's events go: Emit for each event, End for the
// last (done), after which nothing more is sent. *Emitter is one.
type Events interface {
	Emit(typ string, body any)
	End(typ string, body any) bool
}

var _ Events = (*Emitter)(nil)
