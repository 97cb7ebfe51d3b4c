// Package install puts a catalogue entry's files into a models folder:
// each file is downloaded with resume and its SHA-256 checked (package
// pull), from the publisher's URL or a mirror's, and whisper.cpp files are
// converted to the GGUF boxd loads. It also tells, without reading any file
// in full, whether an entry is there.
package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"

	"boxd/engine/models"
	"boxd/engine/models/catalogue"
	"boxd/engine/models/convert"
	"boxd/engine/models/pull"
)

// Options describe one install.
type Options struct {
	Dir    string // the models folder (state_dir/models)
	Mirror string // base URL files are fetched from instead ("" the publishers')
	Header http.Header
	// Force downloads and converts again files that are already there.
	Force  bool
	Client *http.Client // nil: package pull's default
	// Hashes remembers each file's SHA-256 so serve does not read it
	// again; nil: a cache is not kept.
	Hashes *models.HashCache
	// Note, when set, is told what happens ("fetching …", "converting …").
	Note func(msg string)
	// Progress, when set, returns the progress callback for one file's
	// download (bytes present so far, total or -1).
	Progress func(f catalogue.File) func(have, total int64)
}

// Result is one file of an installed entry.
type Result struct {
	File   catalogue.File
	Path   string // the installed file (the converted GGUF for a whisper.cpp file)
	Source string // the downloaded file ("" when already there and not needed)
	Size   int64  // bytes of the downloaded (pinned) file
	SHA256 string
	// Resumed is bytes an interrupted download had left; Fetched is
	// whether the file was downloaded now (false: already there, checked).
	Resumed   int64
	Fetched   bool
	Converted bool
}

// ErrExists is a file already in the folder whose bytes are not the
// catalogue's.
var ErrExists = errors.New("a different file is in the way")

