package daemon

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/receipts"
	"boxd/internal/records"
	"boxd/internal/strictjson"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/doc"
	"boxd/pipelines/fill"
	"boxd/web/api"
)

// FuzzDecodeBody: every declared route's body type read through
// api.DecodeJSON (the JSON body reader of every route without uploads, with
// strictjson's key checks) and then its own Validate, whatever the
// bytes: no panic; a refusal is a 400 or 413 with a message; an accepted
// body is one JSON value with no key twice, is accepted again the same
// way, and a strict accept is a lenient accept.
func FuzzDecodeBody(f *testing.F) {
	for i, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"stream":true,"stop":["a","b"]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}],"stop":"x"}`,
		`{"vertical":"clinical","script_id":"x","speed":2}`,
		`{"file_b64":"","synthetic":true,"forms":true,"schema":{"type":"object","properties":{"a":{"type":"string"}}}}`,
		`{"document":{"id":"d","receipt":{}}}`,
		`{"image_b64":"","synthetic":true,"method":"hybrid","hint":"x"}`,
		`{"chart":{"receipt":{"v":"x"}}}`,
		`{"target":{"html":"<input name=a>"},"sources":[{"name":"a","text":"b"}],"review_lang":"de"}`,
		`{"person":{"name":"Ana"},"confirm":true,"acknowledge_flags":[1,2]}`,
		`{"record":{"format":"service.record.v1","entries":[]}}`,
		`{"file_b64":"","synthetic":true}`,
		`{"vertical":"fill-and-stop"}`,
		`{"label":"clinic app","verticals":["clinical"]}`,
		`{"index":"i","documents":[{"id":"a","text":"b"}]}`,
		`{"index":"i","scans":[{}]}`,
		`{"index":"i","query":"q","k":3}`,
		`{"index":"i","question":"q"}`,
		`{"receipt":{},"chunks":[],"documents":[]}`,
		`{"model":"m","input":["a","b"],"encoding_format":"float","user":"u"}`,
		`{"model":"m","query":"q","documents":["a"],"top_n":1}`,
		`{"domain":"example.com","name":"Clinic"}`,
		`{"review":"great","rating":5,"business_name":"B","business_type":"dentist","reply":"thanks"}`,
		`{"kind":"image","prompt":"a cat","seconds":4}`,
		`{"a":1,"a":2}`, `{"Model":"x"}`, `{"messages":[{"role":"user","content":"hi","ROLE":"x"}]}`,
		`{"\u006dodel":"x","model":"y"}`, `{} {}`, `[]`, `null`, ``, `{"x":` + strings.Repeat("[", 5000) + `}`,
	} {
		f.Add(uint8(i), []byte(s))
	}
	// Every route declared with a body, from the assembled box: a new
	// family's bodies are fuzzed without being listed here.
	cfg := configs.Defaults()
	box, _ := buildBox(f, boxOptions{cfg: cfg})
	type bodyOf struct {
		name    string
		new     func() any
		lenient bool
	}
	var fuzzBodies []bodyOf
	for _, rt := range box.Server.API().Declared() {
		if rt.Body > 0 {
			fuzzBodies = append(fuzzBodies, bodyOf{rt.Method + " " + rt.Path, rt.NewBody, rt.Lenient})
		}
	}
	if len(fuzzBodies) < 25 {
		f.Fatalf("only %d declared routes with bodies", len(fuzzBodies))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		b := fuzzBodies[int(which)%len(fuzzBodies)]
		decode := func(lenient bool) (any, *problem.Error) {
			dst := b.new()
			r := httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader(data))
			r.Header.Set("Content-Type", "application/json")
			if lenient {
				return dst, api.DecodeOpenAI(httptest.NewRecorder(), r, 64<<10, dst)
			}
			return dst, api.DecodeJSON(httptest.NewRecorder(), r, 64<<10, dst)
		}
		dst, err := decode(b.lenient)
		if err != nil {
			if (err.Kind != problem.Invalid && err.Kind != problem.TooLarge) || err.Message == "" {
				t.Fatalf("%s: refusal %+v, want a 400 or 413 with a message", b.name, err)
			}
			if _, err2 := decode(b.lenient); err2 == nil || err2.Message != err.Message {
				t.Fatalf("%s: refused %q, then %v", b.name, err.Message, err2)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("%s: accepted a body that is not JSON: %q", b.name, data)
		}
		if d := strictjson.Duplicate(data); d != nil {
			t.Fatalf("%s: accepted a key twice: %v", b.name, d)
		}
		if !b.lenient {
			if _, err := decode(true); err != nil {
				t.Fatalf("%s: strict accepts, lenient refuses: %v", b.name, err)
			}
		}
		if v, ok := dst.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				if p, ok := problem.As(err); !ok || p.Message == "" {
					t.Fatalf("%s: Validate gave %v (%T), want a problem", b.name, err, err)
				}
			}
		}
		if fb, ok := dst.(*fill.Body); ok {
			if _, err := fb.Validate(); err != nil {
				if p, ok := problem.As(err); !ok || p.Message == "" {
					t.Fatalf("fill.Body: Validate gave %v (%T), want a problem", err, err)
				}
			}
		}
	})
}

// fuzzKey is a fixed signing key, so that the seeds signed in every fuzz
// worker verify in all of them.
func fuzzKey() *attest.Key {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 34
	return attest.NewKey(ed25519.NewKeyFromSeed(seed))
}

// fuzzServer is a server over a fresh state directory (no models, no
// network), for requests sent straight to its handler.
func fuzzServer(f *testing.F, key *attest.Key) *Box {
	cfg := configs.Defaults()
	box, _ := buildBox(f, boxOptions{cfg: cfg, deps: func(d *Deps) {
		d.Key = key
		d.Receipts = receipts.New(key, d.Platform.Store(), cfg, nil)
	}})
	return box
}

// verifyRoutes are the public routes that verify what a caller sends.
var verifyRoutes = []string{"/record/verify", "/flight/verify", "/docreader/verify", "/docreader/chart/verify", "/retrieval/verify"}

// FuzzVerifyRoutes: the verification routes, anyone's to call, answered
// by the real server (admission, body reading, the verifiers) for any
// body and Content-Type: never a 5xx, always a JSON answer, and a 200
// only for a JSON body.
func FuzzVerifyRoutes(f *testing.F) {
	key := fuzzKey()
	now := time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC)
	run := records.NewRun("site-check", "sc_1", map[string]string{"domain": "example.com"})
	run.AddText("robots", "User-agent: *\nAllow: /", map[string]any{"status": "200"})
	rec, err := run.Sign(key, now)
	if err != nil {
		f.Fatal(err)
	}
	recJSON, _ := json.Marshal(map[string]any{"record": rec})
	d := &doc.Document{ID: "doc_1", File: doc.FileInfo{SHA256: strings.Repeat("a", 64), Type: "application/pdf", Bytes: 10, Pages: 1},
		Pages: []doc.Page{{Page: 1, Width: 10, Height: 10, Source: doc.PageTextLayer, PixelSHA256: strings.Repeat("b", 64),
			Elements: []doc.Element{{ID: "p1-e1", Page: 1, Kind: doc.KindText, BBox: [4]int{1, 1, 5, 5}, Text: "Hello", Source: doc.SourceParser, ConfBP: 10000}}}},
		Fields: []doc.Field{}, Models: []doc.ModelRef{}}
	if err := doc.Sign(key, d, doc.Revisions{Parser: "mupdf", Layout: "1", OCR: "none"}, nil, true); err != nil {
		f.Fatal(err)
	}
	docJSON, _ := json.Marshal(map[string]any{"document": d})
	cr := &chart.Result{ID: "ch_1", Image: chart.Image{SHA256: strings.Repeat("c", 64), Type: "image/png", Width: 4, Height: 4, PixelSHA256: strings.Repeat("d", 64)},
		Method: "geometry", ConfBP: 9000, Chart: &chart.Chart{}, Models: []any{}, Receipts: []chart.ModelCallRef{}}
	if err := chart.Sign(key, cr, chart.Revisions{Chart: "1", OCR: "none"}, true); err != nil {
		f.Fatal(err)
	}
	chartJSON, _ := json.Marshal(map[string]any{"chart": cr})
	for i, body := range [][]byte{recJSON, recJSON, docJSON, chartJSON, []byte(`{"receipt":{"v":"x"},"chunks":[{}],"documents":[{"id":"a","text":"b"}]}`)} {
		f.Add(uint8(i), "application/json", body)
	}
	f.Add(uint8(0), "", []byte(`{"record":{"a":1,"a":2}}`))
	f.Add(uint8(1), "text/plain", []byte(`{"record":{}}`))
	f.Add(uint8(2), "application/json; charset=utf-8", []byte(`{"document":null}`))
	f.Add(uint8(3), "application/vnd.x+json", []byte(`{"chart":[]}`))
	f.Add(uint8(4), "application/json", []byte(`{"receipt":{"a":1},"receipt":{}}`))
	s := fuzzServer(f, key)
	post := func(path, contentType string, body []byte) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Host, r.RemoteAddr = "127.0.0.1:8080", "127.0.0.1:40000"
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		s.Server.ServeHTTP(w, r)
		return w
	}
	// The signed seeds reach their verifiers and verify: the target
	// fuzzes the verifiers, not a refusal in front of them.
	for _, c := range []struct {
		path string
		body []byte
	}{{"/record/verify", recJSON}, {"/flight/verify", recJSON}, {"/docreader/verify", docJSON}, {"/docreader/chart/verify", chartJSON}} {
		if w := post(c.path, "application/json", c.body); w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"ok":true`)) {
			f.Fatalf("%s: %d %s", c.path, w.Code, w.Body.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, contentType string, body []byte) {
		path := verifyRoutes[int(which)%len(verifyRoutes)]
		w := post(path, contentType, body)
		if w.Code >= 500 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body.Bytes())
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/problem+json") {
			t.Fatalf("%s: %d with Content-Type %q", path, w.Code, ct)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s: %d answer is not JSON: %q", path, w.Code, w.Body.Bytes())
		}
		if w.Code == http.StatusOK {
			var v struct {
				OK *bool `json:"ok"`
			}
			if !json.Valid(body) || json.Unmarshal(w.Body.Bytes(), &v) != nil || v.OK == nil {
				t.Fatalf("%s: 200 %s for %q", path, w.Body.Bytes(), body)
			}
		}
	})
}
