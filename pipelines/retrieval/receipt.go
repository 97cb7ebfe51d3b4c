package retrieval

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/pipelines/docreader/exact"
	"boxd/pipelines/retrieval/proof"
)

// SearchFormat is the search receipt's format (contract 3, section 2).
const SearchFormat = "service.retrieval.search.v1"

// ReceiptIndex is the index a search ran on. Chunker is beyond the
// contract's list: the index hash commits to it, so a verifier needs it
// to recompute the hash.
type ReceiptIndex struct {
	// Format is the index's format version (omitted for v1, so receipts
	// signed before it was keep their signed bytes).
	Format     string          `json:"format,omitempty"`
	Hash       string          `json:"hash"`
	CorpusRoot string          `json:"corpus_root"`
	NChunks    int             `json:"n_chunks"`
	Chunker    ChunkerSettings `json:"chunker"`
	Embedder   ModelRef        `json:"embedder"`
	// Layout is an index of scans' layout hash (the index hash commits
	// to it).
	Layout string `json:"layout_sha256,omitempty"`
}

// ReceiptParams are the search's settings.
type ReceiptParams struct {
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

// ReceiptResult is one ranked chunk in a receipt: everything its leaf
// binds, so that a chunk and its proof can be checked against the root.
type ReceiptResult struct {
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
	Anchor *Anchor `json:"anchor,omitempty"`
}

// ModelCallRef names a model-call receipt the search made.
type ModelCallRef struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // embed or rerank
}

// searchBody is what the signature covers.
type searchBody struct {
	V           string          `json:"v"`
	ID          string          `json:"id"`
	Index       ReceiptIndex    `json:"index"`
	Reranker    *ModelRef       `json:"reranker"`
	QuerySHA256 string          `json:"query_sha256"`
	Params      ReceiptParams   `json:"params"`
	Results     []ReceiptResult `json:"results"`
	ModelCalls  []ModelCallRef  `json:"model_calls"`
	Signer      attest.Signer   `json:"signer"`
}

// SearchReceipt is the signed search receipt.
type SearchReceipt struct {
	searchBody
	Sig string `json:"sig"`
}

// MarshalJSON writes the receipt's fields flat.
func (r SearchReceipt) MarshalJSON() ([]byte, error) {
	type flat struct {
		searchBody
		Sig string `json:"sig"`
	}
	return json.Marshal(flat(r))
}

// UnmarshalJSON reads them.
func (r *SearchReceipt) UnmarshalJSON(b []byte) error {
	type flat struct {
		searchBody
		Sig string `json:"sig"`
	}
	var f flat
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*r = SearchReceipt(f)
	return nil
}

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
	q := sha256.Sum256([]byte(query))
	b := searchBody{
		V: SearchFormat, ID: ids.New("rs-", 12),
		Index:       ReceiptIndex{Format: ix.Format, Hash: ix.Hash, CorpusRoot: ix.CorpusRoot, NChunks: ix.NChunks, Chunker: ix.Chunker, Embedder: ix.Embedder, Layout: ix.Layout},
		QuerySHA256: hex.EncodeToString(q[:]),
		Params:      ReceiptParams{K: p.K, Rerank: p.Rerank, Mode: p.Mode, Candidates: Candidates},
		Results:     []ReceiptResult{},
		ModelCalls:  append([]ModelCallRef{}, calls...),
		Signer:      k.Signer(),
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
	sig, _, err := k.Sign(SearchFormat, b)
	if err != nil {
		return nil, err
	}
	return &SearchReceipt{searchBody: b, Sig: sig}, nil
}

// ProvenChunk is a result's chunk as a caller hands it back for checking:
// its id, its text and its inclusion proof.
type ProvenChunk struct {
	Chunk string `json:"chunk"`
	Text  string `json:"text"`
	Proof Proof  `json:"proof"`
}

// Check is one verification step (the attest package's).
type Check = attest.Check

// SearchVerification is what VerifySearchReport found: every check, and
// what went unchecked.
type SearchVerification struct {
	Receipt SearchReceipt
	Checks  []Check
	// Unchecked are the receipt's results (chunk ids) no chunk was given
	// for: their text and proof are not checked.
	Unchecked []string
	// NoOffsets are the results whose offsets were not checked: documents
	// did not hold their document (all of them when none was sent).
	NoOffsets []string
}

// VerifySearch is VerifySearchReport's checks.
func VerifySearch(raw []byte, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document) ([]Check, error) {
	v, err := VerifySearchReport(raw, pinned, chunks, docs)
	if err != nil {
		return nil, err
	}
	return v.Checks, nil
}

// DecodeSearchReceipt reads a search receipt exactly as the box wrote it:
// every field it has is one the signature covers, so a field added
// anywhere (at any depth), left out or sent twice is refused, naming it
// (exact.Decode), never dropped unread.
func DecodeSearchReceipt(raw []byte) (SearchReceipt, error) {
	var r SearchReceipt
	if err := exact.Decode(raw, &r, "receipt"); err != nil {
		return SearchReceipt{}, err
	}
	if r.V != SearchFormat {
		return SearchReceipt{}, fmt.Errorf("receipt v is %q, want %s", r.V, SearchFormat)
	}
	return r, nil
}

