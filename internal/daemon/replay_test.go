package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	demoroutes "boxd/web/routes/demo"

	"boxd/configs"
	"boxd/engine/asr/stream"
	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
	"boxd/pipelines/live/scripts"
)

// Replay tests run the real session and replay code with two stand-ins: a
// test vertical per live vertical id whose lanes need no model, and the
// scripted transcriber built from the script's timings (random-weight
// speech recognition would give meaningless text). The replay's sleep
// moves the test clock, so a 100 s script replays at once.

// testLiveVertical has one live lane (the sentences so far) and one
// after-stop lane; done.summary counts both.
func testLiveVertical(id string) *live.Vertical {
	count := &live.LaneSpec{ID: "sentences", Title: "Sentences", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			return fmt.Sprintf("%d sentences", len(st.Sentences)), map[string]any{"n": len(st.Sentences)}, nil
		}}
	final := &live.LaneSpec{ID: "wrapup", Title: "Wrap-up", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			return st.Lines(), nil, nil
		}}
	return &live.Vertical{ID: id, Live: []*live.LaneSpec{count}, Final: []*live.LaneSpec{final},
		Summary: func(st *live.State) map[string]any {
			lanes := []string{}
			for k := range st.Lanes {
				lanes = append(lanes, k)
			}
			return map[string]any{"sentences": len(st.Sentences), "lanes": lanes, "lang": st.Lang, "target": st.Target}
		}}
}

// scriptedASR starts the scripted transcriber for the script the test is
// replaying.
type scriptedASR struct {
	mu     sync.Mutex
	lines  []livetest.Line
	starts []string // lang of each start
}

func (a *scriptedASR) set(lines []scripts.LineTiming) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines = a.lines[:0]
	for _, l := range lines {
		a.lines = append(a.lines, livetest.Line{Text: l.Text, Start: l.Start, End: l.End})
	}
}

func (a *scriptedASR) start(ctx context.Context, lang string, emit func(stream.Event)) (live.Transcriber, error) {
	a.mu.Lock()
	lines := append([]livetest.Line(nil), a.lines...)
	a.starts = append(a.starts, lang)
	a.mu.Unlock()
	return livetest.ScriptedTranscriber(lines)(ctx, lang, emit)
}

// demoAudio holds each script's synthesised audio files once per test
// binary; seedAudio copies them into a server's state directory.
var demoAudio sync.Map // id -> *seeded

type seeded struct {
	once      sync.Once
	pcm, meta []byte
	lines     []scripts.LineTiming
	err       error
}

func needEspeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("espeak-ng is missing (make deps installs it)")
		}
		t.Skip("espeak-ng is missing; run make deps")
	}
}

func seedAudio(t *testing.T, stateDir, id string) []scripts.LineTiming {
	t.Helper()
	needEspeak(t)
	v, _ := demoAudio.LoadOrStore(id, &seeded{})
	sd := v.(*seeded)
	sd.once.Do(func() {
		dir, err := os.MkdirTemp("", "boxd-demo-audio-")
		if err != nil {
			sd.err = err
			return
		}
		defer os.RemoveAll(dir)
		if _, sd.lines, sd.err = scripts.Audio(context.Background(), dir, id); sd.err != nil {
			return
		}
		if sd.pcm, sd.err = os.ReadFile(filepath.Join(dir, id+".pcm")); sd.err != nil {
			return
		}
		sd.meta, sd.err = os.ReadFile(filepath.Join(dir, id+".json"))
	})
	if sd.err != nil {
		t.Fatal(sd.err)
	}
	dir := scripts.CacheDir(stateDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".pcm"), sd.pcm, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".json"), sd.meta, 0o640); err != nil {
		t.Fatal(err)
	}
	return sd.lines
}

type demoEnv struct {
	*testServer
	asr   *scriptedASR
	clk   *clock
	state string
}

