import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  HtmlTokenKind,
  JSONNumber,
  checkPageJSONLD,
  decodeEntities,
  extractText,
  findPlaceholder,
  generateMarkup,
  isAbsoluteURL,
  isISODate,
  meaningfulAlt,
  parseJSON,
  pagecheckKitFunctions,
  scanHTML,
  tokenAttr,
  validateSchema,
} from "../src/pagecheck.js";
import { RE_EMAIL, isEmailAddress } from "../src/pagecheck-markup.js";

// Compiled tests live in kits/ts/dist/test/.
const FIXTURE_DIR = new URL("../../../../testdata/sitecheck/", import.meta.url);

interface FixtureCase {
  name: string;
  input: unknown;
  want: unknown;
}

// The fixture files, their kit function and the minimum case counts of the
// Go test (kit_test.go).
const FIXTURE_FILES: [string, string, number][] = [
  ["checkPageJsonLd", "check_page_jsonld.json", 20],
  ["validateSchemaLocally", "validate_schema.json", 40],
  ["checkLiveMeta", "check_live_meta.json", 20],
  ["hasMeaningfulAltText", "meaningful_alt.json", 25],
  ["llmsTxtCheck", "llms_txt.json", 15],
  ["generateSchemaMarkup", "generate_schema_markup.json", 10],
];

test("kit functions are keyed as in Go", () => {
  assert.deepEqual(Object.keys(pagecheckKitFunctions).sort(), [
    "checkLiveMeta",
    "checkPageJsonLd",
    "generateSchemaMarkup",
    "hasMeaningfulAltText",
    "llmsTxtCheck",
    "validateSchemaLocally",
  ]);
});

for (const [fn, file] of FIXTURE_FILES) {
  test(`shared fixture ${file}`, async (t) => {
    const cases = JSON.parse(readFileSync(new URL(file, FIXTURE_DIR), "utf8")) as FixtureCase[];
    const seen = new Set<string>();
    for (const c of cases) {
      assert.ok(!seen.has(c.name), `duplicate case name ${JSON.stringify(c.name)}`);
      seen.add(c.name);
      await t.test(c.name, () => {
        const got: unknown = pagecheckKitFunctions[fn](c.input);
        assert.deepEqual(JSON.parse(JSON.stringify(got)), c.want, `${file}/${c.name}`);
      });
    }
  });
}

test("generated markup validates without errors, also after a JSON round trip", () => {
  const cases = JSON.parse(readFileSync(new URL("generate_schema_markup.json", FIXTURE_DIR), "utf8")) as FixtureCase[];
  for (const c of cases) {
    const got = pagecheckKitFunctions.generateSchemaMarkup(c.input) as Record<string, unknown>;
    if ("error" in got) continue;
    const v = validateSchema(got);
    assert.deepEqual(v.errors, [], `${c.name}: generated markup has errors`);
    assert.deepEqual(pagecheckKitFunctions.validateSchemaLocally({ object: JSON.parse(JSON.stringify(got)) }), v);
  }
});

// kit_test.go TestKitRejectsBadInput, with the whole Go messages.
const FACTS_WHAT =
  "an object of business facts (name, type, url, telephone, email, street, city, region, postal_code, country, " +
  "opening_hours, price_range, same_as, description, logo, latitude, longitude)";
const STATUS_WHAT = "an integer (the HTTP status of the /llms.txt fetch)";

const FB = `generateSchemaMarkup: bad input: field "facts"`;

