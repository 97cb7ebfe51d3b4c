package daemon

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	liveroutes "boxd/web/routes/live"

	"github.com/coder/websocket"

	"boxd/configs"
	"boxd/engine/asr"
	"boxd/engine/asr/asrtest"
	"boxd/engine/asr/stream"
	"boxd/engine/asr/vad"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/engine/models/testmodels"
	"boxd/internal/platform"
	"boxd/pipelines/chat"
	"boxd/pipelines/live"
	"boxd/pipelines/live/field"
	"boxd/pipelines/live/livetest"
	"boxd/pipelines/live/translate"
	"boxd/web"
	"boxd/web/api"
)

// Live socket tests drive /ws/live with a real WebSocket client against the
// real server. The verticals are test verticals (a local lane counting
// sentences, optionally a model lane on the tiny LLM, an after-stop lane);
// speech recognition is the scripted transcriber for the protocol tests
// and the real engine (random-weight Whisper, Silero VAD, espeak-ng
// speech) in TestLiveRealSpeechRecognition.

// wsVertical is a test vertical with id: lane "count" (local), with model
// also lane "topic" (a model call on the tiny LLM), and after stop lane
// "wrapup".
func wsVertical(id string, model bool) *live.Vertical {
	count := &live.LaneSpec{ID: "count", Title: "Sentences", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			return fmt.Sprintf("%d sentences", len(st.Sentences)), map[string]any{"n": len(st.Sentences)}, nil
		}}
	lanes := []*live.LaneSpec{count}
	if model {
		lanes = append(lanes, livetest.TopicLane())
	}
	final := &live.LaneSpec{ID: "wrapup", Title: "Wrap-up", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			return st.Lines(), nil, nil
		}}
	return &live.Vertical{ID: id, Live: lanes, Final: []*live.LaneSpec{final},
		Summary: func(st *live.State) map[string]any {
			return map[string]any{"sentences": len(st.Sentences), "lanes": len(st.Lanes), "lang": st.Lang, "target": st.Target}
		}}
}

// wsScript is what the scripted transcriber hears: three sentences in 3 s.
var wsScript = []livetest.Line{
	{Text: "Thanks for joining the call today.", Start: 0.2, End: 1.0},
	{Text: "We ship forty pallets every week.", Start: 1.2, End: 2.0},
	{Text: "Late deliveries are our main problem.", Start: 2.2, End: 3.0},
}

// langRecorder wraps a StartTranscriber and keeps the language of each
// start.
type langRecorder struct {
	mu    sync.Mutex
	langs []string
	next  live.StartTranscriber
}

func (r *langRecorder) start(ctx context.Context, lang string, emit func(stream.Event)) (live.Transcriber, error) {
	r.mu.Lock()
	r.langs = append(r.langs, lang)
	r.mu.Unlock()
	return r.next(ctx, lang, emit)
}

func (r *langRecorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.langs) == 0 {
		return ""
	}
	return r.langs[len(r.langs)-1]
}

// wsOpts configure a live test server.
type wsOpts struct {
	cfg        *configs.Config
	now        func() time.Time
	transcribe live.StartTranscriber // nil: no speech recognition
	verticals  map[string]*live.Vertical
	model      bool // the real tiny LLM (stories260K) serves model lanes
	debounce   time.Duration
}

// wsServer runs the real server with live verticals (default: every live
// id, local lanes only) and the given transcriber.
func wsServer(t *testing.T, o wsOpts) *testServer {
	t.Helper()
	cfg := o.cfg
	if cfg == nil {
		cfg = configs.Defaults()
	}
	cfg.AdminSecret = configs.Secret(adminSecret)
	return newTestBox(t, boxOptions{cfg: cfg, now: o.now, deps: func(deps *Deps) { wsDeps(t, cfg, o, deps) },
		tweak: func(b *Box) { b.LiveDebounce = o.debounce }})
}

// wsDeps are a live test server's dependencies.
func wsDeps(t *testing.T, cfg *configs.Config, o wsOpts, deps *Deps) {
	deps.Transcribe = o.transcribe
	deps.LiveModels = live.Models{ASR: "whisper-test"}
	deps.LiveVerticals = o.verticals
	if deps.LiveVerticals == nil {
		deps.LiveVerticals = map[string]*live.Vertical{}
		for _, id := range liveroutes.VerticalIDs {
			deps.LiveVerticals[id] = wsVertical(id, false)
		}
	}
	if o.model {
		// The real tiny LLM of ../shared/models. It has no chat template
		// of its own, so it runs with the ChatML override an operator
		// would set (models.llm.template).
		e, err := llm.Open(context.Background(), llm.EngineOptions{Template: models.TemplateChatML,
			Options: llm.Options{Path: testmodels.Shared(t, "stories260K.gguf"), ContextLength: 2048, Parallel: 1, Threads: 1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		deps.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: deps.Key.ID(), Receipts: deps.Receipts}
	}
}

// wsClient is one live socket.
type wsClient struct {
	t   *testing.T
	c   *websocket.Conn
	all []wsEvent // every event read
}

// wsEvent is one server event as JSON.
type wsEvent map[string]any

func (e wsEvent) typ() string { s, _ := e["type"].(string); return s }

func (e wsEvent) str(k string) string { s, _ := e[k].(string); return s }

func (e wsEvent) num(k string) float64 { f, _ := e[k].(float64); return f }

func wsDial(t *testing.T, ts *testServer, query string, header http.Header) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.url, "http")+liveroutes.Path+"?"+query, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (HTTP %d)", query, err, status)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &wsClient{t: t, c: c}
}

// next reads one event; at the close it returns the close code instead
// (-1 when the connection broke without one).
func (w *wsClient) next() (wsEvent, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	typ, data, err := w.c.Read(ctx)
	if err != nil {
		if code := websocket.CloseStatus(err); code != -1 {
			return nil, int(code)
		}
		w.t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		w.t.Fatalf("a binary message from the server")
	}
	var ev wsEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		w.t.Fatalf("event is not a JSON object: %s", data)
	}
	at, ok := ev["at_ms"].(float64)
	if ev.typ() == "" || !ok || at < 0 || at != math.Trunc(at) {
		w.t.Fatalf("event without type or integer at_ms: %s", data)
	}
	w.all = append(w.all, ev)
	return ev, 0
}

// expect reads the next event and checks its type.
func (w *wsClient) expect(typ string) wsEvent {
	w.t.Helper()
	ev, code := w.next()
	if ev == nil {
		w.t.Fatalf("closed %d, want a %s event", code, typ)
	}
	if ev.typ() != typ {
		w.t.Fatalf("got %v, want a %s event", ev, typ)
	}
	return ev
}

