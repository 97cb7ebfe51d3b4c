// Package jsonld reads and writes the JSON of JSON-LD for the page checks
// (the TypeScript kit's pagecheck-json.ts, plus the block extraction of
// pagecheck-schema.ts):
//
//   - ParseJSON, a strict RFC 8259 parser whose errors carry the same
//     message, line, column (in code points) and byte offset in every kit
//     language, and which keeps number text exactly (json.Number);
//   - Object, a JSON object that keeps its key order, and Snippet and
//     Quote, the JSON writer of fix snippets and generated markup;
//   - ExtractJSONLD, which finds a page's <script type="application/ld+json">
//     blocks (also inside HTML comments and entity-encoded ones) and parses
//     them.
//
// ParseJSON's error messages are exactly these ('c' is the offending
// character, or U+XXXX for a control character or U+FEFF):
//
//	unexpected end of input
//	unexpected 'c' after JSON value
//	expected value, found 'c'
//	invalid literal
//	nesting too deep                      (deeper than MaxJSONDepth)
//	expected string key, found 'c'
//	expected ':' after object key, found 'c'
//	expected ',' or '}' after object member, found 'c'
//	expected ',' or ']' after array element, found 'c'
//	control character in string
//	invalid escape sequence
//	invalid number
//
// Validation of what the blocks hold is package schema's.
package jsonld
