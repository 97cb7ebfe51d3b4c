package attest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"boxd/internal/atomicfile"
)

// KeyFile is the instance key's file name in the state directory.
const KeyFile = "instance.key"

// Scheme is the signature scheme of every boxd signature.
const Scheme = "ed25519"

// Key is the box's Ed25519 instance key. It signs receipts and records.
type Key struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	id   string
}

// PublicKeyHex is the public key as 64 hex characters.
func (k *Key) PublicKeyHex() string { return hex.EncodeToString(k.pub) }

// PublicKey is the raw public key.
func (k *Key) PublicKey() ed25519.PublicKey { return k.pub }

// ID is the key's id: the first 16 hex characters of SHA-256(public key).
func (k *Key) ID() string { return k.id }

// Signer describes the key inside signed documents.
func (k *Key) Signer() Signer {
	return Signer{Scheme: Scheme, PubKey: k.PublicKeyHex(), KeyID: k.id}
}

// Signer names the key that signed a document.
type Signer struct {
	Scheme string `json:"scheme"`
	PubKey string `json:"pubkey"`
	KeyID  string `json:"key_id"`
}

// KeyID derives the key id of a public key.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// NewKey wraps a private key (tests and tools).
func NewKey(priv ed25519.PrivateKey) *Key {
	pub := priv.Public().(ed25519.PublicKey)
	return &Key{priv: priv, pub: pub, id: KeyID(pub)}
}

// Message is what a signature covers: the format identifier, a newline,
// and the canonical JSON of the document.
func Message(format string, doc any) ([]byte, error) {
	c, err := Canonical(doc)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, 0, len(format)+1+len(c))
	msg = append(msg, format...)
	msg = append(msg, '\n')
	return append(msg, c...), nil
}

// Sign signs the message of doc under format; it returns the hex signature
// and the message.
func (k *Key) Sign(format string, doc any) (sigHex string, msg []byte, err error) {
	msg, err = Message(format, doc)
	if err != nil {
		return "", nil, fmt.Errorf("sign %s: %w", format, err)
	}
	return hex.EncodeToString(ed25519.Sign(k.priv, msg)), msg, nil
}

// VerifyHex checks a hex signature over msg with a hex public key.
// Hex must be lower case: one signature has one spelling.
func VerifyHex(pubHex, sigHex string, msg []byte) error {
	pub, err := hex.DecodeString(pubHex)
	if err != nil || len(pub) != ed25519.PublicKeySize || !isLowerHex(pubHex) {
		return errors.New("public key is not 64 lower-case hex characters")
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || len(sig) != ed25519.SignatureSize || !isLowerHex(sigHex) {
		return errors.New("signature is not 128 lower-case hex characters")
	}
	if !ed25519.Verify(pub, msg, sig) {
		return errors.New("signature does not verify")
	}
	return nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SecureDir makes dir the state directory the instance key may live in:
// created 0700 when absent; an existing one that other users can read or
// enter (group or other bits, as 0755) is tightened to 0700 when this
// process's user owns it (tightened then reports its mode before), and
// refused with the fix to run otherwise. LoadOrCreateKey does this
// before it writes a new key; a caller that starts the box calls it first,
// to say that it tightened the directory.
func SecureDir(dir string) (tightened fs.FileMode, err error) {
	euid := geteuid()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("state directory %s: %w", dir, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return 0, fmt.Errorf("state directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return 0, fmt.Errorf("state directory %s is not a directory", dir)
	}
	mode := st.Mode().Perm()
	if mode&0o077 == 0 {
		return 0, nil
	}
	refuse := func(why string) error {
		return fmt.Errorf("state directory %s has mode %04o: other users can read it, and the signing key lives there; %s: run chmod 700 %s", dir, mode, why, dir)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, refuse("boxd cannot tell its owner")
	}
	if int(sys.Uid) != euid {
		return 0, refuse(fmt.Sprintf("it belongs to uid %d, not to this user (uid %d), so boxd will not change it", sys.Uid, euid))
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return 0, refuse(fmt.Sprintf("tightening it failed (%v)", err))
	}
	return mode, nil
}

// geteuid is os.Geteuid (tests stand in for another user).
var geteuid = os.Geteuid

// LoadOrCreateKey reads the instance key from dir, or creates it when the
// file does not exist. It never replaces an existing file: a key that is
// readable by other users, or that does not parse, is an error the operator
// must resolve (records signed by the old key depend on it). created reports
// whether a new key was made.
func LoadOrCreateKey(dir string) (key *Key, created bool, err error) {
	path := filepath.Join(dir, KeyFile)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		k, err := createKey(dir, path)
		return k, err == nil, err
	case err != nil:
		return nil, false, fmt.Errorf("instance key %s: %w", path, err)
	case !st.Mode().IsRegular():
		return nil, false, fmt.Errorf("instance key %s is not a regular file", path)
	case st.Mode().Perm()&0o077 != 0:
		return nil, false, fmt.Errorf("instance key %s has mode %04o: other users can read it; run chmod 600 %s (and consider the key exposed)", path, st.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("instance key %s: %w", path, err)
	}
	k, err := parseKey(b)
	if err != nil {
		return nil, false, fmt.Errorf("instance key %s is corrupt (%v); boxd will not replace it: restore it from a backup, or move it away to make a new key (records signed by the old key then no longer verify against this box)", path, err)
	}
	return k, false, nil
}

func parseKey(b []byte) (*Key, error) {
	block, rest := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("PEM type %q, want PRIVATE KEY", block.Type)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("trailing data after the key")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	priv, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("key type %T, want Ed25519", parsed)
	}
	return NewKey(priv), nil
}

// createKey writes a new key so that no reader ever sees a partial file: a
// temporary file (0600) is written and synced, then hard-linked into place,
// which fails if another process created the key first.
func createKey(dir, path string) (*Key, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("instance key: generate: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("instance key: encode: %w", err)
	}
	body := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	// A new key goes only into a directory no other user can read.
	if _, err := SecureDir(dir); err != nil {
		return nil, fmt.Errorf("instance key: %w", err)
	}
	if err := atomicfile.WriteNew(path, body, 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			k, _, err := LoadOrCreateKey(dir)
			return k, err
		}
		return nil, fmt.Errorf("instance key: %w", err)
	}
	return NewKey(priv), nil
}

// SignatureChecks are the two checks every signed document starts with:
// "signature" (sig is the signer's Ed25519 signature over format and
// body) and "signer" (the signer is pinned, this box's published key).
func SignatureChecks(format string, body any, signer Signer, sig string, pinned ed25519.PublicKey) ([]Check, error) {
	msg, err := Message(format, body)
	if err != nil {
		return nil, err
	}
	out := make([]Check, 0, 2)
	if err := VerifyHex(signer.PubKey, sig, msg); err != nil {
		out = append(out, Check{Name: "signature", Detail: err.Error()})
	} else {
		out = append(out, Check{Name: "signature", OK: true, Detail: "Ed25519 signature verifies"})
	}
	if pinned != nil && signer.PubKey == hex.EncodeToString(pinned) {
		out = append(out, Check{Name: "signer", OK: true, Detail: "signed by this box's published key " + KeyID(pinned)})
	} else {
		out = append(out, Check{Name: "signer", Detail: "not signed by this box's published key (GET /attest/signing-key)"})
	}
	return out, nil
}
