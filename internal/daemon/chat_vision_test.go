package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/gpu"
	"boxd/pipelines/chat"
	"boxd/web"
)

// visionServer runs the server with the tiny chat model and its tiny
// Gemma 3 vision projector.
func visionServer(t *testing.T) *chatEnv {
	t.Helper()
	return visionServerWith(t, configs.Defaults())
}

func visionServerWith(t *testing.T, cfg *configs.Config) *chatEnv {
	t.Helper()
	arbiter := gpu.NewArbiter()
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{
		Path: testmodels.Generated(t, testmodels.ChatFile), Projector: testmodels.Generated(t, testmodels.VisionFile),
		ContextLength: 4096, Parallel: 2, Threads: 1}, Arbiter: arbiter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	env := &chatEnv{engine: e}
	env.testServer = launch(t, cfg, web.Probes{LLMReady: func() bool { return true }, Queue: arbiter.Queued}, nil, func(s *Box) {
		s.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts, Meter: s.Server.LLMMeter()}
		s.DocReader.Chat = s.Chat
	})
	env.token = session(t, env.testServer, "code")
	return env
}

// TestDocreaderRereadRoute: POST /docreader/read on the scanned chart with
// a model that sees images streams the re-read's receipt event, then the
// page, then done; the document carries both readings of the line read
// under 0.90 and verifies, and the re-read's receipt is served.
func TestDocreaderRereadRoute(t *testing.T) {
	env := visionServer(t)
	tok := session(t, env.testServer, "clinical")
	r := env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "scanned-chart", "stream": true}})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var types []string
	var doc map[string]any
	var done json.RawMessage
	for _, line := range strings.Split(string(r.body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if ev["type"] != "progress" { // sent when the run is silent (a slow machine)
			types = append(types, ev["type"].(string))
		}
		if ev["type"] == "done" {
			doc, done = ev, json.RawMessage(data)
		}
	}
	if strings.Join(types, " ") != "receipt page done" {
		t.Fatalf("events %v", types)
	}
	sum, _ := doc["reread"].(map[string]any)
	if sum["candidates"] != 1.0 || sum["reread"] != 1.0 {
		t.Errorf("reread summary %v", sum)
	}
	var reading map[string]any
	for _, p := range doc["pages"].([]any) {
		for _, e := range p.(map[string]any)["elements"].([]any) {
			if rr, ok := e.(map[string]any)["reread"].(map[string]any); ok {
				reading = rr
			}
		}
	}
	if reading == nil || reading["source"] != "model" {
		t.Fatalf("no re-reading in %v", doc["pages"])
	}
	if rc := env.do(t, call{method: "GET", path: "/receipts/" + reading["receipt"].(string)}); rc.status != 200 {
		t.Errorf("the re-read's receipt: %d", rc.status)
	}
	if v := env.do(t, call{method: "POST", path: "/docreader/verify", body: map[string]any{"document": done}}); v.status != 200 || v.json(t)["ok"] != true {
		t.Errorf("verify: %d %s", v.status, v.body)
	}
}

// pngOf is a w × h PNG whose colours vary with seed.
func pngOf(t *testing.T, w, h int, seed uint8) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x*3) + seed, uint8(y*5) ^ seed, seed * 7, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// imageMessages is one user message: text, an image per URL, more text.
func imageMessages(urls ...string) []any {
	parts := []any{map[string]any{"type": "text", "text": "What is in this picture?"}}
	for _, u := range urls {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": u, "detail": "auto"}})
	}
	parts = append(parts, map[string]any{"type": "text", "text": " Answer briefly."})
	return []any{map[string]any{"role": "system", "content": "You describe pictures."}, map[string]any{"role": "user", "content": parts}}
}

