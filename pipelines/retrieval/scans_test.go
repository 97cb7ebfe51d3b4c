package retrieval

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"boxd/internal/problem"
	"boxd/pipelines/retrieval/chunker"
)

func scanFixture() []*Scan {
	long := strings.Repeat("The pump loses pressure when the intake clogs. ", 40) // about 1,900 characters
	return []*Scan{
		{ID: "doc-a", Elements: []ScanElement{
			{ID: "p1-e1", Kind: "title", Page: 1, BBox: [4]int{100, 80, 400, 40}, Text: "Pump station log"},
			{ID: "p1-e2", Kind: "figure", Page: 1, BBox: [4]int{100, 140, 300, 300}},
			{ID: "p1-e3", Kind: "table", Page: 1, BBox: [4]int{100, 460, 600, 200}, Text: "Valve | Open\nPump | Off"},
			{ID: "p1-e4", Kind: "table_cell", Page: 1, BBox: [4]int{104, 464, 80, 20}, Text: "Valve"},
			{ID: "p2-e1", Kind: "text", Page: 2, BBox: [4]int{100, 100, 1000, 600}, Text: long},
		}},
		{ID: "doc-b", Elements: []ScanElement{{ID: "p1-e1", Kind: "text", Page: 1, BBox: [4]int{1, 2, 3, 4}, Text: "Second document."}}},
	}
}

// TestScanIndex: one chunk per element with text (tables and figures
// skipped: the cells carry the text), a long element cut into pieces
// that keep its anchor; every chunk's bytes are its document's; the
// layout hash binds every anchor, and the index hash the layout.
func TestScanIndex(t *testing.T) {
	ix, docs, err := scanIndex([]string{"log", "memo"}, scanFixture(), ModelRef{Repo: "e", Revision: "r"}, chunker.Counters{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || ix.Chunker != ElementChunker || ix.Layout == "" || ix.Layout != LayoutHash(ix.Format, ix.Chunks) {
		t.Fatalf("docs %d, chunker %+v, layout %q", len(docs), ix.Chunker, ix.Layout)
	}
	var els []string
	for _, c := range ix.Chunks {
		if c.Anchor == nil {
			t.Fatalf("%s has no anchor", c.ID)
		}
		els = append(els, c.Anchor.Document+"/"+c.Anchor.Element)
		text := docs[0].Text
		if c.Doc == "memo" {
			text = docs[1].Text
		}
		if text[c.ByteStart:c.ByteEnd] != c.Text {
			t.Errorf("%s: bytes %d..%d are not its text", c.ID, c.ByteStart, c.ByteEnd)
		}
	}
	if got := strings.Join(els, " "); got != "doc-a/p1-e1 doc-a/p1-e4 doc-a/p2-e1 doc-a/p2-e1 doc-b/p1-e1" {
		t.Errorf("chunks' elements: %s", got)
	}
	if ix.Chunks[2].Anchor.Page != 2 || ix.Chunks[2].Anchor.BBox != [4]int{100, 100, 1000, 600} {
		t.Errorf("anchor %+v", ix.Chunks[2].Anchor)
	}
	if ix.Hash != IndexHash(ix.Format, ix.CorpusRoot, ix.NChunks, ElementChunker, ix.Embedder, ix.Layout) || ix.Hash == IndexHash(ix.Format, ix.CorpusRoot, ix.NChunks, ElementChunker, ix.Embedder, "") {
		t.Error("the index hash does not commit to the layout")
	}
	moved := append([]IndexChunk(nil), ix.Chunks...)
	a := *moved[0].Anchor
	a.BBox[1]++
	moved[0].Anchor = &a
	if LayoutHash(ix.Format, moved) == ix.Layout {
		t.Error("a box moved by a pixel keeps the layout hash")
	}
}

// TestIndexScansRefusals: every bad body says what to fix; a document
// whose verification fails is named with the check; no embedder is 503.
func TestIndexScansRefusals(t *testing.T) {
	yes, no := true, false
	doc := json.RawMessage(`{"id":"doc-a"}`)
	for _, c := range []struct {
		name string
		r    IndexScansRequest
		kind problem.Kind
		says string
	}{
		{"empty", IndexScansRequest{Synthetic: &yes}, problem.Invalid, "documents is empty"},
		{"no name", IndexScansRequest{Documents: []ScanDocument{{Document: doc}}, Synthetic: &yes}, problem.Invalid, "name must be"},
		{"twice", IndexScansRequest{Documents: []ScanDocument{{Name: "a", Document: doc}, {Name: "a", Document: doc}}, Synthetic: &yes}, problem.Invalid, "appears twice"},
		{"no document", IndexScansRequest{Documents: []ScanDocument{{Name: "a"}}, Synthetic: &yes}, problem.Invalid, "document is missing"},
		{"too many", IndexScansRequest{Documents: make([]ScanDocument, MaxDocuments+1), Synthetic: &yes}, problem.TooLarge, "at most"},
	} {
		if err := c.r.Validate(); !problem.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// synthetic is the operator's rule, applied at admission: valid
	// either way, and claimed for the documents.
	mine := IndexScansRequest{Documents: []ScanDocument{{Name: "a", Document: doc}}, Synthetic: &no}
	if err := mine.Validate(); err != nil {
		t.Errorf("synthetic false: %v", err)
	}
	if f, flag := mine.SyntheticClaim(); f != "documents" || flag != &no {
		t.Errorf("claim %q %v", f, flag)
	}
	s := &Service{}
	req := IndexScansRequest{Documents: []ScanDocument{{Name: "a", Document: doc}}, Synthetic: &yes}
	if _, err := s.IndexScans(t.Context(), "o", nil, req, nil); !problem.Is(err, problem.Unavailable) {
		t.Errorf("no embedder: %v", err)
	}
	s.Embedder = &bagEmbedder{}
	_, err := s.IndexScans(t.Context(), "o", nil, req, func(json.RawMessage) (*Scan, error) {
		return nil, errors.New("its signer check fails: another box signed it")
	})
	if !problem.Is(err, problem.Invalid) || !strings.Contains(err.Error(), "documents[0] (a)") || !strings.Contains(err.Error(), "signer") {
		t.Errorf("a document that does not verify: %v", err)
	}
}
