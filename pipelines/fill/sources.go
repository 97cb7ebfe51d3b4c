package fill

import (
	"fmt"
	"strings"

	"boxd/pipelines/fill/rules"
)

// Source is one of the person's documents, as text (a PDF or an image is
// read into text by the document reader first).
type Source struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Line is one numbered line of a source: what a value cites.
type Line struct {
	Doc  string `json:"doc_name"`
	Page int    `json:"page"`
	N    int    `json:"n"` // 1-based across the document
	Text string `json:"text"`
}

// Limits of sources (contract 2, section 8).
const (
	MaxSources    = 8
	MaxSourceSize = 8 << 20
	MaxSourceName = 200 // characters of a source's name (it is in the record)
	maxLineRunes  = 500
)

// Lines splits the sources into numbered lines: a form feed starts a new
// page, blank lines are dropped, and a long line is cut into pieces of at
// most 500 characters (each its own number) so a citation stays short.
func Lines(srcs []Source) ([]Line, error) {
	if len(srcs) > MaxSources {
		return nil, fmt.Errorf("fill: %d sources; at most %d", len(srcs), MaxSources)
	}
	var out []Line
	for _, s := range srcs {
		n := 0
		for p, page := range strings.Split(s.Text, "\f") {
			for _, raw := range strings.Split(page, "\n") {
				// Cut by walking the line once: a source of one 8 MB line
				// (no line breaks) is as quick as one of short lines.
				text := strings.Join(strings.Fields(raw), " ")
				for text != "" {
					cut, runes := len(text), 0
					for i := range text {
						if runes == maxLineRunes {
							cut = i
							break
						}
						runes++
					}
					n++
					out = append(out, Line{Doc: s.Name, Page: p + 1, N: n, Text: text[:cut]})
					text = text[cut:]
				}
			}
		}
	}
	return out, nil
}

// ForModel is a line as a model may see it alone: its secrets withheld
// (the prompt withholds the secrets of all the lines, Withheld).
func (l Line) ForModel() string {
	return l.forModel(rules.Collect([]string{l.Text}, nil), l.Doc)
}

func (l Line) forModel(s *rules.Secrets, doc string) string {
	red, _ := s.Redact(l.Text)
	return fmt.Sprintf("[%s:%d] %s", doc, l.N, red)
}

// Withheld are the secrets of the documents: each value that a line's
// pattern or label makes a secret (a label at a line's end labels the
// next line's start), and the value after the label of any of the form's
// fields that asks for one. Every writing of each, in every line, is
// withheld from the model: "Passport: 571903346" withholds "Travel
// document 571 903 346" too.
func Withheld(fields []Field, lines []Line) *rules.Secrets {
	// A document's lines are read in blocks of about 64 KB (each block
	// starting with the previous block's last line, so that a label at a
	// block's end still labels the next line), which bounds the memory
	// the rules take over an 8 MB document.
	const block = 64 << 10
	var texts []string
	var b strings.Builder
	for i, l := range lines {
		if i > 0 && (l.Doc != lines[i-1].Doc || b.Len() >= block) {
			texts = append(texts, b.String())
			b.Reset()
			if l.Doc == lines[i-1].Doc {
				b.WriteString(lines[i-1].Text)
				b.WriteString("\n")
			}
		}
		b.WriteString(l.Text)
		b.WriteString("\n")
	}
	if b.Len() > 0 {
		texts = append(texts, b.String())
	}
	var labels []rules.Labelled
	for _, f := range fields {
		if f.Secret != "" {
			labels = append(labels, rules.Labelled{Label: f.Label, Kind: f.Secret})
		}
	}
	return rules.Collect(texts, labels)
}