// Pull installs every file of e into o.Dir. A file already there is
// checked (its remembered hash, else read in full) and kept; a converted
// file already there is kept as is. Files download to NAME.part and appear
// under their names only once their SHA-256 matches; run Pull again after
// an interruption and it continues where it stopped.
func Pull(ctx context.Context, e catalogue.Entry, o Options) ([]Result, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("models folder: %w", err)
	}
	note := o.Note
	if note == nil {
		note = func(string) {}
	}
	if err := checkSpace(o.Dir, e, o.Force); err != nil {
		return nil, err
	}
	var out []Result
	for _, f := range e.Files {
		r, err := pullFile(ctx, f, o, note)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func pullFile(ctx context.Context, f catalogue.File, o Options, note func(string)) (Result, error) {
	src := filepath.Join(o.Dir, f.Name)
	dst := filepath.Join(o.Dir, f.Installed())
	r := Result{File: f, Path: dst, Size: f.Size, SHA256: f.SHA256}

	if f.Convert != "" && !o.Force && isFile(dst) {
		note(fmt.Sprintf("%s is there (converted from %s)", f.Installed(), f.Name))
		return r, nil
	}
	have := false
	if !o.Force && isFile(src) {
		sum, size, err := hashOf(ctx, src, o.Hashes, note)
		if err != nil {
			return r, err
		}
		if sum != f.SHA256 {
			return r, fmt.Errorf("%w: %s is there but its sha256 is %s, not the catalogue's %s; pass --force to replace it", ErrExists, src, sum, f.SHA256)
		}
		note(fmt.Sprintf("%s is there (sha256 checked)", f.Name))
		r.Size, r.Source, have = size, src, true
	}
	if !have {
		u, err := catalogue.SourceURL(f, o.Mirror)
		if err != nil {
			return r, err
		}
		note(fmt.Sprintf("fetching %s (%s) from %s", f.Name, sizeText(f.Size), pull.Redact(u)))
		var progress func(int64, int64)
		if o.Progress != nil {
			progress = o.Progress(f)
		}
		res, err := pull.File(ctx, pull.Options{URL: u, Dest: src, SHA256: f.SHA256, Header: o.Header, Force: o.Force, Client: o.Client, Progress: progress})
		if err != nil {
			return r, err
		}
		if o.Hashes != nil {
			_ = o.Hashes.Remember(res.Path, res.SHA256)
		}
		r.Size, r.Source, r.Resumed, r.Fetched = res.Size, res.Path, res.Resumed, true
	}
	if f.Convert == catalogue.ConvertWhisper {
		note(fmt.Sprintf("converting %s to %s", f.Name, f.Installed()))
		part := dst + ".part"
		if err := convert.WhisperBinFile(src, part, ""); err != nil {
			_ = os.Remove(part)
			return r, fmt.Errorf("convert %s: %w", src, err)
		}
		if err := os.Rename(part, dst); err != nil {
			return r, fmt.Errorf("convert %s: %w", src, err)
		}
		r.Converted = true
	}
	return r, nil
}

// hashOf is a file's SHA-256 and size: the remembered hash when its
// identity is unchanged, else read in full (and remembered).
func hashOf(ctx context.Context, path string, hashes *models.HashCache, note func(string)) (string, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	if hashes != nil {
		if sum := hashes.Cached(path); sum != "" {
			return sum, st.Size(), nil
		}
	}
	note(fmt.Sprintf("checking %s (%s)", filepath.Base(path), sizeText(st.Size())))
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if hashes != nil {
		_ = hashes.Remember(path, sum)
	}
	return sum, st.Size(), nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// checkSpace refuses a pull whose pinned sizes (less what is already
// there, plus as much again for a conversion) do not fit on the folder's
// file system. Files without a pinned size count as 0.
func checkSpace(dir string, e catalogue.Entry, force bool) error {
	var need int64
	for _, f := range e.Files {
		if f.Size == 0 {
			continue
		}
		dst := filepath.Join(dir, f.Installed())
		if !force && f.Convert != "" && isFile(dst) {
			continue
		}
		src := filepath.Join(dir, f.Name)
		if force || !isFile(src) {
			need += f.Size
			if st, err := os.Stat(src + ".part"); err == nil && !force {
				need -= min(st.Size(), f.Size)
			}
		}
		if f.Convert != "" {
			need += f.Size // the GGUF is about the size of the ggml file
		}
	}
	var st syscall.Statfs_t
	if need <= 0 || syscall.Statfs(dir, &st) != nil {
		return nil
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free < need {
		return fmt.Errorf("%s needs %s in %s, which has %s free: free some space (or pull into a larger disk and point state_dir at it)", e.Name, sizeText(need), dir, sizeText(free))
	}
	return nil
}

// State is whether an entry's files are in the models folder.
type State string

// States of an entry.
const (
	Present State = "present" // every installed file is there (at its pinned size)
	Partial State = "partial" // an interrupted download: pull again to resume
	Damaged State = "damaged" // a file is there at the wrong size: pull --force
	Missing State = "missing"
)

// Status is an entry's state and its installed files' paths (model first).
type Status struct {
	State State
	Paths []string
	Bytes int64 // of the installed files present
}

// StatusOf tells whether e is installed in dir, from file names and sizes
// only (nothing is read).
func StatusOf(dir string, e catalogue.Entry) Status {
	s := Status{State: Present}
	partial, damaged, missing := false, false, false
	for _, f := range e.Files {
		p := filepath.Join(dir, f.Installed())
		s.Paths = append(s.Paths, p)
		st, err := os.Stat(p)
		switch {
		case err != nil || !st.Mode().IsRegular():
			missing = true
			if _, err := os.Stat(filepath.Join(dir, f.Name) + ".part"); err == nil {
				partial = true
			}
		case f.Convert == "" && f.Size > 0 && st.Size() != f.Size:
			damaged = true
		default:
			s.Bytes += st.Size()
		}
	}
	switch {
	case damaged:
		s.State = Damaged
	case partial:
		s.State = Partial
	case missing:
		s.State = Missing
	}
	return s
}

// Matches reports whether path (a configured setting) is f as installed in
// dir: the same file, or (for a file used as downloaded) one whose
// remembered SHA-256 is the catalogue's. Nothing is read in full.
func Matches(path, dir string, f catalogue.File, hashes *models.HashCache) bool {
	if path == "" {
		return false
	}
	inst := filepath.Join(dir, f.Installed())
	if a, err := os.Stat(path); err == nil {
		if b, err := os.Stat(inst); err == nil && os.SameFile(a, b) {
			return true
		}
	} else if filepath.Clean(path) == filepath.Clean(inst) {
		return true
	}
	return f.Convert == "" && hashes != nil && hashes.Cached(path) == f.SHA256
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func sizeText(n int64) string {
	switch {
	case n <= 0:
		return "size not pinned; checked on download"
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