const BAD_INPUTS: [string, unknown, string][] = [
  ["checkPageJsonLd", { html: "", extra: 1 }, 'checkPageJsonLd: bad input: unknown field "extra" (allowed: html, url)'],
  ["checkPageJsonLd", { url: "https://a.example/" }, 'checkPageJsonLd: bad input: field "html" is required (a string)'],
  ["checkPageJsonLd", { html: 3 }, 'checkPageJsonLd: bad input: field "html" must be a string, not a JSON number'],
  ["checkPageJsonLd", { html: null }, 'checkPageJsonLd: bad input: field "html" must be a string, not null'],
  ["checkPageJsonLd", [], "checkPageJsonLd: bad input: want one JSON object"],
  ["checkPageJsonLd", null, "checkPageJsonLd: bad input: want one JSON object"],
  ["checkPageJsonLd", "x", "checkPageJsonLd: bad input: want one JSON object"],
  // Unknown fields are checked first, in sorted order.
  ["checkPageJsonLd", { html: 3, extra: 1, aaa: 2 }, 'checkPageJsonLd: bad input: unknown field "aaa" (allowed: html, url)'],
  ["checkPageJsonLd", { html: [1] }, 'checkPageJsonLd: bad input: field "html" must be a string, not a JSON array'],
  ["checkPageJsonLd", { html: {} }, 'checkPageJsonLd: bad input: field "html" must be a string, not a JSON object'],
  ["checkPageJsonLd", { html: true }, 'checkPageJsonLd: bad input: field "html" must be a string, not a JSON boolean'],
  ["checkPageJsonLd", { url: 3 }, 'checkPageJsonLd: bad input: field "html" is required (a string)'],
  ["validateSchemaLocally", {}, 'validateSchemaLocally: bad input: field "object" is required (any JSON value)'],
  ["checkLiveMeta", { html: "", lang: "en" }, 'checkLiveMeta: bad input: unknown field "lang" (allowed: html, url)'],
  ["checkLiveMeta", { html: "", url: false }, 'checkLiveMeta: bad input: field "url" must be a string, not a JSON boolean'],
  ["hasMeaningfulAltText", { alt: 3 }, 'hasMeaningfulAltText: bad input: field "alt" must be a string or null, not a JSON number'],
  ["hasMeaningfulAltText", { alt: "x", title: "y" }, 'hasMeaningfulAltText: bad input: unknown field "title" (allowed: alt, src)'],
  ["hasMeaningfulAltText", { alt: null, src: null }, 'hasMeaningfulAltText: bad input: field "src" must be a string, not null'],
  ["llmsTxtCheck", { body: "" }, `llmsTxtCheck: bad input: field "status" is required (${STATUS_WHAT})`],
  ["llmsTxtCheck", { status: "200" }, `llmsTxtCheck: bad input: field "status" must be ${STATUS_WHAT}, not a JSON string`],
  ["llmsTxtCheck", { status: 1.5 },
    `llmsTxtCheck: bad input: field "status" must be ${STATUS_WHAT}, not a number with a fraction or exponent`],
  ["llmsTxtCheck", { status: 1e30 },
    `llmsTxtCheck: bad input: field "status" must be ${STATUS_WHAT}, not a number with a fraction or exponent`],
  // Fields are checked in table order: status before body.
  ["llmsTxtCheck", { status: "x", body: null }, `llmsTxtCheck: bad input: field "status" must be ${STATUS_WHAT}, not a JSON string`],
  ["llmsTxtCheck", { status: 200, body: null }, 'llmsTxtCheck: bad input: field "body" must be a string, not null'],
  ["generateSchemaMarkup", { facts: { name: "A", phone: "1" } }, `${FB} has an unknown field "phone"; it must be ${FACTS_WHAT}`],
  ["generateSchemaMarkup", {}, `generateSchemaMarkup: bad input: field "facts" is required (${FACTS_WHAT})`],
  ["generateSchemaMarkup", { facts: null }, `${FB} must be ${FACTS_WHAT}, not null`],
  ["generateSchemaMarkup", { facts: { name: 3 } }, `${FB}: "name" must be a string, not a JSON number`],
  // The first problem in member order wins.
  ["generateSchemaMarkup", { facts: { name: 1, zz: 2 } }, `${FB}: "name" must be a string, not a JSON number`],
  ["generateSchemaMarkup", { facts: { zz: 3, name: 1 } }, `${FB} has an unknown field "zz"; it must be ${FACTS_WHAT}`],
  ["generateSchemaMarkup", { facts: { NAME: true } }, `${FB}: "name" must be a string, not a JSON boolean`],
  ["generateSchemaMarkup", { facts: { name: "Acme", opening_hours: "x" } },
    `${FB}: "opening_hours" must be a list of strings, not a JSON string`],
  ["generateSchemaMarkup", { facts: { name: "Acme", opening_hours: [null, 2] } },
    `${FB}: "opening_hours" must be a string, not a JSON number`],
  ["generateSchemaMarkup", { facts: { same_as: [[]] } }, `${FB}: "same_as" must be a string, not a JSON array`],
  ["generateSchemaMarkup", { facts: { same_as: {} } }, `${FB}: "same_as" must be a list of strings, not a JSON object`],
  ["generateSchemaMarkup", { facts: "x" }, `${FB} must be ${FACTS_WHAT}, not a JSON string`],
  ["generateSchemaMarkup", { facts: [] }, `${FB} must be ${FACTS_WHAT}, not a JSON array`],
  ["generateSchemaMarkup", { facts: 1 }, `${FB} must be ${FACTS_WHAT}, not a JSON number`],
  // Only U+017F and U+212A fold to ASCII letters in Go's field matching.
  ["generateSchemaMarkup", { facts: { "c\u0130ty": "Paris" } }, `${FB} has an unknown field "c\u0130ty"; it must be ${FACTS_WHAT}`],
  ["generateSchemaMarkup", { facts: { "a\tb": "x" } }, `${FB} has an unknown field "a\\tb"; it must be ${FACTS_WHAT}`],
];

