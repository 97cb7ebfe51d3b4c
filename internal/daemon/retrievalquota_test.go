package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRetrievalQuotaPerOwnerLoad is the bounded load test of the probe's
// finding (8 free demo tokens filled all 64 retrieval index slots in 6.8 s
// and every caller, keys included, got 503 for an hour): 12 demo tokens
// index 3 documents each, all at once, retrying the one-at-a-time 503.
// Demo sessions together end up holding exactly their share
// (retrieval.demo_indexes, 16 of 64); a token past its own bound
// (retrieval.indexes_per_demo_session, 2) replaces its oldest; the rest
// are refused 429 with Retry-After naming the setting; and a developer
// key still indexes. About 30 builds of the tiny test embedder.
func TestRetrievalQuotaPerOwnerLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ts, _ := retrievalServer(t, nil)
	var tokens []string
	for range 12 {
		tokens = append(tokens, session(t, ts, "clinical"))
	}
	index := func(token string, n int) reply {
		body := map[string]any{"synthetic": true, "documents": []map[string]string{
			{"id": "d", "title": "t", "text": fmt.Sprintf("Document %d of this caller %s. The pump loses pressure after the filter change.", n, token[len(token)-6:])}}}
		for {
			r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: token, body: body})
			if r.status == 503 && strings.Contains(string(r.body), "one request at a time") {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			return r
		}
	}
	var ok, limited atomic.Int64
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Go(func() {
			for n := range 3 {
				r := index(tok, n)
				switch {
				case r.status == 200:
					ok.Add(1)
				case r.status == 429 && r.header.Get("Retry-After") != "" && strings.Contains(r.errMsg(t), "retrieval.demo_indexes"):
					limited.Add(1)
				default:
					t.Errorf("demo index: %d %s", r.status, r.body)
				}
			}
		})
	}
	wg.Wait()
	all, demo := ts.Retrieval.Held()
	t.Logf("12 demo tokens x 3 indexes: %d built, %d refused over the demo share; held %d (demo %d)", ok.Load(), limited.Load(), all, demo)
	if demo != 16 || all != 16 {
		t.Errorf("demo sessions hold %d of %d indexes, want their share, 16", demo, all)
	}
	if limited.Load() == 0 {
		t.Error("no demo index was refused over the share")
	}
	key, _, d := ts.deps.Platform.CreateKey(context.Background(), platformSpec())
	if d != nil {
		t.Fatal(d)
	}
	for n := range 3 {
		if r := index(key, n); r.status != 200 {
			t.Fatalf("a developer key beside the demo share: %d %s", r.status, r.body)
		}
	}
	if all, demo := ts.Retrieval.Held(); all != 19 || demo != 16 {
		t.Errorf("held %d (demo %d), want 19 (16)", all, demo)
	}
}
