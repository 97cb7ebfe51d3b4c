package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"boxd/pipelines/docreader"
	"boxd/web"
)

// TestDocreaderRoutes: a sample and an uploaded file read through the
// real server, the document verifies and a tampered one does not; the
// samples and info routes answer; every refusal has its status and says
// what to fix.
func TestDocreaderRoutes(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	tok := session(t, ts, "clinical")

	info := ts.do(t, call{method: "GET", path: "/docreader/info"})
	var in docreader.Info
	decodeInto(t, info, &in)
	if info.status != 200 || !in.Parser.Reachable || in.Receipt != docreader.ReceiptFormat || in.Limits["pages"] != 10 || in.Limits["file_bytes"] != 12<<20 || len(in.Samples) != 2 {
		t.Fatalf("info: %d %s", info.status, info.body)
	}

	pdf := ts.do(t, call{method: "GET", path: "/docreader/samples/born-digital"})
	if pdf.status != 200 || pdf.header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(string(pdf.body), "%PDF-") {
		t.Fatalf("sample: %d %s", pdf.status, pdf.header)
	}
	if r := ts.do(t, call{method: "GET", path: "/docreader/samples/nope"}); r.status != 404 || !strings.Contains(string(r.body), "born-digital") {
		t.Errorf("unknown sample: %d %s", r.status, r.body)
	}

	// The sample by id, then the same bytes uploaded.
	r := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital"}})
	if r.status != 200 {
		t.Fatalf("read sample: %d %s", r.status, r.body)
	}
	var d docreader.Document
	decodeInto(t, r, &d)
	if len(d.Pages) != 1 || d.Pages[0].Source != docreader.PageTextLayer || len(d.Pages[0].Elements) == 0 || d.Receipt.Sig == "" || d.Fields == nil || d.Models == nil {
		t.Fatalf("document: %s", r.body)
	}
	up := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok,
		body: map[string]any{"file_b64": base64.StdEncoding.EncodeToString(pdf.body), "synthetic": true}})
	var d2 docreader.Document
	decodeInto(t, up, &d2)
	if up.status != 200 || d2.File.SHA256 != d.File.SHA256 || d2.Pages[0].PixelSHA256 != d.Pages[0].PixelSHA256 || len(d2.Pages[0].Elements) != len(d.Pages[0].Elements) {
		t.Fatalf("upload: %d %s", up.status, up.body)
	}

	// forms: true adds the printed "Label: value" lines as fields, each
	// tied to its element and bound by the receipt.
	fr := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital", "forms": true}})
	var fd docreader.Document
	decodeInto(t, fr, &fd)
	if fr.status != 200 || len(fd.Fields) < 2 || fd.Fields[0].ID != "p1-f1" || fd.Fields[0].Name != "Patient" || fd.Fields[0].Element == "" || fd.Fields[0].ValueIn != docreader.ValueInElement {
		t.Fatalf("forms: %d %s", fr.status, fr.body)
	}
	fd.Fields[0].Value = "Someone Else"
	if v := ts.do(t, call{method: "POST", path: "/docreader/verify", body: map[string]any{"document": fd}}); v.status != 200 || v.json(t)["ok"] != false || !strings.Contains(string(v.body), "p1-f1") {
		t.Errorf("tampered field: %d %s", v.status, v.body)
	}

	v := ts.do(t, call{method: "POST", path: "/docreader/verify", body: map[string]any{"document": json.RawMessage(r.body)}})
	if v.status != 200 || v.json(t)["ok"] != true {
		t.Fatalf("verify: %d %s", v.status, v.body)
	}
	d.Pages[0].Elements[1].Text = "Referral to Oncology"
	v = ts.do(t, call{method: "POST", path: "/docreader/verify", body: map[string]any{"document": d}})
	if v.status != 200 || v.json(t)["ok"] != false || !strings.Contains(string(v.body), "element p1-e2 differs") {
		t.Errorf("tampered verify: %d %s", v.status, v.body)
	}

	for _, c := range []struct {
		name   string
		token  string
		body   any
		status int
		says   string
	}{
		{"no token", "", map[string]any{"sample": "born-digital"}, 401, "Bearer"},
		{"bad base64", tok, `{"file_b64": "!!!not base64", "synthetic": true}`, 400, "file_b64"},
		{"unknown type", tok, map[string]any{"file_b64": base64.StdEncoding.EncodeToString([]byte("just some text")), "synthetic": true}, 415, "not a PDF"},
		{"empty file", tok, map[string]any{"file_b64": "", "synthetic": true}, 400, "empty"},
		{"unknown field", tok, map[string]any{"sample": "born-digital", "pages": 3}, 400, "pages"},
		{"unknown sample", tok, map[string]any{"sample": "nope"}, 404, "born-digital"},
		{"schema not a schema", tok, map[string]any{"sample": "born-digital", "schema": []string{"name"}}, 400, "schema must be a JSON schema object"},
		{"schema without a chat model", tok, map[string]any{"sample": "born-digital", "schema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}, 503, "chat model"},
		{"over 12 MB", tok, map[string]any{"file_b64": base64.StdEncoding.EncodeToString(make([]byte, 12<<20+1)), "synthetic": true}, 413, "file_b64"},
	} {
		r := ts.do(t, call{method: "POST", path: "/docreader/read", token: c.token, body: c.body})
		if r.status != c.status || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: %d %s; want %d saying %q", c.name, r.status, r.body, c.status, c.says)
		}
	}
	for _, c := range []struct {
		body any
		says string
	}{
		{map[string]any{"document": map[string]any{"id": "x"}}, docreader.ReceiptFormat},
		{map[string]any{}, "document is missing"},
		{map[string]any{"document": "not an object"}, "not a document"},
	} {
		if r := ts.do(t, call{method: "POST", path: "/docreader/verify", body: c.body}); r.status != 400 || !strings.Contains(string(r.body), c.says) {
			t.Errorf("verify %v: %d %s; want 400 saying %q", c.body, r.status, r.body, c.says)
		}
	}

	// The body's rules are checked before the token's one-run lock (400
	// and 503 before 409), as admission's order says.
	pr, err := ts.deps.Platform.Authenticate(context.Background(), tok, "")
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := pr.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital", "pages": 2}}); r.status != 400 {
		t.Errorf("a bad body while the token runs another call: %d %s, want 400", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital"}}); r.status != 409 {
		t.Errorf("a good body while the token runs another call: %d %s, want 409", r.status, r.body)
	}
	unlock()
}

