package retrieval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"boxd/pipelines/retrieval/bm25"
	"boxd/pipelines/retrieval/merkle"
)

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

// Leaf is the bytes of a chunk's leaf: the JSON array
// ["boxd.retrieval.leaf.v1", doc_sha256, doc, chunk id, byte_start,
// byte_end, sha256], so that every field is bound and none can be read
// as another.
func Leaf(docSHA256, doc, id string, start, end int, sum string) []byte {
	b, _ := json.Marshal([]any{"boxd.retrieval.leaf.v1", docSHA256, doc, id, start, end, sum})
	return b
}

// leaf is the chunk's Merkle leaf.
func (c IndexChunk) leaf() []byte {
	return Leaf(c.DocSHA256, c.Doc, c.ID, c.ByteStart, c.ByteEnd, c.SHA256)
}

// Index is the contract's index: hash commits to the corpus root, the
// chunker settings and the embedder's repository and revision.
type Index struct {
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

// IndexHash is the index hash: SHA-256 (hex) of the JSON object
// {"v":"boxd.retrieval.index.v1","corpus_root","n_chunks","chunker","embedder"}.
//
// An index of scanned documents (IndexScans) also commits to its layout
// hash, as "layout_sha256" after "embedder"; an index of text has none,
// and its hash is the same as before there were scans.
func IndexHash(root string, n int, chunker ChunkerSettings, embedder ModelRef, layout string) string {
	b, _ := json.Marshal(struct {
		V          string          `json:"v"`
		CorpusRoot string          `json:"corpus_root"`
		NChunks    int             `json:"n_chunks"`
		Chunker    ChunkerSettings `json:"chunker"`
		Embedder   ModelRef        `json:"embedder"`
		Layout     string          `json:"layout_sha256,omitempty"`
	}{"boxd.retrieval.index.v1", root, n, chunker, embedder, layout})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// BuildIndex cuts the documents and builds the index over their chunks,
// in document order. Document ids must be unique and non-empty.
func BuildIndex(docs []Document, chunker ChunkerSettings, embedder ModelRef) (*Index, error) {
	if len(docs) > MaxDocuments {
		return nil, &LimitError{What: "documents", Got: len(docs), Limit: MaxDocuments}
	}
	ix := &Index{Chunker: chunker, Embedder: embedder}
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
		cs, err := Cut(d.ID, d.Text, chunker)
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
		leaves[i] = c.leaf()
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
	ix.Hash = IndexHash(ix.CorpusRoot, ix.NChunks, ix.Chunker, ix.Embedder, ix.Layout)
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

// VerifyChunk checks a chunk against an index's corpus root and chunk
// count (both committed to by the index hash): its text hashes to its
// sha256, and its leaf is in the tree of n leaves by the proof. The size
// comes from the index, not from the proof: an RFC 6962 audit path of a
// leaf in a full left subtree also checks out against a wrong size. With
// the document's text (doc non-nil), the chunk's bytes are also the
// document's bytes at its offsets and the document hashes to doc_sha256.
func VerifyChunk(c IndexChunk, p Proof, root string, n int, doc *string) error {
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
	if err := merkle.VerifyInclusion(c.leaf(), p.Index, p.Size, p.Path, root); err != nil {
		return fmt.Errorf("chunk %s: %w", c.ID, err)
	}
	return nil
}