// TestChatImageParts: POST /v1/chat/completions reads image_url parts
// (data: URLs) through the model's vision projector, as OpenAI's and
// ollama's APIs do: the image's tokens count in usage, the same image
// answers the same at temperature 0, and the receipt names the image by
// the SHA-256 of the file sent.
func TestChatImageParts(t *testing.T) {
	env := visionServer(t)
	pic := pngOf(t, 120, 90, 3)
	ask := func(msgs []any) map[string]any {
		t.Helper()
		r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"messages": msgs, "max_tokens": 6, "temperature": 0})})
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return r.json(t)
	}
	usage := func(resp map[string]any) float64 { return resp["usage"].(map[string]any)["prompt_tokens"].(float64) }
	content := func(resp map[string]any) string {
		return resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	}
	textOnly := ask(imageMessages())
	one := ask(imageMessages(dataURL("image/png", pic)))
	if got, min := usage(one), usage(textOnly)+float64(testmodels.TinyVision().Tokens()); got < min {
		t.Errorf("prompt tokens with an image %v; want at least the text's %v plus %d image tokens", got, usage(textOnly), testmodels.TinyVision().Tokens())
	}
	again := ask(imageMessages(dataURL("image/png", pic)))
	if content(again) != content(one) || usage(again) != usage(one) {
		t.Errorf("the same image twice at temperature 0: %q then %q", content(one), content(again))
	}
	two := ask(imageMessages(dataURL("image/png", pic), dataURL("image/png", pngOf(t, 40, 60, 9))))
	if usage(two) != usage(one)+(usage(one)-usage(textOnly)) {
		t.Errorf("two images: %v prompt tokens; one: %v; none: %v", usage(two), usage(one), usage(textOnly))
	}
	sum := sha256.Sum256(pic)
	rec := env.do(t, call{method: "GET", path: "/receipts/" + one["id"].(string)}).json(t)
	params, _ := rec["receipt"].(map[string]any)["params"].(map[string]any)
	if params["image_sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("receipt params %v; want image_sha256 %x", params, sum)
	}
	// A bare string image_url (some clients) is read too, and streaming works.
	bare := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "image_url", "image_url": dataURL("image/png", pic)}, map[string]any{"type": "text", "text": "Describe."}}}}
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"messages": bare, "max_tokens": 3, "stream": true})})
	if r.status != 200 {
		t.Fatalf("streamed, bare image_url: %d %s", r.status, r.body)
	}
	if chunks, done := readSSE(t, bytes.NewReader(r.body)); !done || len(chunks) == 0 {
		t.Errorf("streamed: %d chunks, done %v", len(chunks), done)
	}
}

// hugePNG is a valid small PNG whose header claims w × h pixels.
func hugePNG(t *testing.T, w, h uint32) []byte {
	b := pngOf(t, 4, 4, 1)
	ihdr := b[8+8 : 8+8+13] // after the signature and the chunk's length and type
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	binary.BigEndian.PutUint32(b[8+8+13:], crc32.ChecksumIEEE(b[8+4:8+8+13]))
	return b
}

// TestChatImageRefusals: what an image part may not be, each with the
// status and a message that says what to send instead.
func TestChatImageRefusals(t *testing.T) {
	env := visionServer(t)
	pic := dataURL("image/png", pngOf(t, 16, 16, 1))
	user := func(parts ...any) []any { return []any{map[string]any{"role": "user", "content": parts}} }
	img := func(u string) any { return map[string]any{"type": "image_url", "image_url": map[string]any{"url": u}} }
	text := func(s string) any { return map[string]any{"type": "text", "text": s} }
	five := user(img(pic), img(pic), img(pic), img(pic), img(pic), text("?"))
	for _, c := range []struct {
		name   string
		msgs   []any
		status int
		want   string
	}{
		{"remote URL", user(img("https://example.com/cat.png"), text("?")), 400, "does not fetch image URLs"},
		{"not a data URL", user(img("cat.png"), text("?")), 400, "must be a data: URL"},
		{"empty URL", user(img(""), text("?")), 400, "image_url.url is empty"},
		{"not base64", user(img("data:image/png,abc"), text("?")), 400, "must be base64"},
		{"bad base64", user(img("data:image/png;base64,@@@"), text("?")), 400, "does not decode"},
		{"unsupported type", user(img(dataURL("image/bmp", []byte("BM"))), text("?")), 400, "image/bmp\\\"; send PNG, JPEG, WebP or GIF"},
		{"not an image", user(img(dataURL("image/png", []byte("plain text"))), text("?")), 400, "does not decode"},
		{"too many pixels", user(img(dataURL("image/png", hugePNG(t, 10000, 10000))), text("?")), 413, "10000 × 10000 pixels"},
		{"too many images", five, 400, "5 images; the most is 4"},
		{"image in an assistant message", []any{map[string]any{"role": "assistant", "content": []any{img(pic)}}, map[string]any{"role": "user", "content": "?"}}, 400, "user messages only"},
		{"marker in the text", user(img(pic), text("see "+llm.ImageMarker)), 400, "remove it"},
		{"legacy marker in another message", []any{map[string]any{"role": "system", "content": []any{text("<__image__>")}}, map[string]any{"role": "user", "content": []any{img(pic), text("?")}}}, 400, "remove it"},
		{"bad detail", user(map[string]any{"type": "image_url", "image_url": map[string]any{"url": pic, "detail": "max"}}), 400, "detail"},
		{"no url", user(map[string]any{"type": "image_url", "image_url": map[string]any{}}), 400, "needs image_url"},
		{"audio part", user(map[string]any{"type": "input_audio"}), 400, "text and image_url parts"},
	} {
		r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"messages": c.msgs, "max_tokens": 2})})
		if r.status != c.status || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, r.status, r.body, c.status, c.want)
		}
	}
	// A text-only model says so.
	plain := chatServer(t, nil, 1024, 1, 0)
	r := plain.do(t, call{method: "POST", path: "/v1/chat/completions", token: plain.token, body: chatBodyJSON(map[string]any{"messages": user(img(pic), text("?")), "max_tokens": 2})})
	if r.status != 400 || !strings.Contains(string(r.body), "models.llm.projector") {
		t.Errorf("text-only model: %d %s", r.status, r.body)
	}
	// The marker in a request without images is plain text.
	r = plain.do(t, call{method: "POST", path: "/v1/chat/completions", token: plain.token, body: chatBodyJSON(map[string]any{"messages": []any{map[string]any{"role": "user", "content": "what is " + llm.ImageMarker + "?"}}, "max_tokens": 2})})
	if r.status != 200 {
		t.Errorf("a marker as text without images: %d %s", r.status, r.body)
	}
}

