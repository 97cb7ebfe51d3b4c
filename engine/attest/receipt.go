package attest

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strconv"
)

// ModelCallFormat identifies model-call receipts.
const ModelCallFormat = "service.model-call.v1"

// Usage counts tokens; in the signed receipt the numbers are strings.
type Usage struct {
	PromptTokens     string `json:"prompt_tokens"`
	CompletionTokens string `json:"completion_tokens"`
	TotalTokens      string `json:"total_tokens"`
}

// NewUsage writes token counts as strings.
func NewUsage(prompt, completion int) Usage {
	return Usage{
		PromptTokens:     strconv.Itoa(prompt),
		CompletionTokens: strconv.Itoa(completion),
		TotalTokens:      strconv.Itoa(prompt + completion),
	}
}

// ModelCall is the signed statement about one model call: which weights
// ran, on which request, what came out, with which parameters, and how many
// tokens it took. It holds hashes, never text.
type ModelCall struct {
	Format      string            `json:"format"`
	ID          string            `json:"id"`
	Model       string            `json:"model"`
	WeightsRoot string            `json:"weights_root"`
	RequestHash string            `json:"request_hash"`
	OutputHash  string            `json:"output_hash"`
	Params      map[string]string `json:"params"`
	Usage       Usage             `json:"usage"`
	Created     string            `json:"created"`
	// KeyID is the developer key that paid for the call; null for a demo
	// session.
	KeyID  *string `json:"key_id"`
	Signer Signer  `json:"signer"`
}

// SignedModelCall is a ModelCall with its commitment (SHA-256 of the
// signed message) and signature.
type SignedModelCall struct {
	ModelCall
	Commitment string `json:"commitment"`
	Sig        string `json:"sig"`
}

// HashText is the hex SHA-256 of a text (request and output hashes).
func HashText(s string) string { return sha256Hex([]byte(s)) }

// HashJSON is the hex SHA-256 of a value's canonical JSON.
func HashJSON(v any) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	return sha256Hex(c), nil
}

// IssueModelCall signs mc with k. Format and Signer are filled in.
func IssueModelCall(k *Key, mc ModelCall) (SignedModelCall, error) {
	mc.Format = ModelCallFormat
	mc.Signer = k.Signer()
	if p := numberPath(mc.Params, "params"); p != "" {
		return SignedModelCall{}, fmt.Errorf("receipt %s: %s is a number; write it as a string", mc.ID, p)
	}
	sig, msg, err := k.Sign(ModelCallFormat, mc)
	if err != nil {
		return SignedModelCall{}, err
	}
	return SignedModelCall{ModelCall: mc, Commitment: sha256Hex(msg), Sig: sig}, nil
}

// CheckModelCall recomputes a receipt's checks: the commitment hash, the
// Ed25519 signature, that the signer is the pinned (published) key, and
// that the metering adds up. A first-party runtime has no provider
// signature, so there is no check for one.
func CheckModelCall(s SignedModelCall, pinned ed25519.PublicKey) []Check {
	var out []Check
	msg, err := Message(ModelCallFormat, s.ModelCall)
	if err != nil {
		return []Check{{Name: "commitment", OK: false, Detail: err.Error()}}
	}
	if got := sha256Hex(msg); got == s.Commitment {
		out = append(out, Check{Name: "commitment", OK: true, Detail: "SHA-256 of the signed receipt matches its commitment"})
	} else {
		out = append(out, Check{Name: "commitment", OK: false, Detail: "the receipt's fields no longer hash to its commitment"})
	}
	if err := VerifyHex(s.Signer.PubKey, s.Sig, msg); err != nil {
		out = append(out, Check{Name: "signature", OK: false, Detail: err.Error()})
	} else {
		out = append(out, Check{Name: "signature", OK: true, Detail: "Ed25519 signature verifies"})
	}
	if pinned != nil && s.Signer.PubKey == hex.EncodeToString(pinned) {
		out = append(out, Check{Name: "key_pinned", OK: true, Detail: "signed by this box's published key " + KeyID(pinned) + " (GET /attest/signing-key)"})
	} else {
		out = append(out, Check{Name: "key_pinned", OK: false, Detail: "not signed by this box's published key"})
	}
	p, e1 := strconv.Atoi(s.Usage.PromptTokens)
	c, e2 := strconv.Atoi(s.Usage.CompletionTokens)
	t, e3 := strconv.Atoi(s.Usage.TotalTokens)
	if e1 != nil || e2 != nil || e3 != nil || p < 0 || c < 0 || p+c != t {
		out = append(out, Check{Name: "metering", OK: false, Detail: "usage is not whole token counts that add up"})
	} else {
		out = append(out, Check{Name: "metering", OK: true, Detail: "tokens counted by this box's runtime; prompt + completion = total"})
	}
	return out
}
