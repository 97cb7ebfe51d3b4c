package daemon

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/pipelines/docreader/samples"
)

// TestRequireSynthetic: limits.require_synthetic. On (a hosted demo
// deployment), every route that takes the caller's own data answers 400
// naming the field and the setting unless synthetic is true, while
// samples and synthetic: true pass. Off (the default on a box), the same
// bodies are admitted, and what the caller said is signed either way:
// the document and chart receipts' synthetic, the embedding receipt's
// params.synthetic.
func TestRequireSynthetic(t *testing.T) {
	png, err := samples.ChartPNG()
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false} {
		cfg := configs.Defaults()
		cfg.Limits.RequireSynthetic = on
		ts, _ := retrievalServerWith(t, cfg, nil)
		tok := session(t, ts, "clinical")
		pdf := ts.do(t, call{method: "GET", path: "/docreader/samples/born-digital"})
		if pdf.status != 200 {
			t.Fatalf("sample: %d", pdf.status)
		}
		pdfB64 := base64.StdEncoding.EncodeToString(pdf.body)
		read := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital"}})
		if read.status != 200 {
			t.Fatalf("on=%v: a sample: %d %s", on, read.status, read.body)
		}
		docs := []map[string]string{{"id": "a", "text": "The pump at station P-12 loses pressure after a filter change."}}
		cases := []struct {
			path, vertical string
			body           map[string]any
			field          string
		}{
			{"/docreader/read", "clinical", map[string]any{"file_b64": pdfB64}, "file_b64"},
			{"/docreader/chart", "clinical", map[string]any{"image_b64": base64.StdEncoding.EncodeToString(png), "method": "geometry"}, "image_b64"},
			{"/retrieval/index", "clinical", map[string]any{"documents": docs}, "documents"},
			{"/retrieval/search", "clinical", map[string]any{"documents": docs, "query": "pump pressure"}, "documents"},
			{"/retrieval/index-scans", "clinical", map[string]any{"documents": []map[string]any{{"name": "letter", "document": json.RawMessage(read.body)}}}, "documents"},
			{"/hcc/read-chart", "clinical", map[string]any{"file_b64": pdfB64}, "file_b64"},
			{"/a11y/audit", "storefront-accessibility-pass", map[string]any{"html": "<p>hello</p>", "judge": false}, "html"},
		}
		for _, c := range cases {
			tk := tok
			if c.vertical != "clinical" {
				tk = session(t, ts, c.vertical)
			}
			r := ts.do(t, call{method: "POST", path: c.path, token: tk, body: c.body})
			refused := r.status == 400 && strings.Contains(string(r.body), "synthetic must be true with "+c.field) && strings.Contains(string(r.body), "limits.require_synthetic")
			if on && !refused {
				t.Errorf("on: %s without synthetic: %d %s; want 400 naming %s and limits.require_synthetic", c.path, r.status, r.body, c.field)
			}
			if !on && strings.Contains(string(r.body), "synthetic") && r.status == 400 {
				t.Errorf("off: %s without synthetic refused: %d %s", c.path, r.status, r.body)
			}
			if on {
				c.body["synthetic"] = false
				if r := ts.do(t, call{method: "POST", path: c.path, token: tk, body: c.body}); r.status != 400 || !strings.Contains(string(r.body), "synthetic must be true") {
					t.Errorf("on: %s with synthetic false: %d %s", c.path, r.status, r.body)
				}
			}
			if c.path == "/a11y/audit" || c.path == "/hcc/read-chart" {
				continue // these run a browser or the chat model; admission is what is tested
			}
			if !on && r.status != 200 {
				t.Errorf("off: %s without synthetic: %d %s, want 200", c.path, r.status, r.body)
				continue
			}
			c.body["synthetic"] = true
			ok := ts.do(t, call{method: "POST", path: c.path, token: tk, body: c.body})
			if ok.status != 200 {
				t.Errorf("on=%v: %s with synthetic true: %d %s", on, c.path, ok.status, ok.body)
				continue
			}
			checkRecorded(t, ts, c.path, ok.body, "true")
			if !on {
				checkRecorded(t, ts, c.path, r.body, "false")
			}
		}
	}
}

// checkRecorded: the answer's signed receipt says synthetic as want.
func checkRecorded(t *testing.T, ts *testServer, path string, body []byte, want string) {
	t.Helper()
	var a struct {
		Receipt struct {
			ID        string `json:"id"`
			Synthetic *bool  `json:"synthetic"`
		} `json:"receipt"`
		ModelCalls []struct {
			ID string `json:"id"`
		} `json:"model_calls"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	switch path {
	case "/docreader/read", "/docreader/chart":
		if a.Receipt.Synthetic == nil || (*a.Receipt.Synthetic && want != "true") || (!*a.Receipt.Synthetic && want != "false") {
			t.Errorf("%s: receipt synthetic %v, want %s", path, a.Receipt.Synthetic, want)
		}
	default: // retrieval: the embedding call's receipt (a search's first model call)
		id := a.Receipt.ID
		if path == "/retrieval/search" && len(a.ModelCalls) > 0 {
			id = a.ModelCalls[0].ID
		}
		rc := ts.do(t, call{method: "GET", path: "/receipts/" + id})
		if rc.status != 200 || !strings.Contains(string(rc.body), `"synthetic":"`+want+`"`) {
			t.Errorf("%s: embedding receipt %s: %d %s; want params.synthetic %s", path, id, rc.status, rc.body, want)
		}
	}
}
