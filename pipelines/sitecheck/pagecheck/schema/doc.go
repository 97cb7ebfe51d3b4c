// Package schema validates JSON-LD against the schema.org rules the page
// checks know (the TypeScript kit's pagecheck-schema.ts): Validate checks
// one object and CheckPageJSONLD every object of a page's JSON-LD blocks
// (found by package jsonld), each problem a Finding with a path, a message,
// a fix and a snippet to paste.
//
// The rule tables (rules.go) cover LocalBusiness and its subtypes,
// Organization, Article, Product, FAQPage, BreadcrumbList and WebSite and
// their nested objects; other types get the @context, @type and placeholder
// checks only. The texts of the findings are in messages.go, where {label}
// is the object's reported @type or, for a nested object without one, the
// name of its rule table. The value syntaxes the rules use (absolute URLs,
// ISO dates, opening hours, ...) are exported for the other checks.
package schema
