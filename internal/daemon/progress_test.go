package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/internal/run"
	"boxd/pipelines/chat"
	"boxd/pipelines/fill"
	"boxd/pipelines/llmcall"
	"boxd/web"
	"boxd/web/api"
)

// shortProgress makes streamed runs report progress after ms of silence
// for the rest of the test.
func shortProgress(t *testing.T, every time.Duration) {
	t.Helper()
	old := api.RunProgress
	api.RunProgress = every
	t.Cleanup(func() { api.RunProgress = old })
}

// streamEvents are a stream's events, each as its JSON fields.
func streamEvents(t *testing.T, body []byte) []map[string]json.RawMessage {
	t.Helper()
	var evs []map[string]json.RawMessage
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func typesOf(evs []map[string]json.RawMessage) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, str(ev["type"]))
	}
	return out
}

// keysOf is the sorted keys of a JSON object, less the event envelope's.
func keysOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %.300s", err, raw)
	}
	var ks []string
	for k := range m {
		if k != "type" && k != "at_ms" {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// slowAnswers answers as sampleAnswers after a wait: a model stage long
// enough to fall silent.
type slowAnswers struct{ wait time.Duration }

func (a slowAnswers) Propose(ctx context.Context, f []fill.Field, l []fill.Line) ([]fill.Proposal, string, *llmcall.Result, error) {
	select {
	case <-time.After(a.wait):
	case <-ctx.Done():
		return nil, "", nil, ctx.Err()
	}
	return sampleAnswers{}.Propose(ctx, f, l)
}

// progressBody is a progress event as a client reads it.
type progressBody struct {
	Type      string `json:"type"`
	AtMS      int64  `json:"at_ms"`
	Stage     string `json:"stage"`
	ElapsedMS int64  `json:"elapsed_ms"`
	StageMS   int64  `json:"stage_ms"`
	Tokens    int64  `json:"tokens"`
	Done      int    `json:"done"`
	Total     int    `json:"total"`
	Unit      string `json:"unit"`
}

func progressOf(t *testing.T, evs []map[string]json.RawMessage) []progressBody {
	t.Helper()
	var out []progressBody
	for _, ev := range evs {
		if str(ev["type"]) != run.TypeProgress {
			continue
		}
		raw, _ := json.Marshal(ev)
		var p progressBody
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if got := keysOf(t, raw); !slices.Equal(got, []string{"done", "elapsed_ms", "stage", "stage_ms", "tokens", "total", "unit"}) {
			t.Errorf("progress event fields %v", got)
		}
		out = append(out, p)
	}
	return out
}

// TestFillStreamProgress: a streamed /fill/run whose model stage is silent
// for 300 ms sends progress events (interval shortened to 50 ms) naming
// the stage, before the stream's done and never after it; the contract's
// frame events come as PNG screenshots, of the form as loaded and as
// filled; the same run with stream: false answers as before, with no
// progress in it.
func TestFillStreamProgress(t *testing.T) {
	shortProgress(t, 50*time.Millisecond)
	ts := fillServer(t, nil, func(s *Box) { s.Fill.Ask = slowAnswers{300 * time.Millisecond} })
	tok := session(t, ts, fill.Vertical)
	r := ts.do(t, call{method: "POST", path: "/fill/run", token: tok, body: map[string]any{"sample_id": "clinic-intake", "stream": true}})
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	evs := streamEvents(t, r.body)
	types := typesOf(evs)
	if len(types) == 0 || types[len(types)-1] != "done" {
		t.Fatalf("events %v: the last is not done", types)
	}
	var inModel []progressBody
	for _, p := range progressOf(t, evs) {
		if p.Stage == "model" {
			inModel = append(inModel, p)
		}
		if p.ElapsedMS != p.AtMS || p.StageMS > p.ElapsedMS {
			t.Errorf("progress %+v", p)
		}
	}
	if len(inModel) == 0 {
		t.Fatalf("no progress event in a silent model stage of 300 ms: %v", types)
	}
	var frames []string
	for _, ev := range evs {
		if str(ev["type"]) != "frame" {
			continue
		}
		png, err := base64.StdEncoding.DecodeString(str(ev["png_b64"]))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("a frame that is not a PNG: %v", err)
		}
		frames = append(frames, str(ev["stage"]))
	}
	if strings.Join(frames, " ") != "page filled" {
		t.Errorf("frames %v, want page and filled", frames)
	}
	if i, j := slices.Index(types, "ready"), slices.Index(types, "frame"); i < 0 || j != i+1 {
		t.Errorf("the page's frame does not follow ready: %v", types)
	}

	plain := ts.do(t, call{method: "POST", path: "/fill/run", token: tok, body: map[string]any{"sample_id": "clinic-intake"}})
	if plain.status != 200 || bytes.Contains(plain.body, []byte("progress")) || strings.HasPrefix(plain.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream false: %d %s", plain.status, plain.body)
	}
	if got, want := keysOf(t, plain.body), []string{"check", "held_requests", "prompt_sha256", "record", "review", "run_id", "translation"}; !slices.Equal(got, want) {
		t.Errorf("stream false answer's fields %v, want %v", got, want)
	}
	if done := evs[len(evs)-1]; !slices.Equal(keysOf(t, mustJSON(t, done)), keysOf(t, plain.body)) {
		t.Errorf("the done event's fields %v, the answer's %v", keysOf(t, mustJSON(t, done)), keysOf(t, plain.body))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFillStreamReceipt: a streamed /fill/run with the chat model sends
// the model call's receipt event, the receipt the stream: false answer
// names in x-service-receipt.
func TestFillStreamReceipt(t *testing.T) {
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 4096, Parallel: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	ts := fillServer(t, nil, func(s *Box) {
		s.Chat = &chat.Service{Engine: e, ModelID: "tiny-chat", WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts}
		s.Fill.Chat, s.Fill.Ask = s.Chat, nil
	})
	tok := session(t, ts, fill.Vertical)
	// One field: the tiny model's answer is short (its bound is 304 tokens).
	body := map[string]any{"target": map[string]string{"html": `<form><label>Full name <input name="name"></label></form>`},
		"sources": []any{map[string]string{"name": "id.txt", "text": "Name: Ana Silva"}}, "stream": true}
	r := ts.do(t, call{method: "POST", path: "/fill/run", token: tok, body: body})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	evs := streamEvents(t, r.body)
	types := typesOf(evs)
	var receipts []string
	for _, ev := range evs {
		if str(ev["type"]) == run.TypeReceipt {
			receipts = append(receipts, str(ev["id"]))
			if str(ev["model"]) != "tiny-chat" || str(ev["gateway_sig"]) == "" || str(ev["status"]) != "attested" {
				t.Errorf("receipt event %s", mustJSON(t, ev))
			}
		}
	}
	if len(receipts) != 1 || !strings.HasPrefix(receipts[0], "chatcmpl-") || types[len(types)-1] != "done" {
		t.Fatalf("receipts %v in %v", receipts, types)
	}
	typing := -1
	for k, typ := range types {
		if typ == "stage" {
			typing = k
		}
	}
	if i := slices.Index(types, run.TypeReceipt); i > typing {
		t.Errorf("the receipt does not come before the typing stage: %v", types)
	}
	body["stream"] = false
	plain := ts.do(t, call{method: "POST", path: "/fill/run", token: tok, body: body})
	if plain.status != 200 || !strings.HasPrefix(plain.header.Get("x-service-receipt"), "chatcmpl-") {
		t.Fatalf("stream false: %d x-service-receipt %q", plain.status, plain.header.Get("x-service-receipt"))
	}
}

// TestDocreaderStreamProgress: a streamed /docreader/read of a scanned
// page (OCR, far longer than the 50 ms the test sets) reports progress in
// pages, 0 of 1 before its page event; the page and done events are as
// before; stream: false answers the same document fields as the done
// event and no progress.
func TestDocreaderStreamProgress(t *testing.T) {
	shortProgress(t, 50*time.Millisecond)
	ts := start(t, nil, web.Probes{}, nil)
	tok := session(t, ts, "clinical")
	r := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "scanned-chart", "stream": true}})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	evs := streamEvents(t, r.body)
	types := typesOf(evs)
	var rest []string
	for _, typ := range types {
		if typ != run.TypeProgress {
			rest = append(rest, typ)
		}
	}
	if strings.Join(rest, " ") != "page done" {
		t.Fatalf("events %v", types)
	}
	var reading []progressBody
	for _, p := range progressOf(t, evs) {
		switch p.Stage {
		case run.StageStarting: // the sample opening
		case "pages":
			reading = append(reading, p)
		default:
			t.Errorf("progress in stage %q", p.Stage)
		}
	}
	if len(reading) == 0 {
		t.Fatalf("no progress event while a scanned page was read: %v", types)
	}
	if p := reading[0]; p.Unit != "pages" || p.Done != 0 || p.Total != 1 || p.Tokens != 0 {
		t.Errorf("progress while the page is read: %+v", p)
	}
	plain := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "scanned-chart"}})
	if plain.status != 200 || bytes.Contains(plain.body, []byte(`"progress"`)) || bytes.Contains(plain.body, []byte(`"stage_ms"`)) {
		t.Fatalf("stream false: %d %.300s", plain.status, plain.body)
	}
	if got, want := keysOf(t, plain.body), keysOf(t, mustJSON(t, evs[len(evs)-1])); !slices.Equal(got, want) {
		t.Errorf("stream false answer's fields %v, the done event's %v", got, want)
	}
}
