package jsonld

import (
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/text"
)

// The sources of a JSON-LD block.
const (
	SourceScript  = "script"
	SourceComment = "comment"
	SourceEntity  = "entity"
)

// Block is one <script type="application/ld+json"> element found in a page.
type Block struct {
	Index  int        `json:"index"`
	Source string     `json:"source"`
	Line   int        `json:"line"`
	OK     bool       `json:"ok"`
	Error  *JSONError `json:"error"`

	// TagStart is the byte offset of "<script"; ContentStart and ContentEnd
	// delimit the element's raw content in the page.
	TagStart     int `json:"-"`
	ContentStart int `json:"-"`
	ContentEnd   int `json:"-"`
	// InComment is set for a block inside an HTML comment or whose content
	// is wrapped in "<!--" "-->"; EntityEncoded when it parsed only after
	// entity decoding.
	InComment     bool `json:"-"`
	EntityEncoded bool `json:"-"`
	// Text is the JSON text that was parsed (unwrapped and decoded);
	// Value its parsed value when OK.
	Text  string `json:"-"`
	Value any    `json:"-"`
}

// isJSONLDType reports whether a script type attribute names JSON-LD: the
// part before the first ";", trimmed of HTML whitespace and lowered, equals
// "application/ld+json".
func isJSONLDType(t string) bool {
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return text.ASCIILower(strings.Trim(t, " \t\n\f\r")) == "application/ld+json"
}

// ExtractJSONLD finds the JSON-LD blocks of a page in document order,
// including blocks inside HTML comments, and parses them.
func ExtractJSONLD(html string) []Block { return ExtractJSONLDTokens(html, text.Scan(html)) }

// ExtractJSONLDTokens is ExtractJSONLD over toks, which must be
// text.Scan(html): callers that read the page several ways scan it once.
// The content of each HTML comment is still scanned on its own, for blocks
// inside it.
func ExtractJSONLDTokens(html string, toks []text.Token) []Block {
	blocks := []Block{}
	// Blocks come in document order, so line numbers are counted on from
	// the previous block.
	lineOff, line := 0, 1
	var walk func(toks []text.Token, base int, inComment bool)
	walk = func(toks []text.Token, base int, inComment bool) {
		for k, t := range toks {
			switch {
			case t.Kind == text.TokComment && !inComment:
				inner := html[base+t.ContentStart : base+t.ContentEnd]
				walk(text.Scan(inner), base+t.ContentStart, true)
			case t.Kind == text.TokStartTag && t.Name == "script":
				typ, _ := t.Attr("type")
				if !isJSONLDType(typ) || k+1 >= len(toks) || toks[k+1].Kind != text.TokRawText {
					continue
				}
				raw := toks[k+1]
				b := Block{
					Index:        len(blocks),
					TagStart:     base + t.Start,
					ContentStart: base + raw.ContentStart,
					ContentEnd:   base + raw.ContentEnd,
					InComment:    inComment,
				}
				line += strings.Count(html[lineOff:b.TagStart], "\n")
				lineOff = b.TagStart
				b.Line = line
				parseBlock(&b, html[b.ContentStart:b.ContentEnd])
				blocks = append(blocks, b)
			}
		}
	}
	walk(toks, 0, false)
	return blocks
}

// parseBlock parses a block's content: a content that, trimmed of HTML
// whitespace, starts with "<!--" and ends with "-->" is unwrapped (the
// block counts as commented out); when the text is not valid JSON but
// contains "&" and its entity-decoded form is valid JSON, the decoded form
// is used.
func parseBlock(b *Block, content string) {
	src := content
	if t := strings.Trim(content, " \t\n\f\r"); len(t) >= 7 && strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->") {
		src = t[4 : len(t)-3]
		b.InComment = true
	}
	v, err := ParseJSON(src)
	if err != nil && strings.Contains(src, "&") {
		dec := text.DecodeEntities(src)
		if v2, err2 := ParseJSON(dec); err2 == nil {
			v, err, src = v2, nil, dec
			b.EntityEncoded = true
		}
	}
	b.Text = src
	b.OK = err == nil
	b.Error = err
	b.Value = v
	switch {
	case b.InComment:
		b.Source = SourceComment
	case b.EntityEncoded:
		b.Source = SourceEntity
	default:
		b.Source = SourceScript
	}
}