// until reads events up to the next of type typ, skipping budget events.
func (w *wsClient) until(typ string) wsEvent {
	w.t.Helper()
	for {
		ev, code := w.next()
		if ev == nil {
			w.t.Fatalf("closed %d, want a %s event", code, typ)
		}
		if ev.typ() == typ {
			return ev
		}
		if ev.typ() != live.TypeBudget {
			w.t.Fatalf("got %v, want a %s event", ev, typ)
		}
	}
}

// rest reads events until the close and returns them and the code.
func (w *wsClient) rest() ([]wsEvent, int) {
	w.t.Helper()
	var evs []wsEvent
	for {
		ev, code := w.next()
		if ev == nil {
			return evs, code
		}
		evs = append(evs, ev)
	}
}

func (w *wsClient) send(typ websocket.MessageType, data []byte) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, typ, data); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// audio sends seconds of silence as 100 ms frames.
func (w *wsClient) audio(seconds float64) {
	w.t.Helper()
	frame := make([]byte, 3200)
	for i := 0; i < int(math.Round(seconds*10)); i++ {
		w.send(websocket.MessageBinary, frame)
	}
}

func (w *wsClient) stop() { w.t.Helper(); w.send(websocket.MessageText, []byte(`{"type":"stop"}`)) }

// checkClosing checks the end of a socket's events: an error event right
// before every close but 1000, done right before 1000.
func checkClosing(t *testing.T, evs []wsEvent, code int) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("closed %d without an event", code)
	}
	last := evs[len(evs)-1]
	if code == api.CloseNormal {
		if last.typ() != live.TypeDone {
			t.Errorf("closed 1000 after %v, want done", last)
		}
		return
	}
	if last.typ() != live.TypeError || last.str("message") == "" {
		t.Errorf("closed %d after %v, want an error event", code, last)
	}
}

// refused dials and expects exactly one error event at_ms 0 whose message
// holds want, then close code.
func refused(t *testing.T, ts *testServer, query string, header http.Header, code int, want string) {
	t.Helper()
	evs, got := wsDial(t, ts, query, header).rest()
	if got != code {
		t.Errorf("%s: closed %d, want %d (events %v)", query, got, code, evs)
		return
	}
	if len(evs) != 1 || evs[0].typ() != live.TypeError || evs[0].num("at_ms") != 0 || len(evs[0]) != 3 {
		t.Errorf("%s: events %v, want one error event at_ms 0 before %d", query, evs, code)
		return
	}
	if msg := evs[0].str("message"); !strings.Contains(msg, want) {
		t.Errorf("%s: message %q does not say %q", query, msg, want)
	}
}

// waitLive waits until the box has n live sessions (slots are freed as the
// server notices a client left).
func waitLive(t *testing.T, ts *testServer, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for ts.deps.Platform.LiveSessions() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d live sessions, want %d", ts.deps.Platform.LiveSessions(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkTranscripts applies the transcript rules: sentences in order, a
// partial extends the previous partial of its sentence, the final is the
// last event of its sentence.
func checkTranscripts(t *testing.T, evs []wsEvent) (finals []string) {
	t.Helper()
	next := 0
	partial := map[int]string{}
	for _, e := range evs {
		if e.typ() != live.TypeTranscript {
			continue
		}
		i := int(e.num("i"))
		if i != next {
			t.Fatalf("transcript %v: sentence %d is the one in progress", e, next)
		}
		text := e.str("text")
		if e["final"] == true {
			finals = append(finals, text)
			next++
			continue
		}
		if p, ok := partial[i]; ok && !strings.HasPrefix(text, p) {
			t.Errorf("partial %q does not extend %q", text, p)
		}
		partial[i] = text
	}
	return finals
}

func TestLiveProtocolScripted(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.AudioBudgetS = 60
	cfg.Limits.TokenBudget = 5000
	cfg.Limits.StopReserveTokens = 100
	verticals := map[string]*live.Vertical{"sales": wsVertical("sales", true)}
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript), verticals: verticals, model: true})
	token := session(t, ts, "sales")
	w := wsDial(t, ts, "vertical=sales&token="+token, nil)

	ready := w.expect(live.TypeReady)
	models, _ := ready["models"].(map[string]any)
	if ready.str("vertical") != "sales" || ready.str("receipts") != "signed" || models["asr"] != "whisper-test" || models["llm"] != "model-27b" {
		t.Errorf("ready %v", ready)
	}
	for _, k := range []string{"banner", "locale", "lang", "target"} {
		if _, ok := ready[k]; ok {
			t.Errorf("sales ready has %s: %v", k, ready)
		}
	}
	budget := w.expect(live.TypeBudget)
	if budget.num("seconds_audio_left") != 60 || budget.num("llm_tokens_left") != 5000 || budget["key_id"] != nil || budget["period"] != nil {
		t.Errorf("first budget %v", budget)
	}
	waitLive(t, ts, 1)

	w.audio(1.5)
	w.send(websocket.MessageBinary, make([]byte, 3201))                    // odd length
	w.send(websocket.MessageBinary, make([]byte, liveroutes.FrameLimit+2)) // over 2 s
	w.send(websocket.MessageText, []byte(`{"type":"pause"}`))              // not a command
	w.send(websocket.MessageText, []byte(`stop`))                          // not JSON
	w.audio(1.5)
	w.stop()
	evs, code := w.rest()
	if code != api.CloseNormal {
		t.Fatalf("closed %d, want 1000; events %v", code, evs)
	}
	checkClosing(t, evs, code)

	var errs []string
	firstErr, afterErr := -1, 0
	receipts, topics := 0, 0
	lastCount := -1.0
	for k, e := range evs {
		switch e.typ() {
		case live.TypeError:
			errs = append(errs, e.str("message"))
			if firstErr < 0 {
				firstErr = k
			}
		case live.TypeTranscript:
			if firstErr >= 0 {
				afterErr++
			}
		case live.TypeReceipt:
			receipts++
			if e.str("status") != "attested" || e.str("id") == "" || e["key_id"] != nil {
				t.Errorf("receipt %v", e)
			}
			if k+1 >= len(evs) || evs[k+1].typ() != live.TypeBudget {
				t.Errorf("receipt not followed by a budget event")
			}
		case live.TypeLane:
			switch e.str("lane") {
			case "count":
				lastCount = e["data"].(map[string]any)["n"].(float64)
			case "topic":
				topics++
			}
		}
	}
	wantErrs := []string{"an even number of bytes", "frames are at most 64000 bytes", "unknown text frame", "unknown text frame"}
	if len(errs) != len(wantErrs) {
		t.Fatalf("error events %q, want %d", errs, len(wantErrs))
	}
	for i, want := range wantErrs {
		if !strings.Contains(errs[i], want) {
			t.Errorf("error %d %q does not say %q", i, errs[i], want)
		}
	}
	if !strings.Contains(errs[2], `{"type":"stop"}`) {
		t.Errorf("the text-frame error does not say what is accepted: %q", errs[2])
	}
	if afterErr == 0 {
		t.Error("no transcript after the bad frames: the session did not go on")
	}
	finals := checkTranscripts(t, evs)
	if len(finals) != 3 || finals[2] != wsScript[2].Text {
		t.Errorf("finals %q", finals)
	}
	if lastCount != 3 {
		t.Errorf("last count lane %v, want 3", lastCount)
	}
	if receipts == 0 || receipts != topics {
		t.Errorf("%d receipts, %d topic lane events: one receipt per model call", receipts, topics)
	}
	done := evs[len(evs)-1]
	summary, _ := done["summary"].(map[string]any)
	if summary["sentences"] != 3.0 || summary["lanes"] != 3.0 {
		t.Errorf("done %v", done)
	}
	waitLive(t, ts, 0)
}

