package studio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MediaURL is where rendered files are served.
const MediaURL = "/studio/media/"

// Gallery limits.
const (
	maxSidecars     = 1000     // sidecars read per listing
	maxSidecarBytes = 64 << 10 // one sidecar
	maxMediaDepth   = 4        // path segments under the media directory
)

// MediaTypes are the files /studio/media/ serves, by extension, with the
// Content-Type they are served as.
var MediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif",
	".mp4": "video/mp4", ".webm": "video/webm",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4",
}

// Item is a gallery item of the contract.
type Item struct {
	ID        string   `json:"id"`
	Kind      Kind     `json:"kind"`
	Title     string   `json:"title"`
	Prompt    string   `json:"prompt"`
	Model     string   `json:"model"`
	URL       string   `json:"url"`
	Seed      int64    `json:"seed"`
	DurationS *float64 `json:"duration_s,omitempty"`
	Notice    string   `json:"notice,omitempty"`
	ReportURL string   `json:"report_url"`
}

// Sidecar is the metadata file <id>.json next to the rendered files: the
// item's fields, with file naming the rendered file relative to the media
// directory.
type Sidecar struct {
	Kind      Kind     `json:"kind"`
	Title     string   `json:"title"`
	Prompt    string   `json:"prompt"`
	Model     string   `json:"model"`
	File      string   `json:"file"`
	Seed      int64    `json:"seed"`
	DurationS *float64 `json:"duration_s"`
	Notice    string   `json:"notice"`
}

// Gallery lists and serves the rendered files under Dir
// (state_dir/studio/media).
type Gallery struct {
	Dir string
}

var (
	itemID  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,` + strconv.Itoa(MaxReportIDChars) + `}$`) // gallery item, job and report target ids
	segment = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// ErrNotMedia is a path that names no servable file.
var ErrNotMedia = errors.New("studio: no such media file")

// MediaPath checks a path under the media directory: at most 4 segments
// of letters, digits, dots, dashes and underscores (none starting with a
// dot, none "..") ending in a served extension. It returns the
// Content-Type of the file.
func MediaPath(p string) (contentType string, ok bool) {
	segs := strings.Split(p, "/")
	if p == "" || len(segs) > maxMediaDepth {
		return "", false
	}
	for _, s := range segs {
		if !segment.MatchString(s) || strings.Contains(s, "..") {
			return "", false
		}
	}
	ct, ok := MediaTypes[strings.ToLower(path.Ext(p))]
	return ct, ok
}

// Open opens a media file for serving: a regular file inside Dir (os.Root
// refuses links that lead out of it), never a directory. Its error is
// ErrNotMedia (wrapped) for anything that is not one.
func (g *Gallery) Open(p string) (*os.File, fs.FileInfo, string, error) {
	ct, ok := MediaPath(p)
	if !ok {
		return nil, nil, "", fmt.Errorf("%w: %q is not a media path", ErrNotMedia, p)
	}
	root, err := os.OpenRoot(g.Dir)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%w: %w", ErrNotMedia, err)
	}
	defer root.Close()
	f, err := root.Open(p)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%w: %w", ErrNotMedia, err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, "", fmt.Errorf("%w: %q is not a regular file", ErrNotMedia, p)
	}
	return f, fi, ct, nil
}

// Skipped is a sidecar the listing left out, and why (for the log; it
// names files, never prompts).
type Skipped struct {
	Name   string
	Reason string
}

// List returns the items whose rendered file exists, newest file first.
// A missing directory is an empty gallery. Sidecars that cannot be read
// or whose file is missing are left out and returned in skipped.
func (g *Gallery) List() (items []Item, skipped []Skipped, err error) {
	root, err := os.OpenRoot(g.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Item{}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("studio gallery: %w", err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, nil, fmt.Errorf("studio gallery: %w", err)
	}
	type dated struct {
		item Item
		mod  time.Time
	}
	var found []dated
	read := 0
	for _, e := range entries {
		name := e.Name()
		id, isJSON := strings.CutSuffix(name, ".json")
		if !isJSON || !e.Type().IsRegular() {
			continue
		}
		if read++; read > maxSidecars {
			skipped = append(skipped, Skipped{name, fmt.Sprintf("more than %d sidecars", maxSidecars)})
			break
		}
		it, mod, reason := g.item(root, id, name)
		if reason != "" {
			skipped = append(skipped, Skipped{name, reason})
			continue
		}
		found = append(found, dated{it, mod})
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].mod.Equal(found[j].mod) {
			return found[i].mod.After(found[j].mod)
		}
		return found[i].item.ID < found[j].item.ID
	})
	items = make([]Item, len(found))
	for i, d := range found {
		items[i] = d.item
	}
	return items, skipped, nil
}

// item reads one sidecar; reason says why it is left out ("" when not).
func (g *Gallery) item(root *os.Root, id, name string) (Item, time.Time, string) {
	if !itemID.MatchString(id) {
		return Item{}, time.Time{}, "name is not an item id"
	}
	f, err := root.Open(name)
	if err != nil {
		return Item{}, time.Time{}, "unreadable"
	}
	defer f.Close()
	var sc Sidecar
	dec := json.NewDecoder(&limitedReader{f, maxSidecarBytes})
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return Item{}, time.Time{}, "not a sidecar: " + err.Error()
	}
	ct, ok := MediaPath(sc.File)
	if !ok {
		return Item{}, time.Time{}, "file is not a media path"
	}
	want := map[Kind]string{Music: "audio/", Image: "image/", Video: "video/"}[sc.Kind]
	if want == "" || !strings.HasPrefix(ct, want) {
		return Item{}, time.Time{}, fmt.Sprintf("kind %q does not match the file type %s", sc.Kind, ct)
	}
	fi, err := root.Stat(sc.File)
	if err != nil || !fi.Mode().IsRegular() {
		return Item{}, time.Time{}, "its file does not exist"
	}
	return Item{
		ID: id, Kind: sc.Kind, Title: sc.Title, Prompt: sc.Prompt, Model: sc.Model,
		URL: MediaURL + sc.File, Seed: sc.Seed, DurationS: sc.DurationS, Notice: sc.Notice,
		ReportURL: ItemReportURL(id),
	}, fi.ModTime(), ""
}

// Has reports whether id is an item the gallery lists.
func (g *Gallery) Has(id string) bool {
	if !itemID.MatchString(id) {
		return false
	}
	root, err := os.OpenRoot(g.Dir)
	if err != nil {
		return false
	}
	defer root.Close()
	_, _, reason := g.item(root, id, id+".json")
	return reason == ""
}

// ItemReportURL is the report form of a gallery item.
func ItemReportURL(id string) string { return "/studio/report?item=" + id }

// limitedReader fails a read past n bytes (a sidecar larger than that is
// refused, not cut).
type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("sidecar larger than 64 KiB")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}
