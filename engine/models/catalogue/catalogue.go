// Package catalogue is boxd's built-in list of known-good open models, one
// or more for each role the box loads (chat, speech, VAD, embedder,
// reranker), each named so that `boxd models pull NAME` can fetch it and
// `boxd models use ROLE NAME` can configure it.
//
// Every file of an entry carries its publisher's URL, its SHA-256 (a pull
// installs a file only when its bytes match) and, where a public pin gives
// it, its size (0: not pinned, checked on download through the SHA-256).
// builtin.go names, beside each entry, the public source its SHA-256 and size
// were taken from.
package catalogue

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Role is what the box uses a model for.
type Role string

// The roles, in the order lists show them.
const (
	Chat     Role = "chat"
	Speech   Role = "speech"
	VAD      Role = "vad"
	Embedder Role = "embedder"
	Reranker Role = "reranker"
	Diarizer Role = "diarizer"
)

// Roles lists every role in display order.
func Roles() []Role { return []Role{Chat, Speech, VAD, Embedder, Reranker, Diarizer} }

// ParseRole accepts a role's name or a common synonym (llm, asr, whisper,
// embeddings, rerank).
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "chat", "llm":
		return Chat, nil
	case "speech", "asr", "whisper", "stt":
		return Speech, nil
	case "vad":
		return VAD, nil
	case "embedder", "embedding", "embeddings":
		return Embedder, nil
	case "reranker", "rerank":
		return Reranker, nil
	case "diarizer", "diarization":
		return Diarizer, nil
	}
	return "", fmt.Errorf("%q is not a model role: use chat, speech, vad, embedder, reranker or diarizer", s)
}

// Key is the setting that names the role's model file.
func (r Role) Key() string {
	switch r {
	case Chat:
		return "models.llm.path"
	case Speech:
		return "models.asr.path"
	}
	return "models." + string(r) + ".path"
}

// ProjectorKey is the setting naming the chat model's vision projector.
const ProjectorKey = "models.llm.projector"

// TemplateKey is the setting naming the chat model's template family.
const TemplateKey = "models.llm.template"

// Kinds of file in an entry.
const (
	KindModel     = "model"
	KindProjector = "projector" // the chat model's vision projector (mmproj)
)

// Conversions an entry's file may need before boxd loads it.
const (
	// ConvertWhisper: a whisper.cpp ggml-*.bin, converted to GGUF
	// (engine/models/convert.WhisperBinFile) under File.Output.
	ConvertWhisper = "whisper"
)

// File is one file of an entry.
type File struct {
	Kind string `json:"kind"` // KindModel or KindProjector
	// Name is the file's name in the models folder and on a mirror
	// (MIRROR/Name); unique in the catalogue.
	Name   string `json:"name"`
	URL    string `json:"url"`    // the publisher's download URL
	SHA256 string `json:"sha256"` // lower-case hex
	Size   int64  `json:"size"`   // bytes; 0 when no public pin gives it
	// Convert names a conversion ("" none); Output is the converted
	// file's name in the models folder, the file the setting names.
	Convert string `json:"convert,omitempty"`
	Output  string `json:"output,omitempty"`
}

// Installed is the name of the file boxd loads: Output when the file is
// converted, else Name.
func (f File) Installed() string {
	if f.Output != "" {
		return f.Output
	}
	return f.Name
}

// Entry is one model by name.
type Entry struct {
	Name    string `json:"name"`
	Role    Role   `json:"role"`
	Summary string `json:"summary"`
	Licence string `json:"licence"` // SPDX id or the licence's own name, from the model card
	// Files: the model first, then (chat) its projector.
	Files []File `json:"files"`
	// Settings are more settings `boxd models use` writes with the
	// role's path (for example the chat template of a model without one).
	Settings map[string]string `json:"settings,omitempty"`
	// Test marks a tiny model for tests and the quick start, not for use.
	Test bool `json:"test,omitempty"`
}

// Model is the entry's main file.
func (e Entry) Model() File {
	for _, f := range e.Files {
		if f.Kind == KindModel {
			return f
		}
	}
	return File{}
}

// Projector is the chat entry's vision projector, if it has one.
func (e Entry) Projector() (File, bool) {
	for _, f := range e.Files {
		if f.Kind == KindProjector {
			return f, true
		}
	}
	return File{}, false
}

// Size is the sum of the pinned sizes, and whether every file's size is
// pinned.
func (e Entry) Size() (int64, bool) {
	var n int64
	known := true
	for _, f := range e.Files {
		n += f.Size
		known = known && f.Size > 0
	}
	return n, known
}

// Catalogue is a list of entries.
type Catalogue []Entry

// Builtin is the catalogue compiled into boxd.
func Builtin() Catalogue { return append(Catalogue(nil), builtin...) }

// Lookup finds an entry by name (case-insensitive).
func (c Catalogue) Lookup(name string) (Entry, bool) {
	for _, e := range c {
		if strings.EqualFold(e.Name, name) {
			return e, true
		}
	}
	return Entry{}, false
}

// Suggest is the entry name closest to name (a typo, or a name such as
// "llama3.2" that an entry's name contains in its own spelling), or "".
func (c Catalogue) Suggest(name string) string {
	squash := func(s string) string {
		return strings.NewReplacer("-", "", ".", "", "_", "", ":", "", " ", "").Replace(strings.ToLower(s))
	}
	q := squash(name)
	best, bestD := "", 4
	for _, e := range c {
		n := squash(e.Name)
		if q != "" && strings.Contains(n, q) {
			return e.Name
		}
		if d := levenshtein.ComputeDistance(q, n); d < bestD {
			best, bestD = e.Name, d
		}
	}
	return best
}