func TestLivePartialsThenFinal(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	w := wsDial(t, ts, "vertical=field&token="+session(t, ts, "field"), nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.audio(0.6) // halfway through the first sentence: its partial
	ev := w.until(live.TypeTranscript)
	if ev["final"] != false || ev.num("i") != 0 || ev.str("text") != "Thanks for joining" || ev.num("t") != 0.2 {
		t.Errorf("partial %v", ev)
	}
	w.audio(0.4)
	ev = w.until(live.TypeTranscript)
	if ev["final"] != true || ev.num("i") != 0 || ev.str("text") != wsScript[0].Text {
		t.Errorf("final %v", ev)
	}
	w.stop()
	evs, code := w.rest()
	checkClosing(t, evs, code)
	if code != api.CloseNormal {
		t.Fatalf("closed %d", code)
	}
	finals := checkTranscripts(t, w.all)
	if len(finals) != 3 { // Close flushes the sentences not yet reached
		t.Errorf("finals after stop %q", finals)
	}
}

func TestLiveReadyFields(t *testing.T) {
	rec := &langRecorder{next: livetest.ScriptedTranscriber(wsScript)}
	ts := wsServer(t, wsOpts{transcribe: rec.start})
	for _, c := range []struct {
		vertical, query       string
		lang, target, asrLang string
		banner                bool
	}{
		{"clinical", "", "", "", "en", true},
		{"translate", "&lang=pt-BR&target=es", "pt", "es", "pt", false},
		{"translate", "", "auto", "en", "auto", false},
		{"translate", "&lang=ES&target=en-US", "es", "en", "es", false},
		{"translate", "&lang=&target=", "auto", "en", "auto", false},
	} {
		w := wsDial(t, ts, "vertical="+c.vertical+c.query+"&token="+session(t, ts, c.vertical), nil)
		ready := w.expect(live.TypeReady)
		if ready.str("vertical") != c.vertical || ready.str("lang") != c.lang || ready.str("target") != c.target {
			t.Errorf("%s%s: ready %v", c.vertical, c.query, ready)
		}
		if c.banner != (ready.str("banner") != "") || (c.banner && ready.str("locale") != "us") || (!c.banner && ready["locale"] != nil) {
			t.Errorf("%s: banner and locale %v", c.vertical, ready)
		}
		if c.banner && (!strings.Contains(ready.str("banner"), "do not enter real patient information") || !strings.Contains(ready.str("banner"), "this machine")) {
			t.Errorf("clinical banner of a demo session %q", ready.str("banner"))
		}
		w.expect(live.TypeBudget)
		w.stop()
		evs, code := w.rest()
		checkClosing(t, evs, code)
		if code != api.CloseNormal {
			t.Errorf("closed %d", code)
		}
		// Read once the session is over: ready and budget go out before
		// the transcriber starts.
		if got := rec.last(); got != c.asrLang {
			t.Errorf("%s%s: speech recognition started with lang %q, want %q", c.vertical, c.query, got, c.asrLang)
		}
		summary, _ := evs[len(evs)-1]["summary"].(map[string]any)
		if summary["lang"] != c.lang || summary["target"] != c.target {
			t.Errorf("%s%s: session lang/target %v", c.vertical, c.query, summary)
		}
	}
	// An app with a developer key on the clinic's own box: the banner says
	// where the data stays, not that it must be synthetic.
	key, _ := createKey(t, ts, map[string]any{})
	w := wsDial(t, ts, "vertical=clinical&token="+key, nil)
	ready := w.expect(live.TypeReady)
	if b := ready.str("banner"); !strings.Contains(b, "this machine") || strings.Contains(b, "do not enter") || ready.str("locale") != "us" {
		t.Errorf("clinical banner with a key %q", b)
	}
	w.stop()
	if evs, code := w.rest(); code != api.CloseNormal {
		t.Errorf("closed %d: %v", code, evs)
	}
}

func TestLiveBadParams4400(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	sales := "&token=" + session(t, ts, "sales")
	tr := "&token=" + session(t, ts, "translate")
	cl := "&token=" + session(t, ts, "clinical")
	for _, c := range []struct{ query, want string }{
		{strings.TrimPrefix(sales, "&"), "vertical is required"},
		{"vertical=code" + sales, `vertical "code" has no live audio`},
		{"vertical=Sales" + sales, "has no live audio"},
		{"vertical=bogus" + sales, "use one of clinical, sales, field, translate"},
		{"vertical=sales&vertical=field" + sales, "vertical is given 2 times"},
		{"vertical=translate&lang=xx" + tr, `lang "xx" is not supported`},
		{"vertical=translate&lang=en-" + tr, "is not a language code"},
		{"vertical=translate&lang=english" + tr, "is not a language code"},
		{"vertical=translate&target=auto" + tr, "target cannot be auto"},
		{"vertical=translate&target=e%24" + tr, "is not a language code"},
		{"vertical=translate&target=sw" + tr, "use one of ar, de, en"},
		{"vertical=clinical&lang=en" + cl, "lang applies to the translate vertical only"},
		{"vertical=sales&target=es" + sales, "target applies to the translate vertical only"},
	} {
		refused(t, ts, c.query, nil, 4400, c.want)
	}
	waitLive(t, ts, 0)
}

func TestLiveAuth4401And4403(t *testing.T) {
	clk := newClock(time.Now())
	cfg := configs.Defaults()
	cfg.Limits.SessionLifetimeS = 600
	cfg.Origins = []string{"https://scribe.clinic.example"}
	ts := wsServer(t, wsOpts{cfg: cfg, now: clk.Now, transcribe: livetest.ScriptedTranscriber(wsScript)})

	refused(t, ts, "vertical=sales", nil, 4401, "missing token")
	refused(t, ts, "vertical=sales&token=ds_nope", nil, 4401, "unknown demo session token")
	refused(t, ts, "vertical=sales&token=dk_nope", nil, 4401, "unknown developer key")
	refused(t, ts, "vertical=sales", http.Header{"Authorization": {"Basic abc"}}, 4401, "missing token")

	expiring := session(t, ts, "sales")
	clk.Advance(601 * time.Second)
	refused(t, ts, "vertical=sales&token="+expiring, nil, 4401, "expired")
	sales := session(t, ts, "sales")

	revokedKey, revokedID := createKey(t, ts, map[string]any{})
	if r := ts.do(t, call{method: "DELETE", path: "/v1/keys/" + revokedID, token: adminSecret}); r.status != 200 {
		t.Fatalf("revoke: %d", r.status)
	}
	refused(t, ts, "vertical=sales&token="+revokedKey, nil, 4401, "revoked")

	refused(t, ts, "vertical=clinical&token="+sales, nil, 4403, "this demo token is for the sales vertical")
	codeKey, _ := createKey(t, ts, map[string]any{"verticals": []string{"code", "field"}})
	refused(t, ts, "vertical=sales&token="+codeKey, nil, 4403, "not allowed the sales vertical")
	refused(t, ts, "vertical=sales&token="+sales, http.Header{"Origin": {"https://evil.example"}}, 4403, "origin https://evil.example is not allowed")
	refused(t, ts, "vertical=sales&token="+sales, http.Header{"Origin": {"null"}}, 4403, "is not allowed")

	// Allowed: an operator origin, localhost, no origin; the token in the
	// query or in Authorization; a key allowed the vertical.
	for _, c := range []struct {
		query  string
		header http.Header
	}{
		{"vertical=sales&token=" + sales, http.Header{"Origin": {"https://scribe.clinic.example"}}},
		{"vertical=sales&token=" + sales, http.Header{"Origin": {"http://localhost:5173"}}},
		{"vertical=sales", http.Header{"Authorization": {"Bearer " + sales}}},
		{"vertical=field&token=" + codeKey, nil},
	} {
		w := wsDial(t, ts, c.query, c.header)
		w.expect(live.TypeReady)
		w.expect(live.TypeBudget)
		w.stop()
		if evs, code := w.rest(); code != api.CloseNormal {
			t.Errorf("%s %v: closed %d %v", c.query, c.header, code, evs)
		}
		waitLive(t, ts, 0)
	}

	// Plain HTTP on the socket's path: 426 with a JSON body; a refused
	// origin without an upgrade still gets the origins middleware's 403.
	r := ts.do(t, call{method: "GET", path: liveroutes.Path + "?vertical=sales"})
	if r.status != http.StatusUpgradeRequired || !strings.Contains(r.errMsg(t), "WebSocket") || r.header.Get("Upgrade") != "websocket" {
		t.Errorf("plain GET: %d %s %v", r.status, r.body, r.header)
	}
	r = ts.do(t, call{method: "GET", path: liveroutes.Path, headers: map[string]string{"Origin": "https://evil.example"}})
	if r.status != http.StatusForbidden {
		t.Errorf("plain GET from a refused origin: %d", r.status)
	}
}

// TestLiveRevokedKeyEndsSession: revoking a key is immediate (platform
// section 3): a socket already open with it gets the error event and 4401.
func TestLiveRevokedKeyEndsSession(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	key, id := createKey(t, ts, map[string]any{})
	w := wsDial(t, ts, "vertical=sales&token="+key, nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.audio(0.5)
	if r := ts.do(t, call{method: "DELETE", path: "/v1/keys/" + id, token: adminSecret}); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	evs, code := w.rest()
	if code != 4401 {
		t.Fatalf("closed %d, want 4401: %v", code, evs)
	}
	checkClosing(t, evs, code)
	if msg := evs[len(evs)-1].str("message"); !strings.Contains(msg, "this developer key was revoked at ") {
		t.Errorf("last message %q", msg)
	}
	waitLive(t, ts, 0)
	refused(t, ts, "vertical=sales&token="+key, nil, 4401, "revoked")
}

// TestLiveIdleSocketsHearCLIRevocation: `boxd keys revoke` writes the store
// from another process; every socket of the key ends with an error event
// and 4401 within the README's 2 seconds, sending audio or idle.
func TestLiveIdleSocketsHearCLIRevocation(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	// Two keys: audio on one makes the box read that key again, which
	// must not be what ends the idle one.
	idleKey, idleID := createKey(t, ts, map[string]any{})
	talkKey, talkID := createKey(t, ts, map[string]any{})
	idle := wsDial(t, ts, "vertical=sales&token="+idleKey, nil)
	idle.expect(live.TypeReady)
	idle.expect(live.TypeBudget)
	talking := wsDial(t, ts, "vertical=field&token="+talkKey, nil)
	talking.expect(live.TypeReady)
	talking.expect(live.TypeBudget)
	cli := platform.New(ts.cfg, ts.deps.Platform.Store(), nil) // as `boxd keys revoke` does
	revoked := time.Now()
	for _, id := range []string{idleID, talkID} {
		if _, d := cli.RevokeKey(context.Background(), id); d != nil {
			t.Fatal(d)
		}
	}
	talking.audio(0.3)
	for name, w := range map[string]*wsClient{"idle": idle, "talking": talking} {
		evs, code := w.rest()
		checkClosing(t, evs, code)
		took := time.Since(revoked)
		t.Logf("%s socket closed %d after %s", name, code, took)
		if code != 4401 || !strings.Contains(evs[len(evs)-1].str("message"), "revoked") {
			t.Errorf("%s socket closed %d: %v", name, code, evs)
		}
		if took > 2*time.Second+time.Second { // README: within 2 s (a second of slack for a loaded machine)
			t.Errorf("%s socket ended %s after the revocation", name, took)
		}
	}
	waitLive(t, ts, 0)
}

// TestLiveKeyRequestRate4429: a key over its requests per minute is
// refused on the socket with 4429 (platform section 7).
func TestLiveKeyRequestRate4429(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	key, _ := createKey(t, ts, map[string]any{"requests_per_minute": 1})
	w := wsDial(t, ts, "vertical=sales&token="+key, nil)
	w.expect(live.TypeReady)
	w.stop()
	if evs, code := w.rest(); code != api.CloseNormal {
		t.Fatalf("first socket closed %d: %v", code, evs)
	}
	waitLive(t, ts, 0)
	refused(t, ts, "vertical=sales&token="+key, nil, 4429, "this developer key made 1 requests in the last minute (limit 1)")
}

// TestLiveAdmissionOrder: the socket is admitted in the order of every
// declared route (admission in web/api), each refusal an error event and
// its close code; a socket failing two checks at once is refused by the
// earlier: the token (4401) before the query (4400), the query before the
// token's vertical (4403), the vertical before the box serving it (1011);
// then a live slot (4409) and a used-up budget (4402). That the budget
// comes before the slot is admission's, shared with /demo/replay, whose
// order TestAdmissionOrderEveryRoute checks.
func TestLiveAdmissionOrder(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.AudioBudgetS = 1
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript),
		verticals: map[string]*live.Vertical{"sales": wsVertical("sales", false), "clinical": wsVertical("clinical", false)}})
	sales := session(t, ts, "sales")
	refused(t, ts, "vertical=bogus&token=x", nil, 4401, "unknown demo session token")
	refused(t, ts, "vertical=bogus", nil, 4401, "missing token")
	refused(t, ts, "vertical=bogus&token="+sales, nil, 4400, "has no live audio")
	refused(t, ts, "vertical=field&token="+sales, nil, 4403, "")
	field := session(t, ts, "field")
	refused(t, ts, "vertical=field&token="+field, nil, 1011, "not available on this box")

	w := wsDial(t, ts, "vertical=sales&token="+sales, nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.audio(1)
	other := session(t, ts, "sales")
	o := wsDial(t, ts, "vertical=sales&token="+other, nil)
	o.expect(live.TypeReady)
	refused(t, ts, "vertical=sales&token="+other, nil, 4409, "already has a live session")
	_, _ = w.rest()
	waitLive(t, ts, 1)
	refused(t, ts, "vertical=sales&token="+sales, nil, 4402, "")
}

