// Page checks for AI visibility: JSON-LD extraction and validation, meta
// tags, image alt texts, llms.txt and JSON-LD generation.
//
// This is a port of the Go package pipelines/sitecheck/pagecheck; the Go
// source is the specification and the shared fixtures in testdata/sitecheck/
// (check_page_jsonld.json, validate_schema.json, check_live_meta.json,
// meaningful_alt.json, llms_txt.json, generate_schema_markup.json) pin its
// results. The code is split over pagecheck-text.ts (scanner, entities, text,
// placeholders), pagecheck-json.ts (the JSON parser and snippet writer),
// pagecheck-schema.ts (JSON-LD rules and validation), pagecheck-page.ts
// (meta, alt, llms.txt) and pagecheck-markup.ts (generation).
//
// Go works on UTF-8 bytes, JavaScript on UTF-16 code units. The port keeps
// Go's results: JSON error offsets are UTF-8 byte offsets and columns count
// code points; lengths (title, description, too_long, price range, the
// 20000-character text cap) count code points; keys are sorted in UTF-8 byte
// order; lower-casing and the trimming sets are the ASCII ones Go uses; lone
// surrogates in input strings become U+FFFD as Go's JSON decoder makes them.
//
// What a kit function cannot see, because it receives a value JSON.parse has
// already decoded rather than Go's raw JSON text (documented, not fixable):
//
// - validateSchemaLocally: Go re-parses the raw text of "object" with its
//   own parser. That parser only fails there on nesting deeper than 100
//   (Go's decoder has accepted the text already); the TS port reports that
//   error with line, column and offset computed on the compact JSON
//   serialisation of the value, while Go counts them in the original text
//   (its whitespace included). Member order and number text are not visible
//   in any validateSchemaLocally output (placeholder scanning sorts keys;
//   numbers are only compared as float64, which JSON.parse rounds the same
//   way), so integer-like keys moving first in JS objects and "1.0" vs "1"
//   change nothing. A duplicate key keeps its last value in both.
// - llmsTxtCheck "status": Go's decoder rejects number text that is not an
//   integer literal ("1e2", "100.0": "not a number with a fraction or
//   exponent"); JSON.parse turns those into 100, which is accepted.
//   Integers between 2^53 and 2^63 are rounded by JSON.parse before the
//   int64 range check, so 9223372036854775807 is rejected here.
// - generateSchemaMarkup "facts": Go decodes members in document order and
//   reports the first problem (unknown field or wrong type); JavaScript
//   objects list integer-like keys ("0", "12") first, and a duplicate key
//   is seen only with its last value, so for such inputs a different first
//   problem may be reported (or, for a duplicate, none).
// - "unexpected data after the input object" cannot occur: the input is
//   already one decoded value.
//
// Unicode tables: the "has a letter" rule of hasMeaningfulAltText uses the
// JavaScript \p{L} property of the running Node version; Go uses its own
// unicode package tables. They agree except for letters added to Unicode
// after the older of the two versions.

import { goQuote } from "./gostrings.js";
import { parseJSON, formatJSONError, jsonQuote, toPlain } from "./pagecheck-json.js";
import { checkLLMsTxt, checkMeta, meaningfulAlt } from "./pagecheck-page.js";
import { checkPageJSONLD, validateParsed } from "./pagecheck-schema.js";
import { generateMarkup, MarkupError, type BusinessFacts } from "./pagecheck-markup.js";
import { asciiLower, compareUTF8, wellFormed } from "./pagecheck-text.js";

