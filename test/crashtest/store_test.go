package crashtest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"boxd/internal/store"
)

// The child process of TestKill9Store runs when this variable names its
// state directory.
const childEnv = "BOXD_CRASHTEST_STORE_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(storeChild(dir))
	}
	os.Exit(m.Run())
}

// event is one line of the child's log: "ready", then for each write a
// "begin" line before it and an "ack" (or "error") line after it returned.
type event struct {
	Seq   int64  `json:"seq,omitempty"`
	Phase string `json:"phase"`
	Op    string `json:"op,omitempty"`
	Key   string `json:"key,omitempty"`
	Label string `json:"label,omitempty"`
	Hash  string `json:"hash,omitempty"` // key secret's hash, or a body's sha256
	Day   string `json:"day,omitempty"`
	Tok   int64  `json:"tok,omitempty"`
	Audio int64  `json:"audio,omitempty"`
	Req   int64  `json:"req,omitempty"`
	ID    string `json:"id,omitempty"` // receipt, kept item, domain
	Table string `json:"table,omitempty"`
	Owner string `json:"owner,omitempty"`
	Token string `json:"token,omitempty"` // domain token, or verification method
	Err   string `json:"err,omitempty"`
}

var childTables = []store.Table{store.Runs, store.Reports, store.Pairs}

// storeChild writes through package store from three goroutines until it
// is killed, logging each write before and after on stdout.
func storeChild(dir string) int {
	round := os.Getenv("BOXD_CRASHTEST_ROUND")
	seed, _ := strconv.ParseUint(os.Getenv("BOXD_CRASHTEST_SEED"), 10, 64)
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	keys, err := st.ListKeys(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	var known []string
	for _, k := range keys {
		known = append(known, k.ID)
	}
	type kept struct {
		t         store.Table
		id, owner string
	}
	var puts []kept
	var domains [][2]string
	var seq atomic.Int64
	emit := func(e event) {
		b, _ := json.Marshal(e)
		_, _ = os.Stdout.Write(append(b, '\n')) // one write: whole lines on the pipe
	}
	emit(event{Phase: "ready"})
	one := func(rng *rand.Rand) {
		n := seq.Add(1)
		e := event{Seq: n, Phase: "begin"}
		var do func() error
		mu.Lock()
		pickKey := func() string {
			if len(known) == 0 {
				return ""
			}
			return known[rng.IntN(len(known))]
		}
		switch rng.IntN(9) {
		case 0:
			id, secret := fmt.Sprintf("k-%s-%d", round, n), fmt.Sprintf("secret-%s-%d-%d", round, n, rng.Uint64())
			e.Op, e.Key, e.Label, e.Hash = "key", id, "label "+id, store.HashSecret(secret)
			do = func() error {
				_, err := st.CreateKey(ctx, id, secret, e.Label, "free", store.Limits{DailyLLMTokens: 1000}, time.Now())
				if err == nil {
					mu.Lock()
					known = append(known, id)
					mu.Unlock()
				}
				return err
			}
		case 1:
			if e.Key = pickKey(); e.Key != "" {
				e.Op = "revoke"
				do = func() error { _, err := st.RevokeKey(ctx, e.Key, time.Now()); return err }
			}
		case 2, 3:
			if e.Key = pickKey(); e.Key != "" {
				e.Op, e.Day, e.Tok, e.Audio, e.Req = "usage", fmt.Sprintf("2026-01-0%d", 1+rng.IntN(3)), rng.Int64N(500), rng.Int64N(5000), 1
				do = func() error { return st.AddUsage(ctx, e.Key, e.Day, e.Tok, e.Audio, e.Req) }
			}
		case 4:
			body := randomJSON(rng, 100+rng.IntN(20000))
			e.Op, e.ID, e.Hash = "receipt", fmt.Sprintf("rc-%s-%d", round, n), sha(body)
			do = func() error { return st.PutReceipt(ctx, e.ID, time.Now(), body, time.Unix(0, 0), 0) }
		case 5:
			t := childTables[rng.IntN(len(childTables))]
			body := make([]byte, 1+rng.IntN(64<<10))
			for i := range body {
				body[i] = byte(rng.Uint32())
			}
			now := time.Now()
			k := kept{t, fmt.Sprintf("kp-%s-%d", round, n), fmt.Sprintf("owner-%d", rng.IntN(4))}
			e.Op, e.Table, e.ID, e.Owner, e.Hash = "put", string(t), k.id, k.owner, sha(body)
			do = func() error {
				err := st.Put(ctx, t, store.Kept{ID: k.id, Family: "crash", Owner: k.owner, Created: now, Expires: now.Add(time.Hour), Body: body})
				if err == nil {
					mu.Lock()
					puts = append(puts, k)
					mu.Unlock()
				}
				return err
			}
		case 6:
			if len(puts) > 0 {
				i := rng.IntN(len(puts))
				k := puts[i]
				puts = append(puts[:i], puts[i+1:]...)
				e.Op, e.Table, e.ID, e.Owner = "delete", string(k.t), k.id, k.owner
				do = func() error { _, err := st.Delete(ctx, k.t, k.id, k.owner); return err }
			}
		case 7:
			if e.Key = pickKey(); e.Key != "" {
				e.Op, e.ID, e.Token = "challenge", fmt.Sprintf("d-%s-%d.example", round, n), fmt.Sprintf("boxd-verify-%016x", rng.Uint64())
				do = func() error {
					_, err := st.Challenge(ctx, e.Key, e.ID, e.Token, time.Now())
					if err == nil {
						mu.Lock()
						domains = append(domains, [2]string{e.Key, e.ID})
						mu.Unlock()
					}
					return err
				}
			}
		case 8:
			if len(domains) > 0 {
				d := domains[rng.IntN(len(domains))]
				e.Op, e.Key, e.ID, e.Token = "verify", d[0], d[1], []string{"dns", "well-known"}[rng.IntN(2)]
				do = func() error { _, err := st.MarkVerified(ctx, e.Key, e.ID, e.Token, time.Now()); return err }
			}
		}
		mu.Unlock()
		if do == nil {
			return
		}
		emit(e)
		if err := do(); err != nil {
			emit(event{Seq: n, Phase: "error", Err: err.Error()})
			return
		}
		emit(event{Seq: n, Phase: "ack"})
	}
	var wg sync.WaitGroup
	for w := range 3 {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for {
				one(rng)
			}
		})
	}
	wg.Wait()
	return 0
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// randomJSON is a JSON object of about n bytes.
func randomJSON(rng *rand.Rand, n int) []byte {
	b := make([]byte, n/2)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	out, _ := json.Marshal(map[string]string{"pad": hex.EncodeToString(b)})
	return out
}

