package retrieval

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	mrand "math/rand/v2"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/retrieval/chunker"
)

// countedModel counts tokens with a test model's own tokenizer
// (engine/llm through llama.cpp) and records how often it was asked and
// how many bytes it read; it embeds as bagEmbedder and reranks as
// overlapReranker do, so that a test measures the cutting and not
// llama.cpp's encoder.
type countedModel struct {
	tok          *llm.Embedder
	calls, bytes int
	bagEmbedder
	overlapReranker
}

func (m *countedModel) CountTokens(text string) (int, error) {
	m.calls++
	m.bytes += len(text)
	return m.tok.CountTokens(text)
}

func (m *countedModel) MaxTokens() int { return m.tok.MaxTokens() }

// longWords are 300,000-character words: one letter repeated, random
// letters, and ZWJ emoji sequences (grapheme clusters of 5 code points).
func longWords() map[string]string {
	rng := mrand.New(mrand.NewPCG(35, 2))
	var b strings.Builder
	for b.Len() < 300000 {
		b.WriteByte(byte('a' + rng.IntN(26)))
	}
	return map[string]string{"repeated": strings.Repeat("a", 300000), "random": b.String(), "zwj": strings.Repeat("👩‍👩‍👧", 60000)}
}

// longWordService is a service whose models count tokens as the test
// embedder and reranker do (512-token contexts).
func longWordService(t testing.TB) (*Service, *countedModel, *countedModel) {
	var m [2]*llm.Embedder
	for i, f := range []string{testmodels.EmbedFile, testmodels.RerankFile} {
		x, err := llm.OpenEmbedder(context.Background(), llm.Options{Path: testmodels.Generated(t, f), Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(x.Close)
		m[i] = x
	}
	e, r := &countedModel{tok: m[0]}, &countedModel{tok: m[1]}
	s := &Service{Embedder: e, Reranker: r, EmbedderModel: Model{Ref: ModelRef{Repo: "e", Revision: "1"}}}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s.Key = attest.NewKey(priv)
	s.Receipts = memReceipts{s.Key}
	return s, e, r
}

// TestLongWordIndexedInLinearWork: a 300,000-character word (no white
// space) is indexed through Service.Index with the test models' token
// counts, every byte of it in exactly one chunk, in order, each chunk
// within both models' bounds and between grapheme clusters; the models'
// tokenizers read the text a bounded number of times (the chunker's
// halvings, the fit check and the receipt's count), not once per
// character cut.
func TestLongWordIndexedInLinearWork(t *testing.T) {
	s, e, r := longWordService(t)
	yes := true
	for name, text := range longWords() {
		e.calls, e.bytes, r.calls, r.bytes = 0, 0, 0, 0
		out, err := s.Index(context.Background(), "owner", nil, IndexRequest{Documents: []Document{{ID: "word", Text: text}}, Synthetic: &yes})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ix := out.Index
		calls, read := e.calls+r.calls, e.bytes+r.bytes
		t.Logf("%s: %d bytes in %d chunks; the tokenizers were asked %d times and read %d bytes (%.1f per byte of text)",
			name, len(text), ix.NChunks, calls, read, float64(read)/float64(len(text)))
		if read > 8*len(text) || calls > 8*ix.NChunks {
			t.Errorf("%s: the tokenizers read %d bytes in %d calls for %d bytes in %d chunks: not linear", name, read, calls, len(text), ix.NChunks)
		}
		if ix.Chunker.Version != chunker.V3 {
			t.Errorf("%s: chunker %+v", name, ix.Chunker)
		}
		at := 0
		for _, c := range ix.Chunks {
			if c.ByteStart != at || c.Text != text[c.ByteStart:c.ByteEnd] {
				t.Fatalf("%s: chunk %s at bytes %d..%d, want it to start at %d", name, c.ID, c.ByteStart, c.ByteEnd, at)
			}
			if name == "zwj" && len(c.Text)%len("👩‍👩‍👧") != 0 {
				t.Fatalf("%s: chunk %s cuts a ZWJ sequence", name, c.ID)
			}
			at = c.ByteEnd
		}
		if at != len(text) {
			t.Fatalf("%s: the chunks end at byte %d of %d", name, at, len(text))
		}
		for _, c := range ix.Chunks[:3] {
			if n, _ := e.tok.CountTokens(c.Text); n > ix.Chunker.MaxTokens {
				t.Errorf("%s: chunk %s takes %d embedder tokens, over %d", name, c.ID, n, ix.Chunker.MaxTokens)
			}
			if n, _ := r.tok.CountTokens(c.Text); n > ix.Chunker.RerankMaxTokens {
				t.Errorf("%s: chunk %s takes %d reranker tokens, over %d", name, c.ID, n, ix.Chunker.RerankMaxTokens)
			}
		}
	}
}

// BenchmarkLongWordIndex indexes a 300,000-character word through
// Service.Index with the test models' tokenizers (embedding as
// bagEmbedder): ms per index and the bytes the tokenizers read per byte
// of text.
func BenchmarkLongWordIndex(b *testing.B) {
	s, e, r := longWordService(b)
	yes := true
	for _, name := range []string{"repeated", "random", "zwj"} {
		text := longWords()[name]
		b.Run(name, func(b *testing.B) {
			e.bytes, r.bytes = 0, 0
			for range b.N {
				if _, err := s.Index(context.Background(), "owner", nil, IndexRequest{Documents: []Document{{ID: "word", Text: text}}, Synthetic: &yes}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(e.bytes+r.bytes)/float64(b.N*len(text)), "tokenized/byte")
		})
	}
}
