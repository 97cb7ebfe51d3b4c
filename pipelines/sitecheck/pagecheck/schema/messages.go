package schema

import (
	"strconv"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/jsonld"
)

// This file holds every text of a JSON-LD Finding. Ports copy the strings
// verbatim; {p} is the property, {v} the trimmed string value, {label} the
// object's label (see the package documentation).

// The severities of a Finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// scriptSnippet is the snippet of block-level findings.
const scriptSnippet = "<script type=\"application/ld+json\">\n{\n  \"@context\": \"https://schema.org\"\n}\n</script>"

// contextSnippet is the snippet of missing_context and bad_context.
var contextSnippet = jsonld.Snippet(jsonld.Obj("@context", "https://schema.org"))

// propSnippet is {"p": value} rendered as a snippet.
func propSnippet(p string, v any) string { return jsonld.Snippet(jsonld.Obj(p, v)) }

// quoteList renders ["a","b","c"] as `"a" (or "b", "c")`.
func quoteList(alts []string) string {
	s := `"` + alts[0] + `"`
	if len(alts) > 1 {
		s += ` (or "` + strings.Join(alts[1:], `", "`) + `")`
	}
	return s
}

// expected describes the value a kind wants, for wrong_type.
func expected(p prop) string {
	switch p.kind {
	case kText:
		return "text"
	case kURL:
		return "an absolute URL"
	case kImage:
		return "an absolute URL or an ImageObject"
	case kDate:
		return "an ISO 8601 date"
	case kNumber, kPrice:
		return "a number"
	case kCurrency:
		return "a three-letter ISO 4217 currency code"
	case kTime:
		return `a time such as "09:00"`
	case kHours:
		return `text such as "Mo-Fr 09:00-17:00"`
	case kAvailability:
		return "a schema.org ItemAvailability URL"
	case kObject:
		return article(rulesets[p.sub].name) + " " + rulesets[p.sub].name + " object"
	case kItem:
		return `an absolute URL or an object with "@id"`
	case kPosition:
		return "an integer"
	}
	return "a value"
}

func msgMissing(label, lvl string, alts []string) (string, string) {
	return label + " is missing " + lvl + " property " + quoteList(alts) + ".",
		"Add " + quoteList(alts) + " to " + label + "."
}

func msgMissingCurrency(label string) (string, string) {
	return label + ` has no "priceCurrency".`, `Add "priceCurrency" with a three-letter ISO 4217 code.`
}

func msgEmpty(p string) (string, string) {
	return `Property "` + p + `" is empty.`, `Give "` + p + `" a real value or remove it.`
}

func msgWrongType(p, want string) (string, string) {
	return `Property "` + p + `" should be ` + want + ".", `Change "` + p + `" to ` + want + "."
}

func msgRelativeURL(p, v string) (string, string) {
	return `Property "` + p + `" is a relative URL ("` + v + `").`, "Use an absolute URL with https:// and the host."
}

func msgBadURL(p, v string) (string, string) {
	return `Property "` + p + `" is not an http(s) URL ("` + v + `").`, "Use an absolute URL with https:// and the host."
}

func msgBadDate(p, v string) (string, string) {
	return `Property "` + p + `" is not an ISO 8601 date ("` + v + `").`,
		"Write the date as YYYY-MM-DD or YYYY-MM-DDThh:mm:ss with a timezone offset."
}

func msgMissingTimezone(p, v string) (string, string) {
	return `Property "` + p + `" has a time but no timezone ("` + v + `").`,
		`Add "Z" or an offset such as "+01:00" after the time.`
}

func msgBadNumber(p, v string) (string, string) {
	return `Property "` + p + `" is not a number ("` + v + `").`, `Write "` + p + `" as a plain decimal number.`
}

const fixBadPrice = `Write the price as digits with an optional decimal point, without currency symbols or thousands separators, and put the currency in "priceCurrency".`

func msgBadPrice(p, v string) (string, string) {
	return `Property "` + p + `" is not a plain price ("` + v + `").`, fixBadPrice
}

