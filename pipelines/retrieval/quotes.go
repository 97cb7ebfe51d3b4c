package retrieval

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"boxd/internal/problem"
	"boxd/pipelines/retrieval/bm25"
	"boxd/pipelines/retrieval/chunker"
)

// Quote limits.
const (
	MaxQuotes      = 50
	MaxQuoteChars  = 1000
	MaxAnswerChars = 10000
	// quoteSearchK is how many chunks a query retrieves for the quotes.
	quoteSearchK = 10
)

// QuoteNormalisation says how quotes are matched; answers carry it.
const QuoteNormalisation = "word for word: both sides cut into runs of letters and digits and lower-cased (the keyword analyzer), so case, punctuation and white space do not count; the quote's words must appear in one chunk, consecutive and in order"

// QuotesRequest is POST /retrieval/quotes's body: an index, the chunks
// to look in (a query retrieves them, or chunk ids name them) and the
// quotes (or an answer, whose sentences are the quotes).
type QuotesRequest struct {
	Index  string   `json:"index"`
	Query  string   `json:"query"`
	Chunks []string `json:"chunks"`
	Answer string   `json:"answer"`
	Quotes []string `json:"quotes"`

	notUTF8 []string // input.go
}

// QuoteResult is one quote's finding: where in which document its words
// are (the document's exact bytes there), or not found.
type QuoteResult struct {
	Quote     string `json:"quote"`
	Found     bool   `json:"found"`
	Chunk     string `json:"chunk,omitempty"`
	Doc       string `json:"doc,omitempty"`
	ByteStart *int   `json:"byte_start,omitempty"` // in the document
	ByteEnd   *int   `json:"byte_end,omitempty"`
	Text      string `json:"text,omitempty"` // the document's bytes there
}

// QuotesResponse is its answer.
type QuotesResponse struct {
	Normalisation string             `json:"normalisation"`
	Quotes        []QuoteResult      `json:"quotes"`
	Searched      []string           `json:"searched"` // the chunks looked in
	Receipt       *SearchReceipt     `json:"receipt"`  // the search's, when a query ran one
	ModelCalls    []ModelCallReceipt `json:"model_calls"`
}

// Validate checks a quotes body (400).
func (r *QuotesRequest) Validate() error {
	if err := notUTF8Problem("", r.notUTF8); err != nil {
		return err
	}
	texts := []struct {
		field, text string
		id          bool
	}{{"query", r.Query, false}, {"answer", r.Answer, false}}
	for i, q := range r.Quotes {
		texts = append(texts, struct {
			field, text string
			id          bool
		}{fmt.Sprintf("quotes[%d]", i), q, false})
	}
	for i, c := range r.Chunks {
		texts = append(texts, struct {
			field, text string
			id          bool
		}{fmt.Sprintf("chunks[%d]", i), c, true})
	}
	for _, t := range texts {
		if err := checkText(t.field, t.text, t.id); err != nil {
			return err
		}
	}
	switch {
	case !isHexHash(r.Index):
		return problem.New(problem.Invalid, "index must be a 64-digit hex index hash from POST /retrieval/index")
	case (r.Query == "") == (len(r.Chunks) == 0):
		return problem.New(problem.Invalid, "send query (the chunks a search retrieves) or chunks (chunk ids), one of them")
	case (r.Answer == "") == (len(r.Quotes) == 0):
		return problem.New(problem.Invalid, "send answer (its sentences are checked) or quotes, one of them")
	case utf8.RuneCountInString(r.Query) > MaxQueryChars:
		return problem.New(problem.Invalid, "query is over %d characters", MaxQueryChars)
	case utf8.RuneCountInString(r.Answer) > MaxAnswerChars:
		return problem.New(problem.TooLarge, "answer is over %d characters", MaxAnswerChars)
	case len(r.Quotes) > MaxQuotes:
		return problem.New(problem.TooLarge, "%d quotes: at most %d", len(r.Quotes), MaxQuotes)
	case len(r.Chunks) > MaxChunks:
		return problem.New(problem.TooLarge, "%d chunks: at most %d", len(r.Chunks), MaxChunks)
	}
	for i, q := range r.Quotes {
		if n := utf8.RuneCountInString(q); n > MaxQuoteChars {
			return problem.New(problem.TooLarge, "quotes[%d] is over %d characters", i, MaxQuoteChars)
		}
		if len(bm25.Spans(q)) == 0 {
			return problem.New(problem.Invalid, "quotes[%d] has no words", i)
		}
	}
	return nil
}