export {
  MAX_JSON_DEPTH,
  JSONNumber,
  OrderedObject,
  parseJSON,
  formatJSONError,
  type JSONError,
  type JSONObject,
  type JSONValue,
  type ParseResult,
} from "./pagecheck-json.js";
export {
  HtmlTokenKind,
  MAX_TEXT_CHARS,
  decodeEntities,
  extractText,
  findPlaceholder,
  scanHTML,
  tokenAttr,
  type HtmlAttr,
  type HtmlToken,
} from "./pagecheck-text.js";
export {
  ARTICLE_TYPES,
  LOCAL_BUSINESS_TYPES,
  ORGANIZATION_TYPES,
  PRODUCT_TYPES,
  checkPageJSONLD,
  extractJSONLD,
  isAbsoluteURL,
  isISODate,
  validateSchema,
  type JsonLdBlock,
  type JsonLdBlockDetail,
  type JsonLdObjectReport,
  type JsonLdPageReport,
  type JsonLdSource,
  type SchemaFinding,
  type SchemaValidation,
} from "./pagecheck-schema.js";
export {
  DESCRIPTION_MAX,
  DESCRIPTION_MIN,
  TITLE_MAX,
  TITLE_MIN,
  checkLLMsTxt,
  checkMeta,
  meaningfulAlt,
  type LLMsTxtReport,
  type MetaReport,
  type OpenGraph,
  type PageProblem,
} from "./pagecheck-page.js";
export { MarkupError, generateMarkup, type BusinessFacts } from "./pagecheck-markup.js";

// ---------------------------------------------------------------------------
// Strict input decoding (Go kit.go decodeInput and encoding/json's messages)

interface FieldSpec {
  name: string;
  required: boolean;
  /** Decodes a present, non-null value (Go: a non-nil dst); absent for "any JSON value". */
  decode?: (v: unknown) => unknown;
  what: string;
}


/** The JSON kind of a decoded value, as Go's decoder names it in errors. */
function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
    case "bigint":
      return "number";
    case "boolean":
      return "bool";
    default:
      return "object";
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The own keys of a decoded object that JSON can carry (undefined values left out). */
function presentKeys(o: Record<string, unknown>): string[] {
  return Object.keys(o).filter((k) => o[k] !== undefined);
}

/**
 * Checks the input object as Go's decodeInput does: unknown fields (in
 * sorted order), then field by field in table order: required, not null,
 * type. Returns the decoded values of the present fields ("alt" may be null).
 */
function decodeInput(fn: string, input: unknown, fields: FieldSpec[]): Map<string, unknown> {
  const bad = (detail: string): Error => new Error(`${fn}: bad input: ${detail}`);
  if (!isPlainObject(input)) throw bad("want one JSON object");
  const m = new Map<string, unknown>();
  for (const k of presentKeys(input)) m.set(wellFormed(k), input[k]);
  const names = fields.map((f) => f.name);
  for (const k of [...m.keys()].sort(compareUTF8)) {
    if (!names.includes(k)) throw bad(`unknown field ${goQuote(k)} (allowed: ${names.join(", ")})`);
  }
  const out = new Map<string, unknown>();
  for (const f of fields) {
    if (!m.has(f.name)) {
      if (f.required) throw bad(`field "${f.name}" is required (${f.what})`);
      continue;
    }
    const v = m.get(f.name);
    if (!f.decode) {
      out.set(f.name, v);
      continue;
    }
    if (v === null) {
      if (f.name !== "alt") throw bad(`field "${f.name}" must be ${f.what}, not null`);
      out.set(f.name, null);
      continue;
    }
    out.set(f.name, f.decode(v));
  }
  return out;
}

/**
 * How Go's fieldError names the JSON kind of a wrongly typed value: "a JSON
 * string", "a JSON number", "a JSON boolean", "a JSON array", "a JSON
 * object"; a number that does not fit an int is "a number with a fraction or
 * exponent".
 */
function kindPhrase(v: unknown): string {
  const k = jsonKind(v);
  return k === "bool" ? "a JSON boolean" : "a JSON " + k;
}

const NOT_AN_INT = "a number with a fraction or exponent";

function fieldTypeError(fn: string, f: FieldSpec, phrase: string): Error {
  return new Error(`${fn}: bad input: field "${f.name}" must be ${f.what}, not ${phrase}`);
}

