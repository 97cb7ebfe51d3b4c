package receipt

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/pipelines/docreader/exact"
	"boxd/pipelines/retrieval/proof"
)

// ProvenChunk is a result's chunk as a caller hands it back for checking:
// its id, its text and its inclusion proof.
type ProvenChunk struct {
	Chunk string          `json:"chunk"`
	Text  string          `json:"text"`
	Proof proof.Inclusion `json:"proof"`
}

// Document is a document as a caller hands it back to check the offsets
// of the results in it: the id it was indexed under, and its text.
type Document struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Verification is what Verify found: every check, and what went
// unchecked.
type Verification struct {
	Receipt Search
	Checks  []attest.Check
	// Unchecked are the receipt's results (chunk ids) no chunk was given
	// for: their text and proof are not checked.
	Unchecked []string
	// NoOffsets are the results whose offsets were not checked: documents
	// did not hold their document (all of them when none was sent).
	NoOffsets []string
}

// Checks is Verify's checks.
func Checks(raw []byte, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document) ([]attest.Check, error) {
	v, err := Verify(raw, pinned, chunks, docs)
	if err != nil {
		return nil, err
	}
	return v.Checks, nil
}

// Decode reads a search receipt exactly as the box wrote it: every field
// it has is one the signature covers, so a field added anywhere (at any
// depth), left out or sent twice is refused, naming it (exact.Decode),
// never dropped unread.
func Decode(raw []byte) (Search, error) {
	var r Search
	if err := exact.Decode(raw, &r, "receipt"); err != nil {
		return Search{}, err
	}
	if r.V != Format {
		return Search{}, fmt.Errorf("receipt v is %q, want %s", r.V, Format)
	}
	return r, nil
}

// CheckDocuments refuses documents sent twice under one id (which one's
// offsets would be checked?) or without an id.
func CheckDocuments(docs []Document) error {
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

// Verify checks a search receipt: that it is exactly a receipt the box
// writes (Decode), its signature, that this box (pinned) signed it, that
// the index hash is what its corpus root, chunk count, chunker and
// embedder give, and for each chunk handed back its text hash and proof
// against the root (with a scanned document's anchor, in v2, in its
// leaf), and with the documents its offsets. The "results" check holds
// only when every result the receipt lists was handed back, once: a
// receipt whose results went unchecked is not verified. Every check is
// listed; the receipt holds when all are OK.
func Verify(raw []byte, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document) (*Verification, error) {
	r, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	if err := CheckDocuments(docs); err != nil {
		return nil, err
	}
	out, err := r.signed().Verify(Format, pinned)
	if err != nil {
		return nil, err
	}
	add := func(name string, ok bool, detail string) {
		out = append(out, attest.Check{Name: name, OK: ok, Detail: detail})
	}
	if err := proof.Check(r.Index.Format); err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	ih := proof.IndexHash(r.Index.Format, r.Index.CorpusRoot, r.Index.NChunks, r.Index.Chunker, r.Index.Embedder, r.Index.Layout)
	add("index_hash", ih == r.Index.Hash, map[bool]string{true: "the corpus root, chunk count, chunker and embedder give the index hash",
		false: "the index hash is not what its corpus root, chunk count, chunker and embedder give"}[ih == r.Index.Hash])
	byID := map[string]Result{}
	for _, res := range r.Results {
		byID[res.Chunk] = res
	}
	texts := map[string]*string{}
	for i := range docs {
		texts[docs[i].ID] = &docs[i].Text
	}
	v := &Verification{Receipt: r}
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
		ic := proof.Chunk{ID: res.Chunk, Doc: res.Doc, DocSHA256: res.DocSHA256, ByteStart: res.ByteStart, ByteEnd: res.ByteEnd, SHA256: res.SHA256, Text: c.Text, Anchor: res.Anchor}
		doc := texts[res.Doc]
		if err := proof.VerifyChunk(r.Index.Format, ic, c.Proof, r.Index.CorpusRoot, r.Index.NChunks, doc); err != nil {
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

// Response is POST /retrieval/verify's answer: ok when every check holds,
// which needs every result the receipt lists handed back in chunks (a
// result left unchecked fails the "results" check and is listed in
// unchecked).
type Response struct {
	OK     bool           `json:"ok"`
	Checks []attest.Check `json:"checks"`
	// Unchecked are the receipt's results (chunk ids) sent without their
	// text and proof: nothing about them was checked.
	Unchecked []string `json:"unchecked"`
	// OffsetsUnchecked are the results whose byte offsets were not
	// checked, their document not being in documents (every result when
	// no documents were sent; offsets are optional to check).
	OffsetsUnchecked []string `json:"offsets_unchecked"`
}

// Answer is POST /retrieval/verify's answer for a receipt, the chunks
// and the documents sent, against this box's key (pinned). A missing
// receipt, a receipt with a field the box does not write, or documents
// sent twice under one id are refused (400) naming it.
func Answer(raw json.RawMessage, pinned ed25519.PublicKey, chunks []ProvenChunk, docs []Document) (*Response, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, problem.New(problem.Invalid, "receipt is missing: send the search receipt POST /retrieval/search returned")
	}
	if err := CheckDocuments(docs); err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "%v", err)
	}
	v, err := Verify(raw, pinned, chunks, docs)
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "receipt is not a %s receipt as the box wrote it: %v", Format, err)
	}
	ok := true
	for _, c := range v.Checks {
		ok = ok && c.OK
	}
	out := &Response{OK: ok, Checks: v.Checks, Unchecked: []string{}, OffsetsUnchecked: []string{}}
	out.Unchecked = append(out.Unchecked, v.Unchecked...)
	out.OffsetsUnchecked = append(out.OffsetsUnchecked, v.NoOffsets...)
	return out, nil
}
