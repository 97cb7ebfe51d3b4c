package fill

import (
	"slices"
	"strings"
	"unicode/utf8"

	"boxd/internal/problem"
	"boxd/pipelines/fill/rules"
)

// Vertical is the form filler's demo vertical.
const Vertical = "fill-and-stop"

// ReviewLangs are the 24 official EU languages a review may be read in.
var ReviewLangs = []string{"bg", "cs", "da", "de", "el", "en", "es", "et", "fi", "fr", "ga", "hr", "hu", "it", "lt", "lv", "mt", "nl", "pl", "pt", "ro", "sk", "sl", "sv"}

// SourceBody is one source as a caller sends it.
type SourceBody struct {
	Name      string  `json:"name"`
	Text      *string `json:"text"`
	DataB64   string  `json:"data_b64"`
	MediaType string  `json:"media_type"`
}

// Body is POST /fill/run's body.
type Body struct {
	Target *struct {
		HTML string `json:"html"`
		Demo string `json:"demo"`
	} `json:"target"`
	Sources    []SourceBody `json:"sources"`
	SampleID   string       `json:"sample_id"`
	ReviewLang string       `json:"review_lang"`
	Stream     bool         `json:"stream"`
	// Parsed is the request Validate made of the body.
	Parsed *Request `json:"-"`
}

// excluded are the refused forms' words (rules.RefusedWords), for checks
// of raw markup; Validate refuses them through rules.RefusedForm, which
// also reads them disguised.
var excluded = func() (out []struct{ what, words string }) {
	for _, w := range rules.RefusedWords {
		out = append(out, struct{ what, words string }{w.What, w.Words})
	}
	return out
}()

// Streaming reports the body's stream flag (read by admission).
func (b *Body) Streaming() bool { return b.Stream }

// Validate checks the body and turns it into a Request (sources with
// PDF or image data are not read in this version: 415).
func (b *Body) Validate() (*Request, error) {
	if b.ReviewLang == "" {
		b.ReviewLang = "en"
	}
	if !slices.Contains(ReviewLangs, b.ReviewLang) {
		return nil, problem.New(problem.Invalid, "review_lang %q is not one of the 24 EU language codes (%s)", b.ReviewLang, strings.Join(ReviewLangs, ", "))
	}
	if b.SampleID != "" {
		if b.Target != nil || len(b.Sources) > 0 {
			return nil, problem.New(problem.Invalid, "send sample_id alone, or target and sources, not both")
		}
		s, ok := Sample(b.SampleID)
		if !ok {
			return nil, problem.New(problem.NotFound, "no sample %q; GET /fill/samples lists them", b.SampleID)
		}
		return &Request{HTML: s.HTML, Sources: s.Sources, Hints: s.Hints, ReviewLang: b.ReviewLang}, nil
	}
	switch {
	case b.Target == nil || (b.Target.HTML == "" && b.Target.Demo == ""):
		return nil, problem.New(problem.Invalid, "target is required: {\"html\": <the form's markup>} or {\"demo\": <a demo form id>}; or send sample_id")
	case b.Target.HTML != "" && b.Target.Demo != "":
		return nil, problem.New(problem.Invalid, "target takes html or demo, not both")
	case b.Target.Demo != "":
		if _, ok := Sample(b.Target.Demo); !ok {
			return nil, problem.New(problem.NotFound, "no demo form %q; GET /fill/samples lists them (each sample's form is a demo form)", b.Target.Demo)
		}
	case len(b.Target.HTML) > MaxHTML:
		return nil, problem.New(problem.TooLarge, "target.html is %d bytes; at most %d", len(b.Target.HTML), MaxHTML)
	case b.Target.Demo == "" && !strings.Contains(strings.ToLower(b.Target.HTML), "<input") && !strings.Contains(strings.ToLower(b.Target.HTML), "<select") && !strings.Contains(strings.ToLower(b.Target.HTML), "<textarea"):
		return nil, problem.New(problem.Invalid, "target.html must contain an input, select or textarea")
	}
	switch {
	case len(b.Sources) == 0 || len(b.Sources) > MaxSources:
		return nil, problem.New(problem.Invalid, "sources holds %d documents; send 1 to %d", len(b.Sources), MaxSources)
	}
	if b.Target.Demo != "" {
		demo, _ := Sample(b.Target.Demo)
		b.Target.HTML = demo.HTML
	}
	// Forms the contract keeps out (rules.RefusedForm reads the words
	// however they are written: comments, entities, look-alike letters,
	// invisible characters).
	if what, word, refused := rules.RefusedForm(b.Target.HTML); refused {
		return nil, problem.New(problem.Unprocessable, "this looks like %s (%q): the form filler does not fill immigration forms, court filings or customs entries", what, word)
	}
	req := &Request{HTML: b.Target.HTML, Hints: hintsFor(b.Target.HTML), Demo: b.Target.Demo, ReviewLang: b.ReviewLang}
	for i, s := range b.Sources {
		switch {
		case strings.TrimSpace(s.Name) == "":
			return nil, problem.New(problem.Invalid, "sources[%d].name is required", i)
		case utf8.RuneCountInString(s.Name) > MaxSourceName:
			return nil, problem.New(problem.TooLarge, "sources[%d].name is %d characters; at most %d", i, utf8.RuneCountInString(s.Name), MaxSourceName)
		case s.Text != nil && s.DataB64 != "":
			return nil, problem.New(problem.Invalid, "sources[%d] takes text or data_b64, not both", i)
		case s.DataB64 != "":
			if _, ok := FileMedia[s.MediaType]; !ok {
				return nil, problem.New(problem.Unsupported, "sources[%d].media_type %q: send text, or PDF (application/pdf), PNG, JPEG or WebP", i, s.MediaType)
			}
			if len(s.DataB64) > MaxSourceSize/3*4+4 {
				return nil, problem.New(problem.TooLarge, "sources[%d] is over %d bytes", i, MaxSourceSize)
			}
			req.Files = append(req.Files, FileSource{Name: s.Name, DataB64: s.DataB64, MediaType: s.MediaType})
			continue
		case s.Text == nil:
			return nil, problem.New(problem.Invalid, "sources[%d] needs text (or data_b64 with media_type)", i)
		case len(*s.Text) > MaxSourceSize:
			return nil, problem.New(problem.TooLarge, "sources[%d] is %d bytes; at most %d", i, len(*s.Text), MaxSourceSize)
		}
		req.Sources = append(req.Sources, Source{Name: s.Name, Text: *s.Text})
	}
	return req, nil
}

// hintsFor reads the form's date order from its language: en-US writes
// month first, most others day first; unknown: dates whose day and month
// could swap are not matched another way.
func hintsFor(html string) rules.Hints {
	m := langRE.FindStringSubmatch(html)
	if m == nil {
		return rules.Hints{}
	}
	switch lang := strings.ToLower(m[1]); {
	case lang == "en-us":
		return rules.Hints{DateOrder: "mdy"}
	case lang == "en" || lang == "":
		return rules.Hints{}
	default:
		return rules.Hints{DateOrder: "dmy"}
	}
}
