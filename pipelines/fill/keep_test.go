package fill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"boxd/engine/browser"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
)

// failing answers as a model whose answer was cut at its token bound (or
// failed): some proposals, a receipt's usage, and an error.
type failing struct {
	props []Proposal
	err   error
	wait  time.Duration // a slow model
}

func (f failing) Propose(ctx context.Context, _ []Field, _ []Line) ([]Proposal, string, *llmcall.Result, error) {
	if f.wait > 0 {
		select {
		case <-time.After(f.wait):
		case <-ctx.Done():
			return nil, "", nil, ctx.Err()
		}
	}
	res := &llmcall.Result{}
	res.Usage.TotalTokens = 950
	return f.props, "prompt-hash", res, f.err
}

// events keeps each event as the client reads it (the envelope and its
// payload in one JSON object).
type events struct{ got []map[string]any }

func (e *events) Emit(typ string, body any) {
	b, err := json.Marshal(run.Event{Type: typ, Body: body})
	if err != nil {
		panic(fmt.Sprintf("event %s does not marshal: %v", typ, err))
	}
	m := map[string]any{}
	_ = json.Unmarshal(b, &m)
	e.got = append(e.got, m)
}

// TestAFailedProposalKeepsTheWork: a proposal cut at its token bound (or
// any model error) ends with a completed, signed run: every field it
// would have answered left to the person with the reason, the model call
// counted, one log line with the run's id and the reason and no value.
// Without the fix the run ended with the error (502, or a stream error).
func TestAFailedProposalKeepsTheWork(t *testing.T) {
	cut := problem.Wrap(problem.Upstream, llmcall.ErrCut, "the answer was cut at 950 tokens")
	var logs bytes.Buffer
	s := service(t, failing{err: cut})
	s.Log = slog.New(slog.NewTextHandler(&logs, nil))
	ev := &events{}
	out, err := s.Run(context.Background(), Request{HTML: checkout, Sources: []Source{{Name: "me.txt", Text: "Ana Silva\nana@example.com\nShip to Portugal"}}}, ev, nil)
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	if out.Record == nil || out.Review.Summary.ModelCalls != 1 || out.Review.Summary.Tokens != 950 {
		t.Errorf("record %v, summary %+v", out.Record != nil, out.Review.Summary)
	}
	for _, f := range out.Review.Fields {
		switch {
		case f.Status == StatusSensitive: // the card: a secret, whatever the model did
		case f.Status != StatusLeft || f.Filled || !strings.Contains(f.Why, "cut at 950 tokens"):
			t.Errorf("%s: %s %v %q", f.FID, f.Status, f.Filled, f.Why)
		}
	}
	line := logs.String()
	if !strings.Contains(line, "fill proposal failed") || !strings.Contains(line, out.ID) || !strings.Contains(line, "cut at 950 tokens") || strings.Contains(line, "Ana") {
		t.Errorf("log: %s", line)
	}
	if last := ev.got[len(ev.got)-1]["type"]; last != "record" {
		t.Errorf("the last event is %v", last)
	}
}

// TestAModelSlowerThanATabStillTypes: a model call longer than a tab's
// whole life (the pool's TabTimeout, 60 s by default; 3 s here) does not
// lose the run: the form is read, the tab closed, and a new one opened
// to type. Without the fix the run ended with "fill: focus f1: context
// deadline exceeded".
func TestAModelSlowerThanATabStillTypes(t *testing.T) {
	s := service(t, failing{props: []Proposal{{"f1", "me.txt", 1, "Ana Silva"}}, wait: 4 * time.Second})
	p, err := browser.NewPool(browser.Options{Slots: 1, TabTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.Browser = p
	out, err := s.Run(context.Background(), Request{HTML: checkout, Sources: []Source{{Name: "me.txt", Text: "Ana Silva"}}}, &recorder{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := out.Review.Fields[0]; f.Status != StatusSourced || !f.Filled {
		t.Errorf("%+v", f)
	}
	// The tracker's beacon, sent on both loads, is counted once.
	n := 0
	for _, h := range out.Held {
		if strings.Contains(h.URL, "tracker.example") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the beacon held %d times: %+v", n, out.Held)
	}
}

// TestSameFieldsAndHeldOnce: the second reading of a form must find the
// same fields in the same places (else nothing is typed); a request held
// on both loads is counted once, one made only while typing is kept.
func TestSameFieldsAndHeldOnce(t *testing.T) {
	a := []Field{{FID: "f1", Selector: "#name", Name: "name", Type: "text"}, {FID: "f2", Selector: "#email", Name: "email", Type: "email"}}
	for _, c := range []struct {
		b    []Field
		same bool
	}{
		{[]Field{a[0], a[1]}, true},
		{[]Field{a[1], a[0]}, false},
		{[]Field{a[0]}, false},
		{[]Field{a[0], {FID: "f2", Selector: "#email", Name: "email", Type: "password"}}, false},
		{[]Field{a[0], {FID: "f2", Selector: "form > input:nth-of-type(2)", Name: "email", Type: "email"}}, false},
	} {
		if got := sameFields(a, c.b); got != c.same {
			t.Errorf("sameFields(%v) = %v", c.b, got)
		}
	}
	beacon := browser.Refused{Method: "POST", URL: "https://t.example/b", Type: "Ping", Why: "x"}
	typed := browser.Refused{Method: "POST", URL: "https://t.example/v?Ana", Type: "Fetch", Why: "x"}
	got := heldOnce([]browser.Refused{beacon, beacon}, []browser.Refused{beacon, beacon, typed})
	if len(got) != 3 || got[2] != typed {
		t.Errorf("%+v", got)
	}
}

// TestEventsKeepTheirType: the field, net and entry events carry their
// contract type in the envelope; the payload's own kind (a field's input
// type, a held request's resource type, an entry's type) is "kind".
// Without the fix, "type" was "textarea", "XHR" or "held".
func TestEventsKeepTheirType(t *testing.T) {
	s := service(t, fixed{{"f1", "me.txt", 1, "Ana Silva"}})
	ev := &events{}
	if _, err := s.Run(context.Background(), Request{HTML: checkout, Sources: []Source{{Name: "me.txt", Text: "Ana Silva"}}}, ev, nil); err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]string{}
	for _, e := range ev.got {
		typ, _ := e["type"].(string)
		if k, ok := e["kind"].(string); ok {
			kinds[typ] = append(kinds[typ], k)
		}
	}
	for _, want := range [][2]string{{"field", "text"}, {"field", "textarea"}, {"net", "Ping"}, {"entry", "field"}} {
		if !strings.Contains(strings.Join(kinds[want[0]], ","), want[1]) {
			t.Errorf("no %s event of kind %s: %v", want[0], want[1], kinds)
		}
	}
}
