package retrieval

import (
	"crypto/ed25519"
	"encoding/json"

	"boxd/engine/attest"
	"boxd/pipelines/retrieval/receipt"
)

// The search receipt is package receipt's: its parts under their names
// here, a search's results signed into one, and its verification.

// SearchFormat is the search receipt's format (contract 3, section 2).
const SearchFormat = receipt.Format

type (
	// ReceiptIndex is the index a search ran on.
	ReceiptIndex = receipt.Index
	// ReceiptParams are the search's settings.
	ReceiptParams = receipt.Params
	// ScoresPPM are a result's scores in parts per million.
	ScoresPPM = receipt.ScoresPPM
	// Ranks are a result's ranks in each retriever's list.
	Ranks = receipt.Ranks
	// ReceiptResult is one ranked chunk in a receipt.
	ReceiptResult = receipt.Result
	// ModelCallRef names a model-call receipt the search made.
	ModelCallRef = receipt.ModelCallRef
	// SearchReceipt is the signed search receipt.
	SearchReceipt = receipt.Search
	// ProvenChunk is a result's chunk as a caller hands it back.
	ProvenChunk = receipt.ProvenChunk
	// SearchVerification is what VerifySearchReport found.
	SearchVerification = receipt.Verification
	// VerifyResponse is POST /retrieval/verify's answer.
	VerifyResponse = receipt.Response
)

// Check is one verification step (the attest package's).
type Check = attest.Check

// SignSearch signs the receipt of a search over ix: its results, the
// model calls it made (embedding the query, reranking) and the reranker
// when it ran.
func SignSearch(k *attest.Key, ix *Index, query string, p Params, res []Result, reranker *ModelRef, calls []ModelCallRef) (*SearchReceipt, error) {
	if p.K == 0 {
		p.K = DefaultK
	}
	if p.Mode == "" {
		p.Mode = ModeHybrid
	}
	b := receipt.Body{
		Index:      ReceiptIndex{Format: ix.Format, Hash: ix.Hash, CorpusRoot: ix.CorpusRoot, NChunks: ix.NChunks, Chunker: ix.Chunker, Embedder: ix.Embedder, Layout: ix.Layout},
		Params:     ReceiptParams{K: p.K, Rerank: p.Rerank, Mode: p.Mode, Candidates: Candidates},
		Results:    []ReceiptResult{},
		ModelCalls: append([]ModelCallRef{}, calls...),
	}
	if p.Rerank {
		b.Reranker = reranker
	}
	for _, r := range res {
		rr := ReceiptResult{Rank: r.Rank, Chunk: r.Chunk.ID, Doc: r.Chunk.Doc, DocSHA256: r.Chunk.DocSHA256,
			ByteStart: r.Chunk.ByteStart, ByteEnd: r.Chunk.ByteEnd, SHA256: r.Chunk.SHA256, Anchor: r.Chunk.Anchor}
		if r.HasDense {
			v := PPM(r.Dense)
			rr.ScoresPPM.Dense = &v
		}
		if r.Reranked {
			v := PPM(r.Relevance)
			rr.ScoresPPM.Rerank = &v
		}
		if r.DenseRank > 0 {
			v := r.DenseRank
			rr.Ranks.Dense = &v
		}
		if r.BM25Rank > 0 {
			v := r.BM25Rank
			rr.Ranks.BM25 = &v
		}
		b.Results = append(b.Results, rr)
	}
	return receipt.Sign(k, query, b)
}

// VerifySearch is VerifySearchReport's checks.
func VerifySearch(raw []byte, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document) ([]Check, error) {
	return receipt.Checks(raw, pinned, chunks, verifyDocuments(docs))
}

// DecodeSearchReceipt reads a search receipt exactly as the box wrote it
// (receipt.Decode).
func DecodeSearchReceipt(raw []byte) (SearchReceipt, error) { return receipt.Decode(raw) }

// CheckVerifyDocuments refuses documents sent twice under one id or
// without an id (receipt.CheckDocuments).
func CheckVerifyDocuments(docs []Document) error {
	return receipt.CheckDocuments(verifyDocuments(docs))
}

// VerifySearchReport checks a search receipt, its signature by this box
// (pinned), its index hash, and the chunks and documents handed back
// (receipt.Verify).
func VerifySearchReport(raw []byte, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document) (*SearchVerification, error) {
	return receipt.Verify(raw, pinned, chunks, verifyDocuments(docs))
}

// verifyDocuments are the documents a verifier sent, as receipt checks
// them.
func verifyDocuments(docs []Document) []receipt.Document {
	out := make([]receipt.Document, len(docs))
	for i, d := range docs {
		out[i] = receipt.Document{ID: d.ID, Text: d.Text}
	}
	return out
}

// VerifyRequest is POST /retrieval/verify's body.
type VerifyRequest struct {
	Receipt   json.RawMessage `json:"receipt"`
	Chunks    []ProvenChunk   `json:"chunks"`
	Documents []Document      `json:"documents"`
}

// Verify checks a search receipt against this box's key. A receipt with
// a field the box does not write, or documents sent twice under one id,
// is refused (400) naming it (receipt.Answer).
func (s *Service) Verify(req VerifyRequest) (*VerifyResponse, error) {
	var pub ed25519.PublicKey
	if s.Key != nil {
		pub = s.Key.PublicKey()
	}
	return receipt.Answer(req.Receipt, pub, req.Chunks, verifyDocuments(req.Documents))
}
