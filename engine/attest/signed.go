package attest

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
)

// SignedBody is what a Signed envelope carries: a document that names the
// key that signs it (its "signer" field).
type SignedBody interface {
	SignedBy() Signer
}

// Signed is a document signed under a format: Body, and Sig, the hex
// Ed25519 signature over Message(format, Body) by the key Body names. The
// signature covers the body alone, never itself.
//
// On the wire it is one flat JSON object: Body's fields, as encoding/json
// writes them and in their order, then "sig" (the document receipts, the
// search receipt). The object without "sig" is the signed body. Body must
// encode as a JSON object with no "sig" key.
//
// A receipt type that embeds its body (so that its fields are the
// receipt's) converts to and from Signed to sign, verify and encode.
type Signed[T SignedBody] struct {
	Body T
	Sig  string
}

// Sign signs body under format with k: the body names k as its signer.
func Sign[T SignedBody](k *Key, format string, body T) (Signed[T], error) {
	sig, _, err := k.Sign(format, body)
	if err != nil {
		return Signed[T]{}, err
	}
	return Signed[T]{Body: body, Sig: sig}, nil
}

// Verify is the envelope's SignatureChecks: "signature" (Sig is the
// Ed25519 signature over format and Body by the key Body names) and
// "signer" (that key is pinned, this box's published key). The error is
// a body that does not encode.
func (s Signed[T]) Verify(format string, pinned ed25519.PublicKey) ([]Check, error) {
	return SignatureChecks(format, s.Body, s.Body.SignedBy(), s.Sig, pinned)
}

// MarshalJSON writes Body's fields and then "sig", flat: the bytes
// encoding/json writes for a struct that embeds the body beside a Sig
// field tagged "sig".
func (s Signed[T]) MarshalJSON() ([]byte, error) {
	body, err := json.Marshal(s.Body)
	if err != nil {
		return nil, err
	}
	sig, err := json.Marshal(s.Sig)
	if err != nil {
		return nil, err
	}
	n := len(body)
	if n < 2 || body[0] != '{' || body[n-1] != '}' {
		return nil, fmt.Errorf("attest: a signed body is written as a JSON object, not %.20s", body)
	}
	out := make([]byte, 0, n+len(sig)+7)
	out = append(out, body[:n-1]...)
	if n > 2 {
		out = append(out, ',')
	}
	out = append(out, `"sig":`...)
	out = append(out, sig...)
	return append(out, '}'), nil
}

// UnmarshalJSON reads Body's fields and "sig" from one flat object, as
// encoding/json reads a struct that embeds the body beside Sig: keys
// matched as it matches them, and on failure its error, the first one in
// the text (s is then left as it was).
func (s *Signed[T]) UnmarshalJSON(b []byte) error {
	var body T
	bodyErr := json.Unmarshal(b, &body)
	var sig struct {
		Sig string `json:"sig"`
	}
	sigErr := json.Unmarshal(b, &sig)
	if err := firstError(bodyErr, sigErr); err != nil {
		return err
	}
	s.Body, s.Sig = body, sig.Sig
	return nil
}

// firstError is the error one decode of the flat object would return, of
// the body's and the signature's decodes: a value of the wrong type does
// not stop encoding/json, which reports the first one in the text (the
// lower offset); any other error stops it (only the body's can be one).
func firstError(bodyErr, sigErr error) error {
	var bt, st *json.UnmarshalTypeError
	if errors.As(bodyErr, &bt) && errors.As(sigErr, &st) && st.Offset < bt.Offset {
		return sigErr
	}
	if bodyErr != nil {
		return bodyErr
	}
	return sigErr
}