test("bad input is rejected with Go's messages", () => {
  for (const [fn, input, want] of BAD_INPUTS) {
    assert.throws(
      () => pagecheckKitFunctions[fn](input),
      (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.equal(e.message, want, `${fn}(${JSON.stringify(input)})`);
        assert.ok(e.message.startsWith(fn + ": "));
        return true;
      },
    );
  }
});

test("shared fixture kit_errors.json (the pagecheck cases)", async (t) => {
  let cases: (FixtureCase & { fn: string })[] = [];
  try {
    cases = JSON.parse(readFileSync(new URL("kit_errors.json", FIXTURE_DIR), "utf8")) as (FixtureCase & { fn: string })[];
  } catch {
    t.skip("no kit_errors.json");
    return;
  }
  for (const c of cases) {
    const fn = pagecheckKitFunctions[c.fn];
    if (!Object.hasOwn(pagecheckKitFunctions, c.fn) || fn === undefined) continue;
    await t.test(c.name, () => {
      const want = (c.want as { error: string }).error;
      assert.throws(() => fn(c.input), { message: want });
    });
  }
});

test("accepted edge inputs", () => {
  assert.equal(pagecheckKitFunctions.hasMeaningfulAltText({ alt: null }), false);
  assert.equal(pagecheckKitFunctions.hasMeaningfulAltText({}), false);
  // Struct fields match case-insensitively, with U+017F for "s" (Go's folding).
  assert.deepEqual(
    pagecheckKitFunctions.generateSchemaMarkup({ facts: { NAME: "Acme Co", Type: "organization", "\u017Fame_as": ["https://a.b/"] } }),
    { "@context": "https://schema.org", "@type": "Organization", name: "Acme Co", sameAs: ["https://a.b/"] },
  );
  // null keeps a string fact unchanged and empties a list.
  assert.deepEqual(
    pagecheckKitFunctions.generateSchemaMarkup({ facts: { name: "Acme Co", NAME: null, opening_hours: null, city: null } }),
    { "@context": "https://schema.org", "@type": "Organization", name: "Acme Co" },
  );
  assert.deepEqual(pagecheckKitFunctions.generateSchemaMarkup({ facts: {} }), { error: "facts.name is required" });
  const st = pagecheckKitFunctions.llmsTxtCheck({ status: -0 }) as { problems: { message: string }[] };
  assert.equal(st.problems[0].message, "Fetching /llms.txt gave HTTP status 0.");
});