// CheckVerifyDocuments refuses documents sent twice under one id (which
// one's offsets would be checked?) or without an id.
func CheckVerifyDocuments(docs []Document) error {
	seen := map[string]bool{}
	for i, d := range docs {
		switch {
		case d.ID == "":
			return fmt.Errorf("documents[%d].id is empty: give each document the id it was indexed under", i)
		case seen[d.ID]:
			return fmt.Errorf("documents[%d].id %q appears twice: send each document once", i, d.ID)
		}
		seen[d.ID] = true
	}
	return nil
}

// VerifySearchReport checks a search receipt: that it is exactly a
// receipt the box writes (DecodeSearchReceipt), its signature, that this
// box (pinned) signed it, that the index hash is what its corpus root,
// chunk count, chunker and embedder give, and for each chunk handed back
// its text hash and proof against the root (with a scanned document's
// anchor, in v2, in its leaf), and with the documents its offsets. The
// "results" check holds only when every result the receipt lists was
// handed back, once: a receipt whose results went unchecked is not
// verified. Every check is listed; the receipt holds when all are OK.
func VerifySearchReport(raw []byte, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document) (*SearchVerification, error) {
	r, err := DecodeSearchReceipt(raw)
	if err != nil {
		return nil, err
	}
	if err := CheckVerifyDocuments(docs); err != nil {
		return nil, err
	}
	out, err := attest.SignatureChecks(SearchFormat, r.searchBody, r.Signer, r.Sig, pinned)
	if err != nil {
		return nil, err
	}
	add := func(name string, ok bool, detail string) {
		out = append(out, Check{Name: name, OK: ok, Detail: detail})
	}
	if err := proof.Check(r.Index.Format); err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	ih := IndexHash(r.Index.Format, r.Index.CorpusRoot, r.Index.NChunks, r.Index.Chunker, r.Index.Embedder, r.Index.Layout)
	add("index_hash", ih == r.Index.Hash, map[bool]string{true: "the corpus root, chunk count, chunker and embedder give the index hash",
		false: "the index hash is not what its corpus root, chunk count, chunker and embedder give"}[ih == r.Index.Hash])
	byID := map[string]ReceiptResult{}
	for _, res := range r.Results {
		byID[res.Chunk] = res
	}
	texts := map[string]*string{}
	for i := range docs {
		texts[docs[i].ID] = &docs[i].Text
	}
	v := &SearchVerification{Receipt: r}
	given := map[string]int{}
	for _, c := range chunks {
		given[c.Chunk]++
	}
	var twice []string
	for _, res := range r.Results {
		switch given[res.Chunk] {
		case 0:
			v.Unchecked = append(v.Unchecked, res.Chunk)
		case 1:
		default:
			twice = append(twice, res.Chunk)
		}
	}
	switch {
	case len(v.Unchecked) > 0:
		add("results", false, fmt.Sprintf("%d of the receipt's %d results (%s) come without their text and proof, so they are not checked: send every result's {chunk, text, proof}",
			len(v.Unchecked), len(r.Results), listIDs(v.Unchecked)))
	case len(twice) > 0:
		add("results", false, fmt.Sprintf("chunks %s are sent more than once: send each result once", listIDs(twice)))
	case len(r.Results) == 0:
		add("results", true, "the receipt lists no results")
	default:
		add("results", true, fmt.Sprintf("all %d results the receipt lists are handed back", len(r.Results)))
	}
	for _, c := range chunks {
		res, ok := byID[c.Chunk]
		name := "chunk " + c.Chunk
		if !ok {
			add(name, false, "no result in the receipt names this chunk")
			continue
		}
		pos, err := strconv.Atoi(strings.TrimPrefix(c.Chunk, "c"))
		if err != nil || !strings.HasPrefix(c.Chunk, "c") || pos != c.Proof.Index {
			add(name, false, fmt.Sprintf("the proof is for leaf %d, the chunk id names another", c.Proof.Index))
			continue
		}
		ic := IndexChunk{ID: res.Chunk, Doc: res.Doc, DocSHA256: res.DocSHA256, ByteStart: res.ByteStart, ByteEnd: res.ByteEnd, SHA256: res.SHA256, Text: c.Text, Anchor: res.Anchor}
		doc := texts[res.Doc]
		if err := VerifyChunk(r.Index.Format, ic, c.Proof, r.Index.CorpusRoot, r.Index.NChunks, doc); err != nil {
			add(name, false, err.Error())
			continue
		}
		detail := "its text hashes to its sha256 and its proof leads to the corpus root"
		if res.Anchor != nil && r.Index.Format == proof.IndexV2 {
			detail += " (its anchor in its leaf)"
		}
		switch {
		case doc != nil:
			detail += "; the document's bytes at its offsets are its text"
		case len(docs) == 0:
			detail += "; its offsets are not checked (no documents sent)"
		default:
			detail += fmt.Sprintf("; its offsets are NOT checked: documents holds no document %q", res.Doc)
		}
		add(name, true, detail)
	}
	for _, res := range r.Results {
		if texts[res.Doc] == nil {
			v.NoOffsets = append(v.NoOffsets, res.Chunk)
		}
	}
	v.Checks = out
	return v, nil
}

// listIDs is up to five ids, then how many more.
func listIDs(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:5], ", "), len(ids)-5)
}