// TestDocreaderStream: stream: true answers server-sent events: a page
// event for each page as it is read, then done carrying the document,
// which verifies.
func TestDocreaderStream(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	tok := session(t, ts, "clinical")
	body, _ := json.Marshal(map[string]any{"sample": "scanned-chart", "stream": true})
	req, _ := http.NewRequest("POST", ts.url+"/docreader/read", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	all, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), all)
	}
	var types []string
	var done json.RawMessage
	for _, line := range strings.Split(string(all), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		var typ string
		_ = json.Unmarshal(ev["type"], &typ)
		if typ != "progress" { // sent when the run is silent (a slow machine)
			types = append(types, typ)
		}
		if typ == "page" {
			var p docreader.PageEvent
			_ = json.Unmarshal([]byte(data), &p)
			if p.Page != 1 || p.Source != docreader.PageOCR || p.Elements == 0 || p.PixelSHA256 == "" {
				t.Errorf("page event %s", data)
			}
		}
		if typ == "done" {
			done = json.RawMessage(data)
		}
	}
	if strings.Join(types, " ") != "page done" {
		t.Fatalf("events %v", types)
	}
	if v := ts.do(t, call{method: "POST", path: "/docreader/verify", body: map[string]any{"document": done}}); v.status != 200 || v.json(t)["ok"] != true {
		t.Errorf("the done event's document: %d %s", v.status, v.body)
	}
}
