// Package pagecheck holds the page checks for AI visibility that the site
// check runs and the TypeScript and Python kits port: JSON-LD extraction
// and validation, meta tags, image alt texts, llms.txt and JSON-LD
// generation. The shared fixtures in testdata/sitecheck (check_page_jsonld,
// validate_schema, check_live_meta, meaningful_alt, llms_txt and
// generate_schema_markup) pin the results of all three.
//
// The code lives in sub-packages that follow the kit's modules:
//
//   - text: the HTML scanner, entities, page text, placeholders and ASCII
//     string helpers (pagecheck-text.ts);
//   - jsonld: the JSON parser, the ordered JSON writer and the extraction of
//     JSON-LD blocks (pagecheck-json.ts);
//   - schema: the schema.org rules, Validate and CheckPageJSONLD
//     (pagecheck-schema.ts);
//   - page: meta tags, alt texts and llms.txt (pagecheck-page.ts);
//   - markup: GenerateMarkup (pagecheck-markup.ts).
//
// This package is the kit's entry (pagecheck.ts): KitFunctions, the six
// kit functions over JSON input, and the names the site check uses, which
// stand for those of the sub-packages.
package pagecheck
