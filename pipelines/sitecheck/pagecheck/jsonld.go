package pagecheck

import (
	"strings"
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

// ObjectReport is the validation of one JSON-LD object of a block.
type ObjectReport struct {
	Block    int       `json:"block"`
	Path     string    `json:"path"`
	Type     string    `json:"type"`
	Errors   []Finding `json:"errors"`
	Warnings []Finding `json:"warnings"`
}

// PageReport is the result of CheckPageJSONLD.
type PageReport struct {
	Blocks       []Block        `json:"blocks"`
	Objects      []ObjectReport `json:"objects"`
	ErrorCount   int            `json:"error_count"`
	WarningCount int            `json:"warning_count"`
	Text         string         `json:"text"`
}

// isJSONLDType reports whether a script type attribute names JSON-LD: the
// part before the first ";", trimmed of HTML whitespace and lowered, equals
// "application/ld+json".
func isJSONLDType(t string) bool {
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return asciiLower(strings.Trim(t, " \t\n\f\r")) == "application/ld+json"
}

// ExtractJSONLD finds the JSON-LD blocks of a page in document order,
// including blocks inside HTML comments, and parses them.
func ExtractJSONLD(html string) []Block { return ExtractJSONLDTokens(html, Scan(html)) }

// ExtractJSONLDTokens is ExtractJSONLD over toks, which must be Scan(html):
// callers that read the page several ways scan it once. The content of
// each HTML comment is still scanned on its own, for blocks inside it.
func ExtractJSONLDTokens(html string, toks []Token) []Block {
	blocks := []Block{}
	// Blocks come in document order, so line numbers are counted on from
	// the previous block.
	lineOff, line := 0, 1
	var walk func(toks []Token, base int, inComment bool)
	walk = func(toks []Token, base int, inComment bool) {
		for k, t := range toks {
			switch {
			case t.Kind == TokComment && !inComment:
				inner := html[base+t.ContentStart : base+t.ContentEnd]
				walk(Scan(inner), base+t.ContentStart, true)
			case t.Kind == TokStartTag && t.Name == "script":
				typ, _ := t.Attr("type")
				if !isJSONLDType(typ) || k+1 >= len(toks) || toks[k+1].Kind != TokRawText {
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
	text := content
	if t := strings.Trim(content, " \t\n\f\r"); len(t) >= 7 && strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->") {
		text = t[4 : len(t)-3]
		b.InComment = true
	}
	v, err := ParseJSON(text)
	if err != nil && strings.Contains(text, "&") {
		dec := DecodeEntities(text)
		if v2, err2 := ParseJSON(dec); err2 == nil {
			v, err, text = v2, nil, dec
			b.EntityEncoded = true
		}
	}
	b.Text = text
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

// CheckPageJSONLD extracts and validates the JSON-LD of a page. pageURL is
// used only to suggest absolute URLs for relative ones.
func CheckPageJSONLD(html, pageURL string) PageReport {
	return CheckPageJSONLDTokens(html, Scan(html), pageURL)
}

// CheckPageJSONLDTokens is CheckPageJSONLD over toks, which must be
// Scan(html).
func CheckPageJSONLDTokens(html string, toks []Token, pageURL string) PageReport {
	r, _ := CheckPageJSONLDLimit(html, toks, pageURL, 0)
	return r
}

// CheckPageJSONLDLimit is CheckPageJSONLDTokens keeping at most maxObjects
// object reports (0: all): the error and warning counts still cover every
// object, and dropped is how many reports were not kept. A page of a
// million tiny objects is checked without holding a million reports.
func CheckPageJSONLDLimit(html string, toks []Token, pageURL string, maxObjects int) (r PageReport, dropped int) {
	r = PageReport{Blocks: ExtractJSONLDTokens(html, toks), Objects: []ObjectReport{}}
	for _, b := range r.Blocks {
		if !b.OK {
			r.ErrorCount++
			continue
		}
		o := nodeOpts{base: pageURL}
		if b.EntityEncoded {
			msg, fix := msgEntityEncoded()
			o.blockErrors = []Finding{{SeverityError, "entity_encoded", "", "", msg, fix, scriptSnippet}}
		}
		if b.InComment {
			msg, fix := msgCommentedOut()
			o.blockFlags = []Finding{{SeverityWarning, "commented_out", "", "", msg, fix, scriptSnippet}}
		}
		for _, item := range topItems(b.Value) {
			for _, rep := range itemReports(b.Index, item.path, item.value, o) {
				r.ErrorCount += len(rep.Errors)
				r.WarningCount += len(rep.Warnings)
				if maxObjects > 0 && len(r.Objects) >= maxObjects {
					dropped++
					continue
				}
				r.Objects = append(r.Objects, rep)
			}
		}
	}
	r.Text = ExtractTextTokens(html, toks)
	return r, dropped
}

type pathValue struct {
	path  string
	value any
}

// topItems splits a block's value: an array gives its elements ($[i]),
// anything else is the item "$".
func topItems(v any) []pathValue {
	if arr, ok := v.([]any); ok {
		items := make([]pathValue, len(arr))
		for i, e := range arr {
			items[i] = pathValue{pathIndex("$", i), e}
		}
		return items
	}
	return []pathValue{{"$", v}}
}

// itemReports validates one top-level item. An object with "@graph" is a
// container: it is reported itself only when it has "@type" or its @graph is
// neither an array nor an object; the @graph elements (path.@graph[i], or
// path.@graph for a single object) are reported after it and inherit the
// container's @context when they have none.
func itemReports(block int, path string, v any, o nodeOpts) []ObjectReport {
	report := func(node any, p string, opts nodeOpts) ObjectReport {
		val := validateNode(node, p, opts)
		for i := range val.Errors {
			if val.Errors[i].Path == "" {
				val.Errors[i].Path = p
			}
		}
		for i := range val.Warnings {
			if val.Warnings[i].Path == "" {
				val.Warnings[i].Path = p
			}
		}
		return ObjectReport{Block: block, Path: p, Type: val.Type, Errors: val.Errors, Warnings: val.Warnings}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return []ObjectReport{report(v, path, o)}
	}
	g, hasGraph := m["@graph"]
	if !hasGraph {
		return []ObjectReport{report(m, path, o)}
	}
	var out []ObjectReport
	gpath := pathKey(path, "@graph")
	var nodes []pathValue
	switch x := g.(type) {
	case []any:
		for i, e := range x {
			nodes = append(nodes, pathValue{pathIndex(gpath, i), e})
		}
	case map[string]any:
		nodes = append(nodes, pathValue{gpath, x})
	default:
		co := o
		co.skipGraph = true
		r := report(m, path, co)
		msg, fix := msgWrongType("@graph", "an array of objects")
		r.Errors = append(r.Errors, Finding{SeverityError, "wrong_type", gpath, "@graph", msg, fix, propSnippet("@graph", exampleFor("@graph"))})
		return []ObjectReport{r}
	}
	if _, typed := m["@type"]; typed {
		co := o
		co.skipGraph = true
		out = append(out, report(m, path, co))
	}
	ctx, hasCtx := m["@context"]
	for _, n := range nodes {
		no := o
		no.ctx, no.hasCtx = ctx, hasCtx
		out = append(out, report(n.value, n.path, no))
	}
	return out
}
