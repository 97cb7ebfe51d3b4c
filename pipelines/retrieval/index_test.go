package retrieval

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func testDocs(n int) []Document {
	var docs []Document
	for i := range n {
		var b strings.Builder
		for j := range 3 + i%5 {
			fmt.Fprintf(&b, "Paragraph %d of document %d says something about pumps, valves and the filter %d. ", j, i, j*i)
			b.WriteString(strings.Repeat("More words follow here. ", 10+j))
			b.WriteString("\n\n")
		}
		docs = append(docs, Document{ID: fmt.Sprintf("doc-%d", i), Text: b.String()})
	}
	return docs
}

// TestProofsVerifyAndTamperingFails: every chunk's proof verifies in
// indexes of many sizes; a flipped bit in any sibling, a wrong index, a
// wrong size, a changed chunk or offset, a wrong root or document are
// each rejected.
func TestProofsVerifyAndTamperingFails(t *testing.T) {
	emb := ModelRef{Repo: "test/embedder", Revision: "r1"}
	for _, nd := range []int{1, 2, 3, 7} {
		docs := testDocs(nd)
		ix, err := BuildIndex(docs, DefaultChunker, emb)
		if err != nil {
			t.Fatal(err)
		}
		text := map[string]string{}
		for _, d := range docs {
			text[d.ID] = d.Text
		}
		for i, c := range ix.Chunks {
			p, err := ix.Prove(i)
			if err != nil {
				t.Fatal(err)
			}
			doc := text[c.Doc]
			if err := VerifyChunk(ix.Format, c, p, ix.CorpusRoot, ix.NChunks, &doc); err != nil {
				t.Fatalf("%d chunks, chunk %d: %v", ix.NChunks, i, err)
			}
			mustFail := func(what string, c IndexChunk, p Proof, root string, doc *string) {
				t.Helper()
				if err := VerifyChunk(ix.Format, c, p, root, ix.NChunks, doc); err == nil {
					t.Errorf("%d chunks, chunk %d: %s verified", ix.NChunks, i, what)
				}
			}
			for j := range p.Path {
				for bit := range 8 {
					q := p
					q.Path = append([]string(nil), p.Path...)
					b, _ := hex.DecodeString(q.Path[j])
					b[(j+bit)%32] ^= 1 << bit
					q.Path[j] = hex.EncodeToString(b)
					mustFail(fmt.Sprintf("sibling %d with a flipped bit", j), c, q, ix.CorpusRoot, nil)
				}
			}
			if ix.NChunks > 1 {
				q := p
				q.Index = (i + 1) % ix.NChunks
				mustFail("a wrong index", c, q, ix.CorpusRoot, nil)
			}
			q := p
			q.Size = ix.NChunks + 1
			mustFail("a wrong size", c, q, ix.CorpusRoot, nil)
			q.Size = ix.NChunks
			q.Path = append(append([]string(nil), p.Path...), "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7")
			mustFail("an extra sibling", c, q, ix.CorpusRoot, nil)
			changed := c
			changed.Text += "x"
			mustFail("a changed text", changed, p, ix.CorpusRoot, nil)
			moved := c
			moved.ByteStart++
			mustFail("a changed offset", moved, p, ix.CorpusRoot, nil)
			renamed := c
			renamed.Doc += "x"
			mustFail("another document id", renamed, p, ix.CorpusRoot, nil)
			mustFail("another root", c, p, "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328", nil)
			other := doc + " "
			mustFail("another document", c, p, ix.CorpusRoot, &other)
		}
	}
}

func TestIndexHashCommits(t *testing.T) {
	docs := testDocs(3)
	emb := ModelRef{Repo: "test/embedder", Revision: "r1"}
	a, err := BuildIndex(docs, DefaultChunker, emb)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := BuildIndex(docs, DefaultChunker, emb)
	if a.Hash != b.Hash || a.CorpusRoot != b.CorpusRoot {
		t.Fatal("the same documents built two different indexes")
	}
	other := []*Index{}
	for _, f := range []func() (*Index, error){
		func() (*Index, error) {
			return BuildIndex(docs, ChunkerSettings{Version: DefaultChunker.Version, MaxChars: 600}, emb)
		},
		func() (*Index, error) {
			return BuildIndex(docs, DefaultChunker, ModelRef{Repo: emb.Repo, Revision: "r2"})
		},
		func() (*Index, error) {
			d := append([]Document(nil), docs...)
			d[1].Text += " One more sentence."
			return BuildIndex(d, DefaultChunker, emb)
		},
	} {
		ix, err := f()
		if err != nil {
			t.Fatal(err)
		}
		other = append(other, ix)
	}
	for i, o := range other {
		if o.Hash == a.Hash {
			t.Errorf("change %d left the index hash as it was", i)
		}
	}
}

func TestIndexLimitsAndIDs(t *testing.T) {
	emb := ModelRef{}
	var le *LimitError
	if _, err := BuildIndex(testDocs(MaxDocuments+1), DefaultChunker, emb); !errors.As(err, &le) || le.What != "documents" {
		t.Errorf("61 documents: %v", err)
	}
	big := []Document{{ID: "big", Text: strings.Repeat("Word after word. ", 1600*80)}}
	if _, err := BuildIndex(big, DefaultChunker, emb); !errors.As(err, &le) || le.What != "chunks" {
		t.Errorf("over 1,500 chunks: %v", err)
	}
	if _, err := BuildIndex([]Document{{ID: "a", Text: "x"}, {ID: "a", Text: "y"}}, DefaultChunker, emb); err == nil {
		t.Error("duplicate ids accepted")
	}
	if _, err := BuildIndex([]Document{{Text: "x"}}, DefaultChunker, emb); err == nil {
		t.Error("an empty id accepted")
	}
}