// TestDocreaderChartModelRoute: POST /docreader/chart with method model
// on a box whose model sees images answers the model's reading, marked
// so, with its receipt listed and served, and the result verifies.
func TestDocreaderChartModelRoute(t *testing.T) {
	env := visionServer(t)
	tok := session(t, env.testServer, "clinical")
	r := env.do(t, call{method: "POST", path: "/docreader/chart", token: tok, body: map[string]any{"sample": "km-survival", "method": "model"}})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	out := r.json(t)
	recs, _ := out["receipts"].([]any)
	if out["method"] != "model" || !strings.Contains(out["note"].(string), "model's reading") || len(recs) != 1 {
		t.Fatalf("method %v note %v receipts %v", out["method"], out["note"], out["receipts"])
	}
	rid := recs[0].(map[string]any)["id"].(string)
	if rc := env.do(t, call{method: "GET", path: "/receipts/" + rid}); rc.status != 200 {
		t.Errorf("the reading's receipt: %d", rc.status)
	}
	if h := r.header.Get("x-service-receipt"); h != rid {
		t.Errorf("x-service-receipt %q, want the model call's %s", h, rid)
	}
	if v := env.do(t, call{method: "POST", path: "/docreader/chart/verify", body: map[string]any{"chart": json.RawMessage(r.body)}}); v.status != 200 || v.json(t)["ok"] != true {
		t.Errorf("verify: %d %s", v.status, v.body)
	}
}

// TestDocreaderRereadNeedsVision: reread: true on a box whose chat model
// does not see images is 503 naming the setting; without it the read
// answers 200 and says why nothing was re-read.
func TestDocreaderRereadNeedsVision(t *testing.T) {
	env := chatServer(t, nil, 1024, 1, 0)
	tok := session(t, env.testServer, "clinical")
	r := env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "scanned-chart", "reread": true}})
	if r.status != 503 || !strings.Contains(string(r.body), "models.llm.projector") {
		t.Errorf("reread true, blind model: %d %s", r.status, r.body)
	}
	r = env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "scanned-chart"}})
	if r.status != 200 || !strings.Contains(string(r.body), "does not see images") {
		t.Errorf("a plain read, blind model: %d %s", r.status, r.body)
	}
}

// TestDocreaderBudget402: a reading's model calls spend the token's
// budget. With it used up, a read that needs the model (schema, or chart
// method model) is 402 naming the budget; a plain read still answers 200,
// its re-reads skipped with the reason.
func TestDocreaderBudget402(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 1
	env := visionServerWith(t, cfg)
	tok := session(t, env.testServer, "clinical")
	// The first read's re-read spends the one token.
	r := env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "scanned-chart"}})
	if r.status != 200 {
		t.Fatalf("first read: %d %s", r.status, r.body)
	}
	r = env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "scanned-chart"}})
	if r.status != 200 || !strings.Contains(string(r.body), "budget ran out") {
		t.Errorf("a plain read with the budget used up: %d %s", r.status, r.body)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	r = env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital", "forms": true, "schema": schema}})
	if r.status != 402 || !strings.Contains(string(r.body), "budget") {
		t.Errorf("a schema read with the budget used up: %d %s", r.status, r.body)
	}
	r = env.do(t, call{method: "POST", path: "/docreader/chart", token: tok, body: map[string]any{"sample": "km-survival", "method": "model"}})
	if r.status != 402 {
		t.Errorf("a model chart with the budget used up: %d %s", r.status, r.body)
	}
}