function decodeString(fn: string, f: FieldSpec, v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw fieldTypeError(fn, f, kindPhrase(v));
  return wellFormed(v);
}

function decodeInt(fn: string, f: FieldSpec, v: unknown): number {
  if (typeof v === "bigint") {
    if (v < -(2n ** 63n) || v >= 2n ** 63n) throw fieldTypeError(fn, f, NOT_AN_INT);
    return Number(v);
  }
  if (typeof v !== "number") throw fieldTypeError(fn, f, kindPhrase(v));
  // Go's decoder wants an integer literal within int64.
  if (!Number.isInteger(v) || v < -(2 ** 63) || v >= 2 ** 63) throw fieldTypeError(fn, f, NOT_AN_INT);
  return v === 0 ? 0 : v; // -0 is 0
}

const FACT_FIELDS: readonly (keyof BusinessFacts)[] = [
  "name", "type", "url", "telephone", "email", "street", "city", "region", "postal_code", "country",
  "opening_hours", "price_range", "same_as", "description", "logo", "latitude", "longitude",
];
const FACT_LISTS = new Set<string>(["opening_hours", "same_as"]);

/**
 * Go's encoding/json matches member names to struct fields exactly first,
 * then case-insensitively with simple folding; for these field names that is
 * ASCII case plus U+017F (long s) for "s" and U+212A (Kelvin sign) for "k".
 */
function foldKey(key: string): string {
  return asciiLower(key).replace(/\u017F/g, "s").replace(/\u212A/g, "k");
}

/** Decodes the facts object as Go's strict json.Decoder decodes it into Facts. */
function decodeFacts(fn: string, f: FieldSpec, v: unknown): BusinessFacts {
  if (!isPlainObject(v)) throw fieldTypeError(fn, f, kindPhrase(v));
  const member = (field: string, want: string, x: unknown): Error =>
    new Error(`${fn}: bad input: field "${f.name}": "${field}" must be ${want}, not ${kindPhrase(x)}`);
  const facts: Record<string, string | string[] | null> = {};
  // Members in document order (as far as a JavaScript object keeps it); the
  // first problem is reported, as Go's decoder reports the first it saw.
  for (const rawKey of presentKeys(v)) {
    const key = wellFormed(rawKey);
    const field = FACT_FIELDS.find((n) => n === key) ?? FACT_FIELDS.find((n) => foldKey(n) === foldKey(key));
    if (field === undefined) {
      throw new Error(`${fn}: bad input: field "${f.name}" has an unknown field ${goQuote(key)}; it must be ${f.what}`);
    }
    const e = v[rawKey];
    if (FACT_LISTS.has(field)) {
      if (e === null) {
        facts[field] = null; // null empties a Go slice
      } else if (Array.isArray(e)) {
        facts[field] = e.map((x) => {
          if (x === null || x === undefined) return ""; // null leaves the element ""
          if (typeof x !== "string") throw member(field, "a string", x);
          return wellFormed(x);
        });
      } else {
        throw member(field, "a list of strings", e);
      }
    } else if (e !== null) {
      // null leaves a Go string unchanged
      if (typeof e !== "string") throw member(field, "a string", e);
      facts[field] = wellFormed(e);
    }
  }
  return facts as BusinessFacts;
}

/**
 * The compact JSON text of a decoded value, for Go's re-parse of the raw
 * "object" text: keys in Object.keys order, members whose value is undefined
 * left out, infinite numbers (overflowed literals) written as 1e999.
 */
function compactText(v: unknown): string {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "string":
      return JSON.stringify(v); // escapes lone surrogates as \udxxx
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "number":
      if (v === Infinity) return "1e999";
      if (v === -Infinity) return "-1e999";
      if (Number.isNaN(v)) return "null";
      return Object.is(v, -0) ? "-0" : String(v);
    case "object":
      if (Array.isArray(v)) return "[" + v.map(compactText).join(",") + "]";
      return (
        "{" +
        presentKeys(v as Record<string, unknown>)
          .map((k) => jsonQuote(wellFormed(k)) + ":" + compactText((v as Record<string, unknown>)[k]))
          .join(",") +
        "}"
      );
  }
  return "null";
}