// Names lists the entries' names.
func (c Catalogue) Names() []string {
	out := make([]string, len(c))
	for i, e := range c {
		out[i] = e.Name
	}
	return out
}

// Sorted is the catalogue ordered by role (Roles order), keeping each
// role's entries in their listed order.
func (c Catalogue) Sorted() Catalogue {
	rank := map[Role]int{}
	for i, r := range Roles() {
		rank[r] = i
	}
	out := append(Catalogue(nil), c...)
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Role] < rank[out[j].Role] })
	return out
}

// Validate checks every entry: a name of lower-case letters, digits, dots,
// dashes and underscores, unique; a known role; a summary and a licence; a model file
// (and for chat at most one projector); each file named without a path,
// unique across the catalogue, with an http(s) URL (https unless
// allowHTTP), a 64-hex SHA-256 and a size of 0 or more; a known
// conversion with an output name.
func (c Catalogue) Validate(allowHTTP bool) error {
	names, files := map[string]bool{}, map[string]string{}
	known := map[Role]bool{}
	for _, r := range Roles() {
		known[r] = true
	}
	for i, e := range c {
		where := fmt.Sprintf("catalogue entry %d (%s)", i+1, e.Name)
		if !validName(e.Name) {
			return fmt.Errorf("%s: the name must be lower-case letters, digits, '.', '-' and '_'", where)
		}
		if names[e.Name] {
			return fmt.Errorf("%s: the name is listed twice", where)
		}
		names[e.Name] = true
		if !known[e.Role] {
			return fmt.Errorf("%s: role %q is not one of chat, speech, vad, embedder, reranker, diarizer", where, e.Role)
		}
		if strings.TrimSpace(e.Summary) == "" || strings.TrimSpace(e.Licence) == "" {
			return fmt.Errorf("%s: a summary and a licence are required", where)
		}
		models, projectors := 0, 0
		for _, f := range e.Files {
			if err := f.validate(allowHTTP); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			for _, n := range []string{f.Name, f.Output} {
				if n == "" {
					continue
				}
				if other, ok := files[n]; ok {
					return fmt.Errorf("%s: file name %s is also used by %s", where, n, other)
				}
				files[n] = e.Name
			}
			switch f.Kind {
			case KindModel:
				models++
			case KindProjector:
				projectors++
			}
		}
		if models != 1 {
			return fmt.Errorf("%s: needs exactly one model file (has %d)", where, models)
		}
		if projectors > 0 && (e.Role != Chat || projectors > 1) {
			return fmt.Errorf("%s: only a chat entry has a projector, and one at most", where)
		}
		for k := range e.Settings {
			if k != TemplateKey {
				return fmt.Errorf("%s: setting %s is not one an entry may carry (only %s)", where, k, TemplateKey)
			}
		}
	}
	return nil
}

func (f File) validate(allowHTTP bool) error {
	if f.Kind != KindModel && f.Kind != KindProjector {
		return fmt.Errorf("file %s: kind %q is not model or projector", f.Name, f.Kind)
	}
	for _, n := range []string{f.Name, f.Output} {
		if n != "" && (n != path.Base(n) || strings.ContainsAny(n, `/\`) || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".part")) {
			return fmt.Errorf("file %q: a file name, without a folder, not hidden, not .part", n)
		}
	}
	if f.Name == "" {
		return fmt.Errorf("a file has no name")
	}
	u, err := url.Parse(f.URL)
	if err != nil || u.Host == "" || !(u.Scheme == "https" || allowHTTP && u.Scheme == "http") {
		return fmt.Errorf("file %s: %q is not an https URL", f.Name, f.URL)
	}
	if len(f.SHA256) != 64 || strings.ToLower(f.SHA256) != f.SHA256 {
		return fmt.Errorf("file %s: the sha256 must be 64 lower-case hex digits", f.Name)
	}
	if _, err := hex.DecodeString(f.SHA256); err != nil {
		return fmt.Errorf("file %s: the sha256 must be 64 lower-case hex digits", f.Name)
	}
	if f.Size < 0 {
		return fmt.Errorf("file %s: negative size", f.Name)
	}
	switch {
	case f.Convert == "" && f.Output != "":
		return fmt.Errorf("file %s: an output name without a conversion", f.Name)
	case f.Convert == ConvertWhisper && f.Output == "":
		return fmt.Errorf("file %s: the conversion needs an output name", f.Name)
	case f.Convert != "" && f.Convert != ConvertWhisper:
		return fmt.Errorf("file %s: conversion %q is not known (whisper)", f.Name, f.Convert)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Load reads a catalogue from a JSON file (an array of entries, the
// fields as Entry's JSON names them) and validates it; http URLs are
// accepted (a test mirror on loopback).
func Load(file string) (Catalogue, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("catalogue: %w", err)
	}
	var c Catalogue
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("catalogue %s: %w", file, err)
	}
	if err := c.Validate(true); err != nil {
		return nil, fmt.Errorf("catalogue %s: %w", file, err)
	}
	return c, nil
}

// SourceURL is where a file is fetched from: MIRROR/NAME when mirror is
// set, else the publisher's URL.
func SourceURL(f File, mirror string) (string, error) {
	if mirror == "" {
		return f.URL, nil
	}
	u, err := url.Parse(mirror)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("models.mirror: not an http(s) base URL")
	}
	return u.JoinPath(f.Name).String(), nil
}
