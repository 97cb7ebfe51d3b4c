// Package receipt is evidence retrieval's signed search receipt
// (service.retrieval.search.v1; contract 3, section 2): what a search
// ran on, with which settings, and every result it returned, each with
// what its Merkle leaf binds; written, signed and read in the attest.Signed
// envelope. Verify checks one as POST /retrieval/verify and boxd verify
// do: exactly the fields the box writes, its signature by this box, its
// index hash, and each result handed back against the corpus root.
package receipt

import (
	"crypto/sha256"
	"encoding/hex"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/proof"
)

// Format is the search receipt's format (contract 3, section 2).
const Format = "service.retrieval.search.v1"

// Index is the index a search ran on. Chunker is beyond the contract's
// list: the index hash commits to it, so a verifier needs it to recompute
// the hash.
type Index struct {
	// Format is the index's format version (omitted for v1, so receipts
	// signed before it was keep their signed bytes).
	Format     string           `json:"format,omitempty"`
	Hash       string           `json:"hash"`
	CorpusRoot string           `json:"corpus_root"`
	NChunks    int              `json:"n_chunks"`
	Chunker    chunker.Settings `json:"chunker"`
	Embedder   proof.ModelRef   `json:"embedder"`
	// Layout is an index of scans' layout hash (the index hash commits
	// to it).
	Layout string `json:"layout_sha256,omitempty"`
}

// Params are the search's settings.
type Params struct {
	K          int    `json:"k"`
	Rerank     bool   `json:"rerank"`
	Mode       string `json:"mode"`
	Candidates int    `json:"candidates"`
}

// ScoresPPM are a result's scores in parts per million (integers; null
// when that score was not computed).
type ScoresPPM struct {
	Dense  *int64 `json:"dense"`
	Rerank *int64 `json:"rerank"`
}

// Ranks are a result's ranks in each retriever's list (null when not in
// it).
type Ranks struct {
	Dense *int `json:"dense_rank"`
	BM25  *int `json:"bm25_rank"`
}

// Result is one ranked chunk in a receipt: everything its leaf binds, so
// that a chunk and its proof can be checked against the root.
type Result struct {
	Rank      int       `json:"rank"`
	Chunk     string    `json:"chunk"`
	Doc       string    `json:"doc"`
	DocSHA256 string    `json:"doc_sha256"`
	ByteStart int       `json:"byte_start"`
	ByteEnd   int       `json:"byte_end"`
	SHA256    string    `json:"sha256"`
	ScoresPPM ScoresPPM `json:"scores_ppm"`
	Ranks     Ranks     `json:"ranks"`
	// Anchor places a scanned document's chunk on its page (an index of
	// scans only): signed here and, in v2, bound by the chunk's leaf.
	Anchor *proof.Anchor `json:"anchor,omitempty"`
}

// ModelCallRef names a model-call receipt the search made.
type ModelCallRef struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // embed or rerank
}

// Body is what the signature covers: the receipt without sig.
type Body struct {
	V           string          `json:"v"`
	ID          string          `json:"id"`
	Index       Index           `json:"index"`
	Reranker    *proof.ModelRef `json:"reranker"`
	QuerySHA256 string          `json:"query_sha256"`
	Params      Params          `json:"params"`
	Results     []Result        `json:"results"`
	ModelCalls  []ModelCallRef  `json:"model_calls"`
	Signer      attest.Signer   `json:"signer"`
}

// SignedBy names the key that signed the receipt (attest.SignedBody).
func (b Body) SignedBy() attest.Signer { return b.Signer }

// Search is the signed search receipt: its body's fields and sig, flat
// (attest.Signed).
type Search struct {
	Body
	Sig string `json:"sig"`
}

// signed is the receipt as its envelope.
func (r Search) signed() attest.Signed[Body] { return attest.Signed[Body]{Body: r.Body, Sig: r.Sig} }

// MarshalJSON writes the receipt's fields flat.
func (r Search) MarshalJSON() ([]byte, error) { return r.signed().MarshalJSON() }

// UnmarshalJSON reads them.
func (r *Search) UnmarshalJSON(b []byte) error {
	var s attest.Signed[Body]
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	*r = Search{Body: s.Body, Sig: s.Sig}
	return nil
}

// Sign signs the receipt of a search for query: b's index, reranker,
// settings, results and model calls, with the format, a new receipt id,
// the query's hash and k as its signer filled in.
func Sign(k *attest.Key, query string, b Body) (*Search, error) {
	q := sha256.Sum256([]byte(query))
	b.V, b.ID, b.QuerySHA256, b.Signer = Format, ids.New("rs-", 12), hex.EncodeToString(q[:]), k.Signer()
	s, err := attest.Sign(k, Format, b)
	if err != nil {
		return nil, err
	}
	return &Search{Body: s.Body, Sig: s.Sig}, nil
}
