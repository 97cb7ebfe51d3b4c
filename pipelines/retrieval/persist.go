package retrieval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"boxd/internal/atomicfile"
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
	Format   string          `json:"format,omitempty"` // the index's ("" for v1)
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
	b, err := json.Marshal(persisted{V: persistFormat, Format: ix.Format, Owner: owner, Hash: ix.Hash, Chunker: ix.Chunker, Embedder: ix.Embedder, Docs: docs, Vectors: ix.Vectors()})
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
		err := s.loadOne(f)
		if errors.Is(err, errDemoIndex) {
			// Kept by an earlier version: its session ended with that
			// process, so nobody can reach it, and it must not hold room.
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("%s: a demo session's index, not removed: %w", filepath.Base(f), err))
			}
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(f), err))
			continue
		}
		n++
	}
	dropped, err := s.dropReplaced()
	return n - dropped, errors.Join(append(errs, err)...)
}

// dropReplaced removes, for an owner over its bound, its oldest indexes:
// a replacement a crash cut short (the new index's file was written, the
// replaced one's not yet removed) is finished. It returns how many went.
func (s *Service) dropReplaced() (int, error) {
	per := s.Quota.bounds().PerKey
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := map[string][]*heldIndex{}
	for _, h := range s.held {
		if h.persistent {
			mine[h.owner] = append(mine[h.owner], h)
		}
	}
	n := 0
	var errs []error
	for owner, hs := range mine {
		if len(hs) <= per {
			continue
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i].added.Before(hs[j].added) })
		for _, h := range hs[:len(hs)-per] {
			delete(s.held, owner+" "+h.ix.Hash)
			n++
			if err := os.Remove(s.persistPath(owner, h.ix.Hash)); err != nil && !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("retrieval: remove the replaced index %s: %w", h.ix.Hash, err))
			}
		}
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
	if strings.HasPrefix(p.Owner, DemoOwnerPrefix) {
		return errDemoIndex
	}
	if s.Embedder != nil && p.Embedder != s.EmbedderModel.Ref {
		return fmt.Errorf("built with embedder %s@%s, this box runs %s@%s: index it again", p.Embedder.Repo, p.Embedder.Revision, s.EmbedderModel.Ref.Repo, s.EmbedderModel.Ref.Revision)
	}
	ix, err := BuildIndexWith(p.Docs, p.Chunker, p.Embedder, p.Format, s.counters())
	if err != nil {
		return err
	}
	if err := ix.ChunksFit(s.Embedder); err != nil {
		return fmt.Errorf("%w: it was embedded cut; index it again", err)
	}
	if ix.Hash != p.Hash {
		return fmt.Errorf("the documents now give index %s, not %s (the chunker changed?)", ix.Hash, p.Hash)
	}
	if len(p.Vectors) != len(ix.Chunks) {
		return fmt.Errorf("%d vectors for %d chunks", len(p.Vectors), len(ix.Chunks))
	}
	ix.Restore(p.Vectors)
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

// DemoOwnerPrefix starts the owner of a demo session's index (the web
// layer's caller id, "session:<hash>"). Demo indexes are no longer kept
// on disk; a file of one from an earlier version is removed at start.
const DemoOwnerPrefix = "session:"

// errDemoIndex: the file is a demo session's index.
var errDemoIndex = errors.New("a demo session's index")

// never is the expiry of a persistent index.
var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
