// Package retrieval is evidence retrieval (contract 3, evidence retrieval):
// documents cut into chunks with exact byte offsets (package chunker), an
// index whose hash commits to an RFC 6962 Merkle tree over the chunks
// (package proof has the bytes each hash covers), keyword search scored
// as Lucene's BM25, and proofs that a returned chunk is in the index.
package retrieval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"boxd/pipelines/retrieval/bm25"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/merkle"
	"boxd/pipelines/retrieval/proof"
)

// ChunkerSettings say how documents are cut (package chunker).
type ChunkerSettings = chunker.Settings

// Chunk is one piece of a document (package chunker).
type Chunk = chunker.Chunk

// DefaultChunker is the contract's chunker: at most 1,200 characters,
// and the models' token bounds (chunker.Bounded).
var DefaultChunker = chunker.Default

// Cut splits text into chunks (chunker.Cut).
func Cut(doc, text string, s ChunkerSettings) ([]Chunk, error) { return chunker.Cut(doc, text, s) }

// Limits are the contract's hosted limits (section 8).
const (
	MaxDocuments = 60
	MaxChunks    = 1500
)

// Document is one document as the caller sent it.
type Document struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
	// notUTF8 are the fields sent as something other than UTF-8
	// (input.go).
	notUTF8 []string
}

// ModelRef names a model by repository and pinned revision.
type ModelRef struct {
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
}

// IndexChunk is a chunk as the index lists it.
type IndexChunk struct {
	ID        string `json:"id"` // c<position in the index>
	Doc       string `json:"doc"`
	DocSHA256 string `json:"doc_sha256"`
	ByteStart int    `json:"byte_start"`
	ByteEnd   int    `json:"byte_end"`
	SHA256    string `json:"sha256"`
	Text      string `json:"text"`
	// Anchor places a scanned document's chunk on its page (IndexScans).
	Anchor *Anchor `json:"anchor,omitempty"`
}

// leaf is the chunk's Merkle leaf in an index of format (proof.Leaf; a
// scanned document's chunk with its anchor, proof.AnchoredLeaf).
func (c IndexChunk) leaf(format string) []byte {
	if c.Anchor != nil {
		return proof.AnchoredLeaf(format, c.DocSHA256, c.Doc, c.ID, c.ByteStart, c.ByteEnd, c.SHA256, c.Anchor)
	}
	return proof.Leaf(format, c.DocSHA256, c.Doc, c.ID, c.ByteStart, c.ByteEnd, c.SHA256)
}

// Index is the contract's index: hash commits to the corpus root, the
// chunker settings and the embedder's repository and revision.
type Index struct {
	// Format is the index's format version (proof.IndexV2 for new
	// indexes; "" for v1, made before the field was): which bytes its
	// leaves and hash cover.
	Format     string          `json:"format,omitempty"`
	Hash       string          `json:"hash"`
	CorpusRoot string          `json:"corpus_root"`
	NChunks    int             `json:"n_chunks"`
	Chunks     []IndexChunk    `json:"chunks"`
	Chunker    ChunkerSettings `json:"chunker"`
	Embedder   ModelRef        `json:"embedder"`
	// Layout is the layout hash of an index of scanned documents
	// (LayoutHash), "" for text.
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

// IndexHash is the index hash of an index of format (proof.IndexHash).
func IndexHash(format, root string, n int, chunker ChunkerSettings, embedder ModelRef, layout string) string {
	return proof.IndexHash(format, root, n, chunker, embedder, layout)
}

// BuildIndex cuts the documents and builds the index over their chunks,
// in document order, in the current format, with a chunker that bounds no
// tokens. Document ids must be unique and non-empty.
func BuildIndex(docs []Document, s ChunkerSettings, embedder ModelRef) (*Index, error) {
	return BuildIndexWith(docs, s, embedder, proof.Current, chunker.Counters{})
}

// BuildIndexWith is BuildIndex in an index format, the chunker's token
// bounds counted by the models in c.
func BuildIndexWith(docs []Document, s ChunkerSettings, embedder ModelRef, format string, c chunker.Counters) (*Index, error) {
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
			ix.Chunks = append(ix.Chunks, IndexChunk{ID: fmt.Sprintf("c%d", len(ix.Chunks)), Doc: d.ID, DocSHA256: dsum,
				ByteStart: c.ByteStart, ByteEnd: c.ByteEnd, SHA256: c.SHA256, Text: c.Text})
		}
		if len(ix.Chunks) > MaxChunks {
			return nil, &LimitError{What: "chunks", Got: len(ix.Chunks), Limit: MaxChunks}
		}
	}
	if err := ix.seal(); err != nil {
		return nil, err
	}
	return ix, nil
}

// seal builds the corpus tree over the chunks and the index hash.
func (ix *Index) seal() error {
	leaves := make([][]byte, len(ix.Chunks))
	for i, c := range ix.Chunks {
		leaves[i] = c.leaf(ix.Format)
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
	ix.Hash = IndexHash(ix.Format, ix.CorpusRoot, ix.NChunks, ix.Chunker, ix.Embedder, ix.Layout)
	return nil
}

// Proof is a chunk's inclusion proof in its index's corpus tree.
type Proof struct {
	Index int      `json:"index"` // the chunk's position (leaf index)
	Size  int      `json:"size"`  // leaves in the tree
	Path  []string `json:"path"`  // sibling hashes, hex, leaf side first
}

// Prove is chunk i's inclusion proof.
func (ix *Index) Prove(i int) (Proof, error) {
	if i < 0 || i >= ix.NChunks {
		return Proof{}, fmt.Errorf("retrieval: no chunk %d in an index of %d", i, ix.NChunks)
	}
	path, err := ix.tree.Prove(i)
	if err != nil {
		return Proof{}, err
	}
	return Proof{Index: i, Size: ix.NChunks, Path: path}, nil
}

// VerifyChunk checks a chunk against the corpus root and chunk count of
// an index of format (both committed to by the index hash): its text hashes to its
// sha256, and its leaf is in the tree of n leaves by the proof. The size
// comes from the index, not from the proof: an RFC 6962 audit path of a
// leaf in a full left subtree also checks out against a wrong size. With
// the document's text (doc non-nil), the chunk's bytes are also the
// document's bytes at its offsets and the document hashes to doc_sha256.
func VerifyChunk(format string, c IndexChunk, p Proof, root string, n int, doc *string) error {
	if p.Size != n {
		return fmt.Errorf("chunk %s: the proof is for a tree of %d chunks, the index has %d", c.ID, p.Size, n)
	}
	sum := sha256.Sum256([]byte(c.Text))
	if hex.EncodeToString(sum[:]) != c.SHA256 {
		return fmt.Errorf("chunk %s: its text does not hash to its sha256", c.ID)
	}
	if doc != nil {
		dsum := sha256.Sum256([]byte(*doc))
		if hex.EncodeToString(dsum[:]) != c.DocSHA256 {
			return fmt.Errorf("chunk %s: the document sent does not hash to doc_sha256", c.ID)
		}
		if c.ByteStart < 0 || c.ByteEnd > len(*doc) || c.ByteStart >= c.ByteEnd || (*doc)[c.ByteStart:c.ByteEnd] != c.Text {
			return fmt.Errorf("chunk %s: the document's bytes %d..%d are not the chunk's text", c.ID, c.ByteStart, c.ByteEnd)
		}
	}
	if err := merkle.VerifyInclusion(c.leaf(format), p.Index, p.Size, p.Path, root); err != nil {
		return fmt.Errorf("chunk %s: %w", c.ID, err)
	}
	return nil
}