test("validateSchemaLocally nesting limit", () => {
  let deep: unknown = {};
  for (let i = 0; i < 99; i++) deep = [deep];
  assert.equal((pagecheckKitFunctions.validateSchemaLocally({ object: deep }) as { type: string }).type, "");
  deep = [deep];
  assert.throws(() => pagecheckKitFunctions.validateSchemaLocally({ object: deep }), {
    message: "validateSchemaLocally: bad input: nesting too deep at line 1, column 101 (offset 100)",
  });
  // An overflowed number literal is infinite, as in Go: a bad position.
  const v = pagecheckKitFunctions.validateSchemaLocally({
    object: {
      "@context": "https://schema.org",
      "@type": "BreadcrumbList",
      itemListElement: [{ "@type": "ListItem", position: Infinity, name: "a" }],
    },
  }) as { errors: { code: string }[] };
  assert.deepEqual(v.errors.map((e) => e.code), ["bad_position"]);
});

test("JSON parser: values, numbers, escapes", () => {
  const r = parseJSON(' {"b": [1.50, -0, 1e2, true, false, null], "a": "x\\u00e9\\ud83d\\ude00\\ud800y", "a": 2} ');
  assert.ok(r.ok);
  const m = r.value as Map<string, unknown>;
  assert.deepEqual([...m.keys()], ["b", "a"]);
  assert.equal((m.get("a") as JSONNumber).text, "2"); // the last duplicate wins
  const arr = m.get("b") as unknown[];
  assert.deepEqual(arr.map((e) => (e instanceof JSONNumber ? e.text : e)), ["1.50", "-0", "1e2", true, false, null]);
  const s = parseJSON('"x\\u00e9\\ud83d\\ude00\\ud800y\\udc00"');
  assert.ok(s.ok);
  assert.equal(s.value, "x\u00e9\u{1F600}\ufffdy\ufffd");
});

test("JSON parser: errors count lines, code point columns and byte offsets", () => {
  const table: [string, string, number, number, number][] = [
    ["", "unexpected end of input", 1, 1, 0],
    ["{", "unexpected end of input", 1, 2, 1],
    ['{"a":1,}', "expected string key, found '}'", 1, 8, 7],
    ['{"é": "ü" "x"}', "expected ',' or '}' after object member, found '\"'", 1, 11, 12],
    ["[1 2]", "expected ',' or ']' after array element, found '2'", 1, 4, 3],
    ["\n\n  [01]", "expected ',' or ']' after array element, found '1'", 3, 5, 6],
    ["[-]", "invalid number", 1, 3, 2],
    ["[1.]", "invalid number", 1, 4, 3],
    ["[1e]", "invalid number", 1, 4, 3],
    ["[1.5e", "unexpected end of input", 1, 6, 5],
    ["tru", "unexpected end of input", 1, 4, 3],
    ["trux", "invalid literal", 1, 4, 3],
    ["nul", "unexpected end of input", 1, 4, 3],
    ['"a\\x"', "invalid escape sequence", 1, 3, 2],
    ['"a\\u12g4"', "invalid escape sequence", 1, 3, 2],
    ['"a\\u12', "unexpected end of input", 1, 7, 6],
    ['"a\\', "unexpected end of input", 1, 4, 3],
    ['"a\tb"', "control character in string", 1, 3, 2],
    ["{'a': 1}", "expected string key, found '''", 1, 2, 1],
    ["\ufeff{}", "expected value, found U+FEFF", 1, 1, 0],
    ["{} x", "unexpected 'x' after JSON value", 1, 4, 3],
    ["{}\u0085", "unexpected U+0085 after JSON value", 1, 3, 2],
    ["[\u{1F600}]", "expected value, found '\u{1F600}'", 1, 2, 1],
    ['["\u{1F600}" 1]', "expected ',' or ']' after array element, found '1'", 1, 6, 8],
    ["{\"a\" 1}", "expected ':' after object key, found '1'", 1, 6, 5],
    ["[" + "[".repeat(100) + "]".repeat(101), "nesting too deep", 1, 101, 100],
    // The rows of the Go unit test TestParseJSONErrors.
    ["  ", "unexpected end of input", 1, 3, 2],
    ['{"a"', "unexpected end of input", 1, 5, 4],
    ['{"a": 1,}', "expected string key, found '}'", 1, 9, 8],
    ["[1,]", "expected value, found ']'", 1, 4, 3],
    ['{"a":1 "b":2}', "expected ',' or '}' after object member, found '\"'", 1, 8, 7],
    ["{}\n x", "unexpected 'x' after JSON value", 2, 2, 4],
    ['{"a":"\x01"}', "control character in string", 1, 7, 6],
    ['"\\u12G4"', "invalid escape sequence", 1, 2, 1],
    ["trUe", "invalid literal", 1, 3, 2],
    ["-", "unexpected end of input", 1, 2, 1],
    ["-a", "invalid number", 1, 2, 1],
    ["1.e5", "invalid number", 1, 3, 2],
    ["01", "unexpected '1' after JSON value", 1, 2, 1],
    ['"\u00e9\u00e9" x', "unexpected 'x' after JSON value", 1, 6, 7],
  ];
  for (const [text, message, line, column, offset] of table) {
    const r = parseJSON(text);
    assert.ok(!r.ok, `parse ${JSON.stringify(text)} should fail`);
    assert.deepEqual(r.error, { message, line, column, offset }, `parse ${JSON.stringify(text)}`);
  }
  assert.ok(parseJSON("[".repeat(100) + "]".repeat(100)).ok);
});