func TestLiveOneSocketPerToken4409(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	token := session(t, ts, "clinical")
	first := wsDial(t, ts, "vertical=clinical&token="+token, nil)
	first.expect(live.TypeReady)
	first.expect(live.TypeBudget)
	refused(t, ts, "vertical=clinical&token="+token, nil, 4409, "already has a live session")

	// The client goes away without stop: the session closes and the slot
	// is freed, so the token can connect again.
	first.audio(0.5)
	_ = first.c.CloseNow()
	waitLive(t, ts, 0)
	again := wsDial(t, ts, "vertical=clinical&token="+token, nil)
	again.expect(live.TypeReady)
	again.stop()
	evs, code := again.rest()
	checkClosing(t, evs, code)
	if code != api.CloseNormal {
		t.Errorf("reconnect closed %d", code)
	}
}

func TestLiveCaps4429(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.LiveCap = 2
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript)})
	t1, t2 := session(t, ts, "sales"), session(t, ts, "sales")
	key, _ := createKey(t, ts, map[string]any{"concurrent_live_sessions": 1})

	k1 := wsDial(t, ts, "vertical=sales&token="+key, nil)
	k1.expect(live.TypeReady)
	refused(t, ts, "vertical=field&token="+key, nil, 4429, "this developer key has 1 live sessions open (limit 1)")
	s1 := wsDial(t, ts, "vertical=sales&token="+t1, nil)
	s1.expect(live.TypeReady)
	waitLive(t, ts, 2)
	refused(t, ts, "vertical=sales&token="+t2, nil, 4429, "all 2 live sessions on this box are in use; retry in 30 seconds")

	_ = s1.c.CloseNow()
	waitLive(t, ts, 1)
	s2 := wsDial(t, ts, "vertical=sales&token="+t2, nil)
	s2.expect(live.TypeReady)
	waitLive(t, ts, 2)
}

