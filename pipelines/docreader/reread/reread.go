// Package reread is the document reader's re-read rule (contract 3,
// section 2): where a reading's mean confidence is under 0.90, the box's
// vision-language model reads the region's pixels again, and both
// readings are kept. Each re-read is a receipted, charged model call.
package reread

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"boxd/engine/llm"
	"boxd/engine/raster"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
)

// BelowBP is the rule's threshold: a mean confidence under 0.90, in
// basis points.
const BelowBP = 9000

// MaxPerDocument bounds the model calls one document's re-reads make.
const MaxPerDocument = 24

// pad is the margin (raster pixels) kept around a region.
const pad = 6

// Source is a re-reading's source.
const Source = "model"

// Reading is the model's reading of a region, kept beside the first one.
type Reading struct {
	Text   string `json:"text"`
	Source string `json:"source"` // model
	// Agrees: the two readings are the same text, letter case, spacing
	// and punctuation aside.
	Agrees bool `json:"agrees"`
	// Receipt is the model call's receipt id.
	Receipt string `json:"receipt"`
}

// Target is a region read with low confidence.
type Target struct {
	ID     string
	BBox   [4]int // [x, y, width, height] in the page raster
	Text   string
	ConfBP int
}

// Summary says what the rule did for a document.
type Summary struct {
	BelowBP    int    `json:"below_bp"`
	Candidates int    `json:"candidates"` // elements under the threshold
	Reread     int    `json:"reread"`
	Skipped    int    `json:"skipped"`
	Note       string `json:"note,omitempty"` // why some were not re-read
}

// Reader re-reads a document's regions.
type Reader struct {
	Chat   *llmcall.Model // must see images (Sees)
	Budget run.Budget
	Events llmcall.Events // each call's receipt event (stream: true)
	// Max bounds the calls (0: MaxPerDocument).
	Max int

	sum      Summary
	receipts []string
	stopped  bool
}

// Due says whether an element's reading falls under the rule.
func Due(text string, confBP int) bool {
	return confBP < BelowBP && strings.TrimSpace(text) != ""
}

// Page re-reads the targets on one page raster, returning the readings by
// target id. A budget used up, the cap reached or a model failure stops
// the re-reads (the rest are counted as skipped, and Summary says why);
// only the caller's context ending is an error.
func (r *Reader) Page(ctx context.Context, img *raster.Image, targets []Target) (map[string]Reading, error) {
	out := map[string]Reading{}
	max := r.Max
	if max <= 0 {
		max = MaxPerDocument
	}
	for _, t := range targets {
		r.sum.Candidates++
		if r.stopped || r.sum.Reread >= max {
			if !r.stopped {
				r.note(fmt.Sprintf("at most %d regions are re-read per document", max))
			}
			r.sum.Skipped++
			continue
		}
		text, receipt, err := r.read(ctx, Crop(img, t.BBox), t.Text)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.stopped = true
			r.sum.Skipped++
			r.note(reason(err))
			continue
		}
		r.sum.Reread++
		r.receipts = append(r.receipts, receipt)
		out[t.ID] = Reading{Text: text, Source: Source, Agrees: Same(text, t.Text), Receipt: receipt}
	}
	return out, nil
}

// Summary is what the rule did so far; Receipts are its calls' receipts.
func (r *Reader) Summary() Summary {
	s := r.sum
	s.BelowBP = BelowBP
	return s
}

// Receipts are the re-reads' model-call receipt ids, in order.
func (r *Reader) Receipts() []string { return append([]string(nil), r.receipts...) }

func (r *Reader) note(n string) {
	if r.sum.Note == "" {
		r.sum.Note = n
	}
}

func reason(err error) string {
	if problem.Is(err, problem.Budget) {
		return "the token budget ran out; the rest were not re-read"
	}
	return "the model did not answer (" + err.Error() + "); the rest were not re-read"
}

// prompt asks for a transcription and nothing else.
const prompt = "Transcribe the text in this image exactly as it is written, on one line. Answer with the text only."

// read asks the model for the crop's text.
func (r *Reader) read(ctx context.Context, pic llm.Picture, first string) (string, string, error) {
	maxTok := min(256, 16+len([]rune(first)))
	res, err := r.Chat.Text(ctx, r.Budget, llmcall.Request{
		Messages: []llmcall.Message{
			{Role: "system", Content: "You read printed and handwritten text from document images."},
			{Role: "user", Content: llm.ImageMarker + "\n" + prompt, Images: []llm.Picture{pic}},
		},
		MaxTokens: maxTok, Params: map[string]string{"task": "docreader-reread"}, Events: r.Events,
	})
	if err != nil {
		return "", "", err
	}
	return strings.TrimSpace(res.Text), res.Receipt.ID, nil
}

// Crop is the region (with a margin) on a white square: a projector
// reads a square, and a line of text squeezed into one would be
// unreadable.
func Crop(img *raster.Image, bbox [4]int) llm.Picture {
	b := raster.Box{X0: float64(bbox[0] - pad), Y0: float64(bbox[1] - pad), X1: float64(bbox[0] + bbox[2] + pad), Y1: float64(bbox[1] + bbox[3] + pad)}
	sq := img.Square(b, 32, 0)
	return llm.Picture{Width: sq.W, Height: sq.H, RGB: sq.Pix}
}

// Same compares two readings with letter case, spacing and punctuation
// folded away.
func Same(a, b string) bool { return fold(a) == fold(b) }

func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
