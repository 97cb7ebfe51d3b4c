package problem

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestKindOfThroughWrapping(t *testing.T) {
	base := New(Budget, "token budget used up")
	wrapped := fmt.Errorf("lane note: %w", base)
	if KindOf(wrapped) != Budget || !Is(wrapped, Budget) {
		t.Fatalf("KindOf(wrapped) = %v", KindOf(wrapped))
	}
	if KindOf(errors.New("plain")) != Internal {
		t.Fatal("a plain error must be Internal")
	}
	cause := errors.New("disk full")
	w := Wrap(Unavailable, cause, "store: %s", "x")
	if !errors.Is(w, cause) || w.Error() != "store: x" {
		t.Fatalf("Wrap: %v", w)
	}
}

func TestRetrySecondsRoundsUp(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {time.Second + 1, 2}, {29*time.Second + 400*time.Millisecond, 30}, {-time.Second, 1}} {
		if got := RetrySeconds(c.d); got != c.want {
			t.Errorf("RetrySeconds(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}

func TestEveryKindHasAName(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		n := k.String()
		if n == "" || seen[n] {
			t.Fatalf("kind %d has name %q (empty or repeated)", k, n)
		}
		seen[n] = true
	}
}