// ---------------------------------------------------------------------------
// The kit functions (Go KitFunctions)

const WHAT_STRING = "a string";

/** A field decoded into a Go string. */
function stringField(fn: string, name: string, required: boolean, what = WHAT_STRING): FieldSpec {
  const f: FieldSpec = { name, required, what };
  f.decode = (v) => decodeString(fn, f, v);
  return f;
}

function checkPageJsonLdKit(input: unknown): unknown {
  const fn = "checkPageJsonLd";
  const m = decodeInput(fn, input, [stringField(fn, "html", true), stringField(fn, "url", false)]);
  return checkPageJSONLD(m.get("html") as string, (m.get("url") as string | undefined) ?? "");
}

function validateSchemaLocallyKit(input: unknown): unknown {
  const fn = "validateSchemaLocally";
  const m = decodeInput(fn, input, [{ name: "object", required: true, what: "any JSON value" }]);
  const r = parseJSON(compactText(m.get("object")));
  if (!r.ok) throw new Error(`${fn}: bad input: ${formatJSONError(r.error)}`);
  return validateParsed(r.value);
}

function checkLiveMetaKit(input: unknown): unknown {
  const fn = "checkLiveMeta";
  const m = decodeInput(fn, input, [stringField(fn, "html", true), stringField(fn, "url", false)]);
  return checkMeta(m.get("html") as string, (m.get("url") as string | undefined) ?? "");
}

function hasMeaningfulAltTextKit(input: unknown): unknown {
  const fn = "hasMeaningfulAltText";
  const m = decodeInput(fn, input, [stringField(fn, "alt", false, "a string or null"), stringField(fn, "src", false)]);
  const alt = m.get("alt") as string | null | undefined;
  return meaningfulAlt(alt ?? null, (m.get("src") as string | undefined) ?? "");
}

function llmsTxtCheckKit(input: unknown): unknown {
  const fn = "llmsTxtCheck";
  const status: FieldSpec = { name: "status", required: true, what: "an integer (the HTTP status of the /llms.txt fetch)" };
  status.decode = (v) => decodeInt(fn, status, v);
  const m = decodeInput(fn, input, [status, stringField(fn, "content_type", false), stringField(fn, "body", false)]);
  return checkLLMsTxt(
    m.get("status") as number,
    (m.get("content_type") as string | undefined) ?? "",
    (m.get("body") as string | undefined) ?? "",
  );
}

function generateSchemaMarkupKit(input: unknown): unknown {
  const fn = "generateSchemaMarkup";
  const facts: FieldSpec = {
    name: "facts",
    required: true,
    what:
      "an object of business facts (name, type, url, telephone, email, street, city, region, postal_code, country, " +
      "opening_hours, price_range, same_as, description, logo, latitude, longitude)",
  };
  facts.decode = (v) => decodeFacts(fn, facts, v);
  const m = decodeInput(fn, input, [facts]);
  try {
    return toPlain(generateMarkup(m.get("facts") as BusinessFacts));
  } catch (e) {
    if (e instanceof MarkupError) return { error: e.message };
    throw e;
  }
}

/**
 * The kit functions by name, as Go's KitFunctions(). Each takes the decoded
 * JSON input object and returns a plain value whose JSON equals Go's; bad
 * input throws an Error with Go's message.
 */
export const pagecheckKitFunctions: Record<string, (input: unknown) => unknown> = {
  checkPageJsonLd: checkPageJsonLdKit,
  validateSchemaLocally: validateSchemaLocallyKit,
  checkLiveMeta: checkLiveMetaKit,
  hasMeaningfulAltText: hasMeaningfulAltTextKit,
  llmsTxtCheck: llmsTxtCheckKit,
  generateSchemaMarkup: generateSchemaMarkupKit,
};