func TestLiveBudgets4402(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.AudioBudgetS = 1
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript)})

	// A demo token's audio runs out mid-session: a budget event with
	// seconds_audio_left 0, the error, 4402.
	token := session(t, ts, "sales")
	w := wsDial(t, ts, "vertical=sales&token="+token, nil)
	w.expect(live.TypeReady)
	if b := w.expect(live.TypeBudget); b.num("seconds_audio_left") != 1 {
		t.Errorf("first budget %v", b)
	}
	w.audio(1)
	evs, code := w.rest()
	if code != 4402 {
		t.Fatalf("closed %d, want 4402: %v", code, evs)
	}
	checkClosing(t, evs, code)
	if msg := evs[len(evs)-1].str("message"); msg != "audio budget used up" {
		t.Errorf("message %q", msg)
	}
	zero := -1
	for k, e := range evs {
		if e.typ() == live.TypeBudget && e["seconds_audio_left"] == 0.0 {
			zero = k
		}
	}
	if zero < 0 || zero != len(evs)-2 {
		t.Errorf("no budget event with seconds_audio_left 0 right before the error: %v", evs)
	}
	waitLive(t, ts, 0)
	// Connecting again with no audio left: refused at once.
	refused(t, ts, "vertical=sales&token="+token, nil, 4402, "audio budget used up")

	// A key's daily audio runs out: "for today", and its budget events
	// carry key_id and period day.
	key, id := createKey(t, ts, map[string]any{"daily_audio_seconds": 1})
	w = wsDial(t, ts, "vertical=field&token="+key, nil)
	w.expect(live.TypeReady)
	b := w.expect(live.TypeBudget)
	if b.num("seconds_audio_left") != 1 || b.str("key_id") != id || b.str("period") != "day" || b.num("llm_tokens_left") != 200000 {
		t.Errorf("key budget %v", b)
	}
	w.audio(1)
	evs, code = w.rest()
	checkClosing(t, evs, code)
	if code != 4402 || evs[len(evs)-1].str("message") != "audio budget used up for today" {
		t.Errorf("key: closed %d after %v", code, evs[len(evs)-1])
	}
	waitLive(t, ts, 0)
	refused(t, ts, "vertical=field&token="+key, nil, 4402, "audio budget used up for today")

	// No tokens left: refused at once.
	broke, _ := createKey(t, ts, map[string]any{"daily_llm_tokens": 0})
	refused(t, ts, "vertical=sales&token="+broke, nil, 4402, "token budget used up for today")
	waitLive(t, ts, 0)
}

func TestLiveTokenBudgetDemo4402(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 0
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript)})
	refused(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil, 4402, "token budget used up")
	waitLive(t, ts, 0)
}