// Quotes finds each quote word for word in the retrieved (or named)
// chunks of owner's index. No model call beyond the search.
func (s *Service) Quotes(ctx context.Context, owner string, keyID *string, req QuotesRequest) (*QuotesResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	h, err := s.lookup(owner, req.Index)
	if err != nil {
		return nil, err
	}
	quotes := req.Quotes
	if req.Answer != "" {
		for _, sp := range chunker.Sentences(req.Answer) {
			if q := req.Answer[sp[0]:sp[1]]; len(bm25.Spans(q)) > 0 {
				quotes = append(quotes, q)
			}
		}
		if len(quotes) > MaxQuotes {
			return nil, problem.New(problem.TooLarge, "the answer has %d sentences: at most %d", len(quotes), MaxQuotes)
		}
	}
	out := &QuotesResponse{Normalisation: QuoteNormalisation, Quotes: []QuoteResult{}, Searched: []string{}, ModelCalls: []ModelCallReceipt{}}
	var chunks []IndexChunk
	if req.Query != "" {
		sr, err := s.Search(ctx, owner, keyID, SearchRequest{Index: req.Index, Query: req.Query, K: ptr(quoteSearchK)})
		if err != nil {
			return nil, err
		}
		out.Receipt, out.ModelCalls = sr.Receipt, sr.ModelCalls
		for _, r := range sr.Results {
			chunks = append(chunks, h.ix.Chunks[chunkPos(r.Chunk)])
		}
	} else {
		for _, id := range req.Chunks {
			p := chunkPos(id)
			if p < 0 || p >= h.ix.NChunks {
				return nil, problem.New(problem.NotFound, "no chunk %q in index %s (ids are c0 to c%d)", id, req.Index, h.ix.NChunks-1)
			}
			chunks = append(chunks, h.ix.Chunks[p])
		}
	}
	for _, c := range chunks {
		out.Searched = append(out.Searched, c.ID)
	}
	for _, q := range quotes {
		out.Quotes = append(out.Quotes, findQuote(q, chunks, h.docs))
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

// chunkPos is the position named by a chunk id "c<n>" (-1 if none).
func chunkPos(id string) int {
	if !strings.HasPrefix(id, "c") || len(id) < 2 || len(id) > 8 || (len(id) > 2 && id[1] == '0') {
		return -1
	}
	n := 0
	for _, r := range id[1:] {
		if r < '0' || r > '9' {
			return -1
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// findQuote looks for q's words, consecutive and in order, in each chunk
// (in the order given) and reports the first place.
func findQuote(q string, chunks []IndexChunk, docs map[string]string) QuoteResult {
	want := bm25.Spans(q)
	res := QuoteResult{Quote: q}
	for _, c := range chunks {
		have := bm25.Spans(c.Text)
	next:
		for i := 0; i+len(want) <= len(have); i++ {
			for j := range want {
				if have[i+j].Tok != want[j].Tok {
					continue next
				}
			}
			start, end := c.ByteStart+have[i].Start, c.ByteStart+have[i+len(want)-1].End
			res.Found, res.Chunk, res.Doc, res.ByteStart, res.ByteEnd = true, c.ID, c.Doc, &start, &end
			if d, ok := docs[c.Doc]; ok {
				res.Text = d[start:end]
			} else {
				res.Text = c.Text[have[i].Start:have[i+len(want)-1].End]
			}
			return res
		}
	}
	return res
}
