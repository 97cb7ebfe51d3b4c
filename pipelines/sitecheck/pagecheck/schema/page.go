package schema

import (
	"boxd/pipelines/sitecheck/pagecheck/jsonld"
	"boxd/pipelines/sitecheck/pagecheck/text"
)

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
	Blocks       []jsonld.Block `json:"blocks"`
	Objects      []ObjectReport `json:"objects"`
	ErrorCount   int            `json:"error_count"`
	WarningCount int            `json:"warning_count"`
	Text         string         `json:"text"`
}

// CheckPageJSONLD extracts and validates the JSON-LD of a page. pageURL is
// used only to suggest absolute URLs for relative ones.
func CheckPageJSONLD(html, pageURL string) PageReport {
	return CheckPageJSONLDTokens(html, text.Scan(html), pageURL)
}

// CheckPageJSONLDTokens is CheckPageJSONLD over toks, which must be
// text.Scan(html).
func CheckPageJSONLDTokens(html string, toks []text.Token, pageURL string) PageReport {
	r, _ := CheckPageJSONLDLimit(html, toks, pageURL, 0)
	return r
}

// CheckPageJSONLDLimit is CheckPageJSONLDTokens keeping at most maxObjects
// object reports (0: all): the error and warning counts still cover every
// object, and dropped is how many reports were not kept. A page of a
// million tiny objects is checked without holding a million reports.
func CheckPageJSONLDLimit(html string, toks []text.Token, pageURL string, maxObjects int) (r PageReport, dropped int) {
	r = PageReport{Blocks: jsonld.ExtractJSONLDTokens(html, toks), Objects: []ObjectReport{}}
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
	r.Text = text.ExtractTextTokens(html, toks)
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
