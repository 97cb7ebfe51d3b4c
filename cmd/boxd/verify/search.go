package verify

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"boxd/cmd/boxd/cli"
	"boxd/engine/attest"
	"boxd/pipelines/retrieval"
)

// searchInput is what `boxd verify` reads for a search receipt: the
// answer POST /retrieval/search returned ({index, results, receipt,
// model_calls}: each result carries its text and proof), or the body
// POST /retrieval/verify takes ({receipt, chunks, documents?}), with the
// documents beside either.
type searchInput struct {
	receipt   []byte
	index     json.RawMessage // the answer's index, when an answer
	results   json.RawMessage // the answer's results, when an answer
	chunks    []retrieval.ProvenChunk
	documents []retrieval.Document
}

// verifySearch checks a service.retrieval.search.v1 receipt and every
// result it lists: each result's text hashes to its sha256, its Merkle
// proof leads to the signed corpus root and, with the documents, its
// offsets hold. Input that does not give every result's text and proof is
// refused (NOT VERIFIED), never "verified" with results unchecked.
func verifySearch(out io.Writer, in searchInput, pub ed25519.PublicKey) error {
	// Read as the box wrote it: a field added anywhere in the receipt is
	// one nobody signed, and refused naming it.
	rc, err := retrieval.DecodeSearchReceipt(in.receipt)
	if err != nil {
		return cannotRead(out, err)
	}
	var pre []attest.Check
	chunks := in.chunks
	if len(in.results) > 0 {
		var hits []retrieval.SearchHit
		if err := json.Unmarshal(in.results, &hits); err != nil {
			return cannotRead(out, fmt.Errorf("the answer's results: %w", err))
		}
		pre = answerChecks(rc, in.index, hits)
		for _, h := range hits {
			chunks = append(chunks, retrieval.ProvenChunk{Chunk: h.Chunk, Text: h.Text, Proof: h.Proof})
		}
	}
	v, err := retrieval.VerifySearchReport(in.receipt, pub, chunks, in.documents)
	if err != nil {
		return cannotRead(out, err)
	}
	checks := append(pre, v.Checks...)
	if len(v.Unchecked) > 0 {
		// Said once, at the end, with how to give every result.
		checks = slices.DeleteFunc(checks, func(c attest.Check) bool { return c.Name == "results" })
	}
	if err := printChecks(out, checks); err != nil {
		return err
	}
	if len(v.Unchecked) > 0 {
		fmt.Fprintf(out, "NOT VERIFIED: the receipt lists %d results and %d of them (%s) come without their text and proof, so they cannot be checked: "+
			"give the whole answer POST /retrieval/search returned (each result carries both), or {\"receipt\", \"chunks\": [{\"chunk\", \"text\", \"proof\"}]} with every result\n",
			len(rc.Results), len(v.Unchecked), list(v.Unchecked))
		return cli.ErrNotVerified
	}
	if len(rc.Results) == 0 {
		fmt.Fprintf(out, "verified: search receipt %s with no results (its signature and index hash), signed by %s\n", rc.ID, rc.Signer.KeyID)
		return nil
	}
	how := "text hash and Merkle proof against the corpus root"
	switch {
	case len(in.documents) == 0:
		how += "; offsets not checked: no documents given"
	case len(v.NoOffsets) == 0:
		how += ", offsets in the documents given"
	default:
		how += fmt.Sprintf(", offsets in the documents given for %d of them; the offsets of %s are NOT checked (their documents are not given)",
			len(rc.Results)-len(v.NoOffsets), list(v.NoOffsets))
	}
	fmt.Fprintf(out, "verified: search receipt %s, all %d results checked (%s), signed by %s\n", rc.ID, len(rc.Results), how, rc.Signer.KeyID)
	return nil
}

// answerChecks check that an answer shows what its receipt signed: its
// index is the receipt's, and each result, in order, is the receipt's
// result with the same rank, chunk, offsets and hashes.
func answerChecks(rc retrieval.SearchReceipt, index json.RawMessage, hits []retrieval.SearchHit) []attest.Check {
	var out []attest.Check
	if len(index) > 0 {
		ok := sameJSON(index, rc.Index)
		out = append(out, attest.Check{Name: "answer index", OK: ok, Detail: map[bool]string{
			true: "the answer's index is the one the receipt signed", false: "the answer's index is not the one the receipt signed"}[ok]})
	}
	ok, detail := len(hits) == len(rc.Results), fmt.Sprintf("the answer's %d results are the receipt's, in order", len(hits))
	if !ok {
		detail = fmt.Sprintf("the answer has %d results, the receipt %d", len(hits), len(rc.Results))
	}
	for i := 0; ok && i < len(hits); i++ {
		if !sameJSON(mustMarshal(hits[i].ReceiptResult), rc.Results[i]) {
			ok, detail = false, fmt.Sprintf("the answer's result %d (chunk %s) is not the receipt's result %d", i+1, hits[i].Chunk, i+1)
		}
	}
	return append(out, attest.Check{Name: "answer results", OK: ok, Detail: detail})
}

func sameJSON(raw []byte, v any) bool {
	a, err := attest.CanonicalJSON(raw)
	if err != nil {
		return false
	}
	b, err := attest.Canonical(v)
	return err == nil && bytes.Equal(a, b)
}

func mustMarshal(v any) []byte { b, _ := json.Marshal(v); return b }

func cannotRead(out io.Writer, err error) error {
	fmt.Fprintf(out, "FAIL\tformat\tnot a %s receipt: %v\n", retrieval.SearchFormat, err)
	fmt.Fprintln(out, "NOT VERIFIED: the receipt cannot be read")
	return cli.ErrNotVerified
}

// list is up to five names, then how many more.
func list(names []string) string {
	if len(names) <= 5 {
		return fmt.Sprint(names)
	}
	return fmt.Sprintf("%v and %d more", names[:5], len(names)-5)
}
