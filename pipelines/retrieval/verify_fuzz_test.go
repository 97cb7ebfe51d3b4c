package retrieval

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/pipelines/retrieval/bm25"
)

// FuzzVerifySearch: POST /retrieval/verify's checks (anyone's to call:
// a receipt, chunks with proofs and documents, all the caller's) never
// panic; when every check holds, the receipt is the one the box signed
// and each chunk's text is the indexed chunk's.
func FuzzVerifySearch(f *testing.F) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 11
	k := attest.NewKey(ed25519.NewKeyFromSeed(seed))
	ctx := context.Background()
	emb := &bagEmbedder{}
	docs := manyDocs()[:4]
	ix, err := BuildIndex(docs, ChunkerSettings{Version: "t", MaxChars: 60}, ModelRef{Repo: "test", Revision: "1"})
	if err != nil {
		f.Fatal(err)
	}
	if err := ix.Prepare(ctx, emb); err != nil {
		f.Fatal(err)
	}
	p := Params{K: 3, Mode: ModeBM25}
	res, err := ix.Search(ctx, "pump pressure filter", p, emb, nil)
	if err != nil {
		f.Fatal(err)
	}
	rc, err := SignSearch(k, ix, "pump pressure filter", p, res, nil, []ModelCallRef{})
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := json.Marshal(rc)
	var chunks []ProvenChunk
	texts := map[string]string{}
	for _, r := range res {
		pr, err := ix.Prove(r.Pos)
		if err != nil {
			f.Fatal(err)
		}
		chunks = append(chunks, ProvenChunk{Chunk: r.Chunk.ID, Text: r.Chunk.Text, Proof: pr})
		texts[r.Chunk.ID] = r.Chunk.Text
	}
	cj, _ := json.Marshal(chunks)
	dj, _ := json.Marshal(docs)
	f.Add(raw, cj, dj)
	f.Add(raw, cj, []byte(`[{"id":"d0","text":""}]`))
	f.Add(raw, []byte(`[{"chunk":"c0","text":"x","proof":{"index":0,"size":1,"path":["zz"]}}]`), []byte(`null`))
	f.Add([]byte(`{"v":"service.retrieval-search-receipt.v1"}`), []byte(`[]`), []byte(`[]`))
	f.Add([]byte(`{}`), []byte(`{`), []byte(`[`))
	var signed SearchReceipt
	if err := json.Unmarshal(raw, &signed); err != nil {
		f.Fatal(err)
	}
	pub := k.PublicKey()
	f.Fuzz(func(t *testing.T, raw, chunksJSON, docsJSON []byte) {
		var cs []ProvenChunk
		var ds []Document
		_ = json.Unmarshal(chunksJSON, &cs)
		_ = json.Unmarshal(docsJSON, &ds)
		checks, err := VerifySearch(raw, pub, cs, ds)
		if err != nil {
			return
		}
		ok := len(checks) > 0
		for _, c := range checks {
			if c.Name == "" || c.Detail == "" {
				t.Fatalf("incomplete check %+v", c)
			}
			ok = ok && c.OK
		}
		if !ok {
			return
		}
		// Every fuzz worker signs the seed again, with a fresh receipt id
		// (and so signature): those two are the signature checks' to hold.
		var got SearchReceipt
		err = json.Unmarshal(raw, &got)
		got.ID, got.Sig = signed.ID, signed.Sig
		if err != nil || !reflect.DeepEqual(got, signed) {
			t.Fatalf("accepted a receipt the box did not sign:\n%s", raw)
		}
		for _, c := range cs {
			if c.Text != texts[c.Chunk] {
				t.Fatalf("accepted chunk %s as %q, indexed as %q", c.Chunk, c.Text, texts[c.Chunk])
			}
		}
	})
}

// FuzzCut: the keyword analyzer's spans are in order and in bounds, and
// the chunker (every document indexed, the caller's text) follows its
// documented rules whatever the text: chunks in order,
// without overlap, each the document's exact bytes at its offsets with
// their hash, trimmed, within MaxChars; every character other than white
// space in one chunk; invalid UTF-8 refused.
func FuzzCut(f *testing.F) {
	for _, s := range []string{
		"First paragraph. Second sentence!\n\nSecond paragraph\r\n \t\r\nthird",
		"Dr. Smith said \"stop.\" Then left… 然后。再见！",
		strings.Repeat("word ", 100) + strings.Repeat("x", 150),
		"  \n\n\t ", "", "\xff\xfe", "a\u00a0b\u2028c\u3000d",
	} {
		f.Add(s, uint16(40))
	}
	f.Add("tiny", uint16(0))
	f.Add("one two", uint16(1))
	f.Fuzz(func(t *testing.T, text string, max uint16) {
		prevEnd := 0
		for _, sp := range bm25.Spans(text) {
			if sp.Start < prevEnd || sp.Start >= sp.End || sp.End > len(text) || sp.Tok == "" || utf8.RuneCountInString(sp.Tok) > 255 {
				t.Fatalf("keyword span %+v after %d in %d bytes", sp, prevEnd, len(text))
			}
			prevEnd = sp.End
		}
		s := ChunkerSettings{Version: "f", MaxChars: int(max)}
		cs, err := Cut("d", text, s)
		if err != nil {
			if utf8.ValidString(text) && max >= 1 {
				t.Fatalf("refused valid text: %v", err)
			}
			return
		}
		if !utf8.ValidString(text) || max < 1 {
			t.Fatal("accepted invalid UTF-8 or max_chars 0")
		}
		var kept strings.Builder
		prev := 0
		for i, c := range cs {
			if c.Doc != "d" || c.ByteStart < prev || c.ByteStart >= c.ByteEnd || c.ByteEnd > len(text) || text[c.ByteStart:c.ByteEnd] != c.Text {
				t.Fatalf("chunk %d: %+v after %d", i, c, prev)
			}
			if sum := sha256.Sum256([]byte(c.Text)); hex.EncodeToString(sum[:]) != c.SHA256 {
				t.Fatalf("chunk %d: hash", i)
			}
			if strings.TrimFunc(c.Text, unicode.IsSpace) != c.Text || utf8.RuneCountInString(c.Text) > s.MaxChars {
				t.Fatalf("chunk %d: %q (max %d)", i, c.Text, s.MaxChars)
			}
			kept.WriteString(c.Text)
			prev = c.ByteEnd
		}
		strip := func(s string) string { return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), "") }
		if strip(kept.String()) != strip(text) {
			t.Fatalf("chunks %q lose or add characters of %q", kept.String(), text)
		}
	})
}