func TestLiveSpeechRecognitionUnavailable1011(t *testing.T) {
	ts := wsServer(t, wsOpts{})
	for _, v := range liveroutes.VerticalIDs {
		refused(t, ts, "vertical="+v+"&token="+session(t, ts, v), nil, 1011, "speech recognition unavailable: the operator sets models.asr.path")
	}

	// A vertical the box does not serve.
	ts = wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript), verticals: map[string]*live.Vertical{"sales": wsVertical("sales", false)}})
	refused(t, ts, "vertical=field&token="+session(t, ts, "field"), nil, 1011, "the field vertical is not available on this box")

	// Speech recognition fails to start: the error before ready, then 1011.
	failing := func(ctx context.Context, lang string, emit func(stream.Event)) (live.Transcriber, error) {
		return nil, errors.New("the model is busy")
	}
	ts = wsServer(t, wsOpts{transcribe: failing})
	evs, code := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil).rest()
	checkClosing(t, evs, code)
	if code != 1011 || len(evs) != 1 || !strings.Contains(evs[0].str("message"), "speech recognition is unavailable: the model is busy") {
		t.Errorf("closed %d after %v", code, evs)
	}
	waitLive(t, ts, 0)
}

func TestLiveHugeMessageClosesAfterAnError(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.send(websocket.MessageBinary, make([]byte, liveroutes.MessageCap+1))
	evs, code := w.rest()
	checkClosing(t, evs, code)
	if code != int(websocket.StatusMessageTooBig) || !strings.Contains(evs[len(evs)-1].str("message"), "more than 1048576 bytes") {
		t.Errorf("closed %d after %v", code, evs)
	}
	waitLive(t, ts, 0)
}

// pcm16 encodes samples as 16-bit little-endian PCM.
func pcm16(samples []float32) []byte {
	out := make([]byte, 2*len(samples))
	for i, s := range samples {
		v := math.Round(float64(s) * 32767)
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(max(-32768, min(32767, v)))))
	}
	return out
}

// TestLiveRealSpeechRecognition runs the socket on the real engines: the
// micro random-weight Whisper (whose text is meaningless) and the real
// Silero VAD hear espeak-ng speech sent as 100 ms frames, and the real tiny
// LLM (stories260K) runs every lane of the real field vertical on what
// they hear. Transcript events arrive under the rules, every lane of the
// vertical emits, and done (with the report) follows stop.
func TestLiveRealSpeechRecognition(t *testing.T) {
	var pcm []float32
	pcm = append(pcm, asrtest.Silence(0.4)...)
	pcm = append(pcm, asrtest.Speak(t, "The roof has two cracked tiles.")...)
	pcm = append(pcm, asrtest.Silence(0.6)...)
	began := time.Now()
	engine := microSpeechEngine(t)

	t.Logf("speech and models ready in %s", time.Since(began))
	began = time.Now()
	cfg := configs.Defaults()
	cfg.Limits.AudioBudgetS = 60
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: live.SpeechTranscriber(engine), verticals: map[string]*live.Vertical{"field": field.New()}, model: true})
	w := wsDial(t, ts, "vertical=field&token="+session(t, ts, "field"), nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	audio := pcm16(pcm)
	for off := 0; off < len(audio); off += 3200 {
		w.send(websocket.MessageBinary, audio[off:min(off+3200, len(audio))])
	}
	w.stop()
	evs, code := w.rest()
	checkClosing(t, evs, code)
	if code != api.CloseNormal {
		t.Fatalf("closed %d: %v", code, evs[len(evs)-1])
	}
	finals := checkTranscripts(t, evs)
	transcripts := 0
	for _, e := range evs {
		switch e.typ() {
		case live.TypeTranscript:
			transcripts++
		case live.TypeError:
			t.Errorf("error event %v", e)
		}
	}
	t.Logf("%.1f s of speech: %d transcript events, %d finals in %s", float64(len(pcm))/16000, transcripts, len(finals), time.Since(began))
	if len(finals) == 0 {
		t.Fatal("no final transcript")
	}
	lanes := map[string]int{}
	receipts := 0
	for _, e := range evs {
		switch e.typ() {
		case live.TypeLane:
			lanes[e.str("lane")]++
		case live.TypeReceipt:
			receipts++
		}
	}
	v := field.New()
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		if lanes[l.ID] == 0 {
			t.Errorf("lane %s never emitted (lanes %v)", l.ID, lanes)
		}
	}
	if receipts == 0 {
		t.Error("no receipt: the model lanes did not run on the tiny LLM")
	}
	summary, _ := evs[len(evs)-1]["summary"].(map[string]any)
	ft, _ := summary["final_transcript"].(map[string]any)
	lines, _ := ft["lines"].([]any)
	if len(lines) != len(finals) {
		t.Errorf("done has %d transcript lines, %d finals", len(lines), len(finals))
	}
	// The VAD knows where each sentence's speech ended: end is set, after start.
	for _, l := range lines {
		m, _ := l.(map[string]any)
		start, _ := m["start"].(float64)
		if end, ok := m["end"].(float64); !ok || end <= start {
			t.Errorf("final_transcript line without a speech end after its start: %v", m)
		}
	}
	if _, ok := summary["report"].(map[string]any); !ok || summary["report_markdown"] == "" {
		t.Errorf("done has no field report: %v", summary)
	}
	waitLive(t, ts, 0)
}

// TestLiveTokenBudgetPausesThenEnds: on the real tiny LLM, live lanes pause
// with one error event once only the stop reserve is left (the session
// goes on to done and 1000), and a session whose model calls use up the
// token budget ends with the error and 4402.
func TestLiveTokenBudgetPausesThenEnds(t *testing.T) {
	verticals := map[string]*live.Vertical{"sales": wsVertical("sales", true)}

	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 50
	cfg.Limits.StopReserveTokens = 100
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript), verticals: verticals, model: true})
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.audio(3.2)
	w.stop()
	evs, code := w.rest()
	checkClosing(t, evs, code)
	if code != api.CloseNormal {
		t.Fatalf("closed %d, want 1000: %v", code, evs)
	}
	paused := 0
	for _, e := range evs {
		switch e.typ() {
		case live.TypeError:
			if !strings.Contains(e.str("message"), "live lanes topic are paused until stop: 50 generated tokens are left of the token budget, and up to 100 are kept for the stop artifact") {
				t.Errorf("error %q", e.str("message"))
			}
			paused++
		case live.TypeReceipt:
			t.Errorf("a model call ran inside the stop reserve: %v", e)
		case live.TypeLane:
			if e.str("lane") == "topic" {
				t.Errorf("the paused model lane emitted: %v", e)
			}
		}
	}
	if paused != 1 {
		t.Errorf("%d pause errors, want exactly 1", paused)
	}
	waitLive(t, ts, 0)

	cfg = configs.Defaults()
	cfg.Limits.TokenBudget = 8
	cfg.Limits.StopReserveTokens = 0
	ts = wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript), verticals: verticals, model: true})
	w = wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.audio(3.2)
	evs, code = w.rest()
	checkClosing(t, evs, code)
	if code != 4402 || evs[len(evs)-1].str("message") != "token budget used up" {
		t.Fatalf("closed %d after %v, want 4402 token budget used up", code, evs[len(evs)-1])
	}
	receipts, zero := 0, false
	for _, e := range evs {
		switch e.typ() {
		case live.TypeReceipt:
			receipts++
		case live.TypeBudget:
			zero = zero || e["llm_tokens_left"] == 0.0
		}
	}
	if receipts != 1 || !zero {
		t.Errorf("%d receipts (want 1), a budget event with no tokens left: %v", receipts, zero)
	}
	waitLive(t, ts, 0)
}

