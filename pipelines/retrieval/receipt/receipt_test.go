package receipt

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/proof"
)

func key(seed byte) *attest.Key {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	return attest.NewKey(ed25519.NewKeyFromSeed(s))
}

func failed(cs []attest.Check) []string {
	var out []string
	for _, c := range cs {
		if !c.OK {
			out = append(out, c.Name+": "+c.Detail)
		}
	}
	return out
}

// TestSignedBeforeVerifies: a receipt the box signed before the receipt
// was written in attest.Signed (testdata, key seed 7: a bm25 search over
// two documents) reads, verifies with its chunks and documents, and is
// written again byte for byte.
func TestSignedBeforeVerifies(t *testing.T) {
	raw, err := os.ReadFile("testdata/search-signed-before.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/search-signed-before-proofs.json")
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Chunks    []ProvenChunk `json:"chunks"`
		Documents []Document    `json:"documents"`
	}
	if err := json.Unmarshal(b, &sent); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(raw, key(7).PublicKey(), sent.Chunks, sent.Documents)
	if err != nil {
		t.Fatal(err)
	}
	if f := failed(v.Checks); len(f) > 0 || len(v.Checks) != 4+len(sent.Chunks) || len(sent.Chunks) == 0 || len(v.Unchecked)+len(v.NoOffsets) > 0 {
		t.Errorf("%d checks, failed %v, unchecked %v %v", len(v.Checks), f, v.Unchecked, v.NoOffsets)
	}
	again, err := json.Marshal(v.Receipt)
	if err != nil || string(again) != strings.TrimSpace(string(raw)) {
		t.Errorf("written again:\n %s\nwas\n %s", again, raw)
	}
	cs, err := Checks(raw, key(8).PublicKey(), sent.Chunks, sent.Documents)
	if f := failed(cs); err != nil || len(f) != 1 || !strings.HasPrefix(f[0], "signer:") {
		t.Errorf("another box's key: %v %v", err, f)
	}
}

// TestSignReadVerify: a receipt Sign writes reads back as itself and
// verifies; its fields changed, it does not.
func TestSignReadVerify(t *testing.T) {
	k := key(1)
	settings := chunker.Settings{Version: "t", MaxChars: 50}
	embedder := proof.ModelRef{Repo: "e", Revision: "1"}
	ix := Index{Format: proof.IndexV2, CorpusRoot: strings.Repeat("a", 64), NChunks: 3, Chunker: settings, Embedder: embedder}
	ix.Hash = proof.IndexHash(ix.Format, ix.CorpusRoot, ix.NChunks, settings, embedder, "")
	rc, err := Sign(k, "pump <pressure> & flow", Body{Index: ix, Params: Params{K: 5, Mode: "bm25", Candidates: 40},
		Results: []Result{}, ModelCalls: []ModelCallRef{{ID: "mc-1", Kind: "embed"}}})
	if err != nil {
		t.Fatal(err)
	}
	if rc.V != Format || !strings.HasPrefix(rc.ID, "rs-") || rc.Signer != k.Signer() || len(rc.QuerySHA256) != 64 {
		t.Errorf("filled in: %+v", rc.Body)
	}
	raw, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), `{"v":"`+Format+`","id":"`+rc.ID+`","index":{`) || !strings.HasSuffix(string(raw), `},"sig":"`+rc.Sig+`"}`) {
		t.Errorf("not flat in field order: %s", raw)
	}
	back, err := Decode(raw)
	if err != nil || back.Sig != rc.Sig || back.ID != rc.ID {
		t.Fatalf("read back: %v %+v", err, back)
	}
	cs, err := Checks(raw, k.PublicKey(), nil, nil)
	if f := failed(cs); err != nil || len(f) > 0 || len(cs) != 4 {
		t.Errorf("checks %+v, %v", cs, err)
	}
	for name, edit := range map[string][2]string{
		"the query hash": {`"query_sha256":"` + rc.QuerySHA256, `"query_sha256":"` + strings.Repeat("0", 64)},
		"a model call":   {`"mc-1"`, `"mc-2"`},
		"the signature":  {`"sig":"` + rc.Sig[:4], `"sig":"` + strings.Repeat("0", 4)},
	} {
		cs, err := Checks([]byte(strings.Replace(string(raw), edit[0], edit[1], 1)), k.PublicKey(), nil, nil)
		if f := failed(cs); err != nil || len(f) != 1 || !strings.HasPrefix(f[0], "signature:") {
			t.Errorf("%s changed: %v %v", name, err, f)
		}
	}
	if _, err := Decode([]byte(strings.Replace(string(raw), `"sig":`, `"note":"x","sig":`, 1))); err == nil || !strings.Contains(err.Error(), "receipt.note") {
		t.Errorf("a field added: %v", err)
	}
}
