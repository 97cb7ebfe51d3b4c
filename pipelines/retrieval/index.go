// Package retrieval is evidence retrieval (contract 3, evidence retrieval)
// as the box serves it: the service that builds indexes (package index:
// chunks with exact byte offsets, a hash committing to a Merkle tree over
// them, hybrid search) for their owners, holds them for an hour within a
// quota (or keeps them on disk), answers searches and quotes, and signs
// what it did: each model call's receipt and the search receipt (package
// receipt, which also verifies one). The embedding and rerank models are
// also served in their peers' shapes (package peer).
package retrieval

import (
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/index"
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
	MaxDocuments = index.MaxDocuments
	MaxChunks    = index.MaxChunks
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

// The index and its search are package index's, under their names here.
type (
	// ModelRef names a model by repository and pinned revision.
	ModelRef = proof.ModelRef
	// IndexChunk is a chunk as the index lists it.
	IndexChunk = proof.Chunk
	// Proof is a chunk's inclusion proof in its index's corpus tree.
	Proof = proof.Inclusion
	// Index is the contract's index.
	Index = index.Index
	// LimitError says which limit a request went over (413).
	LimitError = index.LimitError
	// Embedder turns texts into unit-length vectors.
	Embedder = index.Embedder
	// Reranker scores documents against a query, higher more relevant.
	Reranker = index.Reranker
	// TokenCounter counts a text's tokens as the model takes them.
	TokenCounter = index.TokenCounter
	// Params are a search's settings.
	Params = index.Params
	// Result is one ranked chunk.
	Result = index.Result
	// FitError says that a text does not fit a model's context.
	FitError = index.FitError
)

// Search settings and modes (package index).
const (
	Candidates = index.Candidates
	RRFK       = index.RRFK
	DefaultK   = index.DefaultK
	ModeHybrid = index.ModeHybrid
	ModeDense  = index.ModeDense
	ModeBM25   = index.ModeBM25
)

// ErrNotPrepared is returned by Search on an index Prepare has not run on.
var ErrNotPrepared = index.ErrNotPrepared

// PPM is a score in parts per million, rounded (index.PPM).
func PPM(x float64) int64 { return index.PPM(x) }

// IndexHash is the index hash of an index of format (proof.IndexHash).
func IndexHash(format, root string, n int, chunker ChunkerSettings, embedder ModelRef, layout string) string {
	return proof.IndexHash(format, root, n, chunker, embedder, layout)
}

// BuildIndex cuts the documents and builds the index over their chunks,
// in document order, in the current format, with a chunker that bounds no
// tokens (index.Build).
func BuildIndex(docs []Document, s ChunkerSettings, embedder ModelRef) (*Index, error) {
	return index.Build(indexDocuments(docs), s, embedder)
}

// BuildIndexWith is BuildIndex in an index format, the chunker's token
// bounds counted by the models in c (index.BuildWith).
func BuildIndexWith(docs []Document, s ChunkerSettings, embedder ModelRef, format string, c chunker.Counters) (*Index, error) {
	return index.BuildWith(indexDocuments(docs), s, embedder, format, c)
}

// indexDocuments are documents as the index cuts them.
func indexDocuments(docs []Document) []index.Document {
	out := make([]index.Document, len(docs))
	for i, d := range docs {
		out[i] = index.Document{ID: d.ID, Text: d.Text}
	}
	return out
}

// VerifyChunk checks a chunk and its proof against an index's corpus
// root and chunk count, and its offsets against the document's text when
// doc is given (proof.VerifyChunk).
func VerifyChunk(format string, c IndexChunk, p Proof, root string, n int, doc *string) error {
	return proof.VerifyChunk(format, c, p, root, n, doc)
}