// demoServer runs a server with the test verticals, the scripted
// transcriber and replays paced by the test clock.
func demoServer(t *testing.T, cfg *configs.Config) *demoEnv {
	t.Helper()
	if cfg == nil {
		cfg = configs.Defaults()
	}
	cfg.StateDir = t.TempDir()
	clk := newClock(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
	asr := &scriptedASR{}
	demoroutes.ReplaySleep = clk.Advance
	t.Cleanup(func() { demoroutes.ReplaySleep = nil }) // after the server has stopped
	ts := newTestBox(t, boxOptions{cfg: cfg, now: clk.Now, deps: func(deps *Deps) {
		deps.Transcribe = asr.start
		deps.LiveVerticals = map[string]*live.Vertical{}
		for _, v := range []string{"clinical", "sales", "field", "translate"} {
			deps.LiveVerticals[v] = testLiveVertical(v)
		}
	}})
	return &demoEnv{testServer: ts, asr: asr, clk: clk, state: cfg.StateDir}
}

// prepare seeds a script's audio and points the transcriber at its lines.
func (e *demoEnv) prepare(t *testing.T, id string) []scripts.LineTiming {
	t.Helper()
	lines := seedAudio(t, e.state, id)
	e.asr.set(lines)
	return lines
}

// sseEvent is one parsed event with its raw JSON.
type sseEvent struct {
	m   map[string]any
	raw string
}

// readEvents reads an SSE body strictly: every event is one "data: " line
// holding one JSON object, followed by a blank line; the only other line
// allowed is the heartbeat comment ": keep-alive" (a started stream that
// is silent for api.SSEHeartbeat), also followed by a blank line.
func readEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("event not followed by a blank line: %q", line)
			}
			expectBlank = false
			continue
		}
		if line == ": keep-alive" {
			expectBlank = true
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("SSE line is not a data line: %q", line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("data line is not one JSON object: %v: %s", err, data)
		}
		out = append(out, sseEvent{m: m, raw: data})
		expectBlank = true
	}
	return out
}

func (e *demoEnv) replay(t *testing.T, token string, body any) reply {
	t.Helper()
	return e.do(t, call{method: "POST", path: "/demo/replay", body: body, token: token})
}

// startReplay starts a replay and returns its response as soon as the
// headers arrive, for tests that read the stream while it runs (ctx ends
// the request; the body is closed at the end of the test).
func (e *demoEnv) startReplay(t *testing.T, ctx context.Context, token string, body any) *http.Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/demo/replay", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestReplayStreamsTheLiveEvents replays one script of each vertical: SSE
// with ready first and done last, every event with type and at_ms, the
// script's lines as final transcripts in order, and the lanes.
func TestReplayStreamsTheLiveEvents(t *testing.T) {
	env := demoServer(t, nil)
	for _, id := range []string{"clinical-back-pain", "sales-renewal-security", "field-electrical-panel", "translate-es-en-repair"} {
		sc, _ := scripts.Lookup(id)
		lines := env.prepare(t, id)
		tok := session(t, env.testServer, sc.Vertical)
		began := env.clk.Now()
		r := env.replay(t, tok, map[string]any{"vertical": sc.Vertical, "script_id": id, "speed": 2.0})
		if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" || r.header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("%s: %d %q %s", id, r.status, r.header.Get("Content-Type"), r.body)
		}
		evs := readEvents(t, r.body)
		first, last := evs[0].m, evs[len(evs)-1].m
		if first["type"] != "ready" || first["vertical"] != sc.Vertical || last["type"] != "done" {
			t.Fatalf("%s: first %v, last %v", id, first, last)
		}
		if sc.Vertical == "translate" && (first["lang"] != "es" || first["target"] != "en") {
			t.Errorf("%s: ready %v", id, first)
		}
		if sc.Vertical == "clinical" && (first["banner"] == nil || first["locale"] != "us") {
			t.Errorf("%s: ready %v", id, first)
		}
		prev := -1.0
		var finals []string
		lanes := map[string]bool{}
		for i, e := range evs {
			at, ok := e.m["at_ms"].(float64)
			if _, typed := e.m["type"].(string); !typed || !ok || at < prev {
				t.Fatalf("%s event %d: %s", id, i, e.raw)
			}
			prev = at
			switch e.m["type"] {
			case "transcript":
				if e.m["final"] == true {
					finals = append(finals, e.m["text"].(string))
				}
			case "lane":
				lanes[e.m["lane"].(string)] = true
			case "error":
				t.Errorf("%s: error event %s", id, e.raw)
			case "ready", "done":
				if i != 0 && i != len(evs)-1 {
					t.Errorf("%s: %s at %d", id, e.m["type"], i)
				}
			}
		}
		if len(finals) != len(lines) {
			t.Fatalf("%s: %d finals for %d lines", id, len(finals), len(lines))
		}
		for i := range finals {
			if finals[i] != lines[i].Text {
				t.Errorf("%s final %d: %q", id, i, finals[i])
			}
		}
		sum := last["summary"].(map[string]any)
		if !lanes["sentences"] || !lanes["wrapup"] || sum["sentences"] != float64(len(lines)) || len(sum["lanes"].([]any)) != 2 {
			t.Errorf("%s: lanes %v, summary %v", id, lanes, sum)
		}
		// Paced at 2.0: the replay slept half the audio's length.
		audioS := lines[len(lines)-1].End
		if el := env.clk.Now().Sub(began).Seconds(); el < audioS/2 || el > audioS/2+2 {
			t.Errorf("%s: replay took %.1f s of clock for %.1f s of speech at 2.0", id, el, audioS)
		}
	}
	if got := env.asr.starts; len(got) != 4 || got[0] != "en" || got[3] != "es" {
		t.Errorf("transcriber languages %v", got)
	}
	if n := env.deps.Platform.LiveSessions(); n != 0 {
		t.Errorf("%d live sessions left after the replays", n)
	}
}

