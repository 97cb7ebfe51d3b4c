package proof

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"boxd/pipelines/retrieval/merkle"
)

// ModelRef names a model by repository and pinned revision (the index
// hash covers the embedder's).
type ModelRef struct {
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
}

// Anchor places a chunk of a scanned document on its page.
type Anchor struct {
	Document string `json:"document"` // the reader document's id
	Page     int    `json:"page"`
	BBox     [4]int `json:"bbox"` // [x, y, width, height] in the page raster's pixels
	Element  string `json:"element"`
}

// Chunk is a chunk as an index lists it.
type Chunk struct {
	ID        string `json:"id"` // c<position in the index>
	Doc       string `json:"doc"`
	DocSHA256 string `json:"doc_sha256"`
	ByteStart int    `json:"byte_start"`
	ByteEnd   int    `json:"byte_end"`
	SHA256    string `json:"sha256"`
	Text      string `json:"text"`
	// Anchor places a scanned document's chunk on its page (an index of
	// scans).
	Anchor *Anchor `json:"anchor,omitempty"`
}

// Leaf is the chunk's Merkle leaf in an index of format (Leaf; a scanned
// document's chunk with its anchor, AnchoredLeaf).
func (c Chunk) Leaf(format string) []byte {
	if c.Anchor != nil {
		return AnchoredLeaf(format, c.DocSHA256, c.Doc, c.ID, c.ByteStart, c.ByteEnd, c.SHA256, c.Anchor)
	}
	return Leaf(format, c.DocSHA256, c.Doc, c.ID, c.ByteStart, c.ByteEnd, c.SHA256)
}

// Inclusion is a chunk's inclusion proof in its index's corpus tree.
type Inclusion struct {
	Index int      `json:"index"` // the chunk's position (leaf index)
	Size  int      `json:"size"`  // leaves in the tree
	Path  []string `json:"path"`  // sibling hashes, hex, leaf side first
}

// VerifyChunk checks a chunk against the corpus root and chunk count of
// an index of format (both committed to by the index hash): its text hashes to its
// sha256, and its leaf is in the tree of n leaves by the proof. The size
// comes from the index, not from the proof: an RFC 6962 audit path of a
// leaf in a full left subtree also checks out against a wrong size. With
// the document's text (doc non-nil), the chunk's bytes are also the
// document's bytes at its offsets and the document hashes to doc_sha256.
func VerifyChunk(format string, c Chunk, p Inclusion, root string, n int, doc *string) error {
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
	if err := merkle.VerifyInclusion(c.Leaf(format), p.Index, p.Size, p.Path, root); err != nil {
		return fmt.Errorf("chunk %s: %w", c.ID, err)
	}
	return nil
}
