package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strings"
)

// The item the studio reports name: a gallery file the test puts in
// state_dir/studio/media.
const reportItem = "crash-item"

// opWeights is how often each worker writes each kind.
var opWeights = []struct {
	o op
	w int
}{{opKeyCreate, 2}, {opKeyRevoke, 1}, {opChat, 3}, {opIndex, 2}, {opDomain, 2}, {opReport, 1}}

// worker writes until stop ends; its requests run under ctx (which the
// test cancels after the kill, so that a request going as the kill
// lands is in flight, and none starts after it). It writes the round's
// target kind more often.
type worker struct {
	c      *client
	l      *ledger
	rng    *rand.Rand
	round  int
	target op
}

func (w *worker) run(stop, ctx context.Context) {
	total := 0
	for _, x := range opWeights {
		total += w.weight(x.o, x.w)
	}
	for stop.Err() == nil {
		n := w.rng.IntN(total)
		for _, x := range opWeights {
			if n -= w.weight(x.o, x.w); n < 0 {
				w.one(ctx, x.o)
				break
			}
		}
	}
}

func (w *worker) weight(o op, n int) int {
	if o == w.target {
		return 4 * n
	}
	return n
}

func (w *worker) one(ctx context.Context, o op) {
	switch o {
	case opKeyCreate:
		w.c.createKey(ctx, w.l, fmt.Sprintf("crash-r%d-n%d", w.round, w.l.next()), false, false)
	case opKeyRevoke:
		w.revoke(ctx)
	case opChat:
		w.chat(ctx)
	case opIndex:
		w.index(ctx)
	case opDomain:
		w.domain(ctx)
	case opReport:
		w.report(ctx)
	}
}

// pick returns a random usable key, or nil.
func (w *worker) pick() *keyRec {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	for range 8 {
		if len(w.l.keys) == 0 {
			return nil
		}
		if k := w.l.keys[w.rng.IntN(len(w.l.keys))]; k.usable() {
			return k
		}
	}
	return nil
}

func (w *worker) revoke(ctx context.Context) {
	k := w.pick()
	if k == nil {
		return
	}
	w.l.mu.Lock()
	if k.revokeSent {
		w.l.mu.Unlock()
		return
	}
	k.revokeSent = true
	w.l.mu.Unlock()
	t0 := w.l.begin(opKeyRevoke)
	st, _, _, err := w.c.do(ctx, w.c.hc, http.MethodDelete, "/v1/keys/"+k.id, w.c.admin, nil)
	ok := err == nil && st == http.StatusOK
	if ok {
		w.l.mu.Lock()
		k.revokeAcked = true
		w.l.mu.Unlock()
	}
	w.l.end(opKeyRevoke, ok, t0)
}

// chat sends a chat completion, one time in three streamed (acknowledged
// by its final chunk, with the receipt, and [DONE]).
func (w *worker) chat(ctx context.Context) {
	k := w.pick()
	if k == nil {
		return
	}
	maxTok := 4 + w.rng.IntN(13)
	stream := w.rng.IntN(3) == 0
	w.l.mu.Lock()
	k.sentTok += int64(maxTok)
	w.l.mu.Unlock()
	t0 := w.l.begin(opChat)
	st, raw, h, err := w.c.keyed(ctx, w.l, k, http.MethodPost, "/v1/chat/completions", map[string]any{
		"model": "model-27b", "max_tokens": maxTok, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("Crash round %d, message %d.", w.round, w.l.next())}},
	})
	type chunk struct {
		Usage *struct {
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
		Receipt *struct {
			ID string `json:"id"`
		} `json:"receipt"`
	}
	var tokens int64
	id := ""
	ok := err == nil && st == http.StatusOK
	switch {
	case !ok:
	case stream:
		done := false
		for line := range strings.Lines(string(raw)) {
			data, found := strings.CutPrefix(strings.TrimSpace(line), "data: ")
			var c chunk
			switch {
			case !found:
			case data == "[DONE]":
				done = true
			case json.Unmarshal([]byte(data), &c) == nil:
				if c.Usage != nil {
					tokens = c.Usage.CompletionTokens
				}
				if c.Receipt != nil {
					id = c.Receipt.ID
				}
			}
		}
		ok = done && id != ""
	default:
		var c chunk
		id = h.Get("X-Service-Receipt")
		ok = json.Unmarshal(raw, &c) == nil && c.Usage != nil && id != ""
		if ok {
			tokens = c.Usage.CompletionTokens
		}
	}
	if ok {
		w.l.mu.Lock()
		k.ackedTok += tokens
		w.l.receipts[id] = k.id
		w.l.mu.Unlock()
	}
	w.l.end(opChat, ok, t0)
}

