package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// op is a kind of write the clients make.
type op int

const (
	opKeyCreate op = iota
	opKeyRevoke
	opChat
	opIndex
	opDomain
	opReport
	opFill
	opCheck // the checks after a restart (key-authenticated: they count as usage)
	nOps
)

var opNames = [nOps]string{
	"key create (POST /v1/keys)",
	"key revoke (DELETE /v1/keys/{id})",
	"chat: usage and receipt (POST /v1/chat/completions)",
	"retrieval index: persisted file and receipt (POST /retrieval/index)",
	"domain challenge (POST /a11y/domains)",
	"studio report (POST /studio/report)",
	"fill run: usage and receipt (POST /fill/run)",
	"checks after restart (key-authenticated reads)",
}

// keyRec is a developer key as the clients know it.
type keyRec struct {
	label, id, secret string
	acked             bool
	owner             bool // a retrieval owner: never revoked
	fill              bool // used by fill runs: its token charge has no bound here
	revokeSent        bool
	revokeAcked       bool
	sentReq, ackedReq int64 // key-authenticated requests sent / answered 2xx
	sentTok, ackedTok int64 // chat max_tokens sent / completion tokens answered
}

// usable is a key a worker may spend.
func (k *keyRec) usable() bool { return k.acked && !k.revokeSent && !k.owner && !k.fill }

type domainRec struct {
	keyID, domain, token string
	acked                bool
}

type reportRec struct {
	id    string
	acked bool
}

// indexSend is one POST /retrieval/index of an owner; an owner's sends
// are made one at a time, so at most its last is unresolved at a kill.
type indexSend struct {
	text, hash string
	acked      bool // answered 2xx: it must be kept (until evicted)
	answered   bool // answered otherwise: it must have changed nothing
	resolved   bool // in flight at a kill, then found on disk (present) or not
	present    bool
}

// effective: the send changed what the owner holds.
func (s *indexSend) effective() bool { return s.acked || (s.resolved && s.present) }

// unresolved: sent, no answer, not yet looked for.
func (s *indexSend) unresolved() bool { return !s.acked && !s.answered && !s.resolved }

// ledger is everything the clients sent and saw acknowledged.
type ledger struct {
	mu       sync.Mutex
	keys     []*keyRec
	byLabel  map[string]*keyRec
	byID     map[string]*keyRec
	owners   []*keyRec
	ownerMu  map[string]*sync.Mutex
	receipts map[string]string     // acknowledged receipt id -> key id
	domains  map[string]*domainRec // key id + " " + domain
	reports  map[string]*reportRec // details (the nonce) -> report
	indexes  map[string][]*indexSend
	seq      int
	inflight [nOps]int
	sent     [nOps]int
	acked    [nOps]int
	atKill   [nOps]int           // kills that found a write of the kind in flight
	aimed    [nOps]int           // kills aimed at the kind
	latency  [nOps]time.Duration // a moving average of the answered ones' time
	// replacing counts kills after which an owner had one persisted index
	// more than its bound (a replacement cut short, finished at start).
	replacing int
	problems  []string // seen by the clients themselves
}

func newLedger() *ledger {
	return &ledger{byLabel: map[string]*keyRec{}, byID: map[string]*keyRec{}, ownerMu: map[string]*sync.Mutex{},
		receipts: map[string]string{}, domains: map[string]*domainRec{}, reports: map[string]*reportRec{}, indexes: map[string][]*indexSend{}}
}

func (l *ledger) next() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.seq
}

func (l *ledger) begin(o op) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight[o]++
	l.sent[o]++
	return time.Now()
}

func (l *ledger) end(o op, ok bool, began time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight[o]--
	if ok {
		l.acked[o]++
		d := time.Since(began)
		if l.latency[o] == 0 {
			l.latency[o] = d
		}
		l.latency[o] = (3*l.latency[o] + d) / 4
	}
}

// busy reports whether a write of kind o is in flight, and how long one
// takes when answered (0: none was yet).
func (l *ledger) busy(o op) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight[o] > 0, l.latency[o]
}

// noteKill counts the kinds of write in flight as the kill is sent.
func (l *ledger) noteKill() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for o, n := range l.inflight {
		if n > 0 {
			l.atKill[o]++
		}
	}
}

// takeProblems returns and clears the clients' problems.
func (l *ledger) takeProblems() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.problems
	l.problems = nil
	return p
}

// client talks to one running boxd.
type client struct {
	base    string
	admin   string
	hc      *http.Client
	reports *http.Client // one loopback source address per request (the report limit is per address)
}

func newClient(base, admin string) *client {
	var n atomic.Uint32
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		i := n.Add(1)
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i/250%250), byte(2+i%250))}}
		return d.DialContext(ctx, network, addr)
	}
	return &client{
		base: base, admin: admin,
		hc:      &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 5 * time.Minute},
		reports: &http.Client{Transport: &http.Transport{DialContext: dialer, DisableKeepAlives: true}, Timeout: time.Minute},
	}
}

func (c *client) close() {
	c.hc.CloseIdleConnections()
	c.reports.CloseIdleConnections()
}

// do sends one request; err is set when no whole answer came back.
func (c *client) do(ctx context.Context, hc *http.Client, method, path, token string, body any) (int, []byte, http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, raw, resp.Header, nil
}

// keyed sends a request as key k and counts it for k's usage.
func (c *client) keyed(ctx context.Context, l *ledger, k *keyRec, method, path string, body any) (int, []byte, http.Header, error) {
	l.mu.Lock()
	k.sentReq++
	l.mu.Unlock()
	st, raw, h, err := c.do(ctx, c.hc, method, path, k.secret, body)
	if err == nil && st/100 == 2 {
		l.mu.Lock()
		k.ackedReq++
		l.mu.Unlock()
	}
	return st, raw, h, err
}

// createKey sends POST /v1/keys; the key is in the ledger (sent) before
// the request goes.
func (c *client) createKey(ctx context.Context, l *ledger, label string, owner, fill bool) *keyRec {
	k := &keyRec{label: label, owner: owner, fill: fill}
	l.mu.Lock()
	l.keys = append(l.keys, k)
	l.byLabel[label] = k
	l.mu.Unlock()
	t0 := l.begin(opKeyCreate)
	st, raw, _, err := c.do(ctx, c.hc, http.MethodPost, "/v1/keys", c.admin, map[string]any{"label": label})
	var out struct {
		Key   string `json:"key"`
		KeyID string `json:"key_id"`
	}
	ok := err == nil && st == http.StatusCreated && json.Unmarshal(raw, &out) == nil && out.Key != "" && out.KeyID != ""
	if ok {
		l.mu.Lock()
		k.id, k.secret, k.acked = out.KeyID, out.Key, true
		l.byID[k.id] = k
		if owner {
			l.owners = append(l.owners, k)
			l.ownerMu[k.id] = &sync.Mutex{}
		}
		l.mu.Unlock()
	}
	l.end(opKeyCreate, ok, t0)
	return k
}
