package retrieval

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// RFC 6962's reference leaves and tree heads (the Certificate
// Transparency test vectors).
var ctLeaves = []string{"", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"}

var ctRoots = []string{
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}

func ctTree(t *testing.T, n int) *tree {
	t.Helper()
	var leaves [][]byte
	for _, h := range ctLeaves[:n] {
		b, _ := hex.DecodeString(h)
		leaves = append(leaves, b)
	}
	tr, err := newTree(leaves)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestTreeMatchesRFC6962(t *testing.T) {
	for n := 0; n <= len(ctLeaves); n++ {
		r, err := ctTree(t, n).root()
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(r[:]); got != ctRoots[n] {
			t.Errorf("size %d: root %s, RFC 6962 %s", n, got, ctRoots[n])
		}
	}
	// The published audit paths.
	tr := ctTree(t, 8)
	for _, tc := range []struct {
		index int
		path  []string
	}{
		{0, []string{"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7", "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e", "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
		{5, []string{"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b", "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0", "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
	} {
		got, err := tr.prove(tc.index)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != strings.Join(tc.path, ",") {
			t.Errorf("leaf %d of 8: path %v, RFC 6962 %v", tc.index, got, tc.path)
		}
	}
}

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
			if err := VerifyChunk(c, p, ix.CorpusRoot, ix.NChunks, &doc); err != nil {
				t.Fatalf("%d chunks, chunk %d: %v", ix.NChunks, i, err)
			}
			mustFail := func(what string, c IndexChunk, p Proof, root string, doc *string) {
				t.Helper()
				if err := VerifyChunk(c, p, root, ix.NChunks, doc); err == nil {
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
			q.Path = append(append([]string(nil), p.Path...), ctRoots[3])
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
			mustFail("another root", c, p, ctRoots[8], nil)
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
