package fill

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"boxd/engine/browser"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"boxd/internal/problem"
	"boxd/pipelines/llmcall"
)

// TestLinesLinear: a source of one long line (no line breaks, as the
// probe sent) is cut into numbered pieces in one pass: the memory
// allocated stays a small multiple of the source's size (cutting it by
// converting the rest of the line to runes for every piece allocated
// gigabytes for 2 MiB and took minutes), and the pieces are whole runes
// of at most 500 that give back the line.
func TestLinesLinear(t *testing.T) {
	line := strings.Repeat("Maria Silva, 12 Elm Street, née à Évora ", 2<<20/41)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	lines, err := Lines([]Source{{Name: "one-line.txt", Text: line}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32*uint64(len(line)) {
		t.Errorf("cutting a %d-byte line allocated %d bytes; want at most 32 times the line (cutting it rune by rune per piece allocated gigabytes)", len(line), alloc)
	}
	var back strings.Builder
	for i, l := range lines {
		if n := len([]rune(l.Text)); n > maxLineRunes || n == 0 || !strings.HasPrefix(line[back.Len():], l.Text) || l.N != i+1 {
			t.Fatalf("piece %d: %d runes, n %d", i, n, l.N)
		}
		back.WriteString(l.Text)
	}
	if want := strings.TrimSpace(line); back.String() != want {
		t.Errorf("the pieces give %d bytes back of %d", back.Len(), len(want))
	}
}

// slowAsk is a model that answers only when its context ends, and
// says so.
type slowAsk struct{ entered, stopped chan error }

func (a slowAsk) Propose(ctx context.Context, _ []Field, _ []Line) ([]Proposal, string, *llmcall.Result, error) {
	a.entered <- nil
	<-ctx.Done()
	a.stopped <- ctx.Err()
	return nil, "", nil, ctx.Err()
}

// TestRunLimit: a run past its server-side limit is stopped (the model
// call sees its context end) and answers 422 naming the limit; a run
// whose caller leaves is stopped too, and answers with the caller's
// context error, not a typed form.
func TestRunLimit(t *testing.T) {
	ask := slowAsk{entered: make(chan error, 1), stopped: make(chan error, 1)}
	s := service(t, ask)
	// Long enough for the first look at the form on a loaded machine.
	s.RunLimit = 20 * time.Second
	src := []Source{{Name: "me.txt", Text: "Ana Silva\nana@example.com"}}
	_, err := s.Run(context.Background(), Request{HTML: checkout, Sources: src}, &recorder{}, nil)
	if p, ok := problem.As(err); !ok || p.Kind != problem.Unprocessable || !strings.Contains(p.Message, "took longer than 20s") {
		t.Fatalf("a run past its limit: %v", err)
	}
	select {
	case <-ask.entered:
		if e := <-ask.stopped; !errors.Is(e, context.DeadlineExceeded) {
			t.Errorf("the model call was not stopped by the limit: %v", e)
		}
	default:
		t.Log("the limit passed before the model call (a slow page read)")
	}
	s.RunLimit = 0
	ctx, cancel := context.WithCancel(context.Background())
	ev := &recorder{}
	go func() {
		<-ask.entered
		cancel()
	}()
	_, err = s.Run(ctx, Request{HTML: checkout, Sources: src}, ev, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a run whose caller left: %v", err)
	}
	if e := <-ask.stopped; !errors.Is(e, context.Canceled) {
		t.Errorf("the model call was not stopped: %v", e)
	}
	for _, typ := range ev.types {
		if typ == "field" || typ == "record" {
			t.Errorf("a stopped run went on to %q", typ)
		}
	}
}

// TestHeldBounded: a page that fires thousands of requests with long
// URLs gets a bounded list in its record (the first MaxHeldListed, each
// URL cut at a character and marked), and the summary still counts them
// all; a source's name over MaxSourceName characters is refused, 413.
func TestHeldBounded(t *testing.T) {
	var held []browser.Refused
	for i := range 5000 {
		held = append(held, browser.Refused{Method: "GET", URL: "https://t.example/" + strings.Repeat("é", 3000) + fmt.Sprint(i), Type: "Image"})
	}
	got := capHeld(held)
	if len(got) != MaxHeldListed {
		t.Fatalf("%d listed", len(got))
	}
	for _, h := range got {
		if len(h.URL) > MaxHeldURL+len("…") || !strings.HasSuffix(h.URL, "…") || !utf8.ValidString(h.URL) {
			t.Fatalf("URL of %d bytes, valid %v", len(h.URL), utf8.ValidString(h.URL))
		}
	}
	text := "x"
	var b Body
	if err := json.Unmarshal([]byte(`{"target": {"html": "<form><input name=a></form>"}}`), &b); err != nil {
		t.Fatal(err)
	}
	b.Sources = []SourceBody{{Name: strings.Repeat("n", MaxSourceName+1), Text: &text}}
	if _, err := b.Validate(); err == nil || !strings.Contains(err.Error(), "at most 200") {
		t.Errorf("a long source name: %v", err)
	}
}
