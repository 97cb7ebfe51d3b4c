package schema

import (
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/jsonld"
	"boxd/pipelines/sitecheck/pagecheck/text"
)

// Finding is one problem found in a JSON-LD object.
type Finding struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Path     string `json:"path"`
	Property string `json:"property"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
	Snippet  string `json:"snippet"`
}

// Validation is the result of checking one JSON-LD object.
type Validation struct {
	Type     string    `json:"type"`
	Errors   []Finding `json:"errors"`
	Warnings []Finding `json:"warnings"`
}

// Validate checks one JSON-LD object (map[string]any as jsonld.ParseJSON or
// encoding/json build it, or a jsonld.Object) with paths starting at "$".
// It reads no page URL, so relative-URL snippets use the origin
// "https://<your-domain>".
func Validate(obj any) Validation {
	return validateNode(jsonld.ToPlain(obj), "$", nodeOpts{})
}

// ValidateParsed is Validate for a value as jsonld.ParseJSON builds it
// (maps, lists and json.Number, no jsonld.Object), checked as it is.
func ValidateParsed(v any) Validation { return validateNode(v, "$", nodeOpts{}) }

type nodeOpts struct {
	base        string // page URL for relative-URL suggestions
	ctx         any    // inherited @context (of the @graph container)
	hasCtx      bool
	skipGraph   bool // the node is a @graph container: its "@graph" is not scanned
	blockFlags  []Finding
	blockErrors []Finding
}

type validator struct {
	base        string
	errs, warns []Finding
}

func (v *validator) add(sev, code, path, property, msg, fix, snip string) {
	f := Finding{Severity: sev, Code: code, Path: path, Property: property, Message: msg, Fix: fix, Snippet: snip}
	if sev == SeverityError {
		v.errs = append(v.errs, f)
	} else {
		v.warns = append(v.warns, f)
	}
}

func validateNode(node any, path string, o nodeOpts) Validation {
	v := &validator{base: o.base}
	v.errs = append(v.errs, o.blockErrors...)
	v.warns = append(v.warns, o.blockFlags...)
	typ := ""
	m, ok := node.(map[string]any)
	if !ok {
		msg, fix := msgNotObject()
		v.add(SeverityError, "not_object", path, "", msg, fix,
			jsonld.Snippet(jsonld.Obj("@context", "https://schema.org", "@type", "Organization", "name", "Your Business Name")))
	} else {
		typ = v.checkTop(m, path, o)
		v.scanPlaceholders(m, path, "", o.skipGraph)
	}
	return Validation{Type: typ, Errors: nonNilF(v.errs), Warnings: nonNilF(v.warns)}
}

func nonNilF(f []Finding) []Finding {
	if f == nil {
		return []Finding{}
	}
	return f
}

var rePlainKey = regexp.MustCompile(`^[A-Za-z0-9@_$:-]+$`)

// pathKey appends a key to a path: ".key" when the key is made of ASCII
// letters, digits and "@_$:-", else `["key"]` with the key JSON-quoted.
func pathKey(path, key string) string {
	if rePlainKey.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + jsonld.Quote(key) + "]"
}

func pathIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// contextOK accepts "https://schema.org" or "http://schema.org" (trimmed,
// with or without one trailing "/"), an object whose "@vocab" is such a
// string, or an array holding any such value.
func contextOK(c any) bool {
	switch x := c.(type) {
	case string:
		s := strings.TrimSuffix(text.TrimASCII(x), "/")
		return s == "https://schema.org" || s == "http://schema.org"
	case map[string]any:
		if voc, ok := x["@vocab"].(string); ok {
			return contextOK(voc)
		}
	case []any:
		for _, e := range x {
			if contextOK(e) {
				return true
			}
		}
	}
	return false
}

// typeNames reads @type: a non-empty string or a non-empty array of
// non-empty strings (trimmed, prefix "https://schema.org/",
// "http://schema.org/" or "schema:" removed). ok is false for any other form.
func typeNames(t any) ([]string, bool) {
	one := func(s string) (string, bool) {
		s = text.TrimASCII(s)
		for _, p := range []string{"https://schema.org/", "http://schema.org/", "schema:"} {
			s = strings.TrimPrefix(s, p)
		}
		return s, s != ""
	}
	switch x := t.(type) {
	case string:
		s, ok := one(x)
		if !ok {
			return nil, false
		}
		return []string{s}, true
	case []any:
		if len(x) == 0 {
			return nil, false
		}
		var out []string
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			n, ok := one(s)
			if !ok {
				return nil, false
			}
			out = append(out, n)
		}
		return out, true
	}
	return nil, false
}

// pickFamily chooses the family of the highest priority among the types and
// the type reported for the object: the first type of that family, or the
// first type when no family matches.
func pickFamily(types []string) (family, reported string) {
	best := len(familyOrder)
	for _, t := range types {
		f, ok := typeFamily[t]
		if !ok {
			continue
		}
		for i, ff := range familyOrder {
			if ff == f && i < best {
				best, family, reported = i, f, t
			}
		}
	}
	if family == "" && len(types) > 0 {
		reported = types[0]
	}
	return family, reported
}

// label of a nested object: its first type, or the ruleset's name.
func nestedLabel(m map[string]any, fallback string) string {
	if names, ok := typeNames(m["@type"]); ok {
		return names[0]
	}
	return fallback
}

func present(m map[string]any, k string) bool {
	v, ok := m[k]
	return ok && v != nil
}

func (v *validator) checkTop(m map[string]any, path string, o nodeOpts) string {
	ctx, has := m["@context"]
	ctxPath := pathKey(path, "@context")
	if !has && o.hasCtx {
		ctx, has, ctxPath = o.ctx, true, path
	}
	if !has {
		msg, fix := msgMissingContext()
		v.add(SeverityError, "missing_context", path, "@context", msg, fix, contextSnippet)
	} else if !contextOK(ctx) {
		msg, fix := msgBadContext()
		v.add(SeverityError, "bad_context", ctxPath, "@context", msg, fix, contextSnippet)
	}
	tv, has := m["@type"]
	types, ok := typeNames(tv)
	if !has {
		msg, fix := msgMissingType()
		v.add(SeverityError, "missing_type", path, "@type", msg, fix, propSnippet("@type", "Organization"))
		return ""
	}
	if !ok {
		msg, fix := msgBadType()
		v.add(SeverityError, "bad_type", pathKey(path, "@type"), "@type", msg, fix, propSnippet("@type", "Organization"))
		return ""
	}
	family, reported := pickFamily(types)
	if family == "" {
		for _, t := range types {
			if want, ok := knownTypesLower[text.ASCIILower(t)]; ok {
				msg, fix := msgTypeCase(t, want)
				v.add(SeverityError, "type_case", pathKey(path, "@type"), "@type", msg, fix, propSnippet("@type", want))
				break
			}
		}
		return reported
	}
	v.checkRuleset(m, path, rulesets[family], reported, position{0, 1, ""})
	return reported
}

// position is where a nested object sits: its index in the property's list
// (0 for a single value), the list length and the property name.
type position struct {
	idx, count int
	prop       string
}

func (v *validator) checkRuleset(m map[string]any, path string, rs *ruleset, label string, pos position) {
	if rs.expect != "" {
		names, ok := typeNames(m["@type"])
		switch {
		case !ok:
			msg, fix := msgNestedMissingType(pos.prop, rs.expect)
			v.add(SeverityError, "missing_type", path, "@type", msg, fix, propSnippet("@type", rs.expect))
		case !slices.Contains(names, rs.expect):
			msg, fix := msgNestedWrongType(pos.prop, strings.Join(names, ", "), rs.expect)
			v.add(SeverityError, "wrong_type", pathKey(path, "@type"), "@type", msg, fix, propSnippet("@type", rs.expect))
		}
	}
	for _, p := range rs.props {
		p.owner = rs.key
		if p.kind == kGroup {
			found := false
			for _, a := range p.alts {
				if present(m, a) {
					found = true
				}
			}
			if !found {
				v.missing(path, label, p)
			}
			continue
		}
		val, has := m[p.name]
		if !has {
			switch {
			case p.unless != "" && present(m, p.unless):
			case p.exceptLast && pos.idx == pos.count-1:
			case p.unlessNamed != "" && hasName(m[p.unlessNamed]):
			default:
				v.missing(path, label, p)
			}
			continue
		}
		if p.kind == kPosition {
			// The position is compared with the object's own place in its list.
			v.checkElem(val, pathKey(path, p.name), p, pos)
			continue
		}
		v.checkValue(val, pathKey(path, p.name), p)
	}
}

func hasName(v any) bool {
	m, ok := v.(map[string]any)
	return ok && present(m, "name")
}

func (v *validator) missing(path, label string, p prop) {
	alts := p.alts
	if alts == nil {
		alts = []string{p.name}
	}
	snip := propSnippet(alts[0], exampleOf(p.owner, alts[0]))
	switch p.level {
	case required:
		if alts[0] == "priceCurrency" {
			msg, fix := msgMissingCurrency(label)
			v.add(SeverityError, "missing_currency", path, "priceCurrency", msg, fix, snip)
			return
		}
		msg, fix := msgMissing(label, "required", alts)
		v.add(SeverityError, "missing_required", path, alts[0], msg, fix, snip)
	case recommended:
		msg, fix := msgMissing(label, "recommended", alts)
		v.add(SeverityWarning, "missing_recommended", path, alts[0], msg, fix, snip)
	}
}

func (v *validator) empty(path string, p prop) {
	sev := SeverityWarning
	if p.level == required {
		sev = SeverityError
	}
	msg, fix := msgEmpty(p.name)
	v.add(sev, "empty_value", path, p.name, msg, fix, propSnippet(p.name, exampleOf(p.owner, p.name)))
}

func (v *validator) wrongType(path string, p prop, sev string) {
	want := expected(p)
	msg, fix := msgWrongType(p.name, want)
	v.add(sev, "wrong_type", path, p.name, msg, fix, propSnippet(p.name, exampleOf(p.owner, p.name)))
}

// checkValue checks a present property: null and [] are empty, an array
// has each element checked at path[i], anything else is one element.
func (v *validator) checkValue(val any, path string, p prop) {
	switch x := val.(type) {
	case nil:
		v.empty(path, p)
	case []any:
		if len(x) == 0 {
			v.empty(path, p)
			return
		}
		for i, e := range x {
			v.checkElem(e, pathIndex(path, i), p, position{i, len(x), p.name})
		}
	default:
		v.checkElem(val, path, p, position{0, 1, p.name})
	}
}

// numberValue reads a JSON number.
func numberValue(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func (v *validator) checkElem(el any, path string, p prop, pos position) {
	if el == nil {
		v.empty(path, p)
		return
	}
	if _, isArr := el.([]any); isArr {
		v.wrongType(path, p, SeverityError)
		return
	}
	s, isStr := el.(string)
	t := text.TrimASCII(s)
	m, isObj := el.(map[string]any)
	_, isNum := numberValue(el)
	switch p.kind {
	case kText:
		if isObj {
			if val, ok := m["@value"].(string); ok {
				s, t, isStr = val, text.TrimASCII(val), true
			}
		}
		switch {
		case isStr && t == "":
			v.empty(path, p)
		case isStr:
			if n := text.RuneCount(t); p.maxLen > 0 && n > p.maxLen {
				msg, fix := msgTooLong(p.name, n, p.maxLen)
				v.add(SeverityWarning, "too_long", path, p.name, msg, fix, propSnippet(p.name, text.TruncateRunes(t, p.maxLen)))
			}
		case isNum:
			v.wrongType(path, p, SeverityWarning)
		default:
			v.wrongType(path, p, SeverityError)
		}
	case kURL:
		if !isStr {
			v.wrongType(path, p, SeverityError)
			return
		}
		v.checkURL(t, path, p)
	case kImage:
		switch {
		case isStr:
			v.checkURL(t, path, p)
		case isObj:
			for _, k := range []string{"url", "contentUrl"} {
				if uv, ok := m[k]; ok {
					v.checkValue(uv, pathKey(path, k), prop{name: k, level: recommended, kind: kURL})
					return
				}
			}
			msg, fix := msgMissing(nestedLabel(m, "ImageObject"), "recommended", []string{"url"})
			v.add(SeverityWarning, "missing_recommended", path, "url", msg, fix, propSnippet("url", exampleFor("image")))
		default:
			v.wrongType(path, p, SeverityError)
		}
	case kDate:
		if !isStr {
			v.wrongType(path, p, SeverityError)
			return
		}
		switch {
		case t == "":
			v.empty(path, p)
		case dateProblem(t) == "bad_date":
			msg, fix := msgBadDate(p.name, t)
			v.add(SeverityError, "bad_date", path, p.name, msg, fix, propSnippet(p.name, exampleDate(p.name)))
		case dateProblem(t) == "missing_timezone":
			msg, fix := msgMissingTimezone(p.name, t)
			v.add(SeverityWarning, "missing_timezone", path, p.name, msg, fix, propSnippet(p.name, t+"+00:00"))
		}
	case kNumber:
		switch {
		case isNum:
		case isStr && t == "":
			v.empty(path, p)
		case isStr && !reNumber.MatchString(t):
			msg, fix := msgBadNumber(p.name, t)
			v.add(SeverityError, "bad_number", path, p.name, msg, fix, propSnippet(p.name, exampleOf(p.owner, p.name)))
		case !isStr:
			v.wrongType(path, p, SeverityError)
		}
	case kPrice:
		switch {
		case isNum:
			if f, _ := numberValue(el); f < 0 {
				msg, fix := msgNegativePrice(p.name)
				v.add(SeverityError, "bad_price", path, p.name, msg, fix, propSnippet(p.name, exampleOf(p.owner, p.name)))
			}
		case isStr && t == "":
			v.empty(path, p)
		case isStr && !rePrice.MatchString(t):
			msg, fix := msgBadPrice(p.name, t)
			v.add(SeverityError, "bad_price", path, p.name, msg, fix, propSnippet(p.name, exampleOf(p.owner, p.name)))
		case !isStr:
			v.wrongType(path, p, SeverityError)
		}
	case kCurrency, kTime, kHours, kAvailability:
		if !isStr {
			v.wrongType(path, p, SeverityError)
			return
		}
		if t == "" {
			v.empty(path, p)
			return
		}
		v.checkFormat(t, path, p)
	case kObject:
		switch {
		case isObj:
			sub := p.sub
			if sub == "Offer" {
				if names, ok := typeNames(m["@type"]); ok && slices.Contains(names, "AggregateOffer") {
					sub = "AggregateOffer"
				}
			}
			rs := rulesets[sub]
			v.checkRuleset(m, path, rs, nestedLabel(m, rs.name), pos)
		case isStr && p.text == textOK:
			if t == "" {
				v.empty(path, p)
			}
		case isStr && p.text == textWarn:
			if t == "" {
				v.empty(path, p)
			} else {
				v.wrongType(path, p, SeverityWarning)
			}
		default:
			v.wrongType(path, p, SeverityError)
		}
	case kItem:
		switch {
		case isStr:
			v.checkURL(t, path, p)
		case isObj:
			if id, ok := m["@id"]; ok {
				v.checkValue(id, pathKey(path, "@id"), prop{name: "@id", level: required, kind: kURL})
				return
			}
			msg, fix := msgMissing(nestedLabel(m, "Thing"), "required", []string{"@id"})
			v.add(SeverityError, "missing_required", path, "@id", msg, fix, propSnippet("@id", exampleFor("item")))
		default:
			v.wrongType(path, p, SeverityError)
		}
	case kPosition:
		f, ok := numberValue(el)
		if !ok {
			v.wrongType(path, p, SeverityError)
			return
		}
		want := pos.idx + 1
		if math.IsInf(f, 0) || f != math.Trunc(f) || f < 1 {
			msg, fix := msgBadPosition(p.name)
			v.add(SeverityError, "bad_position", path, p.name, msg, fix, propSnippet(p.name, want))
		} else if f != float64(want) {
			msg, fix := msgPositionOrder(want)
			v.add(SeverityWarning, "position_order", path, p.name, msg, fix, propSnippet(p.name, want))
		}
	}
}

func exampleDate(p string) any {
	if p == "datePublished" || p == "dateModified" || p == "priceValidUntil" {
		return exampleFor(p)
	}
	return exampleFor("datePublished")
}

// checkFormat checks the string kinds with a fixed format.
func (v *validator) checkFormat(t, path string, p prop) {
	switch p.kind {
	case kCurrency:
		if !reCurrency.MatchString(t) {
			msg, fix := msgBadCurrency(p.name, t)
			v.add(SeverityError, "bad_currency", path, p.name, msg, fix, propSnippet(p.name, "USD"))
		}
	case kTime:
		if !reTime.MatchString(t) {
			msg, fix := msgBadTime(p.name, t)
			v.add(SeverityError, "bad_time", path, p.name, msg, fix, propSnippet(p.name, exampleOf(p.owner, p.name)))
		}
	case kHours:
		if !reOpeningHrs.MatchString(t) {
			msg, fix := msgBadHours(p.name, t)
			v.add(SeverityWarning, "bad_opening_hours", path, p.name, msg, fix, propSnippet(p.name, "Mo-Fr 09:00-17:00"))
		}
	case kAvailability:
		name := t
		for _, pre := range []string{"https://schema.org/", "http://schema.org/", "schema:"} {
			name = strings.TrimPrefix(name, pre)
		}
		if !slices.Contains(availabilityValues, name) {
			msg, fix := msgBadEnum(p.name, t)
			v.add(SeverityWarning, "bad_enum", path, p.name, msg, fix, propSnippet(p.name, "https://schema.org/InStock"))
		}
	}
}

func (v *validator) checkURL(t, path string, p prop) {
	if t == "" {
		v.empty(path, p)
		return
	}
	switch urlProblem(t) {
	case "relative_url":
		msg, fix := msgRelativeURL(p.name, t)
		v.add(SeverityError, "relative_url", path, p.name, msg, fix, propSnippet(p.name, resolveURL(v.base, t)))
	case "bad_url":
		msg, fix := msgBadURL(p.name, t)
		v.add(SeverityError, "bad_url", path, p.name, msg, fix, propSnippet(p.name, exampleOf(p.owner, p.name)))
	}
}

// scanPlaceholders reports every string value holding placeholder text,
// walking object keys in sorted (byte) order and arrays in order.
func (v *validator) scanPlaceholders(val any, path, property string, skipGraph bool) {
	switch x := val.(type) {
	case string:
		if label, ok := text.FindPlaceholder(x); ok {
			msg, fix := msgPlaceholder(property, label)
			v.add(SeverityError, "placeholder", path, property, msg, fix, propSnippet(property, "<real value>"))
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if skipGraph && k == "@graph" {
				continue
			}
			v.scanPlaceholders(x[k], pathKey(path, k), k, false)
		}
	case []any:
		for i, e := range x {
			v.scanPlaceholders(e, pathIndex(path, i), property, false)
		}
	}
}
