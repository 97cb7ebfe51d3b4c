"""Tests of boxd_sitecheck.pagecheck: the six shared kit fixtures, the
bad-input errors of Go's TestKitRejectsBadInput (exact texts), and edge cases
of the JSON parser, the HTML scanner, entity decoding, placeholders and
Unicode handling. Expected values were produced by the Go package.

    cd kits/python && python3 -m unittest discover -s tests -v

The module is loaded from its file, so the test does not depend on the
package's __init__.py.
"""

import importlib.util
import json
import os
import unittest

from counting import CountingRegex

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_DIR = os.path.join(HERE, "..", "..", "..", "testdata", "sitecheck")
MODULE = os.path.join(HERE, "..", "boxd_sitecheck", "pagecheck.py")


def _load_pagecheck():
    spec = importlib.util.spec_from_file_location("boxd_sitecheck_pagecheck_under_test", MODULE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


pc = _load_pagecheck()

FIXTURES = (
    ("checkPageJsonLd", "check_page_jsonld.json"),
    ("validateSchemaLocally", "validate_schema.json"),
    ("checkLiveMeta", "check_live_meta.json"),
    ("hasMeaningfulAltText", "meaningful_alt.json"),
    ("llmsTxtCheck", "llms_txt.json"),
    ("generateSchemaMarkup", "generate_schema_markup.json"),
)


def canon(v):
    """JSON text with sorted keys: type-aware (true is not 1), order of
    arrays kept."""
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


class FixtureTest(unittest.TestCase):
    def run_fixture(self, fn, file, loader):
        path = os.path.join(FIXTURE_DIR, file)
        with open(path, encoding="utf-8") as f:
            cases = loader(f.read())
        if not cases:
            self.skipTest("%s has no cases yet" % file)
        kit = pc.KIT_FUNCTIONS[fn]
        seen = set()
        for case in cases:
            name = case["name"]
            self.assertTrue(name and name not in seen, "fixture case name %r is empty or repeated" % name)
            seen.add(name)
            with self.subTest(file=file, name=name):
                got = kit(case["input"])
                self.assertEqual(canon(got), canon(case["want"]))
                # The output is plain JSON data.
                self.assertEqual(json.loads(json.dumps(got)), got)

    def test_fixtures(self):
        for fn, file in FIXTURES:
            with self.subTest(file=file):
                self.run_fixture(fn, file, json.loads)

    def test_fixtures_with_number_text(self):
        # The same through loads_input, which keeps number text.
        for fn, file in FIXTURES:
            with self.subTest(file=file):
                self.run_fixture(fn, file, pc.loads_input)

    def test_kit_errors(self):
        # The shared bad-input fixture: {name, fn, input, want: {"error"}};
        # only the cases of this module's functions.
        path = os.path.join(FIXTURE_DIR, "kit_errors.json")
        if not os.path.exists(path):
            self.skipTest("no kit_errors.json")
        with open(path, encoding="utf-8") as f:
            cases = [c for c in json.load(f) if c["fn"] in pc.KIT_FUNCTIONS]
        if not cases:
            self.skipTest("kit_errors.json has no cases of these functions")
        for case in cases:
            with self.subTest(name=case["name"]):
                try:
                    got = pc.KIT_FUNCTIONS[case["fn"]](case["input"])
                except ValueError as e:
                    got = {"error": str(e)}
                self.assertEqual(canon(got), canon(case["want"]))

    def test_generated_markup_validates(self):
        # Go's TestFixturesMarkupValidates: generated markup has no errors.
        with open(os.path.join(FIXTURE_DIR, "generate_schema_markup.json"), encoding="utf-8") as f:
            cases = json.load(f)
        for case in cases:
            got = pc.generate_markup_kit(case["input"])
            if "error" in got:
                continue
            with self.subTest(name=case["name"]):
                self.assertEqual(pc.validate(got)["errors"], [])


class KitFunctionsTest(unittest.TestCase):
    def test_names(self):
        self.assertEqual(sorted(pc.KIT_FUNCTIONS), sorted([
            "checkPageJsonLd", "validateSchemaLocally", "checkLiveMeta", "hasMeaningfulAltText",
            "llmsTxtCheck", "generateSchemaMarkup"]))

    def test_key_order(self):
        # Keys come in Go's struct / Object order.
        r = pc.check_page_jsonld_kit({"html": "<script type=application/ld+json>{}</script>"})
        self.assertEqual(list(r), ["blocks", "objects", "error_count", "warning_count", "text"])
        self.assertEqual(list(r["blocks"][0]), ["index", "source", "line", "ok", "error"])
        self.assertEqual(list(r["objects"][0]), ["block", "path", "type", "errors", "warnings"])
        self.assertEqual(list(r["objects"][0]["errors"][0]),
                         ["severity", "code", "path", "property", "message", "fix", "snippet"])
        m = pc.check_live_meta_kit({"html": ""})
        self.assertEqual(list(m), ["title", "description", "canonical", "lang", "robots", "noindex", "nosnippet",
                                   "og", "problems"])
        self.assertEqual(list(m["og"]), ["title", "description", "image", "type"])
        self.assertEqual(list(m["problems"][0]), ["code", "message", "fix"])
        l = pc.llms_txt_kit({"status": 404})
        self.assertEqual(list(l), ["found", "ok", "is_html", "title", "summary", "links", "sections", "problems"])

    def test_markup_order_and_folded_names(self):
        # encoding/json matches struct fields case-insensitively, with
        # U+017F folding to "s"; Go's output for the same input.
        got = pc.generate_markup_kit({"facts": {
            "url": "https://acme.test/", "NAME": "Acme Widgets", "same_as": ["https://x.test/"],
            "\u017ftreet": "1 Road", "opening_hours": ["Mo-Fr 09:00-17:00"], "telephone": "+1 503 555 0142",
            "email": "a@acme.test", "description": "Widgets.", "logo": "https://acme.test/l.png",
            "latitude": "45.5", "longitude": "-122.6", "price_range": "$$", "country": "US", "city": "Portland"}})
        want = ('{"@context":"https://schema.org","@type":"LocalBusiness","name":"Acme Widgets",'
                '"description":"Widgets.","url":"https://acme.test/","logo":"https://acme.test/l.png",'
                '"telephone":"+1 503 555 0142","email":"a@acme.test","address":{"@type":"PostalAddress",'
                '"streetAddress":"1 Road","addressLocality":"Portland","addressCountry":"US"},'
                '"geo":{"@type":"GeoCoordinates","latitude":"45.5","longitude":"-122.6"},'
                '"openingHours":["Mo-Fr 09:00-17:00"],"priceRange":"$$","sameAs":["https://x.test/"]}')
        self.assertEqual(json.dumps(got, separators=(",", ":"), ensure_ascii=False), want)

    def test_markup_error_is_a_result(self):
        self.assertEqual(pc.generate_markup_kit({"facts": {}}), {"error": "facts.name is required"})

    def test_alt_null_accepted(self):
        self.assertIs(pc.meaningful_alt_kit({"alt": None}), False)
        self.assertIs(pc.meaningful_alt_kit({}), False)


FACTS_WHAT = ("an object of business facts (name, type, url, telephone, email, street, city, region, postal_code, "
              "country, opening_hours, price_range, same_as, description, logo, latitude, longitude)")
STATUS_WHAT = "an integer (the HTTP status of the /llms.txt fetch)"


class BadInputTest(unittest.TestCase):
    # (function, input as JSON text, Go's exact error text).
    CASES = [
        # TestKitRejectsBadInput's cases first.
        ("checkPageJsonLd", '{"html": "", "extra": 1}',
         "checkPageJsonLd: bad input: unknown field \"extra\" (allowed: html, url)"),
        ("checkPageJsonLd", '{"url": "https://a.example/"}',
         "checkPageJsonLd: bad input: field \"html\" is required (a string)"),
        ("checkPageJsonLd", '{"html": 3}',
         "checkPageJsonLd: bad input: field \"html\" must be a string, not a JSON number"),
        ("checkPageJsonLd", '{"html": null}',
         "checkPageJsonLd: bad input: field \"html\" must be a string, not null"),
        ("checkPageJsonLd", '[]',
         "checkPageJsonLd: bad input: want one JSON object"),
        ("validateSchemaLocally", '{}',
         "validateSchemaLocally: bad input: field \"object\" is required (any JSON value)"),
        ("checkLiveMeta", '{"html": "", "lang": "en"}',
         "checkLiveMeta: bad input: unknown field \"lang\" (allowed: html, url)"),
        ("hasMeaningfulAltText", '{"alt": 3}',
         "hasMeaningfulAltText: bad input: field \"alt\" must be a string or null, not a JSON number"),
        ("hasMeaningfulAltText", '{"alt": "x", "title": "y"}',
         "hasMeaningfulAltText: bad input: unknown field \"title\" (allowed: alt, src)"),
        ("llmsTxtCheck", '{"body": ""}',
         "llmsTxtCheck: bad input: field \"status\" is required (" + STATUS_WHAT + ")"),
        ("llmsTxtCheck", '{"status": "200"}',
         "llmsTxtCheck: bad input: field \"status\" must be " + STATUS_WHAT + ", not a JSON string"),
        ("generateSchemaMarkup", '{"facts": {"name": "A", "phone": "1"}}',
         "generateSchemaMarkup: bad input: field \"facts\" has an unknown field \"phone\"; it must be " + FACTS_WHAT),
        ("generateSchemaMarkup", '{}',
         "generateSchemaMarkup: bad input: field \"facts\" is required (" + FACTS_WHAT + ")"),
        # More, checked against Go.
        ("checkPageJsonLd", 'null',
         "checkPageJsonLd: bad input: want one JSON object"),
        ("checkPageJsonLd", '"x"',
         "checkPageJsonLd: bad input: want one JSON object"),
        ("checkPageJsonLd", '{"html": true}',
         "checkPageJsonLd: bad input: field \"html\" must be a string, not a JSON boolean"),
        ("checkPageJsonLd", '{"html": [1]}',
         "checkPageJsonLd: bad input: field \"html\" must be a string, not a JSON array"),
        ("checkPageJsonLd", '{"html": {}}',
         "checkPageJsonLd: bad input: field \"html\" must be a string, not a JSON object"),
        # Unknown fields are reported in sorted order, before missing ones.
        ("checkPageJsonLd", '{"zz": 1, "aa": 2}',
         "checkPageJsonLd: bad input: unknown field \"aa\" (allowed: html, url)"),
        # %q quoting: printable characters as they are, others escaped.
        ("checkPageJsonLd", '{"html": "", "\\u00e9\\n\\u0007\\u200b\\ud800": 1}',
         "checkPageJsonLd: bad input: unknown field \"é\\n\\a\\u200b�\" (allowed: html, url)"),
        ("checkPageJsonLd", '{"html": "", "\\u0000\\u007f\\ud83d\\ude00\\u00ad\\u2028 ": 1}',
         "checkPageJsonLd: bad input: unknown field \"\\x00\\x7f😀\\u00ad\\u2028 \" (allowed: html, url)"),
        # U+31350 is a letter since Unicode 15.0 (Go), U+0378 unassigned.
        ("checkPageJsonLd", '{"html": "", "\\ud884\\udf50\\u0378": 1}',
         "checkPageJsonLd: bad input: unknown field \"𱍐\\u0378\" (allowed: html, url)"),
        ("hasMeaningfulAltText", '{"alt": [3]}',
         "hasMeaningfulAltText: bad input: field \"alt\" must be a string or null, not a JSON array"),
        ("hasMeaningfulAltText", '{"src": null}',
         "hasMeaningfulAltText: bad input: field \"src\" must be a string, not null"),
        ("llmsTxtCheck", '{"status": 1.5}',
         "llmsTxtCheck: bad input: field \"status\" must be " + STATUS_WHAT + ", not a number with a fraction or exponent"),
        ("llmsTxtCheck", '{"status": true}',
         "llmsTxtCheck: bad input: field \"status\" must be " + STATUS_WHAT + ", not a JSON boolean"),
        ("llmsTxtCheck", '{"status": 99999999999999999999}',
         "llmsTxtCheck: bad input: field \"status\" must be " + STATUS_WHAT + ", not a number with a fraction or exponent"),
        ("llmsTxtCheck", '{"status": {}}',
         "llmsTxtCheck: bad input: field \"status\" must be " + STATUS_WHAT + ", not a JSON object"),
        ("generateSchemaMarkup", '{"facts": {"name": 3, "phone": "1"}}',
         "generateSchemaMarkup: bad input: field \"facts\": \"name\" must be a string, not a JSON number"),
        ("generateSchemaMarkup", '{"facts": {"zz": 1, "name": 3}}',
         "generateSchemaMarkup: bad input: field \"facts\" has an unknown field \"zz\"; it must be " + FACTS_WHAT),
        ("generateSchemaMarkup", '{"facts": {"NAME": 3}}',
         "generateSchemaMarkup: bad input: field \"facts\": \"name\" must be a string, not a JSON number"),
        ("generateSchemaMarkup", '{"facts": {"ſtreet": "1 Road", "name": "Acme", "Key": 1}}',
         "generateSchemaMarkup: bad input: field \"facts\" has an unknown field \"Key\"; it must be " + FACTS_WHAT),
        ("generateSchemaMarkup", '{"facts": {"opening_hours": ["Mo 09:00-10:00", 3]}}',
         "generateSchemaMarkup: bad input: field \"facts\": \"opening_hours\" must be a string, not a JSON number"),
        ("generateSchemaMarkup", '{"facts": {"opening_hours": "x"}}',
         "generateSchemaMarkup: bad input: field \"facts\": \"opening_hours\" must be a list of strings, not a JSON string"),
        ("generateSchemaMarkup", '{"facts": {"same_as": [true]}}',
         "generateSchemaMarkup: bad input: field \"facts\": \"same_as\" must be a string, not a JSON boolean"),
        ("generateSchemaMarkup", '{"facts": "x"}',
         "generateSchemaMarkup: bad input: field \"facts\" must be " + FACTS_WHAT + ", not a JSON string"),
        ("generateSchemaMarkup", '{"facts": []}',
         "generateSchemaMarkup: bad input: field \"facts\" must be " + FACTS_WHAT + ", not a JSON array"),
        ("generateSchemaMarkup", '{"facts": null}',
         "generateSchemaMarkup: bad input: field \"facts\" must be " + FACTS_WHAT + ", not null"),
    ]

    def test_errors(self):
        for fn, text, want in self.CASES:
            with self.subTest(fn=fn, input=text):
                with self.assertRaises(ValueError) as cm:
                    pc.KIT_FUNCTIONS[fn](json.loads(text))
                self.assertEqual(str(cm.exception), want)
                self.assertTrue(str(cm.exception).startswith(fn + ": "))

    def test_number_text(self):
        # Number text only matters to the position of validateSchemaLocally's
        # depth error: loads_input keeps it as written (as Go sees it), plain
        # json.loads gives repr() of the float.
        deep = "[" * 101 + "]" * 101
        text = '{"object": {"a": 1e2, "b": %s}}' % deep
        with self.assertRaises(ValueError) as cm:
            pc.validate_schema_kit(pc.loads_input(text))
        self.assertEqual(str(cm.exception),
                         "validateSchemaLocally: bad input: nesting too deep at line 1, column 113 (offset 112)")
        with self.assertRaises(ValueError) as cm:
            pc.validate_schema_kit(json.loads(text))
        self.assertEqual(str(cm.exception),
                         "validateSchemaLocally: bad input: nesting too deep at line 1, column 115 (offset 114)")

    def test_ints_accepted(self):
        self.assertEqual(pc.llms_txt_kit({"status": -0})["problems"][0]["message"],
                         "Fetching /llms.txt gave HTTP status 0.")
        self.assertEqual(pc.llms_txt_kit({"status": 9223372036854775807})["problems"][0]["code"], "bad_status")
        with self.assertRaises(ValueError):
            pc.llms_txt_kit({"status": 9223372036854775808})

    def test_null_facts_members(self):
        # null members leave Go's zero values; null list entries are "".
        got = pc.generate_markup_kit(json.loads(
            '{"facts": {"opening_hours": [null, "Mo 09:00-10:00"], "name": "Acme Widgets", "street": "x",'
            ' "same_as": null, "city": null}}'))
        self.assertEqual(canon(got), canon({
            "@context": "https://schema.org", "@type": "LocalBusiness", "name": "Acme Widgets",
            "address": {"@type": "PostalAddress", "streetAddress": "x"}, "openingHours": ["Mo 09:00-10:00"]}))

    def test_validate_depth(self):
        # Go's ParseJSON refuses more than 100 levels; the position is in the
        # compact JSON text of the value.
        x = []
        for _ in range(149):
            x = [x]
        with self.assertRaises(ValueError) as cm:
            pc.validate_schema_kit({"object": x})
        self.assertEqual(str(cm.exception),
                         "validateSchemaLocally: bad input: nesting too deep at line 1, column 101 (offset 100)")
        with self.assertRaises(ValueError) as cm:
            pc.validate_schema_kit({"object": {"a": "\u00e9", "b": x}})
        self.assertEqual(str(cm.exception),
                         "validateSchemaLocally: bad input: nesting too deep at line 1, column 113 (offset 113)")
        y = []
        for _ in range(99):
            y = [y]
        self.assertEqual(pc.validate_schema_kit({"object": y})["errors"][0]["code"], "not_object")

    def test_validate_numbers(self):
        # 1e-400 is 0 (bad position), 2e400 is +Inf (bad position), a huge
        # integer is a number.
        obj = pc.loads_input(
            '{"@context":"https://schema.org","@type":"BreadcrumbList","itemListElement":['
            '{"@type":"ListItem","position":1e-400,"name":"a","item":"https://a.test/"},'
            '{"@type":"ListItem","position":2e400,"name":"b","item":"https://b.test/"},'
            '{"@type":"ListItem","position":3.0,"name":"c","item":"https://c.test/"},'
            '{"@type":"ListItem","position":100000000000000000000000000000000000000000000000000000000000000000000'
            '0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000'
            '0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000'
            '0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000,'
            '"name":"d"}]}')
        for o in (obj, json.loads(json.dumps(obj))):
            got = pc.validate_schema_kit({"object": o})
            self.assertEqual([(f["code"], f["path"]) for f in got["errors"]], [
                ("bad_position", "$.itemListElement[0].position"),
                ("bad_position", "$.itemListElement[1].position"),
                ("bad_position", "$.itemListElement[3].position")])
            self.assertEqual(got["warnings"], [])


class ParseJSONTest(unittest.TestCase):
    def test_values(self):
        v = pc.parse_json(' {"a": [1.50, -0, 1e5, true, false, null], "b": "\\u00e9\\ud83d\\ude00\\ud800\\u0041",'
                          ' "a": {"x": "\\/\\b\\f\\n\\r\\t"}} ')
        self.assertEqual(v, {"a": {"x": "/\b\f\n\r\t"}, "b": "\u00e9\U0001f600\ufffdA"})
        n = pc.parse_json("[1.50, -0, 1E+5]")
        self.assertEqual([x.text for x in n], ["1.50", "-0", "1E+5"])
        self.assertEqual(float(pc.parse_json("1e400")), float("inf"))
        self.assertEqual(pc.parse_json('"\\ud800\\ud800\\udc00"'), "\ufffd\U00010000")

    def test_errors(self):
        # (text, message, line, column, offset), as Go's ParseJSON gives them.
        for text, msg, line, col, off in [
            ("", "unexpected end of input", 1, 1, 0),
            ("  ", "unexpected end of input", 1, 3, 2),
            ('{"a":1,}', "expected string key, found '}'", 1, 8, 7),
            ('{"a" 1}', "expected ':' after object key, found '1'", 1, 6, 5),
            ('{"a":1 "b"}', "expected ',' or '}' after object member, found '\"'", 1, 8, 7),
            ("[1 2]", "expected ',' or ']' after array element, found '2'", 1, 4, 3),
            ("[1,]", "expected value, found ']'", 1, 4, 3),
            ('{"caf\u00e9": x}', "expected value, found 'x'", 1, 10, 10),
            ('{"a":\n  "\u00e9\U0001f600\x01"}', "control character in string", 2, 6, 15),
            ('"\\q"', "invalid escape sequence", 1, 2, 1),
            ('"\\u12x4"', "invalid escape sequence", 1, 2, 1),
            ('"\\u12', "unexpected end of input", 1, 6, 5),
            ('"\\', "unexpected end of input", 1, 3, 2),
            ('"\\ud800\\uzzzz"', "invalid escape sequence", 1, 8, 7),
            ("tru", "unexpected end of input", 1, 4, 3),
            ("trux", "invalid literal", 1, 4, 3),
            ("nul1", "invalid literal", 1, 4, 3),
            ("-", "unexpected end of input", 1, 2, 1),
            ("-a", "invalid number", 1, 2, 1),
            ("1.", "unexpected end of input", 1, 3, 2),
            ("1.e5", "invalid number", 1, 3, 2),
            ("1e+", "unexpected end of input", 1, 4, 3),
            ("01", "unexpected '1' after JSON value", 1, 2, 1),
            ("{} {}", "unexpected '{' after JSON value", 1, 4, 3),
            ("\ufeff{}", "expected value, found U+FEFF", 1, 1, 0),
            ("\x7f", "expected value, found U+007F", 1, 1, 0),
            ("\x85", "expected value, found U+0085", 1, 1, 0),
            ("'a'", "expected value, found '''", 1, 1, 0),
            ("{\"a\":1}\n\n\u00e9", "unexpected '\u00e9' after JSON value", 3, 1, 9),
            ("[" * 101, "nesting too deep", 1, 101, 100),
            ("[" * 100, "unexpected end of input", 1, 101, 100),
            ('{"a":' * 100 + "{", "nesting too deep", 1, 501, 500),
        ]:
            with self.subTest(text=text):
                with self.assertRaises(pc.JSONError) as cm:
                    pc.parse_json(text)
                e = cm.exception
                self.assertEqual((e.message, e.line, e.column, e.offset), (msg, line, col, off))
                self.assertEqual(str(e), "%s at line %d, column %d (offset %d)" % (msg, line, col, off))
                self.assertEqual(e.to_dict(), {"message": msg, "line": line, "column": col, "offset": off})

    def test_depth_limit(self):
        v = pc.parse_json("[" * 100 + "]" * 100)
        depth = 0
        while isinstance(v, list):
            depth += 1
            v = v[0] if v else None
        self.assertEqual(depth, 100)


class ScanTest(unittest.TestCase):
    def toks(self, s):
        return [(t.kind, t.name, t.attrs, t.start, t.end, t.content_start, t.content_end) for t in pc.scan(s)]

    def test_tokens(self):
        T, S, E, C, B, R = (pc.TOK_TEXT, pc.TOK_START_TAG, pc.TOK_END_TAG, pc.TOK_COMMENT, pc.TOK_BOGUS,
                            pc.TOK_RAW_TEXT)
        # Expected values from Go's Scan (ASCII input, so offsets agree).
        for html, want in [
            ("<a b=1>x<!--y-->", [(S, "a", [("b", "1")], 0, 7, 0, 7), (T, "", None, 7, 8, 7, 8),
                                  (C, "", None, 8, 16, 12, 13)]),
            ("<!-->a<!--->b<!--c", [(C, "", None, 0, 5, 4, 4), (T, "", None, 5, 6, 5, 6),
                                    (C, "", None, 6, 12, 10, 10), (T, "", None, 12, 13, 12, 13),
                                    (C, "", None, 13, 18, 17, 18)]),
            ("<!doctype html><?x?></ p></1>< p", [(B, "", None, 0, 15, 0, 15), (B, "", None, 15, 20, 15, 20),
                                                 (B, "", None, 20, 25, 20, 25), (B, "", None, 25, 29, 25, 29),
                                                 (T, "", None, 29, 32, 29, 32)]),
            ("<P Class='x' class=y B = \"&amp;&lt\" c d=e/f =g>", [
                (S, "p", [("class", "x"), ("b", "&&lt"), ("c", ""), ("d", "e/f"), ("g", "")], 0, 47, 0, 47)]),
            ("<SCRIPT type=x>a</script b><p>", [(S, "script", [("type", "x")], 0, 15, 0, 15),
                                                (R, "script", None, 15, 16, 15, 16),
                                                (E, "script", None, 16, 27, 16, 27), (S, "p", [], 27, 30, 27, 30)]),
            ("<title>a</titlex></TITLE", [(S, "title", [], 0, 7, 0, 7), (R, "title", None, 7, 17, 7, 17),
                                          (E, "title", None, 17, 24, 17, 24)]),
            ("<style>a", [(S, "style", [], 0, 7, 0, 7), (R, "style", None, 7, 8, 7, 8)]),
            ("x</p", [(T, "", None, 0, 1, 0, 1)]),
            ("x<p a='b>", [(T, "", None, 0, 1, 0, 1)]),
            ("x<p a=", [(T, "", None, 0, 1, 0, 1)]),
            ("a<", [(T, "", None, 0, 2, 0, 2)]),
            ("</>", [(B, "", None, 0, 3, 0, 3)]),
        ]:
            with self.subTest(html=html):
                self.assertEqual(self.toks(html), want)

    def test_attr(self):
        t = pc.scan("<meta name=a NAME=b content>")[0]
        self.assertEqual(t.attr("name"), ("a", True))
        self.assertEqual(t.attr("content"), ("", True))
        self.assertEqual(t.attr("x"), ("", False))


class TextTest(unittest.TestCase):
    def test_entities(self):
        for given, want in [
            ("&amp;lt;", "&lt;"),
            ("&#x110000;&#0;&#xD800;&#65;&#x41;&#X41;&nbsp", "\ufffd\ufffd\ufffdAAA&nbsp"),
            ("&AMP;&amp&#;&#x;&#99999999999999999999;&apos;&quot;&nbsp;", "&AMP;&amp&#;&#x;\ufffd'\"\u00a0"),
            ("&#128512;&#x85;", "\U0001f600\x85"),
        ]:
            with self.subTest(given=given):
                self.assertEqual(pc.decode_entities(given), want)

    def test_extract_text(self):
        self.assertEqual(pc.extract_text("<p>a\u00a0\u00a0b</p><script>x</script><noscript>y</noscript>c\x0bd"
                                         "\u2028e<br>f&nbsp;g"), "a b c d\u2028e f g")
        self.assertEqual(pc.extract_text("<template><p>x</template>y"), "y")
        long = "ab " * 10000
        self.assertEqual(len(pc.extract_text(long)), 20000)
        self.assertEqual(pc.extract_text("a " * 10001), "a " * 9999 + "a")  # the space at the cut is trimmed
        self.assertEqual(pc.extract_text("\u00e9" * 20001), "\u00e9" * 20000)

    def test_placeholders(self):
        for given, want in [
            ("today", None), ("TODO: fix", "TODO"), ("todos", None), ("Sampler", None), (" Sample ", "Sample"),
            ("9123-456-78901", None), ("call 123-456-7890", "123-456-7890"), ("myexample.com", None),
            ("info@Example.com", "Example.com"), ("example.community", None), ("XXXX-XXX", "XXXX"),
            ("{{ name }}", "{{ name }}"), ("%NAME_X%", "%NAME_X%"), ("[Phone Number]", "[Phone Number]"),
            ("[your city, state]", "[your city, state]"), ("Caf\u00e9 xxx", "xxx"),
        ]:
            with self.subTest(given=given):
                self.assertEqual(pc.find_placeholder(given), want)

    def test_unicode_letters(self):
        # Letters new in Unicode 15.0 count as letters, as in Go 1.26.
        self.assertIs(pc.meaningful_alt("\U00031350\U00031351"), True)
        self.assertIs(pc.meaningful_alt("\u0cf3\u0cf3"), False)  # U+0CF3 is a mark, not a letter
        self.assertIs(pc.meaningful_alt("12 34"), False)
        self.assertIs(pc.meaningful_alt("\u00e9t\u00e9"), True)

    def test_urls_and_dates(self):
        self.assertTrue(pc.is_absolute_url("HTTPS://a.example/x?y#z"))
        self.assertFalse(pc.is_absolute_url("https://a.example/\n"))
        self.assertFalse(pc.is_absolute_url("https://a.example/ x"))
        self.assertTrue(pc.is_iso_date("2024-02-29T10:00"))
        self.assertFalse(pc.is_iso_date("2023-02-29"))
        self.assertFalse(pc.is_iso_date("2024-01-05\n"))
        self.assertFalse(pc.is_iso_date("2024-01-05T08:00:00+24:00"))

    def test_surrogates_become_replacement(self):
        r = pc.check_page_jsonld_kit({"html": "<title>\ud800</title>"})
        self.assertEqual(r["text"], "\ufffd")


class GoUnitTablesTest(unittest.TestCase):
    """The tables of the Go package's unit_test.go."""

    DATES = [
        ("2024-01-05", ""),
        ("2024-02-29", ""),
        ("2000-02-29", ""),
        ("1900-02-29", "bad_date"),
        ("2023-02-29", "bad_date"),
        ("2024-04-31", "bad_date"),
        ("2024-12-31", ""),
        ("2024-13-01", "bad_date"),
        ("2024-00-10", "bad_date"),
        ("2024-01-00", "bad_date"),
        ("2024-1-5", "bad_date"),
        ("24-01-05", "bad_date"),
        ("2024/01/05", "bad_date"),
        ("05.01.2024", "bad_date"),
        ("January 5, 2024", "bad_date"),
        ("2024-01-05T08:00", "missing_timezone"),
        ("2024-01-05T08:00:00", "missing_timezone"),
        ("2024-01-05T08:00:00.123456", "missing_timezone"),
        ("2024-01-05T08:00:00Z", ""),
        ("2024-01-05T08:00Z", ""),
        ("2024-01-05T08:00:00+01:00", ""),
        ("2024-01-05T08:00:00-0530", ""),
        ("2024-01-05T08:00:00+01", ""),
        ("2024-01-05T23:59:59+23:59", ""),
        ("2024-01-05T24:00:00Z", "bad_date"),
        ("2024-01-05T08:60:00Z", "bad_date"),
        ("2024-01-05T08:00:60Z", "bad_date"),
        ("2024-01-05T08:00:00+24:00", "bad_date"),
        ("2024-01-05T08:00:00+01:60", "bad_date"),
        ("2024-01-05T08:00:00+1", "bad_date"),
        ("2024-01-05t08:00:00Z", "bad_date"),
        ("2024-01-05 08:00:00Z", "bad_date"),
        ("2024-01-05T08", "bad_date"),
        ("2024-01-05Z", "bad_date"),
        ("2024-01-05T08:00:00z", "bad_date"),
        ("2024-01-05T08:00:00.Z", "bad_date"),
        ("", "bad_date"),
        ("\uff12\uff10\uff12\uff14-01-05", "bad_date"),
    ]
    PLACEHOLDERS = [
        ("", None),
        ("Harbor Street Bakery", None),
        ("Hello {{ name }}!", "{{ name }}"),
        ("{{}}", "{{}}"),
        ("{{a{b}}", None),
        ("Call %PHONE_NUMBER%", "%PHONE_NUMBER%"),
        ("%ab%", None),
        ("100% of 50%", None),
        ("[Your Business Name] in [City]", "[Your Business Name]"),
        ("[CITY]", "[CITY]"),
        ("[Insert address]", "[Insert address]"),
        ("[citation needed]", None),
        ("Lorem ipsum dolor sit amet", "Lorem ipsum"),
        ("Our TODO list", "TODO"),
        ("today", None),
        ("todos", None),
        ("TBD.", "TBD"),
        ("fixme!", "fixme"),
        ("Photo by John Doe", "John Doe"),
        ("123 Main Street, Anytown", "123 Main Street"),
        ("123 Main St., Anytown", "123 Main St"),
        ("Anytown, USA", "Anytown"),
        ("XXX-XXXX", "XXX"),
        ("xx", None),
        ("Exxxon", None),
        ("box xxxl", None),
        ("  Sample  ", "Sample"),
        ("free samples", None),
        ("Sampler", None),
        ("N/A", "N/A"),
        ("name", "name"),
        ("Name:", None),
        ("Test", "Test"),
        ("Test drive", None),
        ("Call 123-456-7890", "123-456-7890"),
        ("9123-456-78901", None),
        ("(555) 555-0199", "(555) 555-"),
        ("+1 555-555-5555", "555-555-5555"),
        ("info@example.com", "example.com"),
        ("https://www.example.com/page", "example.com"),
        ("myexample.com", None),
        ("example.community", None),
        ("example.com.au", "example.com"),
        ("shop.yourdomain.com", "yourdomain.com"),
        ("https://schema.org", None),
    ]
    ABSOLUTE_URLS = [
        ("https://a.example", True),
        ("https://a.example/", True),
        ("HTTP://A.EXAMPLE/x?y#z", True),
        ("https://a.example?q", True),
        ("https://a.example#f", True),
        ("https://user@a.example:8443/p", True),
        ("https://", False),
        ("https:///path", False),
        ("https://a.example/with space", False),
        (" https://a.example/", False),
        ("ftp://a.example/", False),
        ("//a.example/", False),
        ("/path", False),
        ("a.example", False),
        ("mailto:a@b.example", False),
        ("https:a.example", False),
    ]
    NORMALIZED_URLS = [
        ("HTTPS://WWW.A.Example", "https://www.a.example/"),
        ("https://a.example:443/X#f", "https://a.example/X"),
        ("http://a.example:80/", "http://a.example/"),
        ("http://a.example:443/", "http://a.example:443/"),
        ("https://a.example:80/", "https://a.example:80/"),
        ("https://a.example/?q=1#f", "https://a.example/?q=1"),
        ("/relative", "/relative"),
    ]
    RESOLVE_BASE = "HTTP://A.example/blog/post.html?x#y"
    RESOLVED_URLS = [
        (RESOLVE_BASE, "/img/a.png", "http://A.example/img/a.png"),
        (RESOLVE_BASE, "img/a.png", "http://A.example/blog/img/a.png"),
        (RESOLVE_BASE, "../a.png", "http://A.example/blog/../a.png"),
        (RESOLVE_BASE, "?page=2", "http://A.example/blog/post.html?page=2"),
        (RESOLVE_BASE, "#top", "http://A.example/blog/post.html#top"),
        (RESOLVE_BASE, "//cdn.example/a.png", "http://cdn.example/a.png"),
        (RESOLVE_BASE, "www.facebook.com/page", "https://www.facebook.com/page"),
        (RESOLVE_BASE, "facebook.com/page", "https://facebook.com/page"),
        (RESOLVE_BASE, "facebook.com", "http://A.example/blog/facebook.com"),
        ("https://a.example", "x", "https://a.example/x"),
        ("", "/x", "https://<your-domain>/x"),
        ("", "x", "https://<your-domain>/x"),
        ("not a url", "?q", "https://<your-domain>/?q"),
    ]
    COORDS = [
        ("0", 90, True),
        ("-0", 90, True),
        ("45.5152", 90, True),
        ("90", 90, True),
        ("90.000", 90, True),
        ("-90", 90, True),
        ("90.0001", 90, False),
        ("91", 90, False),
        ("180", 180, True),
        ("-180.5", 180, False),
        ("00000179.9", 180, True),
        ("1000", 180, False),
        ("1e2", 180, False),
        ("+45", 90, False),
        ("45.", 90, False),
        (".5", 90, False),
        ("", 90, False),
    ]
    TEXTS = [
        ("", ""),
        ("<p>a</p><p>b</p>", "a b"),
        ("<span>a</span><span>b</span>", "ab"),
        ("a<br>b", "a b"),
        ("x<script>var a = '<p>';</script>y", "x y"),
        ("x<style>p{}</style>y<noscript><p>no js</p></noscript>z", "x y z"),
        ("<template><b>t</b></template>shown", "shown"),
        ("a<!-- hidden -->b", "ab"),
        ("<title>T &amp; U</title><textarea>v</textarea>", "T & U v"),
        ("&lt;b&gt;", "<b>"),
    ]
    SCANS = [
        ("", ""),
        ("plain", "text[0,5]"),
        ("a < b", "text[0,5]"),
        ("x<", "text[0,2]"),
        ("<p>hi</p>", "start:p[0,3] text[3,5] end:p[5,9]"),
        ("<P CLASS=Big>", "start:p class=\"Big\"[0,13]"),
        ("<img src='a.png' alt=\"x &amp; y\" data-x=1 hidden>", "start:img src=\"a.png\" alt=\"x & y\" data-x=\"1\" hidden=\"\"[0,49]"),
        ("<a href = \"x\" HREF=\"y\">", "start:a href=\"x\"[0,23]"),
        ("<br/>", "start:br[0,5]"),
        ("<a =x b>", "start:a x=\"\" b=\"\"[0,8]"),
        ("<a b=c/>", "start:a b=\"c/\"[0,8]"),
        ("<a b=\"unterminated>text", ""),
        ("text<a b", "text[0,4]"),
        ("<a b=", ""),
        ("<!-- c -->x", "comment[0,10](\" c \") text[10,11]"),
        ("<!-->x", "comment[0,5](\"\") text[5,6]"),
        ("<!--->x", "comment[0,6](\"\") text[6,7]"),
        ("<!-- open", "comment[0,9](\" open\")"),
        ("<!doctype html><?xml x?>", "bogus[0,15] bogus[15,24]"),
        ("</ x>y", "bogus[0,5] text[5,6]"),
        ("</3>", "bogus[0,4]"),
        ("</", "bogus[0,2]"),
        ("<!", "bogus[0,2]"),
        ("</div class=x>", "end:div[0,14]"),
        ("a</div", "text[0,1]"),
        ("<3 <a", "text[0,3]"),
        ("<script>if (a<b) x='</p>';</script >z", "start:script[0,8] raw:script[8,26](\"if (a<b) x='</p>';\") end:script[26,36] text[36,37]"),
        ("<SCRIPT>a</scripts></Script>", "start:script[0,8] raw:script[8,19](\"a</scripts>\") end:script[19,28]"),
        ("<style>a", "start:style[0,7] raw:style[7,8](\"a\")"),
        ("<title>a</title", "start:title[0,7] raw:title[7,8](\"a\") end:title[8,15]"),
        ("<textarea></textarea/>", "start:textarea[0,10] raw:textarea[10,10](\"\") end:textarea[10,22]"),
        ("<title>", "start:title[0,7] raw:title[7,7](\"\")"),
    ]


    def tok_string(self, s, toks):
        kinds = ["text", "start", "end", "comment", "bogus", "raw"]
        parts = []
        for t in toks:
            p = kinds[t.kind]
            if t.name:
                p += ":" + t.name
            for n, v in t.attrs or ():
                p += " %s=%s" % (n, pc._go_quote(v))
            p += "[%d,%d]" % (t.start, t.end)
            if t.kind in (pc.TOK_COMMENT, pc.TOK_RAW_TEXT):
                p += "(%s)" % pc._go_quote(s[t.content_start:t.content_end])
            parts.append(p)
        return " ".join(parts)

    def test_scan(self):
        for given, want in self.SCANS:
            with self.subTest(given=given):
                self.assertEqual(self.tok_string(given, pc.scan(given)), want)

    def test_scan_many_attributes(self):
        parts = ["<div"]
        want = []
        for i in range(40):
            parts.append(" a%d=v%d" % (i, i))
            want.append(("a%d" % i, "v%d" % i))
            if i % 7 == 0:
                parts.append(" A%d=dup A0=dup" % (i // 2))
            if i == 30:
                parts.append(" late=1")
                want.append(("late", "1"))
        parts.append(" LATE=2>")
        toks = pc.scan("".join(parts))
        self.assertEqual(len(toks), 1)
        self.assertEqual(toks[0].attrs, want)

    def test_dates(self):
        for given, want in self.DATES:
            with self.subTest(given=given):
                self.assertEqual(pc._date_problem(given), want)
                self.assertEqual(pc.is_iso_date(given), want != "bad_date")

    def test_placeholders(self):
        for given, want in self.PLACEHOLDERS:
            with self.subTest(given=given):
                self.assertEqual(pc.find_placeholder(given), want)

    def test_urls(self):
        for given, want in self.ABSOLUTE_URLS:
            with self.subTest(given=given):
                self.assertEqual(pc.is_absolute_url(given), want)
        for given, want in self.NORMALIZED_URLS:
            with self.subTest(given=given):
                self.assertEqual(pc._normalize_url(given), want)
        for base, ref, want in self.RESOLVED_URLS:
            with self.subTest(base=base, ref=ref):
                self.assertEqual(pc._resolve_url(base, ref), want)

    def test_coords(self):
        for given, limit, want in self.COORDS:
            with self.subTest(given=given, limit=limit):
                self.assertEqual(pc._coord_ok(given, limit), want)

    def test_extract_text(self):
        for given, want in self.TEXTS:
            with self.subTest(given=given):
                self.assertEqual(pc.extract_text(given), want)


class MarkupEmailTest(unittest.TestCase):
    """_is_email_address agrees with _RE_EMAIL without its quadratic
    backtracking over a long domain."""

    def test_same_as_the_regex(self):
        # Every string of up to 7 characters over a small alphabet, then
        # each space character the regex forbids in each part.
        import itertools
        for n in range(8):
            for t in itertools.product(("a", ".", "@", " ", "\v", "\u00e9"), repeat=n):
                s = "".join(t)
                self.assertEqual(pc._is_email_address(s), pc._RE_EMAIL.match(s) is not None, repr(s))
        for c in " \t\n\v\f\r":
            for s in ("a" + c + "@b.c", "a@b" + c + ".c", "a@b." + c + "c", "a@b.c" + c, "a@b.c"):
                self.assertEqual(pc._is_email_address(s), pc._RE_EMAIL.match(s) is not None, repr(s))

    def test_long_domain_is_read_once(self):
        # Alone, the regex tries each full stop of the domain as the last
        # one and reads on to the space or second "@" each time: quadratic.
        # _is_email_address turns such strings away before the regex runs,
        # and runs it once on the others.
        counting = CountingRegex(pc._RE_EMAIL)
        calls = counting.calls
        pc._RE_EMAIL = counting
        try:
            cases = [("a@" + "." * 20000 + c + "x", False, 0) for c in " \t\n\v\f\r"]
            cases += [("a@" + ".a" * 10000 + "@", False, 0), ("a@" + "." * 20000 + "a", True, 1),
                      ("a@" + "." * 20000, True, 1), ("a" * 20000, False, 1)]
            for s, want, runs in cases:
                calls.clear()
                self.assertEqual(pc._is_email_address(s), want, s[:20])
                self.assertEqual(len(calls), runs, s[:20])
        finally:
            pc._RE_EMAIL = counting.real
        self.assertEqual(pc.generate_markup_kit({"facts": {"name": "Acme", "email": "a@" + "." * 20000 + " x"}}),
                         {"error": "facts.email must be an email address"})


if __name__ == "__main__":
    unittest.main()
