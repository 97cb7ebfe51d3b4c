package retrieval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"boxd/internal/problem"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/peer"
	"boxd/pipelines/retrieval/proof"
)

// Scanned documents (POST /retrieval/index-scans; contract 3, section 4):
// documents the document reader read, each checked by the reader's own
// verification (its receipt verifies and this box signed it), indexed
// with one chunk per page element, each chunk anchored to its page, box
// and element. The index commits to the anchors through a layout hash.

// ElementChunker is an index of scans' chunker: one chunk per element
// (an element over MaxChars is cut by Cut's rules, every piece keeping
// the element's anchor).
// boxd-elements-2 cuts a piece over the models' token bounds again as
// chunker.CutCounted does (the service adds the bounds); boxd-elements-3
// cuts only between grapheme clusters, as boxd-chunker-3 does (indexes of
// scans are not kept, so none is cut again by the older rules).
var ElementChunker = ChunkerSettings{Version: chunker.ElementsV3, MaxChars: 1200}

// Anchor places a chunk of a scanned document on its page
// (proof.Anchor).
type Anchor = proof.Anchor

// ScanElement is one element of a read document, as the index needs it.
type ScanElement struct {
	ID   string
	Kind string
	Page int
	BBox [4]int
	Text string
}

// Scan is a read document whose receipt verified.
type Scan struct {
	ID       string
	Elements []ScanElement
}

// ScanReader checks a document reader document (its receipt verifies and
// this box signed it) and returns its elements; the error says which
// check failed.
type ScanReader func(document json.RawMessage) (*Scan, error)

// ScanDocument is one document of POST /retrieval/index-scans.
type ScanDocument struct {
	Name     string          `json:"name"`
	Document json.RawMessage `json:"document"`
	notUTF8  []string        // input.go
}

// IndexScansRequest is POST /retrieval/index-scans's body.
type IndexScansRequest struct {
	Documents []ScanDocument `json:"documents"`
	Synthetic *bool          `json:"synthetic"`
}

// SyntheticClaim names the caller's documents and the body's synthetic
// flag (limits.require_synthetic, applied at admission).
func (r *IndexScansRequest) SyntheticClaim() (string, *bool) {
	if len(r.Documents) == 0 {
		return "", nil
	}
	return "documents", r.Synthetic
}

// Validate checks the body's shape (400, 413).
func (r *IndexScansRequest) Validate() error {
	switch {
	case len(r.Documents) == 0:
		return problem.New(problem.Invalid, "documents is empty: send 1 to %d documents {name, document}, each document as POST /docreader/read returned it", MaxDocuments)
	case len(r.Documents) > MaxDocuments:
		return problem.New(problem.TooLarge, "%d documents: at most %d per index", len(r.Documents), MaxDocuments)
	}
	seen := map[string]bool{}
	for i, d := range r.Documents {
		switch {
		case d.Name == "" || utf8.RuneCountInString(d.Name) > MaxIDChars:
			return problem.New(problem.Invalid, "documents[%d].name must be 1 to %d characters", i, MaxIDChars)
		case seen[d.Name]:
			return problem.New(problem.Invalid, "documents[%d].name %q appears twice: names must be unique", i, d.Name)
		case len(d.Document) == 0 || string(d.Document) == "null":
			return problem.New(problem.Invalid, "documents[%d].document is missing: send the document POST /docreader/read returned", i)
		}
		if err := notUTF8Problem(fmt.Sprintf("documents[%d].", i), d.notUTF8); err != nil {
			return err
		}
		if err := checkText(fmt.Sprintf("documents[%d].name", i), d.Name, true); err != nil {
			return err
		}
		seen[d.Name] = true
	}
	return nil
}

// skipKinds are element kinds that hold no text of their own for the
// index: a table (its cells are elements) and a figure.
var skipKinds = map[string]bool{"table": true, "figure": true}

