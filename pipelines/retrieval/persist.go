package retrieval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"boxd/atomicfile"
	"boxd/pipelines/retrieval/bm25"
)

// Persistence (retrieval.persist, default off): a self-hosted box may keep
// its indexes across restarts. Each index is one file under the service's
// directory, written atomically: its owner, documents, chunker, embedder
// and vectors. On load the documents are cut again and the tree rebuilt,
// so the hash and every proof are the same as before the restart; an
// index whose hash no longer comes out (another chunker version, another
// embedder) is left out and named in the error. Persistent indexes do not
// expire.

type persisted struct {
	V        string          `json:"v"`
	Owner    string          `json:"owner"`
	Hash     string          `json:"hash"`
	Chunker  ChunkerSettings `json:"chunker"`
	Embedder ModelRef        `json:"embedder"`
	Docs     []Document      `json:"documents"`
	Vectors  [][]float32     `json:"vectors"`
}

const persistFormat = "boxd.retrieval.persisted.v1"

// persistPath is where an index is kept: the directory, a hash of the
// owner (no key ids or session ids in file names), the index hash.
func (s *Service) persistPath(owner, hash string) string {
	o := sha256.Sum256([]byte(owner))
	return filepath.Join(s.PersistDir, hex.EncodeToString(o[:8])+"-"+hash+".json")
}

// persist writes an index when persistence is on.
func (s *Service) persist(owner string, ix *Index, docs []Document) error {
	if s.PersistDir == "" {
		return nil
	}
	if err := os.MkdirAll(s.PersistDir, 0o700); err != nil {
		return fmt.Errorf("retrieval: persist: %w", err)
	}
	b, err := json.Marshal(persisted{V: persistFormat, Owner: owner, Hash: ix.Hash, Chunker: ix.Chunker, Embedder: ix.Embedder, Docs: docs, Vectors: ix.vectors})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.persistPath(owner, ix.Hash), b, 0o600); err != nil {
		return fmt.Errorf("retrieval: persist index %s: %w", ix.Hash, err)
	}
	return nil
}

// LoadPersisted reads the kept indexes back (serve calls it at start when
// persistence is on). It returns how many it loaded; the error names any
// it could not.
func (s *Service) LoadPersisted() (int, error) {
	if s.PersistDir == "" {
		return 0, nil
	}
	files, err := filepath.Glob(filepath.Join(s.PersistDir, "*.json"))
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, f := range files {
		if err := s.loadOne(f); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(f), err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func (s *Service) loadOne(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var p persisted
	if err := json.Unmarshal(b, &p); err != nil || p.V != persistFormat {
		return fmt.Errorf("not a %s file", persistFormat)
	}
	if s.Embedder != nil && p.Embedder != s.EmbedderModel.Ref {
		return fmt.Errorf("built with embedder %s@%s, this box runs %s@%s: index it again", p.Embedder.Repo, p.Embedder.Revision, s.EmbedderModel.Ref.Repo, s.EmbedderModel.Ref.Revision)
	}
	ix, err := BuildIndex(p.Docs, p.Chunker, p.Embedder)
	if err != nil {
		return err
	}
	if ix.Hash != p.Hash {
		return fmt.Errorf("the documents now give index %s, not %s (the chunker changed?)", ix.Hash, p.Hash)
	}
	if len(p.Vectors) != len(ix.Chunks) {
		return fmt.Errorf("%d vectors for %d chunks", len(p.Vectors), len(ix.Chunks))
	}
	toks := make([][]string, len(ix.Chunks))
	for i, c := range ix.Chunks {
		toks[i] = bm25.Analyze(c.Text)
	}
	ix.bm25, ix.vectors = bm25.New(toks), p.Vectors
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = map[string]*heldIndex{}
	}
	text := map[string]string{}
	for _, d := range p.Docs {
		text[d.ID] = d.Text
	}
	added := time.Time{}
	if fi, err := os.Stat(path); err == nil {
		added = fi.ModTime()
	}
	s.held[p.Owner+" "+p.Hash] = &heldIndex{owner: p.Owner, ix: ix, docs: text, expires: never, added: added, persistent: true}
	return nil
}

// never is the expiry of a persistent index.
var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