// storeModel is what the child logs say the database must hold (writes
// by round<<32 | sequence).
type storeModel struct {
	begun, acked map[int64]event
}

// TestKill9Store kills a process writing through package store with
// SIGKILL at random points, BOXD_CRASH_ROUNDS times on one database: some
// while it opens it (the first creates and migrates it), the rest while
// three goroutines write every kind of row. After each kill the database
// passes integrity_check and holds every acknowledged write whole and
// nothing that was never begun.
func TestKill9Store(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process many times")
	}
	n := rounds(t)
	rng, seed := seeded(t)
	dir := filepath.Join(t.TempDir(), "state")
	m := &storeModel{begun: map[int64]event{}, acked: map[int64]event{}}
	began := time.Now()
	var openKills, acks int
	lastOpen := 50 * time.Millisecond
	for round := 1; round <= n; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir, "BOXD_CRASHTEST_ROUND="+strconv.Itoa(round), "BOXD_CRASHTEST_SEED="+strconv.FormatUint(rng.Uint64(), 10))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1<<16)
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var log []string
		if round == 1 || round%10 == 5 {
			// Kill it while it opens (and, the first time, creates and
			// migrates) the database.
			time.Sleep(time.Duration(rng.Int64N(int64(lastOpen))))
			openKills++
		} else {
			select {
			case l, ok := <-lines:
				if !ok {
					_ = cmd.Wait()
					t.Fatalf("round %d: the child ended before it was ready: %s", round, stderr.String())
				}
				log = append(log, l)
			case <-time.After(60 * time.Second):
				t.Fatalf("round %d: the child was not ready after 60 s", round)
			}
			lastOpen = time.Since(start)
			time.Sleep(time.Millisecond + time.Duration(rng.Int64N(int64(150*time.Millisecond))))
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines {
			log = append(log, l)
		}
		_ = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: the child was not killed (%v): %s", round, cmd.ProcessState, stderr.String())
		}
		a, err := m.add(round, log)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		acks += a
		if bad := m.check(dir); len(bad) > 0 {
			t.Fatalf("round %d of %d (seed %d): %d problems:\n  %s", round, n, seed, len(bad), strings.Join(bad, "\n  "))
		}
	}
	// The database opens through package store after the last kill.
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	ops := map[string]int{}
	for _, e := range m.acked {
		ops[e.Op]++
	}
	t.Logf("%d kills (%d while opening), %d writes begun, %d acknowledged (%v), all checks passed, %.1f s (seed %d)",
		n, openKills, len(m.begun), acks, ops, time.Since(began).Seconds(), seed)
}

