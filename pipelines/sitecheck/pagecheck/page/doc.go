// Package page checks what a page and its site say about themselves beyond
// JSON-LD (the TypeScript kit's pagecheck-page.ts): CheckMeta reads the
// title, meta description, canonical link, html lang, robots directives and
// Open Graph tags; MeaningfulAlt judges an image's alt text; CheckLLMsTxt
// checks a fetched /llms.txt. Problems come with a code, a message and a
// fix.
package page
