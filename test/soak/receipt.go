package soak

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"boxd/engine/attest"
)

// Verifier fetches receipts back from the box (GET /receipts/{id}) and
// checks them against the box's published signing key, independently of
// the checks the box reports.
type Verifier struct {
	Base   string
	HTTP   *http.Client
	pinned ed25519.PublicKey
	keyID  string
}

// signingKey is GET /attest/signing-key.
type signingKey struct {
	Scheme string `json:"scheme"`
	PubKey string `json:"pubkey"`
	KeyID  string `json:"key_id"`
}

// NewVerifier reads the box's published signing key.
func NewVerifier(ctx context.Context, base string, client *http.Client) (*Verifier, error) {
	var k signingKey
	if err := getJSON(ctx, client, base+"/attest/signing-key", &k); err != nil {
		return nil, err
	}
	pub, err := hex.DecodeString(k.PubKey)
	if err != nil || len(pub) != ed25519.PublicKeySize || k.Scheme != "ed25519" {
		return nil, fmt.Errorf("soak: /attest/signing-key: scheme %q, pubkey %q", k.Scheme, k.PubKey)
	}
	return &Verifier{Base: base, HTTP: client, pinned: pub, keyID: k.KeyID}, nil
}

// KeyID is the box's signing key id (receipts' provider).
func (v *Verifier) KeyID() string { return v.keyID }

// receiptRecord is the part of GET /receipts/{id} the soak checks.
type receiptRecord struct {
	ID         string `json:"id"`
	Model      string `json:"model"`
	OutputHash string `json:"output_hash"`
	Gateway    struct {
		PubKey string `json:"pubkey"`
		Sig    string `json:"sig"`
	} `json:"gateway"`
	Proof struct {
		Verified bool `json:"verified"`
	} `json:"proof"`
	Checks []attest.Check `json:"checks"`
	Status string         `json:"status"`
	Usage  struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Receipt attest.SignedModelCall `json:"receipt"`
	KeyID   *string                `json:"key_id"`
}

// Expect is what the caller saw of a receipt: its id and signature, the
// developer key that paid ("" for a demo token), and where known the text
// it covers and the tokens it counted (negative: unknown).
type Expect struct {
	ID, Model, Sig string
	KeyID          string
	Output         *string
	Completion     int
}

// Verify fetches the receipt and checks it: served (200), the same id,
// model and signature the caller was given, attested with every check the
// box reports passing, and, recomputed here, the commitment, the Ed25519
// signature and the signer pinned to the box's published key; the output
// hash is that of the text the caller received, and the completion tokens
// those it was told. It returns every mismatch (none: verified).
func (v *Verifier) Verify(ctx context.Context, e Expect) []string {
	var rec receiptRecord
	if err := getJSON(ctx, v.HTTP, v.Base+"/receipts/"+e.ID, &rec); err != nil {
		return []string{fmt.Sprintf("receipt %s not served: %v", e.ID, err)}
	}
	var bad []string
	add := func(format string, args ...any) {
		bad = append(bad, fmt.Sprintf("receipt %s: ", e.ID)+fmt.Sprintf(format, args...))
	}
	if rec.ID != e.ID || rec.Receipt.ID != e.ID {
		add("served with id %q (receipt %q)", rec.ID, rec.Receipt.ID)
	}
	if rec.Model != e.Model || rec.Receipt.Model != e.Model {
		add("model %q, the caller was told %q", rec.Model, e.Model)
	}
	if rec.Gateway.Sig != e.Sig || rec.Receipt.Sig != e.Sig {
		add("signature differs from the one the caller was given")
	}
	if rec.Status != "attested" || !rec.Proof.Verified {
		add("status %q, proof.verified %v", rec.Status, rec.Proof.Verified)
	}
	if len(rec.Checks) == 0 {
		add("no checks")
	}
	for _, c := range rec.Checks {
		if !c.OK {
			add("the box's check %s fails: %s", c.Name, c.Detail)
		}
	}
	mine := attest.CheckModelCall(rec.Receipt, v.pinned)
	for _, c := range mine {
		if !c.OK {
			add("recomputed check %s fails: %s", c.Name, c.Detail)
		}
	}
	if rec.Gateway.PubKey != hex.EncodeToString(v.pinned) {
		add("gateway key %s is not the published key", rec.Gateway.PubKey)
	}
	if e.Output != nil && (rec.OutputHash != attest.HashText(*e.Output) || rec.Receipt.OutputHash != rec.OutputHash) {
		add("output hash is not the hash of the text received")
	}
	if e.Completion >= 0 && rec.Usage.CompletionTokens != e.Completion {
		add("completion tokens %d, the caller was told %d", rec.Usage.CompletionTokens, e.Completion)
	}
	switch {
	case e.KeyID == "" && rec.KeyID != nil:
		add("key_id %q for a demo token", *rec.KeyID)
	case e.KeyID != "" && (rec.KeyID == nil || *rec.KeyID != e.KeyID):
		add("key_id %v, the call was paid by key %s", rec.KeyID, e.KeyID)
	}
	return bad
}

// getJSON GETs url and decodes a 200 JSON answer into v.
func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, clip(body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// clip shortens a response body for an error message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