// scanIndex builds an index over verified scans: each document's text is
// its elements' texts, a blank line between them; each element is a
// chunk (cut further past MaxChars) anchored to its page, box and
// element.
func scanIndex(names []string, scans []*Scan, embedder ModelRef, c chunker.Counters) (*Index, []Document, error) {
	settings, err := chunker.Bounded(ElementChunker, c)
	if err != nil {
		return nil, nil, problem.Wrap(problem.Unavailable, err, "%v", err)
	}
	ix := &Index{Format: proof.Current, Chunker: settings, Embedder: embedder}
	var docs []Document
	for i, sc := range scans {
		var b strings.Builder
		type span struct {
			start, end int
			el         ScanElement
		}
		var spans []span
		for _, e := range sc.Elements {
			t := strings.TrimSpace(e.Text)
			if t == "" || skipKinds[e.Kind] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			spans = append(spans, span{b.Len(), b.Len() + len(t), e})
			b.WriteString(t)
		}
		text := b.String()
		if !utf8.ValidString(text) {
			return nil, nil, problem.New(problem.Invalid, "documents[%d] (%s): its text is not valid UTF-8", i, names[i])
		}
		d := Document{ID: names[i], Title: names[i], Text: text}
		docs = append(docs, d)
		sum := sha256.Sum256([]byte(text))
		dsum := hex.EncodeToString(sum[:])
		for _, sp := range spans {
			cs, err := chunker.CutCounted(d.ID, text[sp.start:sp.end], settings, c)
			if err != nil {
				return nil, nil, problem.Wrap(problem.Invalid, err, "documents[%d] (%s): %v", i, names[i], err)
			}
			for _, c := range cs {
				a := &Anchor{Document: sc.ID, Page: sp.el.Page, BBox: sp.el.BBox, Element: sp.el.ID}
				ix.Chunks = append(ix.Chunks, IndexChunk{ID: fmt.Sprintf("c%d", len(ix.Chunks)), Doc: d.ID, DocSHA256: dsum,
					ByteStart: sp.start + c.ByteStart, ByteEnd: sp.start + c.ByteEnd, SHA256: c.SHA256, Text: c.Text, Anchor: a})
			}
		}
		if len(ix.Chunks) > MaxChunks {
			return nil, nil, problem.New(problem.TooLarge, "%d chunks: at most %d per index", len(ix.Chunks), MaxChunks)
		}
	}
	if len(ix.Chunks) == 0 {
		return nil, nil, problem.New(problem.Invalid, "the documents hold no text to index (their elements are figures or empty)")
	}
	ix.Layout = LayoutHash(ix.Format, ix.Chunks)
	if err := ix.Seal(); err != nil {
		return nil, nil, err
	}
	return ix, docs, nil
}

// LayoutHash is the layout hash of chunks in an index of format
// (proof.LayoutHash): one row [chunk id, document, element, page, x, y,
// width, height] per chunk, in order, what binds each chunk to its place
// on the page.
func LayoutHash(format string, chunks []IndexChunk) string {
	rows := make([][]any, 0, len(chunks))
	for _, c := range chunks {
		if c.Anchor == nil {
			rows = append(rows, []any{c.ID, nil, nil, 0, 0, 0, 0, 0})
			continue
		}
		a := c.Anchor
		rows = append(rows, []any{c.ID, a.Document, a.Element, a.Page, a.BBox[0], a.BBox[1], a.BBox[2], a.BBox[3]})
	}
	return proof.LayoutHash(format, rows)
}

// IndexScans verifies each document with read, builds an index of their
// elements for owner, embeds it and holds it for an hour (an index of
// scans is not kept on disk: persistence re-cuts text documents, and
// these are cut by their elements).
func (s *Service) IndexScans(ctx context.Context, owner string, keyID *string, req IndexScansRequest, read ScanReader) (*IndexResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s.Embedder == nil {
		return nil, problem.New(problem.Unavailable, "no embedding model is configured on this box (models.embedder.path): retrieval cannot index")
	}
	names := make([]string, len(req.Documents))
	scans := make([]*Scan, len(req.Documents))
	for i, d := range req.Documents {
		sc, err := read(d.Document)
		if err != nil {
			return nil, problem.Wrap(problem.Invalid, err, "documents[%d] (%s) does not verify: %v; send documents as POST /docreader/read on this box returned them", i, d.Name, err)
		}
		names[i], scans[i] = d.Name, sc
	}
	demo := isDemo(owner)
	if err := s.room(owner, demo); err != nil {
		return nil, err
	}
	ix, docs, err := scanIndex(names, scans, s.EmbedderModel.Ref, s.counters())
	if err != nil {
		return nil, err
	}
	if err := ix.Prepare(ctx, s.Embedder); err != nil {
		return nil, problem.Wrap(problem.Upstream, err, "the embedding model failed: %v", err)
	}
	texts := make([]string, len(ix.Chunks))
	for i, c := range ix.Chunks {
		texts[i] = c.Text
	}
	tokens, err := peer.SumTokens(s.Embedder, texts)
	if err != nil {
		return nil, err
	}
	rc, err := s.issuer().Sign(ctx, "embed", s.EmbedderModel, texts, peer.VectorsHash(ix.Vectors()),
		map[string]string{"inputs": strconv.Itoa(len(texts)), "layout_sha256": ix.Layout, "synthetic": strconv.FormatBool(isTrue(req.Synthetic))}, tokens, keyID)
	if err != nil {
		return nil, err
	}
	exp, err := s.hold(owner, demo, ix, docs)
	if err != nil {
		return nil, err
	}
	return &IndexResponse{Index: ix, ExpiresAt: exp.UTC().Format(time.RFC3339), Receipt: rc}, nil
}