// stuckClose is a transcriber whose Close waits for its context: a stop
// that cannot finish on its own.
type stuckClose struct{ live.Transcriber }

func (stuckClose) Close(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// drain stops ts's Serve; the channel gets what Serve returned (which is
// also left for the cleanup). The caller reads its sockets meanwhile, as
// clients do.
func drain(ts *testServer) <-chan error {
	out := make(chan error, 1)
	go func() {
		ts.stop()
		err := <-ts.done
		ts.done <- err
		out <- err
	}()
	return out
}

// served waits for what Serve returned.
func served(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return within a minute of the drain")
		return nil
	}
}

// TestLiveDrainFinishesSessions: when the box shuts down, a live session
// is told so, stops as if the client had sent stop (its final lane and
// done arrive, then 1000), and Serve waits for it.
func TestLiveDrainFinishesSessions(t *testing.T) {
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.audio(1.5)
	for {
		if e := w.until(live.TypeTranscript); e["final"] == true {
			break
		}
	}
	serve := drain(ts)
	evs, code := w.rest()
	if err := served(t, serve); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	checkClosing(t, evs, code)
	if code != api.CloseNormal {
		t.Fatalf("closed %d, want 1000 after done: %v", code, evs)
	}
	told, wrapup := -1, -1
	for k, e := range evs {
		switch {
		case e.typ() == live.TypeError && e.str("message") == live.StopMessage:
			told = k
		case e.typ() == live.TypeLane && e.str("lane") == "wrapup":
			wrapup = k
		}
	}
	if told < 0 || wrapup < told {
		t.Errorf("want the shutdown error, then the final lane, then done: %v", evs)
	}
	if n := ts.Server.API().Sessions(); n != 0 {
		t.Errorf("%d sessions still counted", n)
	}
}

// TestLiveDrainGraceCut: a session that cannot finish within
// shutdown_grace_s is ended with an error event and 1001, and Serve
// reports the cut.
func TestLiveDrainGraceCut(t *testing.T) {
	cfg := configs.Defaults()
	cfg.ShutdownGraceS = 1
	scripted := livetest.ScriptedTranscriber(wsScript)
	stuck := func(ctx context.Context, lang string, emit func(stream.Event)) (live.Transcriber, error) {
		tr, err := scripted(ctx, lang, emit)
		return stuckClose{tr}, err
	}
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: stuck})
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	w.expect(live.TypeBudget)
	w.audio(0.5)
	began := time.Now()
	serve := drain(ts)
	evs, code := w.rest()
	if err := served(t, serve); !errors.Is(err, web.ErrGraceExpired) {
		t.Fatalf("Serve: %v, want the grace expired", err)
	}
	checkClosing(t, evs, code)
	if code != 1001 || evs[len(evs)-1].str("message") != live.CutMessage {
		t.Fatalf("closed %d after %v, want 1001 and the cut message", code, evs[len(evs)-1])
	}
	if evs[len(evs)-2].str("message") != live.StopMessage {
		t.Errorf("the session was not told of the shutdown first: %v", evs)
	}
	for _, e := range evs {
		if e.typ() == live.TypeDone {
			t.Errorf("done after a cut: %v", evs)
		}
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("the drain took %s with a 1 s grace", d)
	}
}

