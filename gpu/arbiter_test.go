package gpu

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestArbiterPriorityOrder(t *testing.T) {
	a := NewArbiter()
	p := a.Pool("llm", 1, 10)
	hold, err := p.Acquire(context.Background(), Interactive)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	queued := 0
	start := func(name string, pr Priority) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel, err := p.Acquire(context.Background(), pr)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			rel()
		}()
		queued++
		for p.Waiting() < queued {
			time.Sleep(time.Millisecond)
		}
	}
	start("bg1", Background)
	start("chat1", Interactive)
	start("live1", Live)
	start("chat2", Interactive)
	if got := a.Queued(); got != 4 {
		t.Errorf("queued = %d", got)
	}
	if a.Active(Interactive) != 1 {
		t.Errorf("active interactive = %d", a.Active(Interactive))
	}
	hold()
	wg.Wait()
	want := []string{"live1", "chat1", "chat2", "bg1"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order = %v, want %v", order, want)
		}
	}
}

func TestArbiterBackPressureAndCancel(t *testing.T) {
	a := NewArbiter()
	p := a.Pool("llm", 1, 1)
	rel, _ := p.Acquire(context.Background(), Interactive)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := p.Acquire(ctx, Interactive); errc <- err }()
	for p.Waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := p.Acquire(context.Background(), Interactive); !errors.Is(err, ErrQueueFull) {
		t.Errorf("second waiter: %v", err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	if p.Waiting() != 0 {
		t.Error("cancelled waiter still queued")
	}
	rel()
	rel() // twice is harmless
	r2, err := p.Acquire(context.Background(), Live)
	if err != nil {
		t.Fatal(err)
	}
	r2()
	if a.Active(Live) != 0 || a.Active(Interactive) != 0 {
		t.Error("slots leaked")
	}
}
