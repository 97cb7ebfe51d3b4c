// Package soak runs boxd under steady load for a while and watches it for
// leaks: one real box (the boxd binary, `boxd serve` on a random loopback
// port, its own state directory), live sessions replaying the demo
// scripts' speech over /ws/live with demo tokens and chat streams (POST
// /v1/chat/completions, stream true) paid by developer keys, looping for
// the whole duration, and a sample of the process every interval:
// resident memory and open files from /proc/<pid>, goroutines from GET
// /metrics (go_goroutines), the state directory's size.
//
// Pass (Verdicts, DefaultLimits):
//
//   - RSS after warm-up grows at most 5 %: the median of the last third of
//     the loaded samples after warm-up over the median of the first third
//     (medians of thirds, so that one sample caught in a burst, a GC cycle
//     or every stream in flight at once, neither makes nor hides growth).
//   - Goroutines and open files do not grow, judged two ways. Under load,
//     the same thirds' medians may differ by a few (Limits.Goroutines,
//     Limits.FDs): what is in flight at a sample's instant varies (a live
//     session between its stop and its reconnect, a chat stream between
//     two requests), and a leak of one per session or per request grows
//     far past that over the run. Idle, after the load has ended and every
//     client connection is closed, the box must be back to exactly the
//     goroutines and descriptors it had idle before the load (after a
//     priming round that ran every path once, so lazily started workers
//     and SQLite's pooled connections are counted in both): any difference
//     is something a finished request left behind. Without a priming round
//     (Config.Prime) goroutines are judged against the box just after
//     start-up and descriptors are reported only.
//   - Every live session's events are complete and ordered (CheckLive),
//     every chat stream ends with its receipt (ReadChatStream), and every
//     receipt, chat and live, is served by GET /receipts/{id} and verifies
//     against the box's published key (Verifier).
package soak

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"boxd/pipelines/live/scripts"
)

// Config is one soak.
type Config struct {
	Box      BoxOptions
	AudioDir string // state directory `boxd demo audio` caches the scripts' speech in (kept between runs)
	Duration time.Duration
	Interval time.Duration
	Warmup   time.Duration
	// ClipS is the most audio one live session replays, in seconds (whole
	// lines, cut in the pauses; 0: a whole script per session).
	ClipS        float64
	LiveSessions int
	ChatStreams  int
	// Prime runs a priming round before the load (one session of one line
	// per live worker, one request per chat stream) and samples the box
	// idle after it: the baseline of the idle checks.
	Prime  bool
	Limits Limits
	Logf   func(format string, args ...any)
}

// liveOrder is the vertical of live session i (i mod 4).
var liveOrder = []string{"clinical", "sales", "field", "translate"}

// Report is what a soak measured.
type Report struct {
	Samples []Sample
	Checks  []Check

	LiveSessions, LiveComplete, LiveStoppedEarly int
	LiveAudioS                                   float64
	LiveEvents, LiveErrorEvents, LiveReceipts    int
	ChatStreams, ChatWithReceipt                 int
	ChatReceiptsVerified, ChatTokens             int
	ChatRefused                                  int // refusals for now (429 or 503 with Retry-After), waited out and retried
	Renewed                                      int // tokens or keys replaced (budget used up)
	Faults                                       []string
	FaultCount                                   int
	BoxExit                                      error // the exit after SIGTERM (nil: clean)
	// FDsIdle is what the open descriptors point at, idle before the load
	// (after start-up or priming) and after it; FDChanges their
	// differences.
	FDsIdle     [2]map[string]int
	FDChanges   []string
	PerVertical map[string]int
}

// maxFaults is how many fault lines a report keeps (all are counted).
const maxFaults = 40

// OK says whether the soak passed.
func (r *Report) OK() bool {
	if r.FaultCount > 0 || r.BoxExit != nil || r.LiveSessions == 0 || r.ChatStreams == 0 {
		return false
	}
	for _, c := range r.Checks {
		if !c.OK && (c.Evaluated || c.Required) {
			return false
		}
	}
	return r.LiveComplete == r.LiveSessions && r.ChatWithReceipt == r.ChatStreams && r.ChatReceiptsVerified == r.ChatStreams
}

