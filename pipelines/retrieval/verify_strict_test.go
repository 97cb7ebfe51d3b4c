package retrieval

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/pipelines/retrieval/chunker"
)

// TestVerifySearchRefusesUnsignedFields: the signed object is the receipt
// without sig, so a field added anywhere in it is one nobody signed: the
// receipt is refused naming it, never verified with the field dropped.
func TestVerifySearchRefusesUnsignedFields(t *testing.T) {
	k := newKey(t)
	raw, chunks, docs, _ := signedSearch(t, k)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		f(m)
		return mustJSON(m)
	}
	res0 := func(m map[string]any) map[string]any { return m["results"].([]any)[0].(map[string]any) }
	for _, c := range []struct {
		name, field string
		edit        func(m map[string]any)
	}{
		{"a result's text", "receipt.results[0].text", func(m map[string]any) { res0(m)["text"] = "FORGED: pump is fine" }},
		{"a query", "receipt.query", func(m map[string]any) { m["query"] = "what the user never asked" }},
		{"the index's chunks", "receipt.index.chunks", func(m map[string]any) {
			m["index"].(map[string]any)["chunks"] = []any{map[string]any{"id": "c0", "text": "forged"}}
		}},
		{"a signer note", "receipt.signer.note", func(m map[string]any) { m["signer"].(map[string]any)["note"] = "x" }},
		{"a params filter", "receipt.params.filter", func(m map[string]any) { m["params"].(map[string]any)["filter"] = "doc=x" }},
		{"a top-level note", "receipt.note", func(m map[string]any) { m["note"] = "x" }},
		{"a result's extra", "receipt.results[0].extra", func(m map[string]any) { res0(m)["extra"] = 1 }},
		{"a field left out", "receipt.reranker", func(m map[string]any) { delete(m, "reranker") }},
	} {
		_, err := VerifySearch(edit(c.edit), k.PublicKey(), chunks, docs)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v; want a refusal naming %s", c.name, err, c.field)
		}
	}
	// An anchor (a field of results over scans) added to a text index's
	// result is a field the signature does not cover.
	cs, err := VerifySearch(edit(func(m map[string]any) {
		res0(m)["anchor"] = map[string]any{"document": "d", "page": 1, "bbox": []any{0, 0, 1, 1}, "element": "e"}
	}), k.PublicKey(), chunks, docs)
	if err == nil && !strings.Contains(strings.Join(failed(cs), ";"), "signature") {
		t.Errorf("an anchor added: %v", failed(cs))
	}
	if _, err := VerifySearch([]byte(`{"v":"service.retrieval.search.v1","sig":"a","sig":"b"}`), k.PublicKey(), nil, nil); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a key sent twice: %v", err)
	}
	// The untouched receipt, re-encoded with its keys in another order
	// and white space, still verifies.
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	pretty, _ := json.MarshalIndent(m, "", "  ")
	cs, err = VerifySearch(pretty, k.PublicKey(), chunks, docs)
	if err != nil || len(failed(cs)) > 0 {
		t.Errorf("the receipt re-encoded: %v %v", err, failed(cs))
	}
}