test("HTML scanner", () => {
  const html =
    '<A HREF=x Href="y" data-x=\'a&amp;b\' checked/>t<!--c--><!-->x<!--->' +
    "<!DOCTYPE html></ 3><?xml?><SCRIPT>a</b></scriptx></Script >z</DIV >";
  const toks = scanHTML(html);
  const kinds = toks.map((t) => [t.kind, t.name, html.slice(t.start, t.end)]);
  assert.deepEqual(kinds, [
    [HtmlTokenKind.StartTag, "a", '<A HREF=x Href="y" data-x=\'a&amp;b\' checked/>'],
    [HtmlTokenKind.Text, "", "t"],
    [HtmlTokenKind.Comment, "", "<!--c-->"],
    [HtmlTokenKind.Comment, "", "<!-->"],
    [HtmlTokenKind.Text, "", "x"],
    [HtmlTokenKind.Comment, "", "<!--->"],
    [HtmlTokenKind.Bogus, "", "<!DOCTYPE html>"],
    [HtmlTokenKind.Bogus, "", "</ 3>"],
    [HtmlTokenKind.Bogus, "", "<?xml?>"],
    [HtmlTokenKind.StartTag, "script", "<SCRIPT>"],
    [HtmlTokenKind.RawText, "script", "a</b></scriptx>"],
    [HtmlTokenKind.EndTag, "script", "</Script >"],
    [HtmlTokenKind.Text, "", "z"],
    [HtmlTokenKind.EndTag, "div", "</DIV >"],
  ]);
  assert.deepEqual(toks[0].attrs, [
    { name: "href", value: "x" },
    { name: "data-x", value: "a&b" },
    { name: "checked", value: "" },
  ]);
  assert.equal(tokenAttr(toks[0], "href"), "x");
  assert.equal(tokenAttr(toks[0], "nope"), undefined);
  // Unterminated tags swallow the rest; a raw text element without end tag runs to the end.
  assert.deepEqual(scanHTML("a<b c='x>").map((t) => t.kind), [HtmlTokenKind.Text]);
  assert.deepEqual(scanHTML("a</b").map((t) => t.kind), [HtmlTokenKind.Text]);
  assert.deepEqual(scanHTML("<title>x</titl").map((t) => [t.kind, t.start, t.end]), [
    [HtmlTokenKind.StartTag, 0, 7],
    [HtmlTokenKind.RawText, 7, 14],
  ]);
  assert.deepEqual(scanHTML("<title>x</title").map((t) => [t.kind, t.start, t.end]), [
    [HtmlTokenKind.StartTag, 0, 7],
    [HtmlTokenKind.RawText, 7, 8],
    [HtmlTokenKind.EndTag, 8, 15],
  ]);
  assert.deepEqual(scanHTML("<!--x").map((t) => [t.kind, t.contentStart, t.contentEnd]), [[HtmlTokenKind.Comment, 4, 5]]);
  assert.deepEqual(scanHTML("x<").map((t) => t.kind), [HtmlTokenKind.Text]);
});

