// Package index is evidence retrieval's index: documents cut into chunks
// with exact byte offsets (package chunker), a hash that commits to an
// RFC 6962 Merkle tree over the chunks (package proof has the bytes each
// hash covers), each chunk's inclusion proof, and the search over it: the
// dense retriever (the embedder's vectors, exact cosine) and the keyword
// one (BM25) fused by reciprocal rank, then ordered by a reranker. Every
// text is read whole by the models or refused (fit.go).
package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"boxd/pipelines/retrieval/bm25"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/merkle"
	"boxd/pipelines/retrieval/proof"
)

// Limits are the contract's hosted limits (section 8).
const (
	MaxDocuments = 60
	MaxChunks    = 1500
)

// Document is a document to index: the id it is indexed under, and its
// text.
type Document struct {
	ID   string
	Text string
}

// Index is the contract's index: hash commits to the corpus root, the
// chunker settings and the embedder's repository and revision.
type Index struct {
	// Format is the index's format version (proof.IndexV2 for new
	// indexes; "" for v1, made before the field was): which bytes its
	// leaves and hash cover.
	Format     string           `json:"format,omitempty"`
	Hash       string           `json:"hash"`
	CorpusRoot string           `json:"corpus_root"`
	NChunks    int              `json:"n_chunks"`
	Chunks     []proof.Chunk    `json:"chunks"`
	Chunker    chunker.Settings `json:"chunker"`
	Embedder   proof.ModelRef   `json:"embedder"`
	// Layout is the layout hash of an index of scanned documents
	// (retrieval.LayoutHash), "" for text.
	Layout string `json:"layout_sha256,omitempty"`

	tree    *merkle.Tree
	bm25    *bm25.Index
	vectors [][]float32 // per chunk, unit length (Prepare)
}

// LimitError says which limit a request went over (413).
type LimitError struct {
	What       string
	Got, Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%d %s: at most %d per index", e.Got, e.What, e.Limit)
}

// Build cuts the documents and builds the index over their chunks,
// in document order, in the current format, with a chunker that bounds no
// tokens. Document ids must be unique and non-empty.
func Build(docs []Document, s chunker.Settings, embedder proof.ModelRef) (*Index, error) {
	return BuildWith(docs, s, embedder, proof.Current, chunker.Counters{})
}

// BuildWith is Build in an index format, the chunker's token
// bounds counted by the models in c.
func BuildWith(docs []Document, s chunker.Settings, embedder proof.ModelRef, format string, c chunker.Counters) (*Index, error) {
	if err := proof.Check(format); err != nil {
		return nil, err
	}
	if len(docs) > MaxDocuments {
		return nil, &LimitError{What: "documents", Got: len(docs), Limit: MaxDocuments}
	}
	ix := &Index{Format: format, Chunker: s, Embedder: embedder}
	seen := map[string]bool{}
	for i, d := range docs {
		if d.ID == "" {
			return nil, fmt.Errorf("documents[%d].id is empty: give every document an id", i)
		}
		if seen[d.ID] {
			return nil, fmt.Errorf("documents[%d].id %q appears twice: ids must be unique", i, d.ID)
		}
		seen[d.ID] = true
		sum := sha256.Sum256([]byte(d.Text))
		dsum := hex.EncodeToString(sum[:])
		cs, err := chunker.CutCounted(d.ID, d.Text, s, c)
		if err != nil {
			return nil, fmt.Errorf("documents[%d]: %w", i, err)
		}
		for _, c := range cs {
			ix.Chunks = append(ix.Chunks, proof.Chunk{ID: fmt.Sprintf("c%d", len(ix.Chunks)), Doc: d.ID, DocSHA256: dsum,
				ByteStart: c.ByteStart, ByteEnd: c.ByteEnd, SHA256: c.SHA256, Text: c.Text})
		}
		if len(ix.Chunks) > MaxChunks {
			return nil, &LimitError{What: "chunks", Got: len(ix.Chunks), Limit: MaxChunks}
		}
	}
	if err := ix.Seal(); err != nil {
		return nil, err
	}
	return ix, nil
}

// Seal builds the corpus tree over the chunks and the index hash (Build
// does; an index of scans, whose chunks and layout hash are its own, is
// sealed by its builder).
func (ix *Index) Seal() error {
	leaves := make([][]byte, len(ix.Chunks))
	for i, c := range ix.Chunks {
		leaves[i] = c.Leaf(ix.Format)
	}
	t, err := merkle.New(leaves)
	if err != nil {
		return err
	}
	root, err := t.Root()
	if err != nil {
		return err
	}
	ix.tree = t
	ix.CorpusRoot = hex.EncodeToString(root[:])
	ix.NChunks = len(ix.Chunks)
	ix.Hash = proof.IndexHash(ix.Format, ix.CorpusRoot, ix.NChunks, ix.Chunker, ix.Embedder, ix.Layout)
	return nil
}

// Prove is chunk i's inclusion proof.
func (ix *Index) Prove(i int) (proof.Inclusion, error) {
	if i < 0 || i >= ix.NChunks {
		return proof.Inclusion{}, fmt.Errorf("retrieval: no chunk %d in an index of %d", i, ix.NChunks)
	}
	path, err := ix.tree.Prove(i)
	if err != nil {
		return proof.Inclusion{}, err
	}
	return proof.Inclusion{Index: i, Size: ix.NChunks, Path: path}, nil
}

// Vectors are the chunks' vectors, in order (Prepare's; nil before it).
func (ix *Index) Vectors() [][]float32 { return ix.vectors }

// Restore gives an index built again from its documents the vectors it
// was embedded with (kept on disk) and its keyword index, in place of
// Prepare.
func (ix *Index) Restore(vectors [][]float32) {
	toks := make([][]string, len(ix.Chunks))
	for i, c := range ix.Chunks {
		toks[i] = bm25.Analyze(c.Text)
	}
	ix.bm25, ix.vectors = bm25.New(toks), vectors
}