// TestVerifyUncheckedResults: POST /retrieval/verify's ok never covers a
// result left unchecked (a bare receipt, some chunks missing, a duplicate
// standing in for a missing one): the results check fails and unchecked
// names them. A zero-result receipt alone is ok.
func TestVerifyUncheckedResults(t *testing.T) {
	s := testService(t)
	ctx := context.Background()
	yes := true
	out, err := s.Search(ctx, "owner", nil, SearchRequest{Documents: manyDocs(), Synthetic: &yes, Query: "pump pressure filter"})
	if err != nil {
		t.Fatal(err)
	}
	raw := mustJSON(out.Receipt)
	var all []ProvenChunk
	for _, h := range out.Results {
		all = append(all, ProvenChunk{Chunk: h.Chunk, Text: h.Text, Proof: h.Proof})
	}
	if len(all) < 3 {
		t.Fatalf("%d results", len(all))
	}
	n := len(all)
	dup := append(append([]ProvenChunk{}, all[:n-1]...), all[0])
	for _, c := range []struct {
		name      string
		chunks    []ProvenChunk
		ok        bool
		unchecked int
	}{
		{"every result", all, true, 0},
		{"a bare receipt", nil, false, n},
		{"chunks empty", []ProvenChunk{}, false, n},
		{"one missing", all[:n-1], false, 1},
		{"a duplicate for the missing one", dup, false, 1},
		{"one sent twice", append(append([]ProvenChunk{}, all...), all[0]), false, 0},
	} {
		v, err := s.Verify(VerifyRequest{Receipt: raw, Chunks: c.chunks})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v.OK != c.ok || len(v.Unchecked) != c.unchecked {
			t.Errorf("%s: ok %v, unchecked %v; want ok %v and %d unchecked", c.name, v.OK, v.Unchecked, c.ok, c.unchecked)
		}
		if !c.ok && !strings.Contains(strings.Join(failed(v.Checks), ";"), "results:") {
			t.Errorf("%s: no failing results check: %v", c.name, failed(v.Checks))
		}
	}
	none, err := SignSearch(s.Key, &Index{Format: out.Index.Format, Hash: out.Index.Hash, CorpusRoot: out.Index.CorpusRoot, NChunks: out.Index.NChunks,
		Chunker: out.Index.Chunker, Embedder: out.Index.Embedder}, "nothing", Params{K: 5, Mode: ModeBM25}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.Verify(VerifyRequest{Receipt: mustJSON(none)}); err != nil || !v.OK || len(v.Unchecked) != 0 {
		t.Errorf("a receipt with no results: %v %+v", err, v)
	}
}

// TestVerifyDocuments: documents sent twice under one id are refused
// (400 naming the id); a result whose document is not among those sent
// has its offsets reported unchecked, in offsets_unchecked and its
// check's detail, never passed over in silence.
func TestVerifyDocuments(t *testing.T) {
	s := testService(t)
	yes := true
	docs := manyDocs()
	out, err := s.Search(context.Background(), "owner", nil, SearchRequest{Documents: docs, Synthetic: &yes, Query: "pump pressure filter", Mode: ModeBM25})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []ProvenChunk
	for _, h := range out.Results {
		chunks = append(chunks, ProvenChunk{Chunk: h.Chunk, Text: h.Text, Proof: h.Proof})
	}
	first := out.Results[0].Doc
	var dup []Document
	for _, d := range docs {
		if d.ID == first {
			dup = append(dup, Document{ID: d.ID, Text: "WRONG"}, d)
		}
	}
	_, err = s.Verify(VerifyRequest{Receipt: mustJSON(out.Receipt), Chunks: chunks, Documents: dup})
	if !problem.Is(err, problem.Invalid) || !strings.Contains(err.Error(), strconv.Quote(first)) || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a document sent twice: %v", err)
	}

	var others []Document
	for _, d := range docs {
		if d.ID != first {
			others = append(others, d)
		}
	}
	v, err := s.Verify(VerifyRequest{Receipt: mustJSON(out.Receipt), Chunks: chunks, Documents: others})
	if err != nil || !v.OK {
		t.Fatalf("%v %+v", err, v)
	}
	if len(v.OffsetsUnchecked) == 0 || v.OffsetsUnchecked[0] != out.Results[0].Chunk {
		t.Errorf("offsets_unchecked %v; want %s first", v.OffsetsUnchecked, out.Results[0].Chunk)
	}
	for _, c := range v.Checks {
		if c.Name == "chunk "+out.Results[0].Chunk && !strings.Contains(c.Detail, "offsets are NOT checked") {
			t.Errorf("the check says nothing of its offsets: %s", c.Detail)
		}
	}
	v, _ = s.Verify(VerifyRequest{Receipt: mustJSON(out.Receipt), Chunks: chunks, Documents: docs})
	if len(v.OffsetsUnchecked) != 0 {
		t.Errorf("with every document: offsets_unchecked %v", v.OffsetsUnchecked)
	}
	v, _ = s.Verify(VerifyRequest{Receipt: mustJSON(out.Receipt), Chunks: chunks})
	if len(v.OffsetsUnchecked) != len(out.Results) {
		t.Errorf("without documents: offsets_unchecked %v", v.OffsetsUnchecked)
	}
}

// wordCounter is an embedder and reranker that counts a text's tokens as
// its words (TokenCounter).
type wordCounter struct {
	bagEmbedder
	overlapReranker
}

func (wordCounter) CountTokens(text string) (int, error) { return len(strings.Fields(text)), nil }
func (wordCounter) MaxTokens() int                       { return 512 }

// issued keeps the model calls a service signed.
type issued struct {
	memReceipts
	mu    sync.Mutex
	calls []attest.ModelCall
}

func (r *issued) Issue(ctx context.Context, mc attest.ModelCall, up string) (attest.SignedModelCall, error) {
	r.mu.Lock()
	r.calls = append(r.calls, mc)
	r.mu.Unlock()
	return r.memReceipts.Issue(ctx, mc, up)
}