test("entities", () => {
  const table: [string, string][] = [
    ["a &amp; b", "a & b"],
    ["&amp;lt;", "&lt;"],
    ["&AMP; &amp &ampx;", "&AMP; &amp &ampx;"],
    ["&lt;&gt;&quot;&apos;&nbsp;", "<>\"'\u00a0"],
    ["&#65;&#x42;&#X43;&#x;&#;&#65", "ABC&#x;&#;&#65"],
    ["&#0;&#xD800;&#x110000;&#99999999999;", "\ufffd\ufffd\ufffd\ufffd"],
    ["&#x1F600;&#128;", "\u{1F600}\u0080"],
    ["&#x41x;", "&#x41x;"],
  ];
  for (const [input, want] of table) assert.equal(decodeEntities(input), want, input);
});

// The tables of the Go unit tests TestDecodeEntities and TestScan (unit_test.go);
// their inputs are ASCII, so UTF-16 offsets equal Go's byte offsets.
test("Go unit tables: entities", () => {
  const cases: [string, string][] = [
    ["", ""],
    ["no references", "no references"],
    ["Smith &amp; Sons", "Smith & Sons"],
    ["&lt;b&gt; &quot;q&quot; &apos;a&apos;", `<b> "q" 'a'`],
    ["a&nbsp;b", "a\u00a0b"],
    ["&amp;lt;", "&lt;"],
    ["&AMP; &Amp;", "&AMP; &Amp;"],
    ["&amp &lt", "&amp &lt"],
    ["&copy; &hellip;", "&copy; &hellip;"],
    ["&#65;&#x42;&#X43;&#0000068;", "ABCD"],
    ["&#8211;&#x2014;", "\u2013\u2014"],
    ["&#0;", "\ufffd"],
    ["&#xD800;&#xdfff;", "\ufffd\ufffd"],
    ["&#x110000;&#1114112;", "\ufffd\ufffd"],
    ["&#99999999999999999999999;", "\ufffd"],
    ["&#x10FFFF;", "\u{10ffff}"],
    ["&#x80;&#150;", "\u0080\u0096"],
    ["&#;&#x;&#x1G;&#12a;", "&#;&#x;&#x1G;&#12a;"],
    ["&#65", "&#65"],
    ["&&amp;;", "&&;"],
    ["&", "&"],
    ["&#", "&#"],
    ["&#x", "&#x"],
    ["caf\u00e9 &amp; cr\u00e8me", "caf\u00e9 & cr\u00e8me"],
  ];
  for (const [input, want] of cases) assert.equal(decodeEntities(input), want, input);
});