func TestReplayDefaultSpeedIsRealTime(t *testing.T) {
	env := demoServer(t, nil)
	lines := env.prepare(t, "translate-en-es-tour")
	tok := session(t, env.testServer, "translate")
	began := env.clk.Now()
	r := env.replay(t, tok, map[string]any{"vertical": "translate", "script_id": "translate-en-es-tour"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	evs := readEvents(t, r.body)
	if evs[0].m["lang"] != "en" || evs[0].m["target"] != "es" || evs[len(evs)-1].m["type"] != "done" {
		t.Errorf("ready %v, last %v", evs[0].m, evs[len(evs)-1].m["type"])
	}
	if el := env.clk.Now().Sub(began).Seconds(); el < lines[len(lines)-1].End || el > lines[len(lines)-1].End+3 {
		t.Errorf("replay at 1.0 took %.1f s of clock for %.1f s of speech", el, lines[len(lines)-1].End)
	}
}

func TestReplayStatuses(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.LiveCap = 2
	cfg.Limits.AudioBudgetS = 150
	env := demoServer(t, cfg)
	env.prepare(t, "sales-discovery-logistics")
	body := func(vertical, id string, speed any) map[string]any {
		m := map[string]any{"vertical": vertical, "script_id": id}
		if speed != nil {
			m["speed"] = speed
		}
		return m
	}
	ok := body("sales", "sales-discovery-logistics", nil)
	sales := session(t, env.testServer, "sales")
	clinical := session(t, env.testServer, "clinical")
	other := session(t, env.testServer, "sales")
	third := session(t, env.testServer, "sales")
	field := session(t, env.testServer, "field")

	for _, tc := range []struct {
		name   string
		token  string
		body   any
		status int
		msg    string
	}{
		{"no token", "", ok, 401, "Bearer"},
		{"bad token", "ds_nope", ok, 401, ""},
		{"no token and a bad body: the token first", "", "{", 401, "Bearer"},
		{"bad token and a bad body", "ds_nope", map[string]any{"vertical": "sales"}, 401, "unknown demo session token"},
		{"token of another vertical", clinical, ok, 403, ""},
		{"unknown script", sales, body("sales", "sales-nope", nil), 404, "GET /demo/scripts"},
		{"script of another vertical", clinical, body("clinical", "sales-discovery-logistics", nil), 404, "sales vertical"},
		{"speed too low", sales, body("sales", "sales-discovery-logistics", 0.5), 400, "between 1.0 and 2.0"},
		{"speed too high", sales, body("sales", "sales-discovery-logistics", 2.5), 400, "between 1.0 and 2.0"},
		{"speed not a number", sales, body("sales", "sales-discovery-logistics", "fast"), 400, "speed"},
		{"no script", sales, map[string]any{"vertical": "sales"}, 400, "script_id"},
		{"not JSON", sales, "{", 400, ""},
		{"unknown field", sales, map[string]any{"vertical": "sales", "script_id": "x", "rate": 2}, 400, "rate"},
		{"vertical not a string", sales, map[string]any{"vertical": 7, "script_id": "sales-discovery-logistics"}, 400, "vertical"},
		{"body over 4 KiB", sales, map[string]any{"vertical": "sales", "script_id": strings.Repeat("x", 5000)}, 413, ""},
	} {
		r := env.replay(t, tc.token, tc.body)
		if r.status != tc.status || !strings.Contains(r.errMsg(t), tc.msg) {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		}
	}

	// 409: the token already has a live session.
	pr, d := env.deps.Platform.Authenticate(context.Background(), sales, "sales")
	if d != nil {
		t.Fatal(d)
	}
	release, d := pr.AcquireLive()
	if d != nil {
		t.Fatal(d)
	}
	if r := env.replay(t, sales, ok); r.status != 409 {
		t.Errorf("token already live: %d %s", r.status, r.body)
	}
	// 429: the live cap (2) is full.
	opr, _ := env.deps.Platform.Authenticate(context.Background(), other, "sales")
	release2, d := opr.AcquireLive()
	if d != nil {
		t.Fatal(d)
	}
	if r := env.replay(t, third, ok); r.status != 429 || r.header.Get("Retry-After") != "30" {
		t.Errorf("cap full: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	release()
	release2()

	// The audio budget (150 s) runs out during the second replay of the
	// 100 s script: an error event ends that stream, then 402.
	if r := env.replay(t, sales, ok); r.status != 200 || readEvents(t, r.body)[0].m["type"] != "ready" {
		t.Fatalf("first replay: %d", r.status)
	}
	r := env.replay(t, sales, ok)
	evs := readEvents(t, r.body)
	var zero, budgetErr bool
	for _, e := range evs {
		if e.m["type"] == "error" && strings.Contains(e.m["message"].(string), "audio budget used up") {
			budgetErr = true
		}
		if e.m["type"] == "budget" && e.m["seconds_audio_left"] == 0.0 {
			zero = true
		}
		if e.m["type"] == "done" {
			t.Error("done after the budget ran out")
		}
	}
	lastEv := evs[len(evs)-1].m
	if r.status != 200 || !zero || !budgetErr || lastEv["type"] != "error" {
		t.Errorf("replay past the budget: %d, budget 0 event %v, budget error event %v, last %v", r.status, zero, budgetErr, lastEv)
	}
	if r := env.replay(t, sales, ok); r.status != 402 || !strings.Contains(r.errMsg(t), "budget") {
		t.Errorf("budget used up: %d %s", r.status, r.body)
	}
	if n := env.deps.Platform.LiveSessions(); n != 0 {
		t.Errorf("%d live sessions left", n)
	}

	// 503: no espeak-ng and no cached audio.
	t.Setenv("PATH", t.TempDir())
	if r := env.replay(t, field, body("field", "field-roof-inspection", 1.0)); r.status != 503 || !strings.Contains(r.errMsg(t), "espeak-ng") {
		t.Errorf("no audio: %d %s", r.status, r.body)
	}
}

// TestReplayWithAKey: a replay paid by a developer key holds one of the
// key's live sessions (platform section 8: replays and live sockets both
// count toward a key's live cap), and revoking the key ends the replay
// at once with an error event and frees the slot.
func TestReplayWithAKey(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	env := demoServer(t, cfg)
	env.prepare(t, "sales-discovery-logistics")
	key, keyID := createKey(t, env.testServer, map[string]any{"concurrent_live_sessions": 1})

	// The replay's clock waits on hold, so it stays open.
	hold, started := make(chan struct{}), make(chan struct{})
	var startOnce, holdOnce sync.Once
	release := func() { holdOnce.Do(func() { close(hold) }) }
	t.Cleanup(release)
	demoroutes.ReplaySleep = func(time.Duration) {
		startOnce.Do(func() { close(started) })
		<-hold
	}
	resp := env.startReplay(t, context.Background(), key, map[string]any{"vertical": "sales", "script_id": "sales-discovery-logistics"})
	if resp.StatusCode != 200 {
		t.Fatalf("replay with a key: %d", resp.StatusCode)
	}
	<-started

	// The key's one live session is in use: a socket gets 4429, another
	// replay 429 with Retry-After.
	refused(t, env.testServer, "vertical=sales&token="+key, nil, 4429, "this developer key has 1 live sessions open (limit 1)")
	if r := env.replay(t, key, map[string]any{"vertical": "sales", "script_id": "sales-discovery-logistics"}); r.status != 429 || r.header.Get("Retry-After") != "30" || !strings.Contains(r.errMsg(t), "this developer key has 1 live sessions open") {
		t.Errorf("second replay on the key: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}

	// Revoking the key ends the running replay: its last event says so.
	if r := env.do(t, call{method: "DELETE", path: "/v1/keys/" + keyID, token: adminSecret}); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	release()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, body)
	last := evs[len(evs)-1].m
	if last["type"] != "error" || !strings.Contains(fmt.Sprint(last["message"]), "this developer key was revoked at ") {
		t.Errorf("last event of the revoked replay: %v", last)
	}
	for _, e := range evs {
		if e.m["type"] == "done" {
			t.Error("done after the key was revoked")
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for env.deps.Platform.LiveSessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("live slot still held after the revocation")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := env.replay(t, key, map[string]any{"vertical": "sales", "script_id": "sales-discovery-logistics"}); r.status != 401 {
		t.Errorf("replay with the revoked key: %d %s", r.status, r.body)
	}
}

// TestReplayClientLeaving frees the live slot when the client goes away.
func TestReplayClientLeaving(t *testing.T) {
	env := demoServer(t, nil)
	env.prepare(t, "clinical-diabetes-followup")
	gate := make(chan struct{})
	var once sync.Once
	demoroutes.ReplaySleep = func(d time.Duration) {
		once.Do(func() { close(gate) })
		time.Sleep(time.Millisecond)
	}
	tok := session(t, env.testServer, "clinical")
	ctx, cancel := context.WithCancel(context.Background())
	resp := env.startReplay(t, ctx, tok, map[string]any{"vertical": "clinical", "script_id": "clinical-diabetes-followup", "speed": 2})
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.HasPrefix(line, `data: {"type":"ready"`) {
		t.Errorf("first line %q", line)
	}
	<-gate
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for env.deps.Platform.LiveSessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("live slot still held after the client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(env.state, "recordings", "clinical-diabetes-followup.json")); err == nil {
		t.Error("an abandoned replay was recorded")
	}
}

// TestReplayDrainFinishes: a replay running when the box shuts down is told
// so, stops sending audio and finishes (its final lane and done arrive),
// Serve waits for it, and the cut-short replay is not kept as a recording.
func TestReplayDrainFinishes(t *testing.T) {
	env := demoServer(t, nil)
	lines := env.prepare(t, "field-roof-inspection")
	gate := make(chan struct{})
	frames := 0
	demoroutes.ReplaySleep = func(d time.Duration) {
		env.clk.Advance(d)
		if frames++; frames == 150 { // 15 s of audio in
			close(gate)
		}
		time.Sleep(200 * time.Microsecond)
	}
	tok := session(t, env.testServer, "field")
	resp := env.startReplay(t, context.Background(), tok, map[string]any{"vertical": "field", "script_id": "field-roof-inspection"})
	<-gate
	serve := drain(env.testServer)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := served(t, serve); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	evs := readEvents(t, body)
	told, wrapup := -1, -1
	first, last := -1.0, -1.0 // seconds_audio_left
	for k, e := range evs {
		switch {
		case e.m["type"] == live.TypeError && e.m["message"] == live.StopMessage:
			told = k
		case e.m["type"] == live.TypeLane && e.m["lane"] == "wrapup":
			wrapup = k
		case e.m["type"] == live.TypeBudget:
			if first < 0 {
				first = e.m["seconds_audio_left"].(float64)
			}
			last = e.m["seconds_audio_left"].(float64)
		}
	}
	if told < 0 || wrapup < told || evs[len(evs)-1].m["type"] != live.TypeDone {
		t.Fatalf("want the shutdown error, the final lane, then done last: %v", evs)
	}
	if sent, script := first-last, lines[len(lines)-1].End; sent < 10 || sent > script-20 {
		t.Errorf("%g s of the %g s script were sent: the replay did not stop soon after 15 s", sent, script)
	}
	if _, err := os.Stat(filepath.Join(env.state, "recordings", "field-roof-inspection.json")); err == nil {
		t.Error("a replay cut short by the shutdown was recorded")
	}
}