// TestLiveTranslateOverTheSocket runs the real translate vertical on the
// real tiny LLM over the socket, both tested directions (es → en, en → es):
// one translation event per final source sentence, data {i, t, source,
// translation, target} with source the final's text and t its t, ordered
// by i; the glossary lane is rebuilt as the transcript grows, each event
// its whole state (the latest replaces the others: done holds the latest
// glossary); summary after stop; done holds every sentence in order.
func TestLiveTranslateOverTheSocket(t *testing.T) {
	spanish := []livetest.Line{
		{Text: "Buenos días, vengo por la lavadora que no centrifuga.", Start: 0.3, End: 4},
		{Text: "La compré en marzo y tiene garantía de dos años.", Start: 5, End: 9},
		{Text: "Hace un ruido fuerte cuando llega al último ciclo.", Start: 10, End: 14},
		{Text: "El técnico Julián Ortega dijo que es el rodamiento.", Start: 15, End: 19},
		{Text: "¿Cuánto tarda la reparación y necesito dejarla aquí?", Start: 20, End: 24},
		{Text: "Puedo traerla el jueves por la mañana.", Start: 25, End: 28},
	}
	english := []livetest.Line{
		{Text: "Good morning, the washer arrived yesterday with a dent.", Start: 0.3, End: 4},
		{Text: "The delivery driver, Marcus Bell, took photos of it.", Start: 5, End: 9},
		{Text: "We can replace the side panel under the warranty.", Start: 10, End: 14},
		{Text: "The part takes about five business days to arrive.", Start: 15, End: 19},
		{Text: "Our technician will call you before the visit.", Start: 20, End: 24},
		{Text: "Is Thursday morning a good time for you?", Start: 25, End: 28},
	}
	for _, tc := range []struct {
		lang, target string
		lines        []livetest.Line
	}{{"es", "en", spanish}, {"en", "es", english}} {
		t.Run(tc.lang+"-"+tc.target, func(t *testing.T) {
			ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(tc.lines),
				verticals: map[string]*live.Vertical{"translate": translate.New()}, model: true, debounce: 50 * time.Millisecond})
			w := wsDial(t, ts, "vertical=translate&lang="+tc.lang+"&target="+tc.target+"&token="+session(t, ts, "translate"), nil)
			if r := w.expect(live.TypeReady); r.str("lang") != tc.lang || r.str("target") != tc.target {
				t.Errorf("ready %v", r)
			}
			// 24.5 s (the fifth sentence, 20 s in, makes the glossary due),
			// then wait for the glossary before the rest, so that
			// the final glossary has new sentences to take in.
			w.audio(24.5)
			for {
				if e, _ := w.next(); e == nil || (e.typ() == live.TypeLane && e.str("lane") == "glossary") {
					break
				}
			}
			w.audio(tc.lines[len(tc.lines)-1].End + 0.5 - 24.5)
			w.stop()
			last, code := w.rest()
			checkClosing(t, last, code)
			if code != api.CloseNormal {
				t.Fatalf("closed %d: %v", code, last[len(last)-1])
			}
			evs := w.all
			finals := map[int]wsEvent{}
			var order []int
			glossaries, summaries := 0, 0
			var lastGlossary any
			for _, e := range evs {
				switch e.typ() {
				case live.TypeTranscript:
					if e["final"] == true {
						finals[int(e.num("i"))] = e
					}
				case live.TypeError:
					t.Errorf("error event %v", e)
				case live.TypeLane:
					d, _ := e["data"].(map[string]any)
					switch e.str("lane") {
					case "translation":
						i := int(d["i"].(float64))
						order = append(order, i)
						f, ok := finals[i]
						if !ok {
							t.Errorf("translation %d before (or without) its final", i)
							continue
						}
						if d["source"] != f["text"] || d["t"] != f["t"] || d["target"] != tc.target || e.str("body") != d["translation"] {
							t.Errorf("translation %v for final %v", e, f)
						}
						if s, _ := d["translation"].(string); strings.TrimSpace(s) == "" {
							t.Errorf("empty translation %v", e)
						}
					case "glossary":
						glossaries++
						if d["target"] != tc.target {
							t.Errorf("glossary %v", e)
						}
						lastGlossary = d["terms"]
					case "summary":
						summaries++
					}
				}
			}
			if len(order) != len(tc.lines) || !slices.IsSorted(order) {
				t.Errorf("translations for sentences %v, want one each of 0..%d in order", order, len(tc.lines)-1)
			}
			if glossaries < 2 || summaries != 1 {
				t.Errorf("%d glossary events (want a live one and the final one), %d summaries", glossaries, summaries)
			}
			summary, _ := evs[len(evs)-1]["summary"].(map[string]any)
			tr, _ := summary["translation"].([]any)
			if len(tr) != len(tc.lines) {
				t.Fatalf("done has %d translations, want %d", len(tr), len(tc.lines))
			}
			for i, x := range tr {
				if d := x.(map[string]any); d["i"] != float64(i) || d["source"] != tc.lines[i].Text {
					t.Errorf("done translation %d: %v", i, d)
				}
			}
			if fmt.Sprint(summary["glossary"]) != fmt.Sprint(lastGlossary) {
				t.Errorf("done glossary %v, the latest glossary event %v", summary["glossary"], lastGlossary)
			}
			if summary["lang"] != tc.lang || summary["target"] != tc.target {
				t.Errorf("done %v", summary)
			}
		})
	}
}

// microSpeechEngine is the real speech engine on the micro random-weight
// Whisper and the real Silero VAD. Random weights: it never skips a window
// as silence (the no-speech probability is noise) and bounds the tokens per
// second tightly.
func microSpeechEngine(t *testing.T) *stream.Engine {
	t.Helper()
	return speechEngine(t, testmodels.WhisperMicroGGUF)
}

// speechEngine is a stream engine on the generated Whisper file name.
func speechEngine(t *testing.T, name string) *stream.Engine {
	t.Helper()
	m, err := asr.Load(context.Background(), testmodels.Generated(t, name), asr.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	det, err := vad.Load(testmodels.Shared(t, "ggml-silero-v6.2.0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(det.Close)
	dec := asr.DecodeOptions{Temperatures: []float64{0}, NoSpeechThreshold: 1, Seed: 3}
	return &stream.Engine{Model: m, VAD: det, Defaults: stream.Options{Final: dec, Partial: asr.DecodeOptions{NoSpeechThreshold: 1}, TokensPerSecond: 3}}
}

// TestLiveLanguageTheSpeechModelLacks: a translate socket whose spoken
// language the English-only speech model cannot transcribe is refused
// before ready, with an error event naming what the model takes and 4400
// (the caller's to fix), not ready and then 1011 (which says retry). en and
// auto are served.
func TestLiveLanguageTheSpeechModelLacks(t *testing.T) {
	engine := speechEngine(t, testmodels.WhisperENGGUF)
	ts := wsServer(t, wsOpts{transcribe: live.SpeechTranscriber(engine), verticals: map[string]*live.Vertical{"translate": translate.New()}, model: true})
	for _, tc := range []struct {
		lang string
		code int
	}{{"es", 4400}, {"pt-BR", 4400}, {"en", api.CloseNormal}, {"auto", api.CloseNormal}} {
		w := wsDial(t, ts, "vertical=translate&lang="+tc.lang+"&token="+session(t, ts, "translate"), nil)
		if tc.code != api.CloseNormal {
			evs, code := w.rest()
			checkClosing(t, evs, code)
			if code != tc.code || len(evs) != 1 || evs[0].typ() != live.TypeError ||
				!strings.Contains(evs[0].str("message"), "English-only") || !strings.Contains(evs[0].str("message"), "lang=en") {
				t.Errorf("lang %s: closed %d after %v", tc.lang, code, evs)
			}
			continue
		}
		w.expect(live.TypeReady)
		w.stop()
		if _, code := w.rest(); code != api.CloseNormal {
			t.Errorf("lang %s: closed %d", tc.lang, code)
		}
	}
}

// TestIsStopFrame: only {"type":"stop"} with the key in its own case
// stops a session (fuzzing found "Type" and "TYPE" taken, as
// encoding/json matches keys); other keys beside it are ignored.
func TestIsStopFrame(t *testing.T) {
	for _, tc := range []struct {
		frame string
		stop  bool
	}{
		{`{"type":"stop"}`, true},
		{` {"type": "stop", "at": 3} `, true},
		{`{"Type":"stop"}`, false},
		{`{"TYPE":"stop"}`, false},
		{`{"type":"STOP"}`, false},
		{`{"type":"go","type":"stop"}`, false},
		{`{"type":"stop"`, false},
		{`"stop"`, false},
		{``, false},
	} {
		if got := liveroutes.IsStopFrame([]byte(tc.frame)); got != tc.stop {
			t.Errorf("%q: stop %v, want %v", tc.frame, got, tc.stop)
		}
	}
}
