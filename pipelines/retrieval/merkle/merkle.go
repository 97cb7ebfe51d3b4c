// Package merkle is the corpus tree of retrieval indexes: RFC 6962's
// Merkle tree through golang.org/x/mod/sumdb/tlog.
package merkle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// The corpus tree is RFC 6962's Merkle tree (leaf hash SHA-256(0x00 ||
// leaf), node hash SHA-256(0x01 || left || right)), built and proved by
// golang.org/x/mod/sumdb/tlog, the Go checksum database's implementation,
// with one leaf per chunk in index order.

// Tree is the Merkle tree over an index's leaves.
type Tree struct {
	n      int64
	stored []tlog.Hash // tlog's stored hashes, in its storage order
}

func (t *Tree) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(t.stored)) {
			return nil, fmt.Errorf("merkle: tree hash %d of %d", x, len(t.stored))
		}
		out[i] = t.stored[x]
	}
	return out, nil
}

// New builds the tree over leaves.
func New(leaves [][]byte) (*Tree, error) {
	t := &Tree{}
	for i, l := range leaves {
		hs, err := tlog.StoredHashes(int64(i), l, t)
		if err != nil {
			return nil, fmt.Errorf("merkle: %w", err)
		}
		t.stored = append(t.stored, hs...)
		t.n++
	}
	return t, nil
}

// Root is the tree hash (RFC 6962 MTH; SHA-256 of nothing for no leaves).
func (t *Tree) Root() (tlog.Hash, error) {
	if t.n == 0 {
		return sha256.Sum256(nil), nil
	}
	return tlog.TreeHash(t.n, t)
}

// Prove is the inclusion proof of leaf i (its audit path, leaf side first).
func (t *Tree) Prove(i int) ([]string, error) {
	p, err := tlog.ProveRecord(t.n, int64(i), t)
	if err != nil {
		return nil, fmt.Errorf("merkle: proof of leaf %d: %w", i, err)
	}
	out := make([]string, len(p))
	for j, h := range p {
		out[j] = hex.EncodeToString(h[:])
	}
	return out, nil
}

// ErrProof is returned when an inclusion proof does not lead to the root.
var ErrProof = errors.New("merkle: the inclusion proof does not lead to the root")

// VerifyInclusion checks that leaf is leaf index of a tree of size leaves
// whose root is root (hex), by the proof (hex hashes, as prove gives them).
func VerifyInclusion(leaf []byte, index, size int, proof []string, root string) error {
	r, err := hash32(root)
	if err != nil {
		return fmt.Errorf("merkle: root: %w", err)
	}
	if index < 0 || index >= size {
		return fmt.Errorf("%w: index %d outside a tree of %d", ErrProof, index, size)
	}
	p := make(tlog.RecordProof, len(proof))
	for i, s := range proof {
		if p[i], err = hash32(s); err != nil {
			return fmt.Errorf("merkle: proof hash %d: %w", i, err)
		}
	}
	if err := tlog.CheckRecord(p, int64(size), r, int64(index), tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("%w (%v)", ErrProof, err)
	}
	return nil
}

func hash32(s string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("%q is not a 64-digit hex SHA-256", s)
	}
	copy(h[:], b)
	return h, nil
}