func msgNegativePrice(p string) (string, string) {
	return `Property "` + p + `" is negative.`, fixBadPrice
}

func msgBadCurrency(p, v string) (string, string) {
	return `Property "` + p + `" is not a three-letter ISO 4217 code ("` + v + `").`,
		`Use an upper-case ISO 4217 code such as "USD" or "EUR".`
}

func msgBadTime(p, v string) (string, string) {
	return `Property "` + p + `" is not a time ("` + v + `").`, "Write the time as hh:mm or hh:mm:ss (24-hour clock)."
}

func msgBadHours(p, v string) (string, string) {
	return `Property "` + p + `" does not follow the openingHours format ("` + v + `").`,
		`Use two-letter days and 24-hour times such as "Mo-Fr 09:00-17:00", or use openingHoursSpecification.`
}

func msgBadEnum(p, v string) (string, string) {
	return `Property "` + p + `" is not a schema.org ItemAvailability value ("` + v + `").`,
		`Use a value such as "https://schema.org/InStock" or "https://schema.org/OutOfStock".`
}

func msgTooLong(p string, n, max int) (string, string) {
	return `Property "` + p + `" is ` + strconv.Itoa(n) + " characters; keep it to " + strconv.Itoa(max) + ".",
		`Shorten "` + p + `" to at most ` + strconv.Itoa(max) + " characters."
}

const fixPositions = "Number the breadcrumb items 1, 2, 3, ... in list order."

func msgBadPosition(p string) (string, string) {
	return `Property "` + p + `" should be a whole number of at least 1.`, fixPositions
}

func msgPositionOrder(n int) (string, string) {
	return "Breadcrumb item " + strconv.Itoa(n) + " does not have position " + strconv.Itoa(n) + ".", fixPositions
}

func msgMissingType() (string, string) {
	return `The object has no "@type".`,
		`Add "@type" with the most specific schema.org type, for example "LocalBusiness", "Organization", "Article" or "Product".`
}

func msgNestedMissingType(p, want string) (string, string) {
	return `The object in "` + p + `" has no "@type"; expected "` + want + `".`, `Add "@type": "` + want + `".`
}

func msgNestedWrongType(p, got, want string) (string, string) {
	return `The object in "` + p + `" has "@type" "` + got + `"; expected "` + want + `".`, `Set "@type" to "` + want + `".`
}

func msgBadType() (string, string) {
	return `"@type" must be a non-empty string or an array of non-empty strings.`, `Set "@type" to a schema.org type name.`
}

func msgTypeCase(got, want string) (string, string) {
	return `"@type" "` + got + `" has the wrong letter case; schema.org type names are case-sensitive.`, `Write "` + want + `".`
}

func msgMissingContext() (string, string) {
	return `The object has no "@context".`, `Add "@context": "https://schema.org".`
}

func msgBadContext() (string, string) {
	return `"@context" does not point to schema.org.`, `Set "@context" to "https://schema.org".`
}

func msgNotObject() (string, string) {
	return "The JSON-LD item is not an object.", `Make each item a JSON object with "@context" and "@type".`
}

func msgPlaceholder(p, label string) (string, string) {
	return `Property "` + p + `" contains placeholder text ("` + label + `").`,
		"Replace the placeholder with the real value; placeholder data must never be published."
}

func msgCommentedOut() (string, string) {
	return "The JSON-LD block is inside an HTML comment; crawlers ignore it.",
		"Remove the comment markers around the script element if this markup should be used."
}

func msgEntityEncoded() (string, string) {
	return "The JSON-LD block is HTML-entity-encoded; crawlers read script contents literally and see invalid JSON.",
		"Write the JSON with plain quotes and characters inside the script element, without HTML entities."
}

// article is "an" before a name starting with A, E, I, O or U, else "a".
func article(name string) string {
	if name != "" && strings.IndexByte("AEIOU", name[0]) >= 0 {
		return "an"
	}
	return "a"
}