// TestModelCallReceiptsSignTokens: embedding and rerank receipts sign the
// tokens the models read (prompt_tokens), the same counts the peer routes
// report, never 0.
func TestModelCallReceiptsSignTokens(t *testing.T) {
	s := testService(t)
	wc := &wordCounter{}
	rec := &issued{memReceipts: s.Receipts.(memReceipts)}
	s.Embedder, s.Reranker, s.Receipts = wc, wc, rec
	ctx := context.Background()
	yes := true
	docs := manyDocs()
	ix, err := s.Index(ctx, "owner", nil, IndexRequest{Documents: docs, Synthetic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, c := range ix.Index.Chunks {
		want += len(strings.Fields(c.Text))
	}
	usage := func(i int) string { return rec.calls[i].Usage.PromptTokens + "/" + rec.calls[i].Usage.TotalTokens }
	if got := usage(0); got != strconv.Itoa(want)+"/"+strconv.Itoa(want) {
		t.Errorf("index embedding: usage %s, want %d", got, want)
	}
	q := "pump pressure filter"
	sr, err := s.Search(ctx, "owner", nil, SearchRequest{Index: ix.Index.Hash, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if got := usage(1); got != "3/3" {
		t.Errorf("query embedding: usage %s, want 3", got)
	}
	cands := len(wc.overlapReranker.Got)
	rr := 0
	for _, d := range wc.overlapReranker.Got {
		rr += 3 + len(strings.Fields(d))
	}
	if got := usage(2); cands == 0 || got != strconv.Itoa(rr)+"/"+strconv.Itoa(rr) {
		t.Errorf("rerank of %d candidates: usage %s, want %d", cands, got, rr)
	}
	_ = sr
	s.EmbedderModel.Ref.Repo = "bag"
	e, err := s.Embeddings(ctx, nil, EmbeddingsRequest{Model: "bag", Input: json.RawMessage(`["one two", "three"]`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := usage(3); e.Usage.PromptTokens != 3 || got != "3/3" {
		t.Errorf("/v1/embeddings: reports %d, signs %s", e.Usage.PromptTokens, got)
	}
	r, err := s.Rerank(ctx, nil, RerankRequest{Model: "overlap", Query: "pump", Documents: []json.RawMessage{json.RawMessage(`"the pump"`), json.RawMessage(`{"text":"roof"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := usage(4); r.Usage.PromptTokens != 5 || got != "5/5" {
		t.Errorf("/v1/rerank: reports %d, signs %s", r.Usage.PromptTokens, got)
	}
}

// TestScanAnchorsBound: in an index of scans (v2) each chunk's leaf
// holds its anchor and each search result signs it, so a result whose
// anchor was changed (a box moved) fails: in the receipt (signature and
// proof) and before signing (the proof alone). v1 leaves stay as before.
func TestScanAnchorsBound(t *testing.T) {
	ix, _, err := scanIndex([]string{"log", "memo"}, scanFixture(), ModelRef{Repo: "e", Revision: "r"}, chunker.Counters{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Prepare(context.Background(), &bagEmbedder{}); err != nil {
		t.Fatal(err)
	}
	k := newKey(t)
	p := Params{K: 3, Mode: ModeBM25}
	res, err := ix.Search(context.Background(), "pump pressure", p, nil, nil)
	if err != nil || len(res) == 0 {
		t.Fatalf("%v, %d results", err, len(res))
	}
	rc, err := SignSearch(k, ix, "pump pressure", p, res, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Results[0].Anchor == nil || *rc.Results[0].Anchor != *res[0].Chunk.Anchor {
		t.Fatalf("the receipt's result has no anchor: %+v", rc.Results[0])
	}
	var chunks []ProvenChunk
	for _, r := range res {
		pr, _ := ix.Prove(r.Pos)
		chunks = append(chunks, ProvenChunk{Chunk: r.Chunk.ID, Text: r.Chunk.Text, Proof: pr})
	}
	cs, err := VerifySearch(mustJSON(rc), k.PublicKey(), chunks, nil)
	if err != nil || len(failed(cs)) > 0 {
		t.Fatalf("untouched: %v %v", err, failed(cs))
	}
	moved := *rc
	moved.Results = append([]ReceiptResult{}, rc.Results...)
	a := *moved.Results[0].Anchor
	a.BBox = [4]int{0, 0, 1, 1}
	moved.Results[0].Anchor = &a
	cs, _ = VerifySearch(mustJSON(moved), k.PublicKey(), chunks, nil)
	if f := strings.Join(failed(cs), ";"); !strings.Contains(f, "signature") {
		t.Errorf("a moved box: failed %q", f)
	}
	// Signed again over the moved box (the key holder lying): the leaf
	// no longer leads to the corpus root.
	moved.Sig, _, _ = k.Sign(SearchFormat, moved.Body)
	cs, _ = VerifySearch(mustJSON(moved), k.PublicKey(), chunks, nil)
	if f := strings.Join(failed(cs), ";"); !strings.Contains(f, "chunk "+rc.Results[0].Chunk) {
		t.Errorf("a moved box, signed: failed %q", f)
	}
	c := ix.Chunks[0]
	if string(c.Leaf("")) == string(c.Leaf(ix.Format)) || strings.Contains(string(c.Leaf("")), "bbox") || !strings.Contains(string(c.Leaf(ix.Format)), `"bbox":[`) {
		t.Errorf("leaves: v1 %s, v2 %s", c.Leaf(""), c.Leaf(ix.Format))
	}
}