// index builds a persisted index for one owner (skipped while the
// owner's previous index is still going).
func (w *worker) index(ctx context.Context) {
	w.l.mu.Lock()
	if len(w.l.owners) == 0 {
		w.l.mu.Unlock()
		return
	}
	k := w.l.owners[w.rng.IntN(len(w.l.owners))]
	mu := w.l.ownerMu[k.id]
	w.l.mu.Unlock()
	if !mu.TryLock() {
		return
	}
	defer mu.Unlock()
	w.indexFor(ctx, k)
}

// indexFor builds one persisted index for owner k (its previous one is
// answered) and reports whether it was answered 2xx.
func (w *worker) indexFor(ctx context.Context, k *keyRec) bool {
	s := &indexSend{text: fmt.Sprintf("Crash round %d, index %d: the pump station logged a pressure of %d kPa after the filter change.", w.round, w.l.next(), 100+w.rng.IntN(900))}
	w.l.mu.Lock()
	w.l.indexes[k.id] = append(w.l.indexes[k.id], s)
	w.l.mu.Unlock()
	t0 := w.l.begin(opIndex)
	st, raw, _, err := w.c.keyed(ctx, w.l, k, http.MethodPost, "/retrieval/index", map[string]any{
		"synthetic": true, "documents": []map[string]string{{"id": "log", "text": s.text}},
	})
	var out struct {
		Index struct {
			Hash string `json:"hash"`
		} `json:"index"`
		Persistent bool `json:"persistent"`
		Receipt    struct {
			ID string `json:"id"`
		} `json:"receipt"`
	}
	ok := err == nil && st == http.StatusOK && json.Unmarshal(raw, &out) == nil && out.Index.Hash != "" && out.Receipt.ID != ""
	w.l.mu.Lock()
	switch {
	case ok:
		s.acked, s.hash = true, out.Index.Hash
		w.l.receipts[out.Receipt.ID] = k.id
		if !out.Persistent {
			w.l.problems = append(w.l.problems, "an index was answered without persistent: true (retrieval.persist is on)")
		}
	case err == nil:
		s.answered = true
	}
	w.l.mu.Unlock()
	w.l.end(opIndex, ok, t0)
	return ok
}

// domain asks for a challenge: a new domain, or (one time in three) one
// already answered, whose token must come back unchanged.
func (w *worker) domain(ctx context.Context) {
	k := w.pick()
	if k == nil {
		return
	}
	name := fmt.Sprintf("r%d-n%d.crash-test.example", w.round, w.l.next())
	w.l.mu.Lock()
	if w.rng.IntN(3) == 0 {
		for _, d := range w.l.domains {
			if d.acked && d.keyID == k.id {
				name = d.domain
				break
			}
		}
	}
	rec := w.l.domains[k.id+" "+name]
	if rec == nil {
		rec = &domainRec{keyID: k.id, domain: name}
		w.l.domains[k.id+" "+name] = rec
	}
	w.l.mu.Unlock()
	t0 := w.l.begin(opDomain)
	st, raw, _, err := w.c.keyed(ctx, w.l, k, http.MethodPost, "/a11y/domains", map[string]string{"domain": name})
	var out struct {
		Domain string `json:"domain"`
		Token  string `json:"token"`
	}
	ok := err == nil && st == http.StatusOK && json.Unmarshal(raw, &out) == nil && out.Token != ""
	if ok {
		w.l.mu.Lock()
		switch {
		case out.Domain != name:
			w.l.problems = append(w.l.problems, fmt.Sprintf("domain %s answered as %s", name, out.Domain))
		case rec.acked && rec.token != out.Token:
			w.l.problems = append(w.l.problems, fmt.Sprintf("domain %s of key %s: token %s, before a restart %s", name, k.id, out.Token, rec.token))
		}
		rec.acked, rec.token = true, out.Token
		w.l.mu.Unlock()
	}
	w.l.end(opDomain, ok, t0)
}