// Summary is the report's pass figures as text.
func (r *Report) Summary() string {
	var b strings.Builder
	b.WriteString(ChecksTable(r.Checks))
	var verts []string
	for v, n := range r.PerVertical {
		verts = append(verts, fmt.Sprintf("%s %d", v, n))
	}
	sort.Strings(verts)
	fmt.Fprintf(&b, "live sessions: %d, complete and ordered %d (stopped early at the end: %d; %s); %.0f s of audio; %d events, %d error events; %d receipts verified\n",
		r.LiveSessions, r.LiveComplete, r.LiveStoppedEarly, strings.Join(verts, ", "), r.LiveAudioS, r.LiveEvents, r.LiveErrorEvents, r.LiveReceipts)
	fmt.Fprintf(&b, "chat streams: %d, ended with their receipt %d, receipts served and verified %d; %d tokens; refused for now and retried %d; tokens or keys renewed %d\n",
		r.ChatStreams, r.ChatWithReceipt, r.ChatReceiptsVerified, r.ChatTokens, r.ChatRefused, r.Renewed)
	if len(r.FDChanges) > 0 {
		fmt.Fprintf(&b, "open files idle, before → after, by target: %s\n", strings.Join(r.FDChanges, "; "))
	}
	fmt.Fprintf(&b, "box exit after SIGTERM: %v\n", exitText(r.BoxExit))
	fmt.Fprintf(&b, "faults: %d\n", r.FaultCount)
	for _, f := range r.Faults {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	return b.String()
}

func exitText(err error) string {
	if err == nil {
		return "clean (0)"
	}
	return err.Error()
}

// recorder collects outcomes from the workers.
type recorder struct {
	mu    sync.Mutex
	r     *Report
	dir   string // where the events of failed live sessions are kept
	nkept int
}

// keepEvents writes a failed live session's events, one JSON object a
// line, to dir/failed-live-<n>.jsonl (the demo scripts are synthetic).
func (rec *recorder) keepEvents(who string, o LiveOutcome) {
	rec.mu.Lock()
	rec.nkept++
	n := rec.nkept
	rec.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "{\"session\":%q,\"close\":%d}\n", who, o.Code)
	for _, e := range o.Events {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(rec.dir, fmt.Sprintf("failed-live-%d.jsonl", n))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err == nil {
		rec.fault(who, []string{"its events are in " + path})
	}
}

func (rec *recorder) fault(who string, faults []string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, f := range faults {
		rec.r.FaultCount++
		if len(rec.r.Faults) < maxFaults {
			rec.r.Faults = append(rec.r.Faults, who+": "+f)
		}
	}
}

func (rec *recorder) live(who, vertical string, o LiveOutcome) {
	rec.fault(who, o.Faults)
	if len(o.Faults) > 0 && rec.dir != "" {
		rec.keepEvents(who, o)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	r := rec.r
	r.LiveSessions++
	if len(o.Faults) == 0 {
		r.LiveComplete++
	}
	if o.Stopped {
		r.LiveStoppedEarly++
	}
	r.PerVertical[vertical]++
	r.LiveAudioS += o.SentS
	r.LiveEvents += len(o.Events)
	r.LiveErrorEvents += o.Errors
	r.LiveReceipts += o.Receipts
}

func (rec *recorder) chat(who string, o ChatOutcome) {
	rec.fault(who, o.Faults)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	r := rec.r
	r.ChatStreams++
	if o.Result.ReceiptSig != "" {
		r.ChatWithReceipt++
	}
	if o.Receipt {
		r.ChatReceiptsVerified++
	}
	r.ChatTokens += o.Result.Completion
}

func (rec *recorder) counts() (live, chat, verified int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.r.LiveSessions, rec.r.ChatStreams, rec.r.LiveReceipts + rec.r.ChatReceiptsVerified
}

// liveTimeout is the hang guard of one live session: a session not closed
// by then is reported as one that never ended. It is not a speed
// requirement: on a busy shared 2-core machine a session of one line took
// up to 6.5 minutes from open to done (its model lanes on a fraction of a
// CPU).
const liveTimeout = 20 * time.Minute

// Run runs a soak: it synthesises the scripts' speech with `boxd demo
// audio`, starts the box, primes it (one short session per live worker,
// one request per chat stream), samples it idle, runs the load for
// cfg.Duration while sampling every cfg.Interval, lets the workers finish
// what they started, samples it idle again, and stops it with SIGTERM.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cfg.Box.AdminSecret == "" {
		// For the chat streams' developer keys.
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("soak: admin secret: %w", err)
		}
		cfg.Box.AdminSecret = hex.EncodeToString(b)
	}
	clips, err := loadClips(ctx, cfg)
	if err != nil {
		return nil, err
	}
	box, err := StartBox(cfg.Box, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	defer box.Kill()
	logf("box %s (pid %d), log %s", box.Base, box.PID(), box.LogPath)

	// Workers stop at once if the box dies.
	hard, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-box.Exited():
			cancel()
		case <-hard.Done():
		}
	}()
	transport := &http.Transport{MaxIdleConnsPerHost: cfg.ChatStreams + cfg.LiveSessions + 4}
	httpc := &http.Client{Transport: transport}
	verifier, err := NewVerifier(hard, box.Base, &http.Client{Transport: transport, Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	client := &Client{Base: box.Base, HTTP: httpc, Verify: verifier}
	report := &Report{PerVertical: map[string]int{}}
	rec := &recorder{r: report, dir: cfg.Box.WorkDir}
	sample := func(at time.Duration, phase string) error {
		probe := box.Probe
		if phase != PhaseLoad {
			probe = box.IdleProbe
		}
		p, err := probe(hard)
		if err != nil {
			return err
		}
		l, c, v := rec.counts()
		s := Sample{At: at, Phase: phase, Probe: p, LiveDone: l, ChatDone: c, Verified: v}
		rec.mu.Lock()
		report.Samples = append(report.Samples, s)
		rec.mu.Unlock()
		logf("%8.0f s  %-11s RSS %7.1f MiB  goroutines %4d  fds %4d  store %8.1f KiB  live now %d  live %d  chat %d  receipts %d",
			at.Seconds(), phase, float64(p.RSS)/(1<<20), p.Goroutines, p.FDs, float64(p.StoreBytes)/1024, p.LiveNow, l, c, v)
		return nil
	}

	// Live sessions: a demo token per worker, kept while it lasts. Chat
	// streams: a developer key each, as apps use the box (demo tokens
	// together get only a share of the chat model's sequences,
	// limits.demo_model_calls).
	liveTokens := make([]string, cfg.LiveSessions)
	chatKeys := make([]string, cfg.ChatStreams)
	chatKeyIDs := make([]string, cfg.ChatStreams)
	for i := range liveTokens {
		if liveTokens[i], err = client.NewSession(hard, liveOrder[i%len(liveOrder)]); err != nil {
			return nil, err
		}
	}
	for i := range chatKeys {
		if chatKeys[i], chatKeyIDs[i], err = client.NewKey(hard, cfg.Box.AdminSecret, fmt.Sprintf("soak chat %d", i)); err != nil {
			return nil, err
		}
	}
	// chat runs request n of stream i to its end, waiting out refusals
	// for now (Retry-After, counted) and replacing a key whose daily
	// budget is spent.
	chat := func(who string, i, n int) {
		for {
			o := client.Chat(hard, chatKeys[i], chatKeyIDs[i], n)
			switch {
			case o.Busy():
				rec.mu.Lock()
				report.ChatRefused++
				rec.mu.Unlock()
				select {
				case <-time.After(min(o.RetryAfter, 30*time.Second)):
					continue
				case <-hard.Done():
					return
				}
			case o.Status == http.StatusPaymentRequired:
				key, id, err := client.NewKey(hard, cfg.Box.AdminSecret, fmt.Sprintf("soak chat %d", i))
				if err != nil {
					rec.fault(who, []string{err.Error()})
					return
				}
				chatKeys[i], chatKeyIDs[i] = key, id
				rec.mu.Lock()
				report.Renewed++
				rec.mu.Unlock()
				continue
			}
			rec.chat(who, o)
			return
		}
	}

	var wg sync.WaitGroup
	phase := PhaseStart
	if cfg.Prime {
		// Priming: every path once, together.
		never := make(chan struct{})
		for i := range liveTokens {
			wg.Go(func() {
				v := liveOrder[i%len(liveOrder)]
				first := clips.prime[v]
				rec.live(fmt.Sprintf("prime live %d (%s)", i, first.Script.ID), v, client.Live(hard, liveTokens[i], first, never, liveTimeout))
			})
		}
		for i := range chatKeys {
			wg.Go(func() { chat(fmt.Sprintf("prime chat %d", i), i, i) })
		}
		wg.Wait()
		if err := hard.Err(); err != nil {
			return report, fmt.Errorf("soak: priming: %w (box exit: %v)", err, box.exitErr())
		}
		logf("primed: %d live sessions, %d chat streams", cfg.LiveSessions, cfg.ChatStreams)
		phase = PhaseIdleBefore
	}
	if err := settle(hard, box, transport); err != nil {
		return report, err
	}
	if err := sample(0, phase); err != nil {
		return report, err
	}
	if report.FDsIdle[0], err = box.FDKinds(); err != nil {
		return report, err
	}

	// The load.
	loadDone := make(chan struct{})
	start := time.Now()
	for i := range liveTokens {
		wg.Go(func() {
			v := liveOrder[i%len(liveOrder)]
			list := clips.byVertical[v]
			for n := i / len(liveOrder); ; n++ {
				select {
				case <-loadDone:
					return
				case <-hard.Done():
					return
				default:
				}
				c := list[n%len(list)]
				o := client.Live(hard, liveTokens[i], c, loadDone, liveTimeout)
				rec.live(fmt.Sprintf("live %d (%s %s lines %d-%d)", i, v, c.Script.ID, c.FirstLine, c.FirstLine+c.Lines-1), v, o)
				if renew(o.Code) {
					tok, err := client.NewSession(hard, v)
					liveTokens[i] = tok
					if err != nil {
						rec.fault(fmt.Sprintf("live %d", i), []string{err.Error()})
						return
					}
					rec.mu.Lock()
					report.Renewed++
					rec.mu.Unlock()
				}
			}
		})
	}
	for i := range chatKeys {
		wg.Go(func() {
			for n := cfg.ChatStreams + i; ; n += cfg.ChatStreams {
				select {
				case <-loadDone:
					return
				case <-hard.Done():
					return
				default:
				}
				chat(fmt.Sprintf("chat %d request %d", i, n), i, n)
			}
		})
	}
	var sampleErr error
	for k := 0; ; k++ {
		at := time.Duration(k) * cfg.Interval
		if at > cfg.Duration {
			break
		}
		select {
		case <-time.After(time.Until(start.Add(at))):
		case <-hard.Done():
		}
		if hard.Err() != nil {
			break
		}
		if err := sample(time.Since(start), PhaseLoad); err != nil {
			sampleErr = err
			break
		}
	}
	if wait := time.Until(start.Add(cfg.Duration)); wait > 0 && sampleErr == nil {
		select {
		case <-time.After(wait):
		case <-hard.Done():
		}
	}
	close(loadDone)
	logf("load ended after %s; waiting for the sessions and streams in flight", time.Since(start).Round(time.Second))
	wg.Wait()
	if sampleErr != nil {
		return report, sampleErr
	}
	if err := hard.Err(); err != nil {
		return report, fmt.Errorf("soak: %w (box exit: %v; log %s)", err, box.exitErr(), box.LogPath)
	}
	if err := settle(hard, box, transport); err != nil {
		return report, err
	}
	if err := sample(time.Since(start), PhaseIdleAfter); err != nil {
		return report, err
	}
	if report.FDsIdle[1], err = box.FDKinds(); err != nil {
		return report, err
	}
	report.FDChanges = FDDiff(report.FDsIdle[0], report.FDsIdle[1])
	report.BoxExit = box.Stop(45 * time.Second)
	report.Checks = Verdicts(report.Samples, cfg.Warmup, cfg.Limits)
	return report, nil
}

// renew says whether a live session's close code means its token must be
// replaced (budget used up, token expired).
func renew(code int) bool { return code == 4402 || code == 4401 }

// settle closes the client's idle connections and waits until the box is
// idle: no live session, and the same goroutine and descriptor counts in
// three readings a second apart (at most 30 s).
func settle(ctx context.Context, box *Box, t *http.Transport) error {
	t.CloseIdleConnections()
	var last Probe
	same := 0
	for tries := 0; tries < 30 && same < 2; tries++ {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
		p, err := box.Probe(ctx)
		if err != nil {
			return err
		}
		if p.LiveNow == 0 && p.Goroutines == last.Goroutines && p.FDs == last.FDs {
			same++
		} else {
			same = 0
		}
		last = p
	}
	return nil
}

// clipSet is the audio the live workers replay.
type clipSet struct {
	byVertical map[string][]Clip // the clips of the vertical's scripts, script after script
	prime      map[string]Clip   // the first line of the vertical's first script
}

// loadClips synthesises (or finds cached) every script's speech with the
// binary's `boxd demo audio` and cuts it into clips.
func loadClips(ctx context.Context, cfg Config) (clipSet, error) {
	set := clipSet{byVertical: map[string][]Clip{}, prime: map[string]Clip{}}
	cmd := exec.CommandContext(ctx, cfg.Box.Bin, "demo", "audio", "--state-dir", cfg.AudioDir)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return set, fmt.Errorf("soak: boxd demo audio: %w\n%s", err, out)
	}
	for _, s := range scripts.All() {
		pcm, lines, err := scripts.Audio(ctx, scripts.CacheDir(cfg.AudioDir), s.ID)
		if err != nil {
			return set, fmt.Errorf("soak: %s audio: %w", s.ID, err)
		}
		set.byVertical[s.Vertical] = append(set.byVertical[s.Vertical], Clips(s, pcm, lines, cfg.ClipS)...)
		if _, ok := set.prime[s.Vertical]; !ok {
			set.prime[s.Vertical] = Clips(s, pcm, lines, 0.1)[0]
		}
	}
	for _, v := range liveOrder {
		if len(set.byVertical[v]) == 0 {
			return set, fmt.Errorf("soak: no demo script for the %s vertical", v)
		}
	}
	return set, nil
}
