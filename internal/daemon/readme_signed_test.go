package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/docs"
	"boxd/engine/attest"
	"boxd/internal/records"
	"boxd/pipelines/retrieval"
	"boxd/pipelines/retrieval/chunker"
)

// TestReadmeSignedFormats runs README's verify_signed.py, written from
// README's "Signed formats" alone, on a live box's signed record, search
// answers (a v2 index, and a v1 index as made before), read document and
// read chart, with ids and text holding <, >, & and non-ASCII; changed
// ones and another key fail. GET /attest/signing-key lists every format.
func TestReadmeSignedFormats(t *testing.T) {
	python, script := docs.PythonScript(t, "# verify_signed.py", "cryptography.hazmat.primitives.asymmetric.ed25519")
	ts, _ := retrievalServer(t, nil)
	tok := session(t, ts, "clinical")
	sk := ts.do(t, call{method: "GET", path: "/attest/signing-key"}).json(t)
	pub := sk["pubkey"].(string)
	var formats []string
	for _, f := range sk["formats"].([]any) {
		formats = append(formats, f.(string))
	}
	for _, f := range []string{"service.record.v1", "service.model-call.v1", "service.retrieval.search.v1", "service.docreader-receipt.v1", "service.docreader-chart-receipt.v1"} {
		if !slices.Contains(formats, f) {
			t.Errorf("GET /attest/signing-key does not list %s: %v", f, formats)
		}
	}
	if c := sk["canonical"].(string); strings.Contains(c, "numbers in signed records are strings;") || !strings.Contains(c, "integers") {
		t.Errorf("canonical rule: %s", c)
	}
	dir := t.TempDir()
	n := 0
	verify := func(name string, body []byte, key string) (string, bool) {
		n++
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(python, script, p, key).CombinedOutput()
		return string(out), err == nil
	}
	other, _, _ := attest.LoadOrCreateKey(t.TempDir())
	expect := func(name string, body []byte, want string, changes map[string][2]string) {
		t.Helper()
		if out, ok := verify(name, body, pub); !ok || !strings.Contains(out, want) {
			t.Errorf("%s: the README's verifier does not verify it: %s", name, out)
		}
		if out, ok := verify(name+" other key", body, other.PublicKeyHex()); ok || !strings.Contains(out, "not signed by this box's key") {
			t.Errorf("%s with another key: %s", name, out)
		}
		for what, c := range changes {
			changed := bytes.Replace(body, []byte(c[0]), []byte(c[1]), 1)
			if bytes.Equal(changed, body) {
				t.Fatalf("%s, %s: nothing to change (%q)", name, what, c[0])
			}
			if out, ok := verify(name+" "+what, changed, pub); ok || !strings.Contains(out, "NOT VERIFIED") && !strings.Contains(out, "InvalidSignature") {
				t.Errorf("%s, %s: %s", name, what, out)
			}
		}
	}

	// A signed record, as tool routes return them (signed by this box).
	run := records.NewRun("site-check", "sc_1", map[string]string{"domain": "r&d.example <test>"})
	run.AddText("robots", "User-agent: *\nAllow: /café & <more>", map[string]any{"status": "200", "list": []any{"a", true, nil}})
	run.AddText("summary", "two entries", nil)
	rec, err := run.Sign(ts.deps.Key, time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := json.Marshal(map[string]any{"record": rec})
	if v := ts.do(t, call{method: "POST", path: "/record/verify", body: json.RawMessage(rb)}); !strings.Contains(string(v.body), `"ok":true`) {
		t.Fatalf("the box does not verify its record: %s", v.body)
	}
	expect("record", rb, "verified record sc_1 2 entries", map[string][2]string{"entry text": {"Allow", "Deny"}, "entry data": {`"200"`, `"404"`}})

	// A search answer over a v2 index.
	docsIn := []map[string]any{
		{"id": "R&D <manual>", "text": "The pump loses pressure when the filter clogs.\n\nBleed the air after a filter change & restart the pump."},
		{"id": "notes-é", "text": "Roof shingles crack in the cold. The chimney needs sealant. The pump room floods in spring."},
	}
	ix := ts.do(t, call{method: "POST", path: "/retrieval/index", token: tok, body: map[string]any{"documents": docsIn, "synthetic": true}})
	if ix.status != 200 {
		t.Fatalf("index: %d %s", ix.status, ix.body)
	}
	var ir retrieval.IndexResponse
	decodeInto(t, ix, &ir)
	if ir.Index.Format != "boxd.retrieval.index.v2" {
		t.Fatalf("index format %q", ir.Index.Format)
	}
	sr := ts.do(t, call{method: "POST", path: "/retrieval/search", token: tok, body: map[string]any{"index": ir.Index.Hash, "query": "pump pressure filter", "k": 3}})
	if sr.status != 200 {
		t.Fatalf("search: %d %s", sr.status, sr.body)
	}
	var ans retrieval.SearchResponse
	decodeInto(t, sr, &ans)
	if len(ans.Results) < 2 {
		t.Fatalf("%d results", len(ans.Results))
	}
	expect("search", sr.body, "verified search "+ans.Receipt.ID+" ", map[string][2]string{
		"chunk text": {"loses pressure", "keeps pressure"},
		"proof":      {ans.Results[0].Proof.Path[0], strings.Repeat("0", 64)},
		"query hash": {ans.Receipt.QuerySHA256, strings.Repeat("1", 64)},
	})

	// A search answer over a v1 index (no format: made before v2).
	var in []retrieval.Document
	_ = json.Unmarshal(mustMarshalJSON(docsIn), &in)
	v1, err := retrieval.BuildIndexWith(in, retrieval.ChunkerSettings{Version: "boxd-chunker-1", MaxChars: 1200}, retrieval.ModelRef{Repo: "e<&>", Revision: "1"}, "", chunker.Counters{})
	if err != nil {
		t.Fatal(err)
	}
	if err := v1.Prepare(context.Background(), ts.Retrieval.Embedder); err != nil {
		t.Fatal(err)
	}
	p := retrieval.Params{K: 2, Mode: retrieval.ModeBM25}
	res, err := v1.Search(context.Background(), "pump", p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := retrieval.SignSearch(ts.deps.Key, v1, "pump", p, res, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := retrieval.SearchResponse{Index: rc.Index, Receipt: rc, ModelCalls: []retrieval.ModelCallReceipt{}}
	for i, r := range res {
		pr, _ := v1.Prove(r.Pos)
		old.Results = append(old.Results, retrieval.SearchHit{ReceiptResult: rc.Results[i], Text: r.Chunk.Text, Proof: pr})
	}
	expect("search v1", mustMarshalJSON(old), "verified search "+rc.ID+" ", nil)

	// A read document and a read chart.
	d := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital"}})
	if d.status != 200 {
		t.Fatalf("read: %d %s", d.status, d.body)
	}
	expect("document", d.body, "verified document ", map[string][2]string{"element text": {"Referral", "Reversal"}, "page": {`"width":`, `"width":1`}})

	// A search answer over an index of scans: each result's anchor is in
	// the receipt's result and in its leaf.
	sx := ts.do(t, call{method: "POST", path: "/retrieval/index-scans", token: tok,
		body: map[string]any{"documents": []map[string]any{{"name": "referral <&>", "document": json.RawMessage(d.body)}}, "synthetic": true}})
	if sx.status != 200 {
		t.Fatalf("index-scans: %d %s", sx.status, sx.body)
	}
	var sxr retrieval.IndexResponse
	decodeInto(t, sx, &sxr)
	ss := ts.do(t, call{method: "POST", path: "/retrieval/search", token: tok, body: map[string]any{"index": sxr.Index.Hash, "query": "atorvastatin", "mode": "bm25", "k": 3}})
	if ss.status != 200 {
		t.Fatalf("search scans: %d %s", ss.status, ss.body)
	}
	var sans retrieval.SearchResponse
	decodeInto(t, ss, &sans)
	if len(sans.Results) == 0 || sans.Results[0].Anchor == nil {
		t.Fatalf("scans search: %s", ss.body)
	}
	expect("search scans", ss.body, "verified search "+sans.Receipt.ID+" ", map[string][2]string{
		"answer anchor": {`"bbox":[`, `"bbox":[9`},
	})
	// The receipt signed again over a moved box: the leaf no longer leads
	// to the corpus root.
	moved := sans
	moved.Receipt = &retrieval.SearchReceipt{}
	*moved.Receipt = *sans.Receipt
	moved.Results = append([]retrieval.SearchHit{}, sans.Results...)
	moved.Receipt.Results = append([]retrieval.ReceiptResult{}, sans.Receipt.Results...)
	a := *sans.Results[0].Anchor
	a.BBox[0]++
	moved.Results[0].Anchor, moved.Receipt.Results[0].Anchor = &a, &a
	var body map[string]json.RawMessage
	_ = json.Unmarshal(mustMarshalJSON(moved.Receipt), &body)
	delete(body, "sig")
	sig, _, err := ts.deps.Key.Sign(retrieval.SearchFormat, json.RawMessage(mustMarshalJSON(body)))
	if err != nil {
		t.Fatal(err)
	}
	moved.Receipt.Sig = sig
	if out, ok := verify("search scans moved", mustMarshalJSON(moved), pub); ok || !strings.Contains(out, "proof") {
		t.Errorf("a moved box signed again: %s", out)
	}
	c := ts.do(t, call{method: "POST", path: "/docreader/chart", token: tok, body: map[string]any{"sample": "km-survival"}})
	if c.status != 200 {
		t.Fatalf("chart: %d %s", c.status, c.body)
	}
	expect("chart", c.body, "verified chart ", map[string][2]string{"chart": {`"median":`, `"median":1`}})
	if n < 10 {
		t.Errorf("only %d runs", n)
	}
}

func mustMarshalJSON(v any) []byte { b, _ := json.Marshal(v); return b }
