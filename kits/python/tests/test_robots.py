"""Tests of boxd_sitecheck.robots: the shared robotsAccess fixture plus unit
tests of normalisation, parsing and the size limit.

    cd kits/python && python3 -m unittest discover -s tests -v

The module is loaded from its file, so the test does not depend on the
package's __init__.py.
"""

import importlib.util
import json
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "..", "..", "testdata", "sitecheck", "robots_access.json")
MODULE = os.path.join(HERE, "..", "boxd_sitecheck", "robots.py")


def _load_robots():
    spec = importlib.util.spec_from_file_location("boxd_sitecheck_robots_under_test", MODULE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


robots = _load_robots()


class FixtureTest(unittest.TestCase):
    def test_fixture(self):
        with open(FIXTURE, encoding="utf-8") as f:
            cases = json.load(f)
        self.assertGreaterEqual(len(cases), 170)
        seen = set()
        for case in cases:
            name = case["name"]
            self.assertTrue(name and name not in seen, "fixture case name %r is empty or repeated" % name)
            seen.add(name)
            with self.subTest(name=name):
                got = robots.robots_access(case["input"])
                self.assertEqual(got, case["want"])
                # Same keys in the same order as the Go JSON.
                self.assertEqual(json.dumps(got), json.dumps(case["want"]))


class NormalizeTest(unittest.TestCase):
    def test_normalize(self):
        for given, want in {
            b"": b"",
            b"/": b"/",
            b"/%62%61%7A": b"/baz",
            b"/%7e%7E%2d%2E": b"/~~-.",
            b"/%5f%30%39": b"/_09",
            b"/%2f%2F": b"/%2F%2F",
            b"/%3a%3F%3d": b"/%3A%3F%3D",
            b"/%e3%83%84": b"/%E3%83%84",
            "/\u30c4".encode(): b"/%E3%83%84",
            "/\u00e9".encode(): b"/%C3%A9",
            b"/a*b$c": b"/a%2Ab%24c",
            b"/%2a%24": b"/%2A%24",
            b"/100%": b"/100%",
            b"/100%2": b"/100%2",
            b"/%zz%g1": b"/%zz%g1",
            b"/%2541": b"/%2541",
            b'/a b"<>{}|\\^': b'/a b"<>{}|\\^',
            b"/%20": b"/%20",
            b"/?q=%41&r=%2B": b"/?q=A&r=%2B",
            b"\xff\x80": b"%FF%80",
        }.items():
            with self.subTest(given=given):
                self.assertEqual(robots._normalize(given), want)

    def test_rule_length(self):
        for pattern, want in {
            "/": 1, "*": 1, "$": 1, "/$": 2, "/a*": 3, "/a**b": 5, "*.gif$": 6, "/%61%62": 3, "/%2f": 4,
            "/\u00fc": 7, "/a$b": 6, "/a$$": 6, "/file-%2A": 9, "/%E3%83%84": 10,
        }.items():
            with self.subTest(pattern=pattern):
                self.assertEqual(robots._Rule(False, pattern.encode()).length, want)

    def test_check_path_forms(self):
        r = robots.parse_robots("User-agent: *\nDisallow: /$\nDisallow: /caf\u00e9\n")
        self.assertEqual(robots.check_robots(r, "x", ""), {"allowed": False, "rule": "disallow: /$"})
        self.assertEqual(robots.check_robots(r, "x", "/caf%C3%A9"), {"allowed": False, "rule": "disallow: /caf\u00e9"})
        self.assertEqual(robots.check_robots(r, "x", b"/caf\xc3\xa9"), {"allowed": False, "rule": "disallow: /caf\u00e9"})
        self.assertEqual(robots.check_robots(None, "x", "/"), {"allowed": True, "rule": ""})


class ParseTest(unittest.TestCase):
    def test_product_token(self):
        for given, want in {
            "GPTBot": b"gptbot", "GPTBot/1.1": b"gptbot", "GPTBot extra": b"gptbot", "  GPTBot\t": b"gptbot",
            "GPTBot2": b"gptbot", "GPTBot-Extra": b"gptbot-extra", "Claude_Bot": b"claude_bot", "*": b"",
            "*bot": b"", "123": b"", "": b"", "\u00a0GPTBot": b"", "Mozilla/5.0 x": b"mozilla",
            # ASCII-only lower-casing: the Kelvin sign is not "k".
            "\u212aBot": b"",
        }.items():
            with self.subTest(given=given):
                self.assertEqual(robots._product_token(given.encode()), want)

    def test_only_spaces_and_tabs_trimmed(self):
        # A vertical tab, form feed or no-break space is part of the value.
        for ws in ("\v", "\f", "\u00a0", "\u3000"):
            with self.subTest(ws=ws):
                r = robots.parse_robots("User-agent: *\nDisallow: /x" + ws + "\n")
                d = robots.check_robots(r, "x", "/x")
                self.assertTrue(d["allowed"])
                self.assertEqual(d["rule"], "")
        r = robots.parse_robots("User-agent: *\n\tDISSALLOW :   /a%7e b$  \t# c\n")
        self.assertEqual(robots.check_robots(r, "x", "/a~ b"), {"allowed": False, "rule": "disallow: /a%7e b$"})

    def test_line_endings(self):
        r = robots.parse_robots("User-agent: a\rUser-agent: b\r\n\r\nAllow: /\rDisallow: *\r")
        self.assertEqual(robots.check_robots(r, "b", "/x"), {"allowed": True, "rule": "allow: /"})
        self.assertEqual(robots.check_robots(r, "a", "/x"), {"allowed": True, "rule": "allow: /"})
        self.assertEqual(robots.check_robots(r, "c", "/x"), {"allowed": True, "rule": ""})


def _pad_to(prefix, n):
    """prefix followed by comment lines, exactly n bytes long."""
    b = prefix.encode() if isinstance(prefix, str) else prefix
    parts = [b]
    size = len(b)
    while size < n:
        left = n - size
        k = min(left, 4096)
        if left - k == 1:
            k -= 1
        assert k >= 2
        parts.append(b"#" + b"p" * (k - 2) + b"\n")
        size += k
    out = b"".join(parts)
    assert len(out) == n
    return out


class LimitTest(unittest.TestCase):
    HEAD = "User-agent: *\nDisallow: /before\n"
    MAX = robots.MAX_BYTES

    def blocked(self, body, path):
        return not robots.check_robots(robots.parse_robots(body), "GPTBot", path)["allowed"]

    def test_max_bytes(self):
        self.assertEqual(self.MAX, 512000)

    def test_exactly_the_limit_is_all_parsed(self):
        body = _pad_to(self.HEAD, self.MAX - len(b"Disallow: /last")) + b"Disallow: /last"
        self.assertEqual(len(body), self.MAX)
        self.assertTrue(self.blocked(body, "/last"))
        self.assertTrue(self.blocked(body, "/before"))

    def test_cut_line_dropped(self):
        body = _pad_to(self.HEAD, self.MAX - len(b"Disallow: /la")) + b"Disallow: /last\n"
        self.assertFalse(self.blocked(body, "/la"))
        self.assertFalse(self.blocked(body, "/last"))
        self.assertTrue(self.blocked(body, "/before"))

    def test_break_past_the_limit_counts_as_cut(self):
        body = _pad_to(self.HEAD, self.MAX - len(b"Disallow: /edge")) + b"Disallow: /edge\n"
        self.assertEqual(len(body), self.MAX + 1)
        self.assertFalse(self.blocked(body, "/edge"))

    def test_break_on_last_byte_keeps_line(self):
        body = _pad_to(self.HEAD, self.MAX - len(b"Disallow: /edge\n")) + b"Disallow: /edge\nDisallow: /after\n"
        self.assertTrue(self.blocked(body, "/edge"))
        self.assertFalse(self.blocked(body, "/after"))

    def test_cr_on_last_byte_keeps_line(self):
        body = _pad_to(self.HEAD, self.MAX - len(b"Disallow: /crlf\r")) + b"Disallow: /crlf\r\nDisallow: /after\r\n"
        self.assertTrue(self.blocked(body, "/crlf"))
        self.assertFalse(self.blocked(body, "/after"))

    def test_bom_counts(self):
        bom = b"\xef\xbb\xbf"
        fits = bom + _pad_to(self.HEAD, self.MAX - 3 - len(b"Disallow: /b\n")) + b"Disallow: /b\nDisallow: /after\n"
        self.assertTrue(self.blocked(fits, "/b"))
        self.assertFalse(self.blocked(fits, "/after"))
        self.assertTrue(self.blocked(fits, "/before"))
        over = bom + _pad_to(self.HEAD, self.MAX - len(b"Disallow: /b\n")) + b"Disallow: /b\n"
        self.assertFalse(self.blocked(over, "/b"))

    def test_limit_counts_utf8_bytes_not_characters(self):
        # 2-byte characters: in characters the body is within the limit, in
        # bytes the last line lies past it.
        pad = "#" + "\u00e9" * 200000 + "\n"  # 400002 bytes, 200002 characters
        body = self.HEAD + pad + "#" + "x" * 200000 + "\nDisallow: /late\n"
        self.assertLess(len(body), self.MAX)
        self.assertGreater(len(body.encode()), self.MAX)
        self.assertTrue(self.blocked(body, "/before"))
        self.assertFalse(self.blocked(body, "/late"))
        # The same through the kit function.
        rep = robots.robots_access({"robots_txt": body, "status": 200, "crawlers": ["GPTBot"], "paths": ["/late"]})
        self.assertEqual(rep["crawlers"][0]["paths"][0], {"path": "/late", "allowed": True, "rule": ""})

    def test_no_line_break_inside_limit_parses_nothing(self):
        body = "User-agent: * Disallow: /" + "x" * self.MAX + "\nUser-agent: *\nDisallow: /\n"
        self.assertFalse(self.blocked(body, "/"))

    def test_cr_only_body_at_the_limit(self):
        # Many CR-only lines: must parse in linear time.
        body = ("User-agent: *\rDisallow: /a\r" * 40000).encode()
        self.assertGreater(len(body), self.MAX)
        self.assertTrue(self.blocked(body, "/a"))


class KitInputTest(unittest.TestCase):
    def test_errors(self):
        for name, given, want in [
            ("unknown field", {"robots_txt": "", "status": 200, "agents": ["x"]}, 'unknown field "agents"'),
            ("missing status", {"robots_txt": ""}, '"status" is required'),
            ("null status", {"robots_txt": "", "status": None}, '"status" is required'),
            ("null input", None, '"status" is required'),
            ("string status", {"robots_txt": "", "status": "200"}, "bad input"),
            ("bool status", {"status": True}, "bad input"),
            ("float status", {"status": 200.0}, "bad input"),
            ("status out of int64", {"status": 1 << 63}, "bad input"),
            ("not an object", ["x"], "bad input"),
            ("number robots_txt", {"status": 200, "robots_txt": 5}, "bad input"),
            ("bool robots_txt", {"status": 200, "robots_txt": False}, "bad input"),
            ("string crawlers", {"status": 200, "crawlers": "GPTBot"}, "bad input"),
            ("number in crawlers", {"status": 200, "crawlers": [1]}, "bad input"),
            ("bool in paths", {"status": 200, "paths": [True]}, "bad input"),
            ("object paths", {"status": 200, "paths": {}}, "bad input"),
        ]:
            with self.subTest(name=name):
                with self.assertRaises(ValueError) as cm:
                    robots.robots_access(given)
                self.assertIn(want, str(cm.exception))

    def test_go_decoding_quirks(self):
        # Keys match fields case-insensitively; a null list element is "".
        rep = robots.robots_access({"Status": 404, "CRAWLERS": ["a", None], "paths": ["/"]})
        self.assertEqual(rep["fetch"], "not_found")
        self.assertEqual([c["crawler"] for c in rep["crawlers"]], ["a", ""])
        # A lone surrogate (a JSON escape can carry one) becomes U+FFFD.
        rep = robots.robots_access(json.loads('{"status": 200, "crawlers": ["\\ud800x"]}'))
        self.assertEqual(rep["crawlers"][0]["crawler"], "\ufffdx")
        # Status -1 and huge in-range values are unreachable.
        self.assertEqual(robots.robots_access({"status": -1})["fetch"], "unreachable")
        self.assertEqual(robots.robots_access({"status": (1 << 63) - 1})["fetch"], "unreachable")

    def test_ai_crawlers(self):
        self.assertEqual([c["token"] for c in robots.AI_CRAWLERS], [
            "GPTBot", "OAI-SearchBot", "ChatGPT-User", "ClaudeBot", "Claude-User", "Claude-SearchBot",
            "PerplexityBot", "Perplexity-User", "Google-Extended", "Applebot-Extended", "CCBot", "Bytespider",
            "meta-externalagent", "Amazonbot"])
        for c in robots.AI_CRAWLERS:
            self.assertEqual(list(c), ["token", "owner", "purpose"])
            self.assertIn(c["purpose"], ("training", "search", "user request"))
            self.assertEqual(robots._product_token(c["token"].encode()), c["token"].lower().encode())
        self.assertIs(robots.KIT_FUNCTIONS["robotsAccess"], robots.robots_access)


if __name__ == "__main__":
    unittest.main()
