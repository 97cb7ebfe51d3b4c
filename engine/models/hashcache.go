package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"boxd/internal/atomicfile"
)

// HashCacheFile is the name of the hash cache in the state directory.
const HashCacheFile = "weights-hashes.json"

// HashCache remembers the sha256 of model files by the file's identity, so a
// restart does not read tens of gigabytes again to compute a weights root.
// The identity is the device, inode, size, modification time and status
// change time: rewriting the file, replacing it, or even restoring its
// modification time after editing it changes the status change time, which
// user space cannot set. `boxd models verify` hashes in full whatever the
// cache says, and reports a file whose bytes changed under the same identity
// (disk corruption).
type HashCache struct {
	path string

	mu      sync.Mutex
	entries map[string]hashEntry
	dirty   bool
	hashed  int // files read in full (for tests)
}

// hashEntry is one remembered file.
type hashEntry struct {
	Dev    uint64 `json:"dev"`
	Inode  uint64 `json:"inode"`
	Size   int64  `json:"size"`
	MtimeN int64  `json:"mtime_ns"`
	CtimeN int64  `json:"ctime_ns"`
	SHA256 string `json:"sha256"`
}

// OpenHashCache reads the cache in dir. A missing, unreadable or damaged
// cache is an empty one: it only ever saves work.
func OpenHashCache(dir string) *HashCache {
	c := &HashCache{path: filepath.Join(dir, HashCacheFile), entries: map[string]hashEntry{}}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return c
	}
	var doc struct {
		Files map[string]hashEntry `json:"files"`
	}
	if json.Unmarshal(b, &doc) == nil && doc.Files != nil {
		c.entries = doc.Files
	}
	return c
}

// identity reads the file's identity (the entry without its hash).
func identity(path string) (string, hashEntry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", hashEntry{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", hashEntry{}, fmt.Errorf("weights root: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", hashEntry{}, fmt.Errorf("weights root: %s is not a regular file", path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", hashEntry{}, fmt.Errorf("weights root: %s: no file identity on this system", path)
	}
	return abs, hashEntry{
		Dev: uint64(st.Dev), Inode: st.Ino, Size: fi.Size(),
		MtimeN: st.Mtim.Nano(), CtimeN: st.Ctim.Nano(),
	}, nil
}

func (e hashEntry) sameFile(o hashEntry) bool {
	return e.Dev == o.Dev && e.Inode == o.Inode && e.Size == o.Size && e.MtimeN == o.MtimeN && e.CtimeN == o.CtimeN
}

// WeightsRootOf is WeightsRootOf(path) that reads only the files whose
// identity changed since they were last hashed. cached reports whether no
// file had to be read.
// A read stops when ctx ends.
func (c *HashCache) WeightsRootOf(ctx context.Context, path string) (root WeightsRoot, cached bool, err error) {
	paths, err := FilesOf(path)
	if err != nil {
		return WeightsRoot{}, false, err
	}
	cached = true
	files := make([]ManifestFile, 0, len(paths))
	for _, p := range paths {
		key, id, err := identity(p)
		if err != nil {
			return WeightsRoot{}, false, err
		}
		c.mu.Lock()
		e, ok := c.entries[key]
		c.mu.Unlock()
		if ok && e.sameFile(id) && len(e.SHA256) == 64 {
			files = append(files, ManifestFile{Name: filepath.Base(p), Size: e.Size, SHA256: e.SHA256})
			continue
		}
		cached = false
		f, err := c.hash(ctx, p, key, id)
		if err != nil {
			return WeightsRoot{}, false, err
		}
		files = append(files, f)
	}
	root, err = RootOf(files)
	return root, cached, err
}

// hash reads the file in full and remembers its hash under the identity it
// had before the read; a file that changed while it was read is not
// remembered.
func (c *HashCache) hash(ctx context.Context, p, key string, id hashEntry) (ManifestFile, error) {
	f, err := hashFile(ctx, p)
	if err != nil {
		return ManifestFile{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hashed++
	if _, after, err := identity(p); err == nil && after.sameFile(id) && f.Size == id.Size {
		id.SHA256 = f.SHA256
		c.entries[key] = id
		c.dirty = true
	}
	return f, nil
}

// Mismatch is a file whose bytes no longer match the hash remembered for
// the same identity.
type Mismatch struct {
	Path           string
	Cached, Actual string
}

// Verify hashes every file of the model at path in full, whatever the cache
// holds, updates the cache, and lists the files whose bytes changed while
// their identity did not (which only disk corruption or a tool that forges
// timestamps can do).
func (c *HashCache) Verify(ctx context.Context, path string) (WeightsRoot, []Mismatch, error) {
	paths, err := FilesOf(path)
	if err != nil {
		return WeightsRoot{}, nil, err
	}
	var bad []Mismatch
	files := make([]ManifestFile, 0, len(paths))
	for _, p := range paths {
		key, id, err := identity(p)
		if err != nil {
			return WeightsRoot{}, nil, err
		}
		c.mu.Lock()
		old, had := c.entries[key]
		c.mu.Unlock()
		f, err := c.hash(ctx, p, key, id)
		if err != nil {
			return WeightsRoot{}, nil, err
		}
		if had && old.sameFile(id) && old.SHA256 != f.SHA256 {
			bad = append(bad, Mismatch{Path: p, Cached: old.SHA256, Actual: f.SHA256})
		}
		files = append(files, f)
	}
	root, err := RootOf(files)
	return root, bad, err
}

// Cached is the remembered sha256 of the file at path when its identity is
// unchanged ("" otherwise).
func (c *HashCache) Cached(path string) string {
	key, id, err := identity(path)
	if err != nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok && e.sameFile(id) {
		return e.SHA256
	}
	return ""
}

// Remember records a hash computed elsewhere (a download that was checked
// as it was written) for the file at path as it is now.
func (c *HashCache) Remember(path, sha256 string) error {
	key, id, err := identity(path)
	if err != nil {
		return err
	}
	id.SHA256 = sha256
	c.mu.Lock()
	c.entries[key] = id
	c.dirty = true
	c.mu.Unlock()
	return nil
}

// Save writes the cache if it changed, dropping entries for files that no
// longer exist. It writes a new file and renames it into place.
func (c *HashCache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	for k := range c.entries {
		if _, err := os.Stat(k); errors.Is(err, fs.ErrNotExist) {
			delete(c.entries, k)
		}
	}
	b, err := json.MarshalIndent(map[string]any{"files": c.entries}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("hash cache: %w", err)
	}
	if err := atomicfile.Write(c.path, b, 0o600); err != nil {
		return fmt.Errorf("hash cache: %w", err)
	}
	c.dirty = false
	return nil
}

// Hashed is how many files the cache has read in full.
func (c *HashCache) Hashed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hashed
}
