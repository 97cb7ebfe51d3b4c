// Package ids makes the random identifiers and secrets boxd hands out: a
// fixed prefix followed by crypto/rand bytes, in hex (New: "chatcmpl-",
// "job_", "key_", request ids) or unpadded base64url (Token: session tokens
// and developer-key secrets). Their formats are visible to clients.
package ids

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
)

// New is prefix followed by nbytes random bytes in lower-case hex
// (2*nbytes characters): New("job_", 12) is "job_" and 24 hex digits.
func New(prefix string, nbytes int) string {
	return prefix + hex.EncodeToString(random(nbytes))
}

// Token is prefix followed by nbytes random bytes in unpadded base64url:
// Token("ds_", 32) is "ds_" and 43 characters of [A-Za-z0-9_-].
func Token(prefix string, nbytes int) string {
	return prefix + base64.RawURLEncoding.EncodeToString(random(nbytes))
}

// random is n bytes from crypto/rand, which never fails (it crashes the
// program when the system has no randomness).
func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
