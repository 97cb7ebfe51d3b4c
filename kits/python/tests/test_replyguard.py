"""Tests of boxd_sitecheck.replyguard: the shared checkReply and
isHealthcareBusiness fixtures, the safe replies, the kit error table and unit
tests of offsets, normalisation and ASCII-only case mapping.

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
FIXTURES = os.path.join(HERE, "..", "..", "..", "testdata", "sitecheck")
MODULE = os.path.join(HERE, "..", "boxd_sitecheck", "replyguard.py")
# The one source of the word lists: the file the Go package embeds.
GO_LISTS = os.path.join(HERE, "..", "..", "..", "pipelines", "sitecheck", "replyguard", "lists.json")


def _load_replyguard():
    spec = importlib.util.spec_from_file_location("boxd_sitecheck_replyguard_under_test", MODULE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rg = _load_replyguard()


def _load_fixtures(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


def _canon(v):
    """JSON text with sorted keys: a type-aware comparison (True is not 1)."""
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


class FixtureTest(unittest.TestCase):
    def run_fixtures(self, name, fn, minimum):
        cases = _load_fixtures(name)
        self.assertGreaterEqual(len(cases), minimum)
        seen = set()
        for case in cases:
            cname = case["name"]
            self.assertTrue(cname and cname not in seen, "fixture case name %r is empty or repeated" % cname)
            seen.add(cname)
            with self.subTest(name=cname):
                got = rg.KIT_FUNCTIONS[fn](case["input"])
                self.assertEqual(_canon(got), _canon(case["want"]))
                # Same keys in the same order as the Go JSON.
                self.assertEqual(json.dumps(got), json.dumps(case["want"]))

    def test_check_reply(self):
        self.run_fixtures("check_reply.json", "checkReply", 80)

    def test_is_healthcare_business(self):
        self.run_fixtures("is_healthcare_business.json", "isHealthcareBusiness", 30)

    def test_kit_functions(self):
        self.assertEqual(sorted(rg.KIT_FUNCTIONS), ["checkReply", "isHealthcareBusiness"])
        self.assertIs(rg.KIT_FUNCTIONS["checkReply"], rg.check_reply)
        self.assertIs(rg.KIT_FUNCTIONS["isHealthcareBusiness"], rg.is_healthcare_business)


class CheckTest(unittest.TestCase):
    def test_result_key_order(self):
        r = rg.check_reply({"review": "x", "rating": 1, "business_name": "Shop", "reply": "Call XXX now."})
        self.assertEqual(list(r), ["ok", "healthcare", "problems", "blocked"])
        self.assertEqual(list(r["problems"][0]), ["code", "severity", "message", "phrase", "start", "end"])

    def test_offsets_are_code_points(self):
        reply = "\U0001F600\U0001F600 \u201cThanks\u201d \u2014 call 555-123-4567 \u00e9"
        r = rg.check("ok", 3, "Shop", reply)
        self.assertEqual(len(r["problems"]), 1, r["problems"])
        p = r["problems"][0]
        self.assertEqual((p["start"], p["end"], p["phrase"]), (19, 31, "555-123-4567"))
        self.assertEqual(reply[p["start"]:p["end"]], p["phrase"])

    def test_normalisation_keeps_length(self):
        r = rg.check("x", 2, "Shop", "\U0001F600 Enjoy \uff04\uff15 off.")
        self.assertEqual([(p["code"], p["start"], p["end"], p["phrase"]) for p in r["problems"]],
                         [("offer", 8, 14, "\uff04\uff15 off")])

    def test_curly_quotes_match_phrases(self):
        for reply in ["That's not true.", "That\u2019s not true.", "That\u02bcs not true.", "THAT'S NOT TRUE."]:
            with self.subTest(reply=reply):
                r = rg.check("bad", 1, "Shop", reply)
                self.assertEqual(len(r["problems"]), 1)
                self.assertEqual(r["problems"][0]["code"], "arguing")
                self.assertEqual(r["problems"][0]["end"], 15)

    def test_problems_sorted_and_blocked_deduplicated(self):
        r = rg.check("x", 1, "Shop", "Call XXX or XXX, free, free.")
        self.assertEqual(r["blocked"], ["XXX", "free"])
        self.assertIs(r["ok"], False)
        starts = [p["start"] for p in r["problems"]]
        self.assertEqual(starts, sorted(starts))

    def test_warnings_keep_ok(self):
        r = rg.check("cold", 2, "Shop", "You are wrong, we have been open 30 years.")
        self.assertIs(r["ok"], True)
        self.assertEqual(len(r["problems"]), 2)
        self.assertEqual(r["blocked"], [])

    def test_lower_casing_is_ascii_only(self):
        # str.lower() would turn U+0130 into "i" plus a combining dot; Go keeps it.
        r = rg.check("x", 3, "Shop", "Lorem \u0130psum and lorem ipsum.")
        self.assertEqual([p["phrase"] for p in r["problems"]], ["lorem ipsum"])
        self.assertIs(rg.is_healthcare("DENTAL"), True)
        self.assertIs(rg.is_healthcare("D\u0130NTAL"), False)

    def test_too_long_counts_code_points(self):
        reply = "Thanks! " + "\U0001F600" * (rg.MAX_REPLY_LENGTH - 8)
        self.assertEqual(rg.check("x", 5, "Shop", reply)["problems"], [])
        r = rg.check("x", 5, "Shop", reply + "\U0001F600")
        self.assertEqual([p["code"] for p in r["problems"]], ["too_long"])

    def test_lone_surrogate_is_replacement_character(self):
        r = rg.check("x", 5, "Shop", "\ud800 Call XXX")
        self.assertEqual(r["blocked"], ["XXX"])
        self.assertEqual(r["problems"][0]["start"], 7)

    def test_is_healthcare(self):
        self.assertIs(rg.is_healthcare("Bright Smile Dental", ""), True)
        self.assertIs(rg.is_healthcare("Joe's Pizza", "MedicalClinic"), True)
        self.assertIs(rg.is_healthcare("Jane Roe, M.D.", ""), True)
        self.assertIs(rg.is_healthcare("Happy Paws Veterinary Clinic", ""), False)
        self.assertIs(rg.is_healthcare("Tony's Pizza", "Restaurant"), False)
        self.assertIs(rg.is_healthcare("", ""), False)

    def test_safe_reply_passes(self):
        """The fallback reply passes for every business of the fixtures, with
        each fixture's review, except for the English-only refusal when the
        review itself is not English."""
        for case in _load_fixtures("check_reply.json"):
            inp = case["input"]
            bt = inp.get("business_type") or ""
            for hc in (rg.is_healthcare(inp["business_name"], bt), True, False):
                with self.subTest(name=case["name"], healthcare=hc):
                    reply = rg.safe_reply(inp["business_name"], hc)
                    r = rg.check(inp["review"], inp["rating"], inp["business_name"], reply, bt)
                    probs = r["problems"]
                    if (len(probs) == 1 and probs[0]["code"] == "non_english"
                            and probs[0]["message"] == "the review is not in English; the reply guard checks English only"):
                        continue
                    self.assertEqual(probs, [])
        self.assertNotEqual(rg.safe_reply("X", True), rg.safe_reply("X", False))


CR_FIELDS = "review, rating, business_name, business_type, reply"
HC_FIELDS = "business_name, business_type"
REVIEW_REQUIRED = 'checkReply: "review" is required: the review text as a string ("" for a rating-only review)'
RATING_REQUIRED = 'checkReply: "rating" is required: the review\'s star rating, a whole number from 1 to 5'
RATING_BAD = 'checkReply: "rating" must be a whole number from 1 to 5, not '
NAME_REQUIRED = 'checkReply: "business_name" is required: the business\'s name as a non-empty string'
REPLY_REQUIRED = 'checkReply: "reply" is required: the reply text as a string'
NOT_OBJECT = "checkReply: the input must be a JSON object with the fields " + CR_FIELDS

# The error table of the Go TestKitErrors, as decoded JSON, with the full
# messages the Go adapters give. Inputs the Go test gives as invalid JSON text
# or with data after the object cannot reach a function that takes a decoded
# value.
KIT_ERRORS = [
    ("checkReply", {"review": "a", "rating": 5, "business_name": "B", "reply": "r", "extra": 1},
     'checkReply: unknown field "extra"; the allowed fields are ' + CR_FIELDS),
    ("checkReply", {"rating": 5, "business_name": "B", "reply": "r"}, REVIEW_REQUIRED),
    ("checkReply", {"review": None, "rating": 5, "business_name": "B", "reply": "r"}, REVIEW_REQUIRED),
    ("checkReply", {"review": "a", "business_name": "B", "reply": "r"}, RATING_REQUIRED),
    ("checkReply", {"review": "a", "rating": None, "business_name": "B", "reply": "r"}, RATING_REQUIRED),
    ("checkReply", {"review": "a", "rating": 6, "business_name": "B", "reply": "r"}, RATING_BAD + "6"),
    ("checkReply", {"review": "a", "rating": 0, "business_name": "B", "reply": "r"}, RATING_BAD + "0"),
    ("checkReply", {"review": "a", "rating": 4.5, "business_name": "B", "reply": "r"}, RATING_BAD + "4.5"),
    ("checkReply", {"review": "a", "rating": 6.0, "business_name": "B", "reply": "r"}, RATING_BAD + "6.0"),
    ("checkReply", {"review": "a", "rating": "5", "business_name": "B", "reply": "r"}, RATING_BAD + '"5"'),
    # Python's True is an int; Go's raw JSON true is not a number.
    ("checkReply", {"review": "a", "rating": True, "business_name": "B", "reply": "r"}, RATING_BAD + "true"),
    ("checkReply", {"review": "a", "rating": {"a": 1}, "business_name": "B", "reply": "r"}, RATING_BAD + '{"a":1}'),
    ("checkReply", {"review": "a", "rating": 10 ** 30, "business_name": "B", "reply": "r"},
     RATING_BAD + "1000000000000000000000000000000"),
    ("checkReply", {"review": "a", "rating": 5, "business_name": " ", "reply": "r"}, NAME_REQUIRED),
    ("checkReply", {"review": "a", "rating": 5, "business_name": "\u3000\u00a0\u0085\t", "reply": "r"}, NAME_REQUIRED),
    ("checkReply", {"review": "a", "rating": 5, "business_name": None, "reply": "r"}, NAME_REQUIRED),
    ("checkReply", {"review": "a", "rating": 5, "business_name": "B"}, REPLY_REQUIRED),
    ("checkReply", {"review": "a", "rating": 5, "business_name": "B", "reply": None}, REPLY_REQUIRED),
    ("checkReply", {"review": 1, "rating": 5, "business_name": "B", "reply": "r"},
     'checkReply: "review" must be a string, not a JSON number'),
    ("checkReply", {"REVIEW": True}, 'checkReply: "review" must be a string, not a JSON bool'),
    ("checkReply", {"review": [1]}, 'checkReply: "review" must be a string, not a JSON array'),
    ("checkReply", {"review": "a", "business_name": {}}, 'checkReply: "business_name" must be a string, not a JSON object'),
    ("checkReply", {"review": "a", "rating": 5, "business_name": "B", "reply": "r", "business_type": False},
     'checkReply: "business_type" must be a string, not a JSON bool'),
    ("checkReply", {"review": 1, "extra": 1}, 'checkReply: "review" must be a string, not a JSON number'),
    ("checkReply", {"extra": 1, "review": 1}, 'checkReply: unknown field "extra"; the allowed fields are ' + CR_FIELDS),
    ("checkReply", {"rating": 9, "review": 1}, 'checkReply: "review" must be a string, not a JSON number'),
    ("checkReply", {"review": "a", "\u00e9x\n\u0001": 1},
     'checkReply: unknown field "\u00e9x\\n\\x01"; the allowed fields are ' + CR_FIELDS),
    ("checkReply", [1], NOT_OBJECT),
    ("checkReply", None, NOT_OBJECT),
    ("checkReply", "x", NOT_OBJECT),
    ("checkReply", 1, NOT_OBJECT),
    ("isHealthcareBusiness", {"business_type": "Dentist"},
     'isHealthcareBusiness: "business_name" is required: the business\'s name as a string'),
    ("isHealthcareBusiness", {"business_name": None},
     'isHealthcareBusiness: "business_name" is required: the business\'s name as a string'),
    ("isHealthcareBusiness", {"business_name": "A", "type": "x"},
     'isHealthcareBusiness: unknown field "type"; the allowed fields are ' + HC_FIELDS),
    ("isHealthcareBusiness", {"business_name": "A", "business_type": 7},
     'isHealthcareBusiness: "business_type" must be a string, not a JSON number'),
    ("isHealthcareBusiness", {"business_name": True},
     'isHealthcareBusiness: "business_name" must be a string, not a JSON bool'),
    ("isHealthcareBusiness", [],
     "isHealthcareBusiness: the input must be a JSON object with the fields " + HC_FIELDS),
]


def _assert_same_as_finditer(test, find, rx, seed, alphabet):
    """Checks a linear scan against rg._find_all(rx, ...) (finditer) on
    20,000 seeded random strings of up to 30 pieces of alphabet."""
    import random
    r = random.Random(seed)
    for _ in range(20000):
        s = "".join(r.choice(alphabet) for _ in range(r.randint(0, 30)))
        test.assertEqual(find(s), rg._find_all(rx, s), repr(s))


def _assert_few_runs(test, find, name, max_runs, cases):
    """Runs find on each (text, spans) case with the module regex rg.<name>
    counted: the spans must match and the regex run at most max_runs times
    (finditer would try it at every position of the hostile run)."""
    counting = CountingRegex(getattr(rg, name))
    setattr(rg, name, counting)
    try:
        for s, want in cases:
            counting.calls.clear()
            test.assertEqual(find(s), want, s[:20])
            test.assertLessEqual(len(counting.calls), max_runs, (s[:20], len(counting.calls)))
    finally:
        setattr(rg, name, counting.real)


class URLScanTest(unittest.TestCase):
    """_find_urls finds exactly what finditer finds, without its quadratic
    retries on long dotted runs."""

    def test_same_matches_as_finditer(self):
        _assert_same_as_finditer(self, rg._find_urls, rg._RE_URL, 7, list("a.c.o.m/w.h:t-p s1") + ["www.", "http://", "https://", ".com", ".co", "..", ".io/x"])

    def test_long_runs_are_tried_once(self):
        # finditer tries the regex at every one of the 10,000+ positions and
        # backtracks over the run from each.
        _assert_few_runs(self, rg._find_urls, "_RE_URL", 4, [
            ("a." * 10000, []), ("ab-" * 6000 + ".", []), ("1." * 10000, []),
            ("x." * 5000 + "www.a " + "y." * 5000, [(10000, 10005)]),
            ("x." * 5000 + "com", [(0, 10003)])])


class EmailScanTest(unittest.TestCase):
    """_find_emails finds exactly what finditer finds, without its quadratic
    retries on long runs of local-part characters."""

    def test_same_matches_as_finditer(self):
        _assert_same_as_finditer(self, rg._find_emails, rg._RE_EMAIL, 11, list("ab1.-_+%@@ !") + ["@a.co", ".com", "x@y", "..", "a.b", "@b.c1d"])

    def test_long_runs_are_tried_once(self):
        # finditer tries the regex at every one of the 10,000+ positions and
        # reads to the end of the run from each.
        _assert_few_runs(self, rg._find_emails, "_RE_EMAIL", 2, [
            ("a" * 20000, []), ("a" * 20000 + "@", []), ("1a" * 10000 + "@", []),
            ("a@" + "a." * 10000 + "!", []),
            ("x" * 10000 + "@a.com " + "y" * 10000 + "@", [(0, 10006)]),
            ("a@b.cc" + "1." * 10000 + "@d.ee", [(0, 6), (6, 20011)])])


class OfferScanTest(unittest.TestCase):
    """_find_offers finds exactly what finditer finds, without its quadratic
    retries on long digit runs."""

    def test_same_matches_as_finditer(self):
        _assert_same_as_finditer(self, rg._find_offers, rg._RE_OFFER, 13, list("129.,$ %xo") + ["off", " off", "percent", "per", "$ ", "1.5", "% off"])

    def test_long_digit_runs_are_tried_once(self):
        # finditer tries the regex at every one of the 20,000 digits and
        # reads to the end of the run and back from each.
        _assert_few_runs(self, rg._find_offers, "_RE_OFFER", 2, [
            ("1" * 20000, []), ("1" * 20000 + "% of", []),
            ("1" * 10000 + "." + "2" * 10000 + " percent", []), ("$ " + "1" * 20000, []),
            ("9" * 20000 + "% off", [(0, 20005)]), ("$" + "5" * 20000 + " off", [(0, 20005)])])


class KitErrorTest(unittest.TestCase):
    def test_errors(self):
        for fn, inp, want in KIT_ERRORS:
            with self.subTest(fn=fn, input=inp):
                with self.assertRaises(ValueError) as cm:
                    rg.KIT_FUNCTIONS[fn](inp)
                self.assertEqual(str(cm.exception), want)

    def test_accepted(self):
        ok = [
            {"review": "", "rating": 5.0, "business_name": "B", "business_type": None, "reply": "Thanks!"},
            {"review": "a", "rating": 1, "business_name": "B", "business_type": "Dentist", "reply": ""},
            # Keys match case-insensitively, with Unicode simple folding (U+017F is "s").
            {"Review": "a", "RATING": 3, "bu\u017finess_name": "B", "Reply": "r"},
            # U+FEFF, U+200B and U+001C are not white space to Go's strings.TrimSpace.
            {"review": "a", "rating": 3, "business_name": "\ufeff", "reply": "r"},
            {"review": "a", "rating": 3, "business_name": "\u200b", "reply": "r"},
            {"review": "a", "rating": 3, "business_name": "\u001c", "reply": "r"},
        ]
        for inp in ok:
            with self.subTest(input=inp):
                r = rg.check_reply(inp)
                self.assertIn("ok", r)
        self.assertIs(rg.is_healthcare_business({"business_name": "", "business_type": None}), False)
        self.assertIs(rg.is_healthcare_business({"business_name": "Smile", "business_type": "Dentist"}), True)


class ListsTest(unittest.TestCase):
    def test_kit_reads_the_lists_go_embeds(self):
        with open(GO_LISTS, encoding="utf-8") as f:
            go_lists = json.load(f)
        self.assertEqual(
            rg._LISTS, go_lists,
            "boxd_sitecheck/replyguard_lists.json differs from pipelines/sitecheck/replyguard/lists.json: "
            "run go generate ./pipelines/sitecheck/replyguard")

    def test_tables_hold_every_listed_phrase_and_word(self):
        lists = rg._LISTS
        for key, table in [
            ("offer_phrases", rg._OFFER_PHRASES), ("arguing_phrases", rg._ARGUING_PHRASES),
            ("placeholder_phrases", rg._PLACEHOLDER_PHRASES), ("phi_phrases", rg._PHI_PHRASES),
            ("health_keywords", rg._HEALTH_KEYWORDS), ("veterinary_words", rg._VETERINARY_WORDS),
        ]:
            got = sorted((cat, " ".join(words)) for entries in table.values() for words, cat in entries)
            want = sorted((g["category"], p) for g in lists[key] for p in g["phrases"])
            self.assertTrue(want, key)
            self.assertEqual(got, want, key)
        for key, words in [
            ("health_credentials", rg._HEALTH_CREDENTIALS), ("titles", rg._TITLES),
            ("common_words", rg._COMMON_WORDS), ("star_words", rg._STAR_WORDS),
            ("english_words", rg._ENGLISH_WORDS), ("foreign_words", rg._FOREIGN_WORDS),
        ]:
            self.assertTrue(lists[key], key)
            self.assertEqual(words, frozenset(lists[key]), key)
        self.assertEqual(rg._NUMBER_WORDS, lists["number_words"])


if __name__ == "__main__":
    unittest.main()