test("Go unit tables: scanner", () => {
  const kinds = ["text", "start", "end", "comment", "bogus", "raw"];
  const tokString = (s: string): string =>
    scanHTML(s)
      .map((t) => {
        let p = kinds[t.kind];
        if (t.name !== "") p += ":" + t.name;
        for (const a of t.attrs) p += ` ${a.name}=${JSON.stringify(a.value)}`;
        p += `[${t.start},${t.end}]`;
        if (t.kind === HtmlTokenKind.Comment || t.kind === HtmlTokenKind.RawText) {
          p += `(${JSON.stringify(s.slice(t.contentStart, t.contentEnd))})`;
        }
        return p;
      })
      .join(" ");
  const cases: [string, string][] = [
    ["", ""],
    ["plain", "text[0,5]"],
    ["a < b", "text[0,5]"],
    ["x<", "text[0,2]"],
    ["<p>hi</p>", "start:p[0,3] text[3,5] end:p[5,9]"],
    ["<P CLASS=Big>", `start:p class="Big"[0,13]`],
    [`<img src='a.png' alt="x &amp; y" data-x=1 hidden>`, `start:img src="a.png" alt="x & y" data-x="1" hidden=""[0,49]`],
    [`<a href = "x" HREF="y">`, `start:a href="x"[0,23]`],
    [`<br/>`, `start:br[0,5]`],
    [`<a =x b>`, `start:a x="" b=""[0,8]`],
    [`<a b=c/>`, `start:a b="c/"[0,8]`],
    [`<a b="unterminated>text`, ``],
    [`text<a b`, `text[0,4]`],
    [`<a b=`, ``],
    ["<!-- c -->x", `comment[0,10](" c ") text[10,11]`],
    ["<!-->x", `comment[0,5]("") text[5,6]`],
    ["<!--->x", `comment[0,6]("") text[6,7]`],
    ["<!-- open", `comment[0,9](" open")`],
    ["<!doctype html><?xml x?>", `bogus[0,15] bogus[15,24]`],
    ["</ x>y", `bogus[0,5] text[5,6]`],
    ["</3>", `bogus[0,4]`],
    ["</", `bogus[0,2]`],
    ["<!", `bogus[0,2]`],
    ["</div class=x>", `end:div[0,14]`],
    ["a</div", `text[0,1]`],
    ["<3 <a", `text[0,3]`],
    ["<script>if (a<b) x='</p>';</script >z",
      `start:script[0,8] raw:script[8,26]("if (a<b) x='</p>';") end:script[26,36] text[36,37]`],
    ["<SCRIPT>a</scripts></Script>", `start:script[0,8] raw:script[8,19]("a</scripts>") end:script[19,28]`],
    ["<style>a", `start:style[0,7] raw:style[7,8]("a")`],
    ["<title>a</title", `start:title[0,7] raw:title[7,8]("a") end:title[8,15]`],
    ["<textarea></textarea/>", `start:textarea[0,10] raw:textarea[10,10]("") end:textarea[10,22]`],
    ["<title>", `start:title[0,7] raw:title[7,7]("")`],
  ];
  for (const [input, want] of cases) assert.equal(tokString(input), want, input);
  // Many attributes: the first of duplicates (any letter case) is kept.
  let html = "<div";
  const want: { name: string; value: string }[] = [];
  for (let i = 0; i < 40; i++) {
    html += ` a${i}=v${i}`;
    want.push({ name: `a${i}`, value: `v${i}` });
    if (i % 7 === 0) html += ` A${Math.floor(i / 2)}=dup A0=dup`;
    if (i === 30) {
      html += " late=1";
      want.push({ name: "late", value: "1" });
    }
  }
  const toks = scanHTML(html + " LATE=2>");
  assert.equal(toks.length, 1);
  assert.deepEqual(toks[0].attrs, want);
});

test("text extraction", () => {
  assert.equal(
    extractText("<p>a</p><script>x</script><noscript>n<b>m</b></noscript>b<template>t</template><title>T</title>c&amp;d"),
    "a b T c&d",
  );
  const long = "<p>" + "\u{1F600}".repeat(19999) + " b c</p>";
  const got = extractText(long);
  assert.equal([...got].length, 19999);
});

test("placeholders", () => {
  const table: [string, string | undefined][] = [
    ["Hello {{ name }}!", "{{ name }}"],
    ["%COMPANY_NAME%", "%COMPANY_NAME%"],
    ["[Your City]", "[Your City]"],
    ["Todo list", "Todo"],
    ["today", undefined],
    ["XXXX-123", "XXXX"],
    ["xxxl", undefined],
    [" Sample ", "Sample"],
    ["free samples", undefined],
    ["9123-456-78901", undefined],
    ["info@example.com", "example.com"],
    ["myexample.com", undefined],
    ["example.community", undefined],
    ["Caf\u00e9 TODO", "TODO"],
  ];
  for (const [input, want] of table) assert.equal(findPlaceholder(input), want, input);
});

test("URLs, dates and alt texts", () => {
  assert.ok(isAbsoluteURL("HTTPS://a.example/x?y#z\u2028"));
  assert.ok(!isAbsoluteURL(" https://a.example/"));
  assert.ok(!isAbsoluteURL("https:///x"));
  assert.ok(isISODate("2024-02-29T10:00"));
  assert.ok(!isISODate("2023-02-29"));
  assert.ok(!isISODate("2024-01-01T10:00+24:00"));
  assert.equal(meaningfulAlt(null), false);
  assert.equal(meaningfulAlt("\u{1F600}\u{1F600}"), false);
  assert.equal(meaningfulAlt("\u00e9t\u00e9"), true);
  assert.equal(meaningfulAlt("IMG_1234.JPG"), false);
  assert.equal(meaningfulAlt("Harbor photo", "https://x.example/a/harbor-photo.jpg?x=1"), false);
  assert.equal(meaningfulAlt("the photo of DSC0012"), false);
  assert.equal(meaningfulAlt("Fresh sourdough loaves on a rack"), true);
});