// add reads one child's log into the model and returns its acks.
func (m *storeModel) add(round int, log []string) (int, error) {
	acks := 0
	for _, l := range log {
		var e event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			return acks, fmt.Errorf("child log line %q: %v", l, err)
		}
		id := int64(round)<<32 | e.Seq
		switch e.Phase {
		case "begin":
			m.begun[id] = e
		case "ack":
			b, ok := m.begun[id]
			if !ok {
				return acks, fmt.Errorf("ack of %d before its begin", e.Seq)
			}
			m.acked[id] = b
			acks++
		case "error":
			b := m.begun[id]
			return acks, fmt.Errorf("%s %s%s failed: %s", b.Op, b.Key, b.ID, e.Err)
		}
	}
	return acks, nil
}

type usageRow struct{ tok, audio, req int64 }

type keptRow struct{ owner, sha string }

type domainRow struct {
	token, method string
	verified      bool
}

// check compares the database, with the child dead, to the model.
func (m *storeModel) check(dir string) []string {
	path := filepath.Join(dir, store.File)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		if len(m.acked) > 0 {
			return []string{store.File + " is gone"}
		}
		return nil
	}
	if msg := integrity(path); msg != "" {
		return []string{msg}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return []string{err.Error()}
	}
	defer db.Close()
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	query := func(q string, scan func(*sql.Rows) error) {
		rows, err := db.Query(q)
		if err != nil {
			// A database killed before its first migration has no tables.
			if len(m.acked) > 0 || !strings.Contains(err.Error(), "no such table") {
				add("%s: %v", q, err)
			}
			return
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				add("%s: %v", q, err)
				return
			}
		}
	}
	keys := map[string]dbKey{}
	query(`SELECT key_id, key_sha256, label, revoked_at IS NOT NULL FROM keys`, func(r *sql.Rows) error {
		var id string
		var k dbKey
		err := r.Scan(&id, &k.hash, &k.label, &k.revoked)
		keys[id] = k
		return err
	})
	usage := map[string]usageRow{}
	query(`SELECT key_id, day, llm_tokens, audio_ms, requests FROM usage`, func(r *sql.Rows) error {
		var k, d string
		var u usageRow
		err := r.Scan(&k, &d, &u.tok, &u.audio, &u.req)
		usage[k+" "+d] = u
		return err
	})
	receipts := map[string]string{}
	query(`SELECT id, body FROM receipts`, func(r *sql.Rows) error {
		var id, body string
		err := r.Scan(&id, &body)
		receipts[id] = sha([]byte(body))
		return err
	})
	kept := map[string]keptRow{}
	for _, t := range childTables {
		query(`SELECT id, owner, body FROM `+string(t), func(r *sql.Rows) error {
			var id, owner string
			var body []byte
			err := r.Scan(&id, &owner, &body)
			kept[string(t)+" "+id] = keptRow{owner, sha(body)}
			return err
		})
	}
	domains := map[string]domainRow{}
	query(`SELECT key_id, domain, token, verified_at IS NOT NULL, method FROM domains`, func(r *sql.Rows) error {
		var k, d string
		var row domainRow
		err := r.Scan(&k, &d, &row.token, &row.verified, &row.method)
		domains[k+" "+d] = row
		return err
	})
	if len(bad) > 0 {
		return bad
	}

	// What was begun, and the bounds on the counters.
	keyBegun, revokeBegun, receiptBegun := map[string]event{}, map[string]bool{}, map[string]event{}
	putBegun, deleteBegun, challengeBegun := map[string]event{}, map[string]bool{}, map[string]event{}
	verifyBegun := map[string]map[string]bool{}
	lo, hi := map[string]usageRow{}, map[string]usageRow{}
	for id, e := range m.begun {
		switch e.Op {
		case "key":
			keyBegun[e.Key] = e
		case "revoke":
			revokeBegun[e.Key] = true
		case "usage":
			k := e.Key + " " + e.Day
			h := hi[k]
			hi[k] = usageRow{h.tok + e.Tok, h.audio + e.Audio, h.req + e.Req}
			if _, ok := m.acked[id]; ok {
				l := lo[k]
				lo[k] = usageRow{l.tok + e.Tok, l.audio + e.Audio, l.req + e.Req}
			}
		case "receipt":
			receiptBegun[e.ID] = e
		case "put":
			putBegun[e.Table+" "+e.ID] = e
		case "delete":
			deleteBegun[e.Table+" "+e.ID] = true
		case "challenge":
			challengeBegun[e.Key+" "+e.ID] = e
		case "verify":
			k := e.Key + " " + e.ID
			if verifyBegun[k] == nil {
				verifyBegun[k] = map[string]bool{}
			}
			verifyBegun[k][e.Token] = true
		}
	}
	// Every acknowledged write is there, whole.
	for _, e := range m.acked {
		switch e.Op {
		case "key":
			if k, ok := keys[e.Key]; !ok || k.hash != e.Hash || k.label != e.Label {
				add("key %s was acknowledged: stored %+v (present %v)", e.Key, k, ok)
			}
		case "revoke":
			if !keys[e.Key].revoked {
				add("key %s: its revocation was acknowledged and it is not revoked", e.Key)
			}
		case "receipt":
			if got, ok := receipts[e.ID]; !ok || got != e.Hash {
				add("receipt %s was acknowledged: present %v, body sha256 %s, sent %s", e.ID, ok, got, e.Hash)
			}
		case "put":
			k := e.Table + " " + e.ID
			if got, ok := kept[k]; !deleteBegun[k] && (!ok || got != (keptRow{e.Owner, e.Hash})) {
				add("%s item %s was acknowledged: present %v, stored %+v, sent owner %s sha256 %s", e.Table, e.ID, ok, got, e.Owner, e.Hash)
			}
		case "delete":
			if _, ok := kept[e.Table+" "+e.ID]; ok {
				add("%s item %s: its deletion was acknowledged and it is there", e.Table, e.ID)
			}
		case "challenge":
			if got, ok := domains[e.Key+" "+e.ID]; !ok || got.token != e.Token {
				add("domain %s of %s was acknowledged with token %s: stored %+v (present %v)", e.ID, e.Key, e.Token, got, ok)
			}
		case "verify":
			if got := domains[e.Key+" "+e.ID]; !got.verified {
				add("domain %s of %s: its verification was acknowledged and it is not verified", e.ID, e.Key)
			}
		}
	}
	for k, u := range usage {
		l, h := lo[k], hi[k]
		if u.tok < l.tok || u.audio < l.audio || u.req < l.req || u.tok > h.tok || u.audio > h.audio || u.req > h.req {
			add("usage %s: stored %+v, acknowledged %+v, begun %+v", k, u, l, h)
		}
	}
	for k, l := range lo {
		if _, ok := usage[k]; !ok && l != (usageRow{}) {
			add("usage %s: acknowledged %+v, nothing stored", k, l)
		}
	}
	// Nothing is there that was never begun, and nothing half-written.
	for id, k := range keys {
		if e, ok := keyBegun[id]; !ok || e.Hash != k.hash || e.Label != k.label {
			add("key %s is stored (%+v) but was never begun so", id, k)
		}
		if k.revoked && !revokeBegun[id] {
			add("key %s is revoked but no revocation was begun", id)
		}
	}
	for id, got := range receipts {
		if e, ok := receiptBegun[id]; !ok || e.Hash != got {
			add("receipt %s is stored (body sha256 %s) but was never begun so", id, got)
		}
	}
	for k, got := range kept {
		if e, ok := putBegun[k]; !ok || (keptRow{e.Owner, e.Hash}) != got {
			add("kept item %s is stored (%+v) but was never begun so", k, got)
		}
	}
	for k, got := range domains {
		e, ok := challengeBegun[k]
		switch {
		case !ok || e.Token != got.token:
			add("domain %s is stored (%+v) but was never begun so", k, got)
		case got.verified && !verifyBegun[k][got.method]:
			add("domain %s is verified by %q, which no verification began", k, got.method)
		}
	}
	return bad
}
