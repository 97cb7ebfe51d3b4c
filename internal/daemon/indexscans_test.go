package daemon

import (
	"encoding/json"
	"strings"
	"testing"

	"boxd/pipelines/retrieval"
)

// TestRetrievalIndexScans: the born-digital sample read by the document
// reader, indexed by its elements, searched: each hit carries its page,
// box and element, the index hash commits to the layout, and the search
// receipt verifies. A document changed after reading, or sent twice
// under one name, is refused saying why.
func TestRetrievalIndexScans(t *testing.T) {
	ts, _ := retrievalServer(t, nil)
	tok := session(t, ts, "clinical")
	r := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital"}})
	if r.status != 200 {
		t.Fatalf("read: %d %s", r.status, r.body)
	}
	doc := json.RawMessage(r.body)
	ix := ts.do(t, call{method: "POST", path: "/retrieval/index-scans", token: tok,
		body: map[string]any{"documents": []map[string]any{{"name": "referral", "document": doc}}, "synthetic": true}})
	if ix.status != 200 {
		t.Fatalf("index-scans: %d %s", ix.status, ix.body)
	}
	var out retrieval.IndexResponse
	decodeInto(t, ix, &out)
	if out.Index.Layout == "" || out.Index.Chunker.Version != retrieval.ElementChunker.Version || out.Index.Chunker.MaxTokens != 512 || out.Index.NChunks < 10 || out.Receipt.ID == "" {
		t.Fatalf("index: %s", ix.body)
	}
	for _, c := range out.Index.Chunks {
		if c.Anchor == nil || c.Anchor.Page != 1 || c.Anchor.Element == "" || c.Anchor.BBox[2] == 0 {
			t.Errorf("chunk %s anchor %+v", c.ID, c.Anchor)
		}
	}
	s := ts.do(t, call{method: "POST", path: "/retrieval/search", token: tok, body: map[string]any{"index": out.Index.Hash, "query": "atorvastatin", "mode": "bm25", "k": 3}})
	if s.status != 200 {
		t.Fatalf("search: %d %s", s.status, s.body)
	}
	var sr retrieval.SearchResponse
	decodeInto(t, s, &sr)
	if len(sr.Results) == 0 || sr.Results[0].Anchor == nil || !strings.Contains(sr.Results[0].Text, "atorvastatin") || sr.Index.Layout != out.Index.Layout {
		t.Fatalf("search results: %s", s.body)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(s.body, &raw)
	var chunks []retrieval.ProvenChunk
	for _, h := range sr.Results {
		chunks = append(chunks, retrieval.ProvenChunk{Chunk: h.Chunk, Text: h.Text, Proof: h.Proof})
	}
	if v := ts.do(t, call{method: "POST", path: "/retrieval/verify", body: map[string]any{"receipt": raw["receipt"], "chunks": chunks}}); v.status != 200 || v.json(t)["ok"] != true {
		t.Errorf("verify: %d %s", v.status, v.body)
	}
	// The receipt binds each result's anchor: a moved box fails.
	moved := strings.Replace(string(raw["receipt"]), `"bbox":[`, `"bbox":[1`, 1)
	if v := ts.do(t, call{method: "POST", path: "/retrieval/verify", body: map[string]any{"receipt": json.RawMessage(moved), "chunks": chunks}}); v.status != 200 || v.json(t)["ok"] != false {
		t.Errorf("verify a moved box: %d %s", v.status, v.body)
	}

	tampered := strings.Replace(string(doc), "atorvastatin", "simvastatin", 1)
	for _, c := range []struct {
		name string
		body any
		says string
	}{
		{"changed after reading", map[string]any{"documents": []map[string]any{{"name": "referral", "document": json.RawMessage(tampered)}}, "synthetic": true}, "element"},
		{"twice", map[string]any{"documents": []map[string]any{{"name": "a", "document": doc}, {"name": "a", "document": doc}}, "synthetic": true}, "appears twice"},
		{"not a document", map[string]any{"documents": []map[string]any{{"name": "a", "document": map[string]any{"id": "x"}}}, "synthetic": true}, "does not verify"},
	} {
		if r := ts.do(t, call{method: "POST", path: "/retrieval/index-scans", token: tok, body: c.body}); r.status != 400 || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: %d %s; want 400 saying %q", c.name, r.status, r.body, c.says)
		}
	}
}
