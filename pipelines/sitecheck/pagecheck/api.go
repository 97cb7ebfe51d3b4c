package pagecheck

import (
	"boxd/pipelines/sitecheck/pagecheck/jsonld"
	"boxd/pipelines/sitecheck/pagecheck/markup"
	"boxd/pipelines/sitecheck/pagecheck/page"
	"boxd/pipelines/sitecheck/pagecheck/schema"
	"boxd/pipelines/sitecheck/pagecheck/text"
)

// The names of the sub-packages that the site check and the kit functions
// use; see each sub-package for their documentation.

// HTML scanning and page text (package text).
type (
	Token     = text.Token
	TokenKind = text.TokenKind
	Attr      = text.Attr
)

// The token kinds (package text).
const (
	TokText      = text.TokText
	TokStartTag  = text.TokStartTag
	TokEndTag    = text.TokEndTag
	TokComment   = text.TokComment
	TokBogus     = text.TokBogus
	TokRawText   = text.TokRawText
	MaxTextChars = text.MaxTextChars
)

// Scan is text.Scan.
func Scan(s string) []Token { return text.Scan(s) }

// ExtractText is text.ExtractText.
func ExtractText(html string) string { return text.ExtractText(html) }

// ExtractTextTokens is text.ExtractTextTokens.
func ExtractTextTokens(html string, toks []Token) string { return text.ExtractTextTokens(html, toks) }

// DecodeEntities is text.DecodeEntities.
func DecodeEntities(s string) string { return text.DecodeEntities(s) }

// FindPlaceholder is text.FindPlaceholder.
func FindPlaceholder(s string) (string, bool) { return text.FindPlaceholder(s) }

// JSON and JSON-LD blocks (package jsonld).
type (
	JSONError = jsonld.JSONError
	Object    = jsonld.Object
	Member    = jsonld.Member
	Block     = jsonld.Block
)

// MaxJSONDepth and the sources of a Block (package jsonld).
const (
	MaxJSONDepth  = jsonld.MaxJSONDepth
	SourceScript  = jsonld.SourceScript
	SourceComment = jsonld.SourceComment
	SourceEntity  = jsonld.SourceEntity
)

// ParseJSON is jsonld.ParseJSON.
func ParseJSON(s string) (any, *JSONError) { return jsonld.ParseJSON(s) }

// ExtractJSONLD is jsonld.ExtractJSONLD.
func ExtractJSONLD(html string) []Block { return jsonld.ExtractJSONLD(html) }

// ExtractJSONLDTokens is jsonld.ExtractJSONLDTokens.
func ExtractJSONLDTokens(html string, toks []Token) []Block {
	return jsonld.ExtractJSONLDTokens(html, toks)
}

// Validation (package schema).
type (
	Finding      = schema.Finding
	Validation   = schema.Validation
	ObjectReport = schema.ObjectReport
	PageReport   = schema.PageReport
)

// The severities of a Finding (package schema).
const (
	SeverityError   = schema.SeverityError
	SeverityWarning = schema.SeverityWarning
)

// Validate is schema.Validate.
func Validate(obj any) Validation { return schema.Validate(obj) }

// CheckPageJSONLD is schema.CheckPageJSONLD.
func CheckPageJSONLD(html, pageURL string) PageReport { return schema.CheckPageJSONLD(html, pageURL) }

// CheckPageJSONLDTokens is schema.CheckPageJSONLDTokens.
func CheckPageJSONLDTokens(html string, toks []Token, pageURL string) PageReport {
	return schema.CheckPageJSONLDTokens(html, toks, pageURL)
}

// CheckPageJSONLDLimit is schema.CheckPageJSONLDLimit.
func CheckPageJSONLDLimit(html string, toks []Token, pageURL string, maxObjects int) (PageReport, int) {
	return schema.CheckPageJSONLDLimit(html, toks, pageURL, maxObjects)
}

// Meta tags, alt texts and llms.txt (package page).
type (
	Problem       = page.Problem
	OpenGraph     = page.OpenGraph
	MetaReport    = page.MetaReport
	LLMsTxtReport = page.LLMsTxtReport
)

// CheckMeta is page.CheckMeta.
func CheckMeta(html, pageURL string) MetaReport { return page.CheckMeta(html, pageURL) }

// CheckMetaTokens is page.CheckMetaTokens.
func CheckMetaTokens(html string, toks []Token, pageURL string) MetaReport {
	return page.CheckMetaTokens(html, toks, pageURL)
}

// MeaningfulAlt is page.MeaningfulAlt.
func MeaningfulAlt(alt *string, src string) bool { return page.MeaningfulAlt(alt, src) }

// CheckLLMsTxt is page.CheckLLMsTxt.
func CheckLLMsTxt(status int, contentType, body string) LLMsTxtReport {
	return page.CheckLLMsTxt(status, contentType, body)
}

// Generation (package markup).
type Facts = markup.Facts

// GenerateMarkup is markup.GenerateMarkup.
func GenerateMarkup(f Facts) (Object, error) { return markup.GenerateMarkup(f) }
