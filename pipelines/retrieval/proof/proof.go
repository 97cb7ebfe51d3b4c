// Package proof is the byte formats a retrieval index's hashes cover: a
// chunk's Merkle leaf, the index hash and the layout hash of an index of
// scans, in each format version. Version 2 writes them as the canonical
// JSON signed records use (engine/attest.Canonical: keys sorted by UTF-8
// bytes, no white space, non-ASCII and <, >, & written as themselves);
// version 1, Go's encoding/json with fields in declaration order and <,
// >, & escaped as \u003c, \u003e, \u0026, is kept so that indexes,
// proofs and receipts made before still verify. It also holds a chunk as
// an index lists it (Chunk) and its inclusion proof (Inclusion), which
// VerifyChunk checks against the corpus root.
package proof

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"boxd/engine/attest"
)

// Index format versions: what an index's "format" names ("" is v1, the
// indexes made before the field was).
const (
	IndexV1 = "boxd.retrieval.index.v1"
	IndexV2 = "boxd.retrieval.index.v2"
	// Current is the format new indexes are made in.
	Current = IndexV2
)

// Leaf and layout formats, by index format.
const (
	LeafV1   = "boxd.retrieval.leaf.v1"
	LeafV2   = "boxd.retrieval.leaf.v2"
	LayoutV1 = "boxd.retrieval.layout.v1"
	LayoutV2 = "boxd.retrieval.layout.v2"
)

// Check names an unknown format (nil for v1, v2 and "").
func Check(format string) error {
	switch format {
	case "", IndexV1, IndexV2:
		return nil
	}
	return fmt.Errorf("index format %q: this box knows %s and %s", format, IndexV1, IndexV2)
}

func v2(format string) bool { return format == IndexV2 }

// canonical is attest.Canonical of values that always encode (strings,
// integers, the settings structs).
func canonical(v any) []byte {
	b, err := attest.Canonical(v)
	if err != nil {
		panic(fmt.Sprintf("proof: canonical JSON: %v", err))
	}
	return b
}

// Leaf is the bytes of a chunk's leaf in an index of format: the JSON
// array [leaf format, doc_sha256, doc, chunk id, byte_start, byte_end,
// sha256], so that every field is bound and none can be read as another.
// v2: canonical JSON, e.g.
// ["boxd.retrieval.leaf.v2","<64 hex>","a<b","c0",0,17,"<64 hex>"].
func Leaf(format, docSHA256, doc, id string, start, end int, sum string) []byte {
	if v2(format) {
		return canonical([]any{LeafV2, docSHA256, doc, id, start, end, sum})
	}
	b, _ := json.Marshal([]any{LeafV1, docSHA256, doc, id, start, end, sum})
	return b
}

// AnchoredLeaf is the leaf of a chunk of a scanned document: in v2 the
// array Leaf writes with the chunk's anchor object appended (canonical
// JSON: {"bbox":[x,y,w,h],"document","element","page"}), so that the
// corpus root binds each chunk's place on its page; v1 (made before it
// did) is Leaf, the anchor bound by the layout hash alone.
func AnchoredLeaf(format, docSHA256, doc, id string, start, end int, sum string, anchor any) []byte {
	if !v2(format) || anchor == nil {
		return Leaf(format, docSHA256, doc, id, start, end, sum)
	}
	return canonical([]any{LeafV2, docSHA256, doc, id, start, end, sum, anchor})
}

// IndexHash is the index hash: SHA-256 (hex) of the JSON object
// {"v": index format, "corpus_root", "n_chunks", "chunker", "embedder",
// "layout_sha256"} (layout_sha256 only for an index of scans). v2: its
// canonical JSON (keys sorted: chunker, corpus_root, embedder,
// layout_sha256, n_chunks, v). v1: those keys in the order v,
// corpus_root, n_chunks, chunker, embedder, layout_sha256, each object
// inside in its Go field order, as encoding/json writes them.
func IndexHash(format, root string, n int, chunker, embedder any, layout string) string {
	var b []byte
	if v2(format) {
		m := map[string]any{"v": IndexV2, "corpus_root": root, "n_chunks": n, "chunker": chunker, "embedder": embedder}
		if layout != "" {
			m["layout_sha256"] = layout
		}
		b = canonical(m)
	} else {
		b, _ = json.Marshal(struct {
			V          string `json:"v"`
			CorpusRoot string `json:"corpus_root"`
			NChunks    int    `json:"n_chunks"`
			Chunker    any    `json:"chunker"`
			Embedder   any    `json:"embedder"`
			Layout     string `json:"layout_sha256,omitempty"`
		}{IndexV1, root, n, chunker, embedder, layout})
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// LayoutHash is the hex SHA-256 of the JSON array [layout format, rows]:
// one row [chunk id, document, element, page, x, y, width, height] per
// chunk in order (v2: canonical JSON).
func LayoutHash(format string, rows [][]any) string {
	var b []byte
	if v2(format) {
		b = canonical([]any{LayoutV2, rows})
	} else {
		b, _ = json.Marshal([]any{LayoutV1, rows})
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
