package run

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/internal/problem"
)

func TestEventMarshalsFlat(t *testing.T) {
	b, err := json.Marshal(Event{Type: TypeError, AtMS: 12, Body: ErrorBody{Message: "x"}})
	if err != nil || string(b) != `{"type":"error","at_ms":12,"message":"x"}` {
		t.Fatalf("%s %v", b, err)
	}
	b, _ = json.Marshal(Event{Type: TypeDone, AtMS: 1})
	if string(b) != `{"type":"done","at_ms":1}` {
		t.Fatalf("%s", b)
	}
	// A payload may not carry its own "type" or "at_ms" over the
	// envelope's (a client tells events apart by type); a nested one is
	// the payload's business.
	for _, body := range []any{map[string]string{"type": "XHR"}, map[string]any{"n": 1, "at_ms": 3}, struct {
		Kind string `json:"type"`
	}{"textarea"}} {
		if _, err := json.Marshal(Event{Type: "net", Body: body}); err == nil {
			t.Errorf("%v marshalled over the envelope", body)
		}
	}
	if b, err := json.Marshal(Event{Type: "field", Body: map[string]any{"kind": "textarea", "source": map[string]string{"type": "doc"}, "why": "a \"type\" field"}}); err != nil || !strings.HasPrefix(string(b), `{"type":"field"`) {
		t.Errorf("%s %v", b, err)
	}
	if _, err := json.Marshal(Event{Type: "x", Body: []int{1}}); err == nil {
		t.Fatal("a non-object body must not marshal")
	}
}

func TestEmitterOrderAndEnd(t *testing.T) {
	var mu sync.Mutex
	var got []string
	e := NewEmitter(func(ev Event) error {
		mu.Lock()
		got = append(got, ev.Type)
		mu.Unlock()
		return nil
	}, nil, 4)
	for range 50 {
		e.Emit("lane", nil)
	}
	if !e.End(TypeDone, nil) || e.End(TypeError, ErrorBody{"late"}) {
		t.Fatal("End must end once")
	}
	e.Emit("lane", nil) // after the end: dropped
	e.Close()
	if len(got) != 51 || got[50] != TypeDone {
		t.Fatalf("got %d events, last %q", len(got), got[len(got)-1])
	}
}

func TestEmitterSinkFailureDoesNotBlock(t *testing.T) {
	e := NewEmitter(func(Event) error { return errors.New("gone") }, nil, 1)
	done := make(chan struct{})
	go func() {
		for range 100 {
			e.Emit("x", nil)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Emit blocked on a failed sink")
	}
	<-e.Failed()
	if e.Err() == nil {
		t.Fatal("Err must report the sink's error")
	}
	e.Close()
}

func TestStoreOwnerTTLAndBound(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &Store[int]{TTL: time.Hour, Max: 2, Now: func() time.Time { return now }, What: "test run"}
	s.Put("a", "alice", 1)
	if v, err := s.Get("a", "alice"); err != nil || v != 1 {
		t.Fatalf("owner read: %v %v", v, err)
	}
	if _, err := s.Get("a", "bob"); !problem.Is(err, problem.NotFound) {
		t.Fatalf("foreign read: %v", err)
	}
	s.Put("b", "alice", 2)
	s.Put("c", "alice", 3) // over Max: a is forgotten
	if _, err := s.Get("a", "alice"); !problem.Is(err, problem.NotFound) {
		t.Fatal("the oldest run must be forgotten over Max")
	}
	if _, err := s.Update("b", "alice", func(v int) (int, error) { return v + 10, nil }); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get("b", "alice"); v != 12 {
		t.Fatalf("update: %d", v)
	}
	now = now.Add(time.Hour)
	if _, err := s.Get("c", "alice"); !problem.Is(err, problem.NotFound) {
		t.Fatal("an expired run must read as not found")
	}
	if s.Delete("c", "bob") {
		t.Fatal("only the owner deletes")
	}
}

func TestTallyKeepsReceiptsAndTheLastBudget(t *testing.T) {
	var tl Tally
	tl.Add(Event{Type: TypeReceipt, Body: ReceiptBody{ID: "a"}})
	tl.Add(Event{Type: TypeBudget, Body: BudgetBody{LLMTokensLeft: 9}})
	tl.Add(Event{Type: "lane", Body: ErrorBody{Message: "not counted"}})
	tl.Add(Event{Type: TypeReceipt, Body: ReceiptBody{ID: "b"}})
	tl.Add(Event{Type: TypeBudget, Body: BudgetBody{LLMTokensLeft: 4}})
	if len(tl.Receipts) != 2 || tl.Receipts[1].ID != "b" || tl.Budget == nil || tl.Budget.LLMTokensLeft != 4 {
		t.Fatalf("%+v", tl)
	}
	var ans struct{ Tally }
	var _ Tallied = &ans
	ans.SetTally(tl)
	if b, _ := json.Marshal(ans); !strings.Contains(string(b), `"receipts":[{"id":"a"`) || !strings.Contains(string(b), `"budget":{`) {
		t.Fatalf("%s", b)
	}
}
