package verify

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/internal/receipts"
	"boxd/internal/run"
	"boxd/pipelines/docreader"
	"boxd/pipelines/retrieval"
)

// flatEmbedder gives every text the same unit vector (the test searches
// by keywords).
type flatEmbedder struct{}

func (flatEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// TestVerifySearchReceipt: boxd verify checks a search receipt with the
// chunks and documents beside it, and names what a tampered one breaks.
func TestVerifySearchReceipt(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := attest.NewKey(priv)
	docs := []retrieval.Document{
		{ID: "manual", Text: "The pump loses pressure when the filter clogs.\n\nBleed the air after a filter change."},
		{ID: "notes", Text: "Roof shingles crack in the cold. The chimney needs sealant."},
	}
	ix, err := retrieval.BuildIndex(docs, retrieval.ChunkerSettings{Version: "t", MaxChars: 50}, retrieval.ModelRef{Repo: "test/embed", Revision: "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ix.Prepare(ctx, flatEmbedder{}); err != nil {
		t.Fatal(err)
	}
	p := retrieval.Params{K: 2, Mode: retrieval.ModeBM25}
	res, err := ix.Search(ctx, "filter pressure", p, nil, nil)
	if err != nil || len(res) == 0 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	rc, err := retrieval.SignSearch(key, ix, "filter pressure", p, res, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var chunks []retrieval.ProvenChunk
	for _, r := range res {
		pr, _ := ix.Prove(r.Pos)
		chunks = append(chunks, retrieval.ProvenChunk{Chunk: r.Chunk.ID, Text: r.Chunk.Text, Proof: pr})
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, _ := json.Marshal(v)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", map[string]any{"receipt": rc, "chunks": chunks, "documents": docs})
	if code, out, _ := runCLI(t, "verify", good, "--pubkey", key.PublicKeyHex()); code != 0 || !strings.Contains(out, fmt.Sprintf("all %d results checked", len(chunks))) {
		t.Errorf("good receipt: exit %d\n%s", code, out)
	}
	bare := write("bare.json", rc)
	if code, out, _ := runCLI(t, "verify", bare, "--pubkey", key.PublicKeyHex()); code != 1 || !strings.Contains(out, "come without their text and proof") || strings.Contains(out, "verified:") {
		t.Errorf("the receipt alone (its results unchecked): exit %d\n%s", code, out)
	}
	chunks[0].Text = strings.Replace(chunks[0].Text, "pump", "pomp", 1)
	bad := write("bad.json", map[string]any{"receipt": rc, "chunks": chunks})
	if code, out, _ := runCLI(t, "verify", bad, "--pubkey", key.PublicKeyHex()); code != 1 || !strings.Contains(out, "NOT VERIFIED: chunk "+chunks[0].Chunk) {
		t.Errorf("a changed chunk: exit %d\n%s", code, out)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	if code, out, _ := runCLI(t, "verify", good, "--pubkey", attest.NewKey(other).PublicKeyHex()); code != 1 || !strings.Contains(out, "signer") {
		t.Errorf("another key: exit %d\n%s", code, out)
	}
}

// TestVerifyDocument: boxd verify checks a document the reader returned,
// bare or as {"document": ...}, and names what a tampered one breaks.
func TestVerifyDocument(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := attest.NewKey(priv)
	d, err := (&docreader.Service{Key: key}).Read(context.Background(), run.Env{}, docreader.ReadRequest{Sample: docreader.SampleBornDigital})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, _ := json.Marshal(v)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, f := range []string{write("bare.json", d), write("wrapped.json", map[string]any{"document": d})} {
		if code, out, _ := runCLI(t, "verify", f, "--pubkey", key.PublicKeyHex()); code != 0 || !strings.Contains(out, "verified: document "+d.ID) {
			t.Errorf("%s: exit %d\n%s", filepath.Base(f), code, out)
		}
	}
	d.Pages[0].Elements[1].Text = "Referral to Oncology"
	if code, out, _ := runCLI(t, "verify", write("bad.json", d), "--pubkey", key.PublicKeyHex()); code != 1 || !strings.Contains(out, "NOT VERIFIED: elements: element p1-e2") {
		t.Errorf("a changed element: exit %d\n%s", code, out)
	}
}

// TestVerifyChart: boxd verify checks a chart result, bare or as
// {"chart"}, and names the check a changed median breaks.
func TestVerifyChart(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := attest.NewKey(priv)
	r, err := (&docreader.Service{Key: key}).Chart(context.Background(), run.Env{}, docreader.ChartRequest{Sample: docreader.SampleChart})
	if err != nil {
		if strings.Contains(err.Error(), "OCR") && os.Getenv("CI") != "true" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, _ := json.Marshal(v)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, f := range []string{write("bare.json", r), write("wrapped.json", map[string]any{"chart": r})} {
		if code, out, _ := runCLI(t, "verify", f, "--pubkey", key.PublicKeyHex()); code != 0 || !strings.Contains(out, "verified: chart "+r.ID) {
			t.Errorf("%s: exit %d\n%s", filepath.Base(f), code, out)
		}
	}
	m := *r.Chart.Series[0].Median + 3
	r.Chart.Series[0].Median = &m
	if code, out, _ := runCLI(t, "verify", write("bad.json", r), "--pubkey", key.PublicKeyHex()); code != 1 || !strings.Contains(out, "NOT VERIFIED: table") {
		t.Errorf("a changed median: exit %d\n%s", code, out)
	}
}

// TestVerifySearchAnswer: boxd verify on a saved search answer (what POST
// /retrieval/search returned) checks every one of its results against the
// signed root, and refuses input that leaves any result unchecked.
func TestVerifySearchAnswer(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := attest.NewKey(priv)
	docs := []retrieval.Document{
		{ID: "R&D <manual>", Text: "The pump loses pressure when the filter clogs.\n\nBleed the air after a filter change & restart."},
		{ID: "notes-é", Text: "Roof shingles crack in the cold. The chimney needs sealant. The pump room floods."},
	}
	ix, err := retrieval.BuildIndex(docs, retrieval.ChunkerSettings{Version: "t", MaxChars: 50}, retrieval.ModelRef{Repo: "test/embed", Revision: "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ix.Prepare(ctx, flatEmbedder{}); err != nil {
		t.Fatal(err)
	}
	p := retrieval.Params{K: 3, Mode: retrieval.ModeBM25}
	res, err := ix.Search(ctx, "pump filter", p, nil, nil)
	if err != nil || len(res) < 2 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	rc, err := retrieval.SignSearch(key, ix, "pump filter", p, res, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	answer := func() retrieval.SearchResponse {
		a := retrieval.SearchResponse{Index: rc.Index, Receipt: rc, ModelCalls: []retrieval.ModelCallReceipt{}}
		for i, r := range res {
			pr, _ := ix.Prove(r.Pos)
			a.Results = append(a.Results, retrieval.SearchHit{ReceiptResult: rc.Results[i], Text: r.Chunk.Text, Proof: pr})
		}
		return a
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, _ := json.Marshal(v)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	withDocs := func(a retrieval.SearchResponse) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(mustMarshal(a), &m)
		m["documents"] = docs
		return m
	}
	n := len(res)
	changedText := answer()
	changedText.Results[1].Text += "!"
	movedOffset := answer()
	movedOffset.Results[0].ByteStart++
	dropped := answer()
	dropped.Results = dropped.Results[:1]
	otherIndex := answer()
	otherIndex.Index.NChunks++
	forged := withDocs(answer())
	forged["receipt"].(map[string]any)["results"].([]any)[0].(map[string]any)["text"] = "FORGED"
	forgedSigner := withDocs(answer())
	forgedSigner["receipt"].(map[string]any)["signer"].(map[string]any)["note"] = "x"
	oneDoc := withDocs(answer())
	oneDoc["documents"] = docs[1:]
	if res[0].Chunk.Doc != docs[0].ID {
		t.Fatalf("the first result is in %s", res[0].Chunk.Doc)
	}
	partial := map[string]any{"receipt": rc, "chunks": []retrieval.ProvenChunk{{Chunk: answer().Results[0].Chunk, Text: answer().Results[0].Text, Proof: answer().Results[0].Proof}}}
	for _, tc := range []struct {
		name string
		file any
		code int
		want string
	}{
		{"the answer", answer(), 0, fmt.Sprintf("verified: search receipt %s, all %d results checked (text hash and Merkle proof against the corpus root; offsets not checked: no documents given)", rc.ID, n)},
		{"the answer with its documents", withDocs(answer()), 0, fmt.Sprintf("all %d results checked (text hash and Merkle proof against the corpus root, offsets in the documents given)", n)},
		{"a result's text changed", changedText, 1, "NOT VERIFIED: chunk " + res[1].Chunk.ID},
		{"a result's offset changed", movedOffset, 1, "NOT VERIFIED: answer results: the answer's result 1"},
		{"a result left out", dropped, 1, "NOT VERIFIED: answer results"},
		{"another index shown", otherIndex, 1, "NOT VERIFIED: answer index"},
		{"the receipt alone", rc, 1, fmt.Sprintf("NOT VERIFIED: the receipt lists %d results and %d of them", n, n)},
		{"one chunk of several", partial, 1, fmt.Sprintf("NOT VERIFIED: the receipt lists %d results and %d of them", n, n-1)},
		{"a field added to the receipt", forged, 1, "receipt.results[0].text is not a field"},
		{"a field added to the receipt's signer", forgedSigner, 1, "receipt.signer.note is not a field"},
		{"one document of two", oneDoc, 0, "are NOT checked (their documents are not given)"},
	} {
		code, out, _ := runCLI(t, "verify", write(strings.ReplaceAll(tc.name, " ", "-")+".json", tc.file), "--pubkey", key.PublicKeyHex())
		if code != tc.code || !strings.Contains(out, tc.want) || (tc.code != 0 && strings.Contains(out, "verified:")) {
			t.Errorf("%s: exit %d, want %d and %q\n%s", tc.name, code, tc.code, tc.want, out)
		}
	}
}

// TestVerifyReceiptsBody: boxd verify on a GET /receipts/{id} body checks
// that its top-level fields, which are not signed, say what the signed
// receipt inside says: a changed weights_root (or another restated
// field, or a field the box does not write) is NOT VERIFIED, naming it.
func TestVerifyReceiptsBody(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := attest.NewKey(priv)
	signed, err := attest.IssueModelCall(key, attest.ModelCall{ID: "mc-1", Model: "tiny-embed", WeightsRoot: strings.Repeat("ab", 32),
		RequestHash: strings.Repeat("cd", 32), OutputHash: strings.Repeat("ef", 32), Params: map[string]string{"kind": "embed"},
		Usage: attest.NewUsage(15, 0), Created: "1795651871"})
	if err != nil {
		t.Fatal(err)
	}
	rec := receipts.Record{ID: signed.ID, Model: signed.Model, WeightsRoot: signed.WeightsRoot, RequestHash: signed.RequestHash, OutputHash: signed.OutputHash,
		Gateway: receipts.GatewaySig{PubKey: signed.Signer.PubKey, Sig: signed.Sig, KeyID: signed.Signer.KeyID},
		Proof:   receipts.Proof{Format: attest.ModelCallFormat, Verified: true}, Checks: attest.CheckModelCall(signed, key.PublicKey()),
		Status: receipts.StatusAttested, UpstreamModel: "tiny-embed.gguf", Usage: receipts.Usage{PromptTokens: 15, TotalTokens: 15}, Receipt: signed}
	body := mustMarshal(rec)
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		from, to string
		code     int
		want     string
	}{
		{"as the box wrote it", "", "", 0, "verified: receipt mc-1"},
		{"weights_root changed", `"weights_root":"abab`, `"weights_root":"0000`, 1, "NOT VERIFIED: record: the body's weights_root is"},
		{"usage changed", `"prompt_tokens":15`, `"prompt_tokens":16`, 1, "the body's usage.prompt_tokens is 16"},
		{"status changed", `"status":"attested"`, `"status":"unverified"`, 1, "the body's status is unverified"},
		{"a field added", `"status":`, `"note":"x","status":`, 1, "the body's note is not a field"},
		{"a gateway field added", `"gateway":{`, `"gateway":{"note":"x",`, 1, "the body's gateway.note is not a field"},
	} {
		b := body
		if tc.from != "" {
			b = bytes.Replace(body, []byte(tc.from), []byte(tc.to), 1)
			if bytes.Equal(b, body) {
				t.Fatalf("%s: nothing changed", tc.name)
			}
		}
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, _ := runCLI(t, "verify", p, "--pubkey", key.PublicKeyHex())
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, want %d and %q\n%s", tc.name, code, tc.code, tc.want, out)
		}
	}
}