func (w *worker) report(ctx context.Context) {
	nonce := fmt.Sprintf("crash report, round %d, number %d", w.round, w.l.next())
	rec := &reportRec{}
	w.l.mu.Lock()
	w.l.reports[nonce] = rec
	w.l.mu.Unlock()
	t0 := w.l.begin(opReport)
	st, raw, _, err := w.c.do(ctx, w.c.reports, http.MethodPost, "/studio/report", "", map[string]string{
		"item": reportItem, "category": "other", "details": nonce,
	})
	var out struct {
		ReportID string `json:"report_id"`
	}
	ok := err == nil && st == http.StatusCreated && json.Unmarshal(raw, &out) == nil && out.ReportID != ""
	if ok {
		w.l.mu.Lock()
		rec.id, rec.acked = out.ReportID, true
		w.l.mu.Unlock()
	}
	w.l.end(opReport, ok, t0)
}

// fillBody is a small form and a text source: one model call, one page.
var fillBody = map[string]any{
	"target": map[string]string{"html": `<!doctype html><html lang="en"><head><title>Contact</title></head><body><form>` +
		`<label>First name <input name="first_name"></label><label>City <input name="city"></label></form></body></html>`},
	"sources": []map[string]string{{"name": "note.txt", "text": "First name: Ana\nCity: Porto\n"}},
}

// fillStages are the points of a fill run a kill is aimed after: its
// stream's stage events, the model call's receipt, and its end.
var fillStages = []string{"stage:sources", "stage:page", "ready", "stage:model", "receipt", "done"}

// fill runs one form fill as k, streamed; at is closed when the event
// named target has come (or the stream ended without it). The receipts
// the stream names are acknowledged.
func (c *client) fill(ctx context.Context, l *ledger, k *keyRec, target string, at chan<- struct{}) bool {
	t0 := l.begin(opFill)
	l.mu.Lock()
	k.sentReq++
	l.mu.Unlock()
	fired := false
	fire := func() {
		if !fired {
			fired = true
			close(at)
		}
	}
	defer fire()
	body := map[string]any{"stream": true}
	maps.Copy(body, fillBody)
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/fill/run", bytes.NewReader(b))
	if err != nil {
		l.end(opFill, false, t0)
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+k.secret)
	resp, err := c.hc.Do(req)
	if err != nil {
		l.end(opFill, false, t0)
		return false
	}
	defer resp.Body.Close()
	ok := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for resp.StatusCode == http.StatusOK && sc.Scan() {
		line, found := strings.CutPrefix(sc.Text(), "data: ")
		if !found {
			continue
		}
		var ev struct {
			Type  string `json:"type"`
			Stage string `json:"stage"`
			ID    string `json:"id"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		name := ev.Type
		if ev.Type == "stage" {
			name = "stage:" + ev.Stage
		}
		switch ev.Type {
		case "receipt":
			l.mu.Lock()
			l.receipts[ev.ID] = k.id
			l.mu.Unlock()
		case "done":
			ok = true
			l.mu.Lock()
			k.ackedReq++
			l.mu.Unlock()
		}
		if name == target {
			fire()
		}
	}
	l.end(opFill, ok, t0)
	return ok
}
