package crashtest

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/engine/browser"
	"boxd/engine/models/testmodels"
)

const adminSecret = "crash-test-admin-secret-0123456789"

// Rounds of each kind: every startupEvery-th kill lands while boxd starts
// (migrations, the signing key, loading persisted indexes); every
// fillEvery-th, where chromium is installed, during a fill run (it takes
// seconds: chromium starts for each); the others while the workers write,
// aimed at each of writeKinds in turn.
const (
	startupEvery = 10
	fillEvery    = 25
	workers      = 3
	owners       = 2 // retrieval owners (keys), each at its bound of 8 from the start: every index replaces one
	writeWindow  = 500 * time.Millisecond
)

var writeKinds = []op{opKeyCreate, opKeyRevoke, opChat, opIndex, opDomain, opReport}

// dataDir is the reference data serve needs (BOXD_TEST_DATA, else
// ../shared/data beside the repository).
func dataDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("BOXD_TEST_DATA")
	if d == "" {
		d = filepath.Join(repoRoot(), "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(d, "icd10cm")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference data missing (CI=true): %v", err)
		}
		t.Skipf("reference data not available: %v", err)
	}
	return d
}

// TestKill9Server kills the real boxd with SIGKILL at random points of its
// write paths, restarting it on the same state directory each time; see
// the package comment for what is checked.
func TestKill9Server(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills boxd many times")
	}
	began := time.Now()
	llm := testmodels.Shared(t, "stories260K.gguf")
	embed := testmodels.Generated(t, testmodels.EmbedFile)
	data := dataDir(t)
	n := rounds(t)
	rng, seed := seeded(t)
	work := t.TempDir()
	t0 := time.Now()
	bin := buildBoxd(t)
	built := time.Since(t0)

	state, tmp := filepath.Join(work, "state"), filepath.Join(work, "tmp")
	media := filepath.Join(state, "studio", "media")
	if err := os.MkdirAll(media, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	// The gallery item studio reports name.
	side := `{"kind": "image", "title": "Crash test", "prompt": "a lighthouse", "model": "none", "file": "` + reportItem + `.png", "seed": 1, "duration_s": null, "notice": ""}`
	if err := os.WriteFile(filepath.Join(media, reportItem+".png"), []byte("\x89PNG\r\n\x1a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(media, reportItem+".json"), []byte(side), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(work, "boxd.yaml")
	if err := os.WriteFile(cfg, []byte("retrieval:\n  persist: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(work, "boxd.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	logTail := func() string { return tail(logPath, 4000) }
	sp := &spawner{bin: bin, dir: work, log: logf,
		args: []string{"serve", "--config", cfg, "--state-dir", state, "--listen", "127.0.0.1:0", "--log-format", "text",
			"--models-llm-path", llm, "--models-llm-template", "mistral", "--models-embedder-path", embed},
		env: serverEnv("BOXD_ADMIN_SECRET="+adminSecret, "BOXD_DATA_DIR="+data, "TMPDIR="+tmp),
	}
	fills := true
	if _, err := browser.NewPool(browser.Options{Slots: 1}); errors.Is(err, browser.ErrNoBrowser) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (make deps installs chromium)", err)
		}
		t.Logf("no fill runs: %v", err)
		fills = false
	}

	l := newLedger()
	id := &identity{}
	var startupKills int
	var tStart, tWrite, tCheck time.Duration // time spent starting boxd, writing, checking
	var fillKills []string                   // the event each fill round's kill was aimed after
	lastReady := time.Second
	fail := func(round int, what []string) {
		t.Helper()
		if len(what) > 0 {
			t.Fatalf("round %d of %d (seed %d): %d problems:\n  %s\n--- boxd log (end) ---\n%s", round, n, seed, len(what), strings.Join(what, "\n  "), logTail())
		}
	}
	// afterKill checks the state directory with boxd down.
	afterKill := func(round int) {
		t.Helper()
		defer func(t0 time.Time) { tCheck += time.Since(t0) }(time.Now())
		var bad []string
		if left := waitOrphans(tmp, 10*time.Second); len(left) > 0 {
			bad = append(bad, fmt.Sprintf("%d processes of the killed boxd (chromium) still ran 10 s later: pids %v (killed now)", len(left), left))
		}
		bad = append(bad, l.takeProblems()...)
		bad = append(bad, checkState(state, l, id)...)
		fail(round, bad)
	}
	// start starts boxd and checks its signing key.
	start := func(round int) (*proc, *client) {
		t.Helper()
		p := sp.spawn(t)
		p.ready(t, logTail)
		lastReady = time.Since(p.started)
		tStart += lastReady
		c := newClient(p.base, adminSecret)
		st, raw, _, err := c.do(context.Background(), c.hc, http.MethodGet, "/attest/signing-key", "", nil)
		var sk struct {
			PubKey string `json:"pubkey"`
			KeyID  string `json:"key_id"`
		}
		if err != nil || st != http.StatusOK || json.Unmarshal(raw, &sk) != nil {
			p.kill()
			t.Fatalf("round %d: GET /attest/signing-key: %d %v %s", round, st, err, raw)
		}
		pub, _ := hex.DecodeString(sk.PubKey)
		if id.pub == nil {
			id.pub, id.keyID, id.fileSHA256 = pub, sk.KeyID, keyFileHash(state)
			t.Logf("signing key %s (file sha256 %s)", id.keyID, id.fileSHA256)
		} else if sk.KeyID != id.keyID || hex.EncodeToString(pub) != hex.EncodeToString(id.pub) {
			p.kill()
			fail(round, []string{fmt.Sprintf("the signing key changed: %s %s, was %s %x", sk.KeyID, sk.PubKey, id.keyID, id.pub)})
		}
		return p, c
	}

	for round := 1; round <= n; round++ {
		if round%startupEvery == startupEvery/2 {
			// A kill while boxd starts.
			p := sp.spawn(t)
			time.Sleep(time.Duration(rng.Int64N(int64(lastReady))))
			p.kill()
			tStart += time.Since(p.started)
			startupKills++
			afterKill(round)
			continue
		}
		p, c := start(round)
		ctx, cancel := context.WithCancel(context.Background())
		stop, stopNew := context.WithCancel(ctx)
		if round == 1 {
			for i := range owners + 6 {
				if k := c.createKey(ctx, l, fmt.Sprintf("crash-setup-%d", i), i < owners, false); !k.acked {
					p.kill()
					t.Fatalf("creating the first keys failed\n%s", logTail())
				}
			}
			w := &worker{c: c, l: l, rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), round: round}
			for _, o := range l.owners {
				for range maxHeldPerOwner {
					if !w.indexFor(ctx, o) {
						p.kill()
						t.Fatalf("the owners' first indexes failed\n%s", logTail())
					}
				}
			}
		} else {
			bad := checkOnline(ctx, c, l, rng.IntN)
			if len(bad) > 0 {
				p.kill()
				fail(round, bad)
			}
		}
		writing := time.Now()
		var wg sync.WaitGroup
		// The kill is aimed at one kind of write (in turn): the workers
		// write it more often, and after a random time the kill waits
		// for one to be in flight and lands a random part of its usual
		// time into it.
		target := writeKinds[(round-1)%len(writeKinds)]
		atFill := (<-chan struct{})(nil)
		if fills && round%fillEvery == fillEvery/2 {
			target = opFill
			k := c.createKey(ctx, l, fmt.Sprintf("crash-fill-%d", round), false, true)
			if !k.acked {
				p.kill()
				t.Fatalf("round %d: creating the fill key failed\n%s", round, logTail())
			}
			stage := fillStages[rng.IntN(len(fillStages))]
			at := make(chan struct{})
			atFill = at
			wg.Go(func() { c.fill(ctx, l, k, stage, at) })
			fillKills = append(fillKills, stage)
		}
		l.aimed[target]++
		for range workers {
			w := &worker{c: c, l: l, rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), round: round, target: target}
			wg.Go(func() { w.run(stop, ctx) })
		}
		time.Sleep(20*time.Millisecond + time.Duration(rng.Int64N(int64(writeWindow))))
		if atFill != nil {
			// The workers stop; the kill lands up to 200 ms after the
			// fill run's chosen event.
			stopNew()
			<-atFill
			time.Sleep(time.Duration(rng.Int64N(int64(200 * time.Millisecond))))
		} else {
			for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Microsecond) {
				if busy, _ := l.busy(target); busy {
					break
				}
			}
			if _, took := l.busy(target); took > 0 {
				time.Sleep(time.Duration(rng.Int64N(int64(took))))
			}
			stopNew()
		}
		l.noteKill()
		p.kill()
		cancel()
		wg.Wait()
		c.close()
		tWrite += time.Since(writing)
		afterKill(round)
	}

	// The box comes up once more and answers for the last round; then a
	// clean stop.
	p, c := start(n + 1)
	bad := checkOnline(context.Background(), c, l, rng.IntN)
	_ = p.cmd.Process.Signal(os.Interrupt)
	<-p.exited
	fail(n+1, bad)

	var lines []string
	for o := range nOps {
		if l.sent[o] > 0 {
			lines = append(lines, fmt.Sprintf("%-68s sent %5d, answered 2xx %5d; kills aimed at it %2d, landing with one in flight %2d", opNames[o], l.sent[o], l.acked[o], l.aimed[o], l.atKill[o]))
		}
	}
	temps, _ := filepath.Glob(filepath.Join(state, "*", ".*.tmp-*"))
	more, _ := filepath.Glob(filepath.Join(state, "*", "*", ".*.tmp-*"))
	leftTmp, _ := os.ReadDir(tmp)
	t.Logf("%d kills (%d during start-up, %d during a fill run, after %v), %d starts, all checks passed (seed %d)\n  %s\n"+
		"  kills after which an owner had one persisted index more than its bound (a replacement cut short, finished at the next start): %d\n"+
		"  temporary files the kills left in the state directory: %d; directories left in boxd's TMPDIR (chromium profiles, fill uploads): %d\n"+
		"  %.0f s in all: building %.0f s, starting boxd %.0f s, writing %.0f s, checking %.0f s",
		n, startupKills, len(fillKills), fillKills, sp.count, seed, strings.Join(lines, "\n  "), l.replacing, len(temps)+len(more), len(leftTmp),
		time.Since(began).Seconds(), built.Seconds(), tStart.Seconds(), tWrite.Seconds(), tCheck.Seconds())
}
