// Package bm25 is retrieval's keyword search: an analyzer and an in-memory
// inverted index scored exactly as Lucene 8's BM25Similarity.
package bm25

import (
	"math"
	"math/bits"
	"sort"
	"strings"
	"unicode"
)

// Keyword search scores chunks exactly as Lucene 8's BM25Similarity does
// (k1 1.2, b 0.75 by default), so that its scores and rankings can be
// checked against Lucene itself (bm25_test.go runs Lucene 8.8 from Debian's
// liblucene8-java over the same tokens):
//
//	idf(t)   = float32(ln(1 + (N − df + 0.5) / (df + 0.5)))
//	avgdl    = float32(Σ document lengths / N)
//
// (N: the documents with at least one token)
//	norm(d)  = 1 / (k1 · ((1 − b) + b · L(d) / avgdl)), in float32
//	score    = Σ over query tokens of w − w / (1 + tf · norm(d)), w = idf(t)
//
// where L(d) is the document's length in tokens as Lucene stores it: one
// byte, exact below 24 and keeping 4 significant bits above
// (SmallFloat.intToByte4), so that long documents of nearby lengths score
// alike. The per-token scores are float32 and their sum is float64,
// rounded to float32 at the end; a query token given twice counts twice.
// Ties rank by index order.

// Parameters: Lucene's defaults.
const (
	K1 = float32(1.2)
	B  = float32(0.75)
)

// maxTokenChars is Lucene's default maximum token length: a longer run is
// cut into pieces of this many characters, as its tokenizers do.
const maxTokenChars = 255

// Analyze is the keyword analyzer: maximal runs of letters and digits
// (Unicode categories L and N, plus the combining marks M inside a run),
// lower-cased by Unicode simple case mapping, runs longer than 255
// characters cut into pieces of 255. No stemming and no stop words: the
// oracle stays exact, and queries quoting a document's words find them.
func Analyze(text string) []string {
	spans := Spans(text)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = sp.Tok
	}
	return out
}

// Span is a token and its bytes in the text it came from.
type Span struct {
	Tok        string
	Start, End int
}

// Spans is Analyze with each token's byte offsets.
func Spans(text string) []Span {
	var out []Span
	var b strings.Builder
	n, start := 0, 0
	flush := func(end int) {
		if n > 0 {
			out = append(out, Span{Tok: b.String(), Start: start, End: end})
			b.Reset()
			n = 0
		}
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || (n > 0 && unicode.Is(unicode.M, r)) {
			if n == maxTokenChars {
				flush(i)
			}
			if n == 0 {
				start = i
			}
			b.WriteRune(unicode.ToLower(r))
			n++
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// Index is an in-memory inverted index over documents given as tokens.
type Index struct {
	K1, B    float32
	postings map[string][]posting
	norms    []byte // per document, SmallFloat.intToByte4(length)
	sumLen   int64
	withText int64 // documents with at least one token (Lucene's docCount)
}

type posting struct {
	doc  int
	freq int
}

// New indexes docs (each a list of tokens, as Analyze gives them).
func New(docs [][]string) *Index {
	ix := &Index{K1: K1, B: B, postings: map[string][]posting{}, norms: make([]byte, len(docs))}
	for d, toks := range docs {
		ix.norms[d] = intToByte4(len(toks))
		ix.sumLen += int64(len(toks))
		if len(toks) > 0 {
			ix.withText++
		}
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: d, freq: f})
		}
	}
	return ix
}

// Hit is one scored document.
type Hit struct {
	Doc   int
	Score float32
}

// Search scores every document holding a query token and returns the best
// k (all when k <= 0), best first, ties by document order.
func (ix *Index) Search(query []string, k int) []Hit {
	n := ix.withText // Lucene counts documents that hold the field
	if n == 0 {
		return nil
	}
	avgdl := float32(float64(ix.sumLen) / float64(n))
	var cache [256]float32
	for i := range cache {
		cache[i] = 1 / (ix.K1 * ((1 - ix.B) + ix.B*float32(byte4ToInt(byte(i)))/avgdl))
	}
	acc := map[int]float64{}
	for _, t := range query {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := int64(len(ps))
		w := float32(math.Log(1 + (float64(n-df)+0.5)/(float64(df)+0.5)))
		for _, p := range ps {
			x := float32(float32(p.freq) * cache[ix.norms[p.doc]])
			acc[p.doc] += float64(w - w/float32(1+x))
		}
	}
	hits := make([]Hit, 0, len(acc))
	for d, s := range acc {
		hits = append(hits, Hit{Doc: d, Score: float32(s)})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc < hits[j].Doc
	})
	if k > 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Lucene's SmallFloat int4 encoding of document lengths: values below
// numFreeValues are stored as they are, larger ones keep their 4 most
// significant bits.
const (
	maxInt4       = 231 // longToInt4(math.MaxInt32)
	numFreeValues = 255 - maxInt4
)

func longToInt4(i int64) int {
	nbits := 64 - bits.LeadingZeros64(uint64(i))
	if nbits < 4 {
		return int(i)
	}
	shift := nbits - 4
	enc := int(i>>uint(shift)) & 0x07
	return enc | (shift+1)<<3
}

func int4ToLong(i int) int64 {
	low := int64(i & 0x07)
	shift := (i >> 3) - 1
	if shift == -1 {
		return low
	}
	return (low | 0x08) << uint(shift)
}

func intToByte4(i int) byte {
	if i < numFreeValues {
		return byte(i)
	}
	return byte(numFreeValues + longToInt4(int64(i-numFreeValues)))
}

func byte4ToInt(b byte) int {
	i := int(b)
	if i < numFreeValues {
		return i
	}
	return numFreeValues + int(int4ToLong(i-numFreeValues))
}
