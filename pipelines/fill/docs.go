package fill

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/internal/scratch"
	"boxd/pipelines/docreader"
	"boxd/pipelines/docreader/doc"
)

// Reader reads a PDF or an image into a document (*docreader.Service).
type Reader interface {
	Read(ctx context.Context, env run.Env, req docreader.ReadRequest) (*doc.Document, error)
}

// FileMedia are the media types a source may be sent as (contract 2,
// section 4).
var FileMedia = map[string]string{"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}

// ReadFile decodes a source sent as base64 and reads it through the
// document reader into text: each page's elements in reading order, one
// line of text per line read, pages apart (a form feed), so a value cites
// the page and line it was read from.
func ReadFile(ctx context.Context, r Reader, name, dataB64, media string) (Source, error) {
	ext, ok := FileMedia[media]
	if !ok {
		return Source{}, problem.New(problem.Unsupported, "source %q is %q: send text, or PDF, PNG, JPEG or WebP", name, media)
	}
	data, err := base64.StdEncoding.DecodeString(dataB64)
	if err != nil {
		return Source{}, problem.New(problem.Invalid, "source %q: data_b64 is not base64: %v", name, err)
	}
	if len(data) > MaxSourceSize {
		return Source{}, problem.New(problem.TooLarge, "source %q is %d bytes; at most %d", name, len(data), MaxSourceSize)
	}
	dir, err := scratch.Dir("fill-")
	if err != nil {
		return Source{}, fmt.Errorf("fill: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "source"+ext)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return Source{}, fmt.Errorf("fill: %w", err)
	}
	no := false
	d, err := r.Read(ctx, run.Env{}, docreader.ReadRequest{File: path, ForRoute: "fill", Reread: &no})
	if err != nil {
		return Source{}, err
	}
	return Source{Name: name, Text: DocText(d)}, nil
}

// DocText is a read document's text: pages in order, form feeds between
// them, each page's elements in reading order and each element's lines.
func DocText(d *doc.Document) string {
	var pages []string
	for _, p := range d.Pages {
		els := append([]doc.Element(nil), p.Elements...)
		sort.SliceStable(els, func(i, j int) bool { return els[i].Order < els[j].Order })
		var b strings.Builder
		for _, e := range els {
			if e.Kind == "table" { // its cells are elements of their own
				continue
			}
			if len(e.Lines) == 0 {
				if t := strings.TrimSpace(e.Text); t != "" {
					b.WriteString(t + "\n")
				}
				continue
			}
			for _, l := range e.Lines {
				if t := strings.TrimSpace(l.Text); t != "" {
					b.WriteString(t + "\n")
				}
			}
		}
		pages = append(pages, b.String())
	}
	return strings.Join(pages, "\f")
}
