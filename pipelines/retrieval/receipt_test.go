package retrieval

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"boxd/engine/attest"
)

func newKey(t *testing.T) *attest.Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return attest.NewKey(priv)
}

// signedSearch runs a reranked hybrid search and signs its receipt; it
// returns the receipt's JSON, the chunks with their proofs and the
// documents.
func signedSearch(t *testing.T, k *attest.Key) ([]byte, []ProvenChunk, []Document, *Index) {
	t.Helper()
	ctx := context.Background()
	emb := &bagEmbedder{}
	ix := preparedIndex(t, emb)
	p := Params{K: 6, Rerank: true}
	res, err := ix.Search(ctx, "pump pressure filter", p, emb, &overlapReranker{})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := SignSearch(k, ix, "pump pressure filter", p, res, &ModelRef{Repo: "test/rerank", Revision: "1"},
		[]ModelCallRef{{ID: "mc-1", Kind: "embed"}, {ID: "mc-2", Kind: "rerank"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	var chunks []ProvenChunk
	for _, r := range res {
		pr, err := ix.Prove(r.Pos)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, ProvenChunk{Chunk: r.Chunk.ID, Text: r.Chunk.Text, Proof: pr})
	}
	return raw, chunks, manyDocs(), ix
}

func failed(cs []Check) []string {
	var out []string
	for _, c := range cs {
		if !c.OK {
			out = append(out, c.Name+": "+c.Detail)
		}
	}
	return out
}

func TestSearchReceiptVerifies(t *testing.T) {
	k := newKey(t)
	raw, chunks, docs, _ := signedSearch(t, k)
	var shape map[string]any
	if err := json.Unmarshal(raw, &shape); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"v", "id", "index", "reranker", "query_sha256", "params", "results", "model_calls", "signer", "sig"} {
		if _, ok := shape[f]; !ok {
			t.Errorf("the receipt has no %s", f)
		}
	}
	if !strings.HasPrefix(shape["id"].(string), "rs-") || shape["v"] != SearchFormat {
		t.Errorf("id %v, v %v", shape["id"], shape["v"])
	}
	r0 := shape["results"].([]any)[0].(map[string]any)
	for _, f := range []string{"rank", "chunk", "doc", "doc_sha256", "byte_start", "byte_end", "sha256", "scores_ppm", "ranks"} {
		if _, ok := r0[f]; !ok {
			t.Errorf("a result has no %s", f)
		}
	}
	if sp := r0["scores_ppm"].(map[string]any); strings.Contains(string(mustJSON(sp)), ".") {
		t.Errorf("scores_ppm are not integers: %v", sp)
	}
	cs, err := VerifySearch(raw, k.PublicKey(), chunks, docs)
	if err != nil {
		t.Fatal(err)
	}
	if f := failed(cs); len(f) > 0 || len(cs) != 4+len(chunks) { // signature, signer, index_hash, results, one per chunk
		t.Errorf("%d checks, failed: %v", len(cs), f)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestSearchReceiptTampering(t *testing.T) {
	k := newKey(t)
	raw, chunks, docs, ix := signedSearch(t, k)
	expect := func(name string, raw []byte, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document, want string) {
		t.Helper()
		cs, err := VerifySearch(raw, pinned, chunks, docs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f := strings.Join(failed(cs), "; ")
		if !strings.Contains(f, want) {
			t.Errorf("%s: failed checks %q, want one naming %q", name, f, want)
		}
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		f(m)
		return mustJSON(m)
	}
	expect("a result's offset moved", edit(func(m map[string]any) {
		m["results"].([]any)[0].(map[string]any)["byte_start"] = 1
	}), k.PublicKey(), nil, nil, "signature")
	expect("another box's key", raw, newKey(t).PublicKey(), nil, nil, "signer")

	// A receipt signed over a wrong index hash (the key holder lying about
	// the index) fails the hash check.
	var rc SearchReceipt
	_ = json.Unmarshal(raw, &rc)
	rc.Index.Hash = strings.Repeat("0", 64)
	sig, _, _ := k.Sign(SearchFormat, rc.Body)
	rc.Sig = sig
	expect("a wrong index hash", mustJSON(rc), k.PublicKey(), nil, nil, "index_hash")

	c := append([]ProvenChunk(nil), chunks...)
	c[0].Text += " and more"
	expect("a changed chunk text", raw, k.PublicKey(), c, nil, "chunk "+c[0].Chunk)

	c = append([]ProvenChunk(nil), chunks...)
	c[1].Proof.Path = append([]string(nil), c[1].Proof.Path...)
	b, _ := hex.DecodeString(c[1].Proof.Path[0])
	b[0] ^= 1
	c[1].Proof.Path[0] = hex.EncodeToString(b)
	expect("a flipped bit in a sibling", raw, k.PublicKey(), c, nil, "chunk "+c[1].Chunk)

	c = append([]ProvenChunk(nil), chunks...)
	c[2].Proof.Index = (c[2].Proof.Index + 1) % ix.NChunks
	expect("a wrong leaf index", raw, k.PublicKey(), c, nil, "chunk "+c[2].Chunk)

	c = append([]ProvenChunk(nil), chunks...)
	c[0].Proof.Size++
	expect("a wrong tree size", raw, k.PublicKey(), c, nil, "chunk "+c[0].Chunk)

	expect("a chunk not in the results", raw, k.PublicKey(), []ProvenChunk{{Chunk: "c99999", Text: "x"}}, nil, "no result")

	d := append([]Document(nil), docs...)
	for i := range d {
		d[i].Text = strings.Replace(d[i].Text, "pump", "pomp", 1)
	}
	expect("a changed document", raw, k.PublicKey(), chunks[:1], d, "chunk "+chunks[0].Chunk)
}