test("page checks through the public functions", () => {
  const r = checkPageJSONLD(
    '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Caf\u00e9","url":"/about"}</script>',
    "https://www.cafe.example/menu/x",
  );
  assert.equal(r.objects[0].errors[0].code, "relative_url");
  assert.equal(r.objects[0].errors[0].snippet, '{\n  "url": "https://www.cafe.example/about"\n}');
  // Keys are scanned in UTF-8 byte order: U+FF5E sorts before U+1F600.
  const v = validateSchema({ "@context": "https://schema.org", "@type": "Thing", "\u{1F600}": "TODO", "\uFF5E": "TODO" });
  assert.deepEqual(v.errors.map((e) => e.property), ["\uFF5E", "\u{1F600}"]);
  const markup = generateMarkup({ name: "Acme Bakery", city: "Portland", opening_hours: [" Mo-Fr 09:00-17:00 ", ""] });
  assert.equal(
    JSON.stringify(markup),
    '{"@context":"https://schema.org","@type":"LocalBusiness","name":"Acme Bakery",' +
      '"address":{"@type":"PostalAddress","addressLocality":"Portland"},"openingHours":["Mo-Fr 09:00-17:00"]}',
  );
  assert.deepEqual(validateSchema(markup).errors, []);
  assert.throws(() => generateMarkup({ name: "Lorem ipsum shop" }), { message: 'facts.name contains placeholder text ("Lorem ipsum")' });
});

test("facts.email: isEmailAddress agrees with the regex", () => {
  // Every string of up to 7 characters over a small alphabet, then each
  // space character the regex forbids in each part.
  const alphabet = ["a", ".", "@", " ", "\v", "\u00e9"];
  let level = [""];
  for (let n = 0; n <= 7; n++) {
    const next: string[] = [];
    for (const s of level) {
      assert.equal(isEmailAddress(s), RE_EMAIL.test(s), JSON.stringify(s));
      if (n < 7) for (const c of alphabet) next.push(s + c);
    }
    level = next;
  }
  for (const c of " \t\n\v\f\r") {
    for (const s of [`a${c}@b.c`, `a@b${c}.c`, `a@b.${c}c`, `a@b.c${c}`, "a@b.c"]) {
      assert.equal(isEmailAddress(s), RE_EMAIL.test(s), JSON.stringify(s));
    }
  }
});

test("facts.email: a long domain is read once", () => {
  // Alone, the regex tries each full stop of the domain as the last one
  // and reads on to the space or second "@" each time: quadratic.
  // isEmailAddress turns such strings away before the regex runs, and runs
  // it once on the others.
  const cases: [string, boolean, number][] = [
    ...[..." \t\n\v\f\r"].map((c): [string, boolean, number] => ["a@" + ".".repeat(20000) + c + "x", false, 0]),
    ["a@" + ".a".repeat(10000) + "@", false, 0],
    ["a@" + ".".repeat(20000) + "a", true, 1],
    ["a@" + ".".repeat(20000), true, 1],
    ["a".repeat(20000), false, 1],
  ];
  const proto = RegExp.prototype;
  const realExec = proto.exec;
  for (const [s, want, runs] of cases) {
    let emailCalls = 0;
    proto.exec = function (this: RegExp, str: string) {
      if (this.source === RE_EMAIL.source) emailCalls++;
      return realExec.call(this, str);
    };
    let got: boolean;
    try {
      got = isEmailAddress(s);
    } finally {
      proto.exec = realExec;
    }
    assert.equal(got, want, s.slice(0, 20));
    assert.equal(emailCalls, runs, `${s.slice(0, 20)}…: the email regex ran ${emailCalls} times`);
  }
  assert.throws(() => generateMarkup({ name: "Acme", email: "a@" + ".".repeat(20000) + " x" }), {
    message: "facts.email must be an email address",
  });
});
