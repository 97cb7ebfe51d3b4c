"""Python port of the Go package pipelines/sitecheck/replyguard.

The review-reply guard: a deterministic check of a drafted public reply to a
customer review (empty, too long, not English, offers, contact details,
numbers the review does not hold, placeholders, arguing, and for health and
care businesses anything that confirms a patient).

The module follows the Go code decision for decision (text.go is written to
be ported line for line) and is tested against the shared fixtures
testdata/sitecheck/check_reply.json and is_healthcare_business.json. The
word lists are read from replyguard_lists.json beside this module, a copy of
the file the Go package embeds.

All offsets are code point offsets (Python str indexes); lower-casing is
ASCII-only (A-Z), as in Go, never str.lower(); the regexes run on ASCII scan
strings, one character per code point, so Python's backtracking engine and
Go's RE2 find the same leftmost-first matches. A lone surrogate, which JSON
can carry as an escape, reads as U+FFFD, as in Go's JSON decoder.

Two look-ups are faster than Go's linear scans without changing any result:
phrase lists are indexed by first word, and overlap tests on the (always
disjoint) span lists are binary searches.

The kit functions take a decoded JSON value, which cannot show two things
Go's adapters see in the raw text: a key given twice (json.loads keeps the
last) and the exact spelling of a bad rating in its error message (the
decoded value's JSON form: 1E1 reads "10.0").

Standard library only.
"""

import bisect
import json
import math
import os
import re
import unicodedata

__all__ = [
    "MAX_REPLY_LENGTH",
    "check",
    "is_healthcare",
    "safe_reply",
    "check_reply",
    "is_healthcare_business",
    "KIT_FUNCTIONS",
]

# The longest reply, in code points, that passes without a too_long warning.
MAX_REPLY_LENGTH = 1000

# Problem codes.
_CODE_EMPTY = "empty"
_CODE_TOO_LONG = "too_long"
_CODE_NON_ENGLISH = "non_english"
_CODE_OFFER = "offer"
_CODE_CONTACT_DETAIL = "contact_detail"
_CODE_NUMBER_NOT_GIVEN = "number_not_given"
_CODE_PLACEHOLDER = "placeholder"
_CODE_ARGUING = "arguing"
_CODE_PHI_CONFIRMATION = "phi_confirmation"

# Severities. A reply with any block problem must not be posted.
_SEVERITY_BLOCK = "block"
_SEVERITY_WARN = "warn"

# Messages, verbatim from the Go code.
_MSG_EMPTY = "the reply is empty; write a reply before posting it"
_MSG_TOO_LONG = "the reply is longer than 1000 characters; shorten it"
_MSG_NON_ENGLISH_REVIEW = "the review is not in English; the reply guard checks English only"
_MSG_NON_ENGLISH_REPLY = "the reply is not in English; the reply guard checks English only"
_MSG_NON_ENGLISH_BOTH = "the review and the reply are not in English; the reply guard checks English only"
_MSG_OFFER = "offers a discount, refund, free service or other compensation in public; make any offer privately"
_MSG_NUMBER_NOT_GIVEN = "mentions a number the review does not contain"
_MSG_PLACEHOLDER = "contains a placeholder that must be filled in or removed"
_MSG_ARGUING = "argues with or blames the reviewer; acknowledge the feedback instead"
_CONTACT_KIND_EMAIL = "email"
_CONTACT_KIND_URL = "url"
_CONTACT_KIND_PHONE = "phone"
_CONTACT_KIND_ADDRESS = "address"
_PHONE_SEPARATOR_CHARS = " .-"
_NAME_JOIN_CHARS = " -'"
_TITLE_GAP_CHARS = ". "
_SENTENCE_END_CHARS = ".!?\n"

_CONTACT_MESSAGES = {
    _CONTACT_KIND_EMAIL: "gives an email address the review does not contain",
    _CONTACT_KIND_URL: "gives a web address the review does not contain",
    _CONTACT_KIND_PHONE: "gives a phone number the review does not contain",
    _CONTACT_KIND_ADDRESS: "gives a street address the review does not contain",
}

# The regexes run on the ASCII scan strings. They use no flags, no \b, \s,
# \d or \w, no look-around and no anchors, so RE2 and Python find the same
# leftmost-first matches. None of them matches the empty string.
_URL_PATH = r"(?:/[a-z0-9._~/?#=&%+-]*[a-z0-9_~/#=&%+-])?"
_RE_EMAIL = re.compile(r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}")
_RE_URL = re.compile(
    r"(?:https?://|www\.)[a-z0-9-]+(?:\.[a-z0-9-]+)*" + _URL_PATH
    + r"|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|edu|gov|info|biz|io|co|us|uk|ca|au|health|dental|care|clinic|dentist|doctor|app|site|online)"
    + _URL_PATH
)
_RE_PHONE = re.compile(r"(?:\+[0-9]+[ .-]?)?(?:\([0-9]+\)[ .-]?)?[0-9]+(?:[ .-][0-9]+)*")
_RE_ADDRESS = re.compile(
    r"[0-9]{1,6} (?:[A-Z][A-Za-z0-9.'-]* ){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Way|Court|Ct|Place|Pl|Parkway|Pkwy|Highway|Hwy|Terrace|Circle|Square|Sq)[^A-Za-z0-9]"
)
_RE_NUMBER = re.compile(r"[0-9]+(?:[.,:/][0-9]+)*")
_RE_OFFER = re.compile(r"(?:\$ ?[0-9]+(?:[.,][0-9]+)*|[0-9]+(?:\.[0-9]+)? ?(?:%|percent)) ?off")
_RE_BRACKET = re.compile(r"\{\{[^{}\n]{0,60}\}\}|\{[^{}\n]{1,60}\}|\[[^\[\]\n]{1,60}\]|<[^<>\n]{1,60}>")
_RE_CAPS = re.compile(r"XXX+|TODO|TBD|FIXME|TKTK")

_SURROGATE = re.compile("[\ud800-\udfff]")


def _go_string(s):
    """s as a Go string decoded from JSON: lone surrogates become U+FFFD."""
    return _SURROGATE.sub("\ufffd", s)


# ---------------------------------------------------------------------------
# Text model (text.go)


def _norm_rune(r):
    """Maps one code point (an int) to one code point; the length of a text
    never changes."""
    if r == 0x0D or r == 0x0A:
        return 0x0A
    if r < 0x20 or r == 0x7F:
        return 0x20
    if r < 0x80:
        return r
    if r == 0x85 or r == 0x2028 or r == 0x2029:
        return 0x0A
    if r == 0xA0 or r == 0x1680 or 0x2000 <= r <= 0x200A or r == 0x202F or r == 0x205F or r == 0x3000:
        return 0x20
    if r in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF):
        return 0x20
    if r in (0x2018, 0x2019, 0x201A, 0x201B, 0x2032, 0x02BC):
        return 0x27
    if r in (0x201C, 0x201D, 0x201E, 0x201F, 0x2033, 0xAB, 0xBB):
        return 0x22
    if 0x2010 <= r <= 0x2015 or r == 0x2212:
        return 0x2D
    if r == 0x2026:
        return 0x2E
    if r in (0xA3, 0xA5, 0x20AC):
        return 0x24
    if 0xFF01 <= r <= 0xFF5E:
        return r - 0xFEE0
    return r


# The non-ASCII code points counted as letters.
_FOREIGN_LETTER_RANGES = (
    (0x00C0, 0x00D6), (0x00D8, 0x00F6), (0x00F8, 0x024F),
    (0x0370, 0x03FF), (0x0400, 0x052F), (0x0530, 0x058F),
    (0x0590, 0x05FF), (0x0600, 0x06FF), (0x0900, 0x0DFF),
    (0x0E00, 0x0E7F), (0x1E00, 0x1EFF), (0x3040, 0x30FF),
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF),
)


def _is_foreign_letter(r):
    for lo, hi in _FOREIGN_LETTER_RANGES:
        if lo <= r <= hi:
            return True
    return False


def _is_ascii_letter(r):
    return 0x61 <= r <= 0x7A or 0x41 <= r <= 0x5A


def _is_digit(r):
    return 0x30 <= r <= 0x39


def _is_letter(r):
    return _is_ascii_letter(r) or _is_foreign_letter(r)


def _is_upper(r):
    return 0x41 <= r <= 0x5A


def _is_lower(r):
    return 0x61 <= r <= 0x7A


def _lower_ascii(r):
    """Lowers A-Z only; every other code point is kept."""
    return r + 0x20 if _is_upper(r) else r


_ASCII_LOWER = {c: c + 0x20 for c in range(0x41, 0x5B)}


def _lower_string(s):
    return s.translate(_ASCII_LOWER)


class _Token:
    """A maximal run of letters (a word) or of ASCII digits (a number).
    start and end are code point offsets, end exclusive; text is the
    normalised code points, lower the text with A-Z lowered."""

    __slots__ = ("start", "end", "text", "lower", "word")

    def __init__(self, start, end, text, lower, word):
        self.start = start
        self.end = end
        self.text = text
        self.lower = lower
        self.word = word


def _tokenize(norm):
    """Splits normalised code points (ints) into word and number tokens.
    Everything that is neither a letter nor an ASCII digit separates tokens;
    a letter next to a digit also ends the token ("3pm" is "3" and "pm")."""
    toks = []
    i = 0
    n = len(norm)
    while i < n:
        r = norm[i]
        if not _is_letter(r) and not _is_digit(r):
            i += 1
            continue
        word = _is_letter(r)
        j = i + 1
        while j < n:
            if word and not _is_letter(norm[j]):
                break
            if not word and not _is_digit(norm[j]):
                break
            j += 1
        s = "".join(map(chr, norm[i:j]))
        toks.append(_Token(i, j, s, _lower_string(s), word))
        i = j
    return toks


class _Text:
    """One analysed input string: the original code points, the normalised
    ones (ints), the ASCII scan strings (one character per code point, case
    kept and A-Z lowered) and the tokens."""

    __slots__ = ("orig", "norm", "scan_case", "scan_lower", "toks")

    def __init__(self, s):
        orig = _go_string(s)
        norm = [_norm_rune(ord(c)) for c in orig]
        sc = []
        for n in norm:
            if n < 0x80:
                sc.append(chr(n))
            elif _is_foreign_letter(n):
                sc.append("a")
            else:
                sc.append(" ")
        self.orig = orig
        self.norm = norm
        self.scan_case = "".join(sc)
        self.scan_lower = _lower_string(self.scan_case)
        self.toks = _tokenize(norm)

    def phrase(self, start, end):
        """The original code points in [start, end)."""
        return self.orig[start:end]

    def lower_slice(self, start, end):
        """The normalised, A-Z lowered text of [start, end)."""
        return "".join(chr(_lower_ascii(r)) for r in self.norm[start:end])

    def blank(self):
        """Whether the normalised text holds only spaces and newlines."""
        return all(r == 0x20 or r == 0x0A for r in self.norm)


class _Spans:
    """A list of spans, (start, end) tuples of half-open code point ranges.
    Every list the checks test for overlaps holds pairwise disjoint,
    non-empty spans (a span is added only when it overlaps none already
    there), so they are also kept sorted by start, with increasing ends, and
    an overlap test is a binary search where the Go code scans the list.
    items keeps the order of adding."""

    __slots__ = ("items", "_starts", "_ends")

    def __init__(self):
        self.items = []
        self._starts = []
        self._ends = []

    def overlaps(self, s):
        """Whether s overlaps a span of the list (Go's overlapsAny)."""
        i = bisect.bisect_left(self._starts, s[1])  # the spans starting before s ends
        return i > 0 and self._ends[i - 1] > s[0]

    def add(self, s):
        """Adds s, which must be non-empty and overlap no span of the list."""
        i = bisect.bisect_left(self._starts, s[0])
        self._starts.insert(i, s[0])
        self._ends.insert(i, s[1])
        self.items.append(s)

    def accept(self, s):
        """Adds s unless it overlaps a span already accepted (Go's acceptSpan)."""
        if not self.overlaps(s):
            self.add(s)


def _find_all(rx, scan):
    """The non-overlapping leftmost-first matches of rx in an ASCII scan
    string, as code point spans."""
    return [m.span() for m in rx.finditer(scan)]


_RE_DOMAIN_START = re.compile(r"[a-z0-9-]")
_RE_DOMAIN_RUN = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*")
_RE_URL_SCHEME = re.compile(r"https?://|www\.")


def _find_urls(scan):
    """_find_all(_RE_URL, scan), in linear time.

    Python's backtracking engine, left to finditer, retries the bare-domain
    branch at every position of a long dotted run with no known top-level
    domain ("a.a.a.…", "1.1.1.…"): quadratic, seconds on a 20,000-character
    reply, where Go's RE2 is linear. The matches are the same because the
    same regex decides at every position tried; only positions that cannot
    start a match are skipped: characters no branch can start with, and,
    once no match starts at the beginning q of a dotted run, the rest of
    that run, since any bare domain starting later in it is also reachable
    from q (the regex at q tries every split of the run into labels). A
    scheme or "www." inside the run is still tried."""
    out = []
    n = len(scan)
    q = 0
    dead_end = 0  # no bare domain starts before this (inside a failed run)
    scheme = -1  # start of the next scheme or "www." at or after q (n: none)
    while q < n:
        if q < dead_end:
            if scheme < q:
                m = _RE_URL_SCHEME.search(scan, q)
                scheme = n if m is None else m.start()
            if scheme >= dead_end:
                q = dead_end
                continue
            q = scheme
        else:
            m = _RE_DOMAIN_START.search(scan, q)
            if m is None:
                break
            q = m.start()
        hit = _RE_URL.match(scan, q)
        if hit is not None:
            out.append(hit.span())
            q = hit.end()
            continue
        if q >= dead_end:
            dead_end = _RE_DOMAIN_RUN.match(scan, q).end()
        q += 1
    return out


_RE_LOCAL_RUN = re.compile(r"[a-z0-9._%+-]+")


def _find_emails(scan):
    """_find_all(_RE_EMAIL, scan), in linear time.

    Left to finditer, the regex is tried at every position of a long run of
    local-part characters and reads to the end of the run each time
    ("aaaa…" with or without an "@" after it, "a@a.a.a.…!"): quadratic,
    where Go's RE2 is linear. The matches are the same because the same
    regex decides at every position tried; only positions that cannot start
    a match are skipped. A match starts with a local-part character, and
    "@" is none, so the local part from any start p in a maximal run of
    them ends where the run ends, at r, and needs an "@" there; what follows
    the "@" is matched the same way whatever p was. So either every start
    in [p, r) gives a match or none does: each run is tried once, from its
    first position not before the end of the last match, and not at all
    when no "@" follows it. Each attempt reads the run and the domain
    characters after its "@" (no "@" among them), so no text is read more
    than a few times."""
    out = []
    q = 0
    while True:
        run = _RE_LOCAL_RUN.search(scan, q)
        if run is None:
            break
        p, r = run.span()
        if scan.startswith("@", r):
            hit = _RE_EMAIL.match(scan, p)
            if hit is not None:
                out.append(hit.span())
                q = hit.end()
                continue
        q = r
    return out


_RE_OFFER_START = re.compile(r"[$0-9]")
_RE_DIGIT_RUN = re.compile(r"[0-9]+")


def _find_offers(scan):
    """_find_all(_RE_OFFER, scan), in linear time.

    Left to finditer, the percentage branch is tried at every digit of a
    long digit run ("1111…"), reading to the end of the run and back each
    time: quadratic, where Go's RE2 is linear. The matches are the same
    because the same regex decides at every position tried; only positions
    that cannot start a match are skipped: characters other than "$" and
    digits, and, once no match starts at a digit p, the rest of p's digit
    run. At a digit only the second branch can match, and its [0-9]+ may end
    anywhere in the run; from p it can end wherever it can from any later
    start p' in the run, and what follows that end is the same text, so a
    match at p' would mean a match at p (the regex at p tries every end).
    An attempt at "$" reads the number after it (which holds no "$"), one at
    a digit its run and at most the digits after a full stop that ends it,
    so no text is read more than a few times."""
    out = []
    q = 0
    while True:
        m = _RE_OFFER_START.search(scan, q)
        if m is None:
            break
        p = m.start()
        hit = _RE_OFFER.match(scan, p)
        if hit is not None:
            out.append(hit.span())
            q = hit.end()
        elif scan[p] == "$":
            q = p + 1
        else:
            q = _RE_DIGIT_RUN.match(scan, p).end()
    return out


def _is_alnum_char(c):
    return "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9"


def _alnum_before(scan, s):
    return s[0] > 0 and _is_alnum_char(scan[s[0] - 1])


def _alnum_after(scan, s):
    return s[1] < len(scan) and _is_alnum_char(scan[s[1]])


def _only_chars(s, chars, min_len, max_len):
    if len(s) < min_len or len(s) > max_len:
        return False
    return all(c in chars for c in s)


# ---------------------------------------------------------------------------
# Check (check.go)


def check(review, rating, business_name, reply, business_type=""):
    """The Go Check: runs the reply guard on one reply. Returns the result as
    a dict {"ok", "healthcare", "problems", "blocked"}, keys in the Go JSON
    order; each problem is {"code", "severity", "message", "phrase",
    "start", "end"} with code point offsets into the reply."""
    hc = is_healthcare(business_name, business_type)
    rp = _Text(reply)
    probs = []

    def add(code, sev, msg, s):
        probs.append({
            "code": code,
            "severity": sev,
            "message": msg,
            "phrase": rp.phrase(s[0], s[1]),
            "start": s[0],
            "end": s[1],
        })

    none = (0, 0)
    if rp.blank():
        add(_CODE_EMPTY, _SEVERITY_BLOCK, _MSG_EMPTY, none)
        return _finish(hc, probs)
    rv = _Text(review)
    bz = _Text(business_name)
    biz_words = {tk.lower for tk in bz.toks}

    # Whole-text checks.
    if len(rp.orig) > MAX_REPLY_LENGTH:
        add(_CODE_TOO_LONG, _SEVERITY_WARN, _MSG_TOO_LONG, none)
    rev_non = _non_english(rv, biz_words)
    rep_non = _non_english(rp, biz_words)
    if rev_non and rep_non:
        add(_CODE_NON_ENGLISH, _SEVERITY_BLOCK, _MSG_NON_ENGLISH_BOTH, none)
    elif rev_non:
        add(_CODE_NON_ENGLISH, _SEVERITY_BLOCK, _MSG_NON_ENGLISH_REVIEW, none)
    elif rep_non:
        add(_CODE_NON_ENGLISH, _SEVERITY_BLOCK, _MSG_NON_ENGLISH_REPLY, none)

    # Contact details.
    given_contacts = {kind + " " + canon for _, kind, canon in _find_contacts(rv)}
    biz_contacts = {kind + " " + canon for _, kind, canon in _find_contacts(bz)}
    contact_spans = _Spans()
    phi_repeat_contacts = []
    for s, kind, canon in _find_contacts(rp):
        contact_spans.add(s)
        key = kind + " " + canon
        if key in biz_contacts:
            pass
        elif key in given_contacts:
            if hc:
                phi_repeat_contacts.append((s, _CAT_REPEAT_CONTACT))
        else:
            add(_CODE_CONTACT_DETAIL, _SEVERITY_BLOCK, _CONTACT_MESSAGES[kind], s)

    # Tokens inside a mention of the business name or inside a contact
    # detail take no part in phrase, name or number-word matching.
    toks = rp.toks
    masked = [False] * len(toks)
    m = len(bz.toks)
    if m > 0:
        i = 0
        while i + m <= len(toks):
            ok = True
            for k in range(m):
                if toks[i + k].lower != bz.toks[k].lower:
                    ok = False
                    break
            if not ok:
                i += 1
                continue
            for k in range(m):
                masked[i + k] = True
            i += m
    for i, tk in enumerate(toks):
        if contact_spans.overlaps((tk.start, tk.end)):
            masked[i] = True

    def phrase_span(pm):
        return (toks[pm[0]].start, toks[pm[1]].end)

    # Placeholders.
    ph = _Spans()
    for s in _find_all(_RE_BRACKET, rp.scan_case):
        ph.accept(s)
    for s in _find_all(_RE_CAPS, rp.scan_case):
        if not _alnum_before(rp.scan_case, s) and not _alnum_after(rp.scan_case, s):
            ph.accept(s)
    for pm in _scan_phrases(toks, masked, _PLACEHOLDER_PHRASES):
        ph.accept(phrase_span(pm))
    for s in ph.items:
        add(_CODE_PLACEHOLDER, _SEVERITY_BLOCK, _MSG_PLACEHOLDER, s)

    # Offers.
    offers = _Spans()
    for s in _find_offers(rp.scan_lower):
        if not _alnum_after(rp.scan_lower, s):
            offers.accept(s)
    for pm in _scan_phrases(toks, masked, _OFFER_PHRASES):
        offers.accept(phrase_span(pm))
    for s in offers.items:
        add(_CODE_OFFER, _SEVERITY_BLOCK, _MSG_OFFER, s)

    # Arguing.
    for pm in _scan_phrases(toks, masked, _ARGUING_PHRASES):
        add(_CODE_ARGUING, _SEVERITY_WARN, _MSG_ARGUING, phrase_span(pm))

    # Numbers.
    given_numbers = {canon for _, canon in _find_numbers(rv, None)}
    biz_numbers = {canon for _, canon in _find_numbers(bz, None)}
    # Go's strconv.Itoa of the int rating (a whole float such as 5.0 reads "5").
    rating_text = str(int(rating)) if isinstance(rating, float) and rating.is_integer() else str(rating)
    number_severity = _SEVERITY_BLOCK if hc else _SEVERITY_WARN
    phi_repeat_numbers = []
    for s, canon in _find_numbers(rp, masked):
        if contact_spans.overlaps(s) or ph.overlaps(s) or offers.overlaps(s):
            continue
        if canon in biz_numbers:
            pass
        elif canon == rating_text and _next_is_star(toks, s[1]):
            pass
        elif canon in given_numbers:
            if hc:
                phi_repeat_numbers.append((s, _CAT_REPEAT_NUMBER))
        else:
            add(_CODE_NUMBER_NOT_GIVEN, number_severity, _MSG_NUMBER_NOT_GIVEN, s)

    # Health and care: nothing that confirms a patient.
    if hc:
        cands = [(phrase_span(pm), pm[2]) for pm in _scan_phrases(toks, masked, _PHI_PHRASES)]
        cands.extend(_find_names(rp, rv, masked, biz_words))
        cands.extend(phi_repeat_numbers)
        cands.extend(phi_repeat_contacts)
        accepted = _Spans()
        for s, cat in cands:
            if accepted.overlaps(s):
                continue
            accepted.add(s)
            add(_CODE_PHI_CONFIRMATION, _SEVERITY_BLOCK, _PHI_MESSAGES[cat], s)
    return _finish(hc, probs)


def _finish(hc, probs):
    """Orders the problems (stably) and fills ok and blocked."""
    probs = sorted(probs, key=lambda p: (p["start"], p["code"], p["end"], p["message"]))
    res = {"ok": True, "healthcare": hc, "problems": [], "blocked": []}
    seen = set()
    for p in probs:
        res["problems"].append(p)
        if p["severity"] != _SEVERITY_BLOCK:
            continue
        res["ok"] = False
        if p["phrase"] != "" and p["phrase"] not in seen:
            seen.add(p["phrase"])
            res["blocked"].append(p["phrase"])
    return res


def _phrase_list(groups):
    """Builds entries (words, category) from a list's groups ({"category",
    "phrases"}); category "" marks an exception: it matches, uses up its
    tokens and reports nothing. The entries are returned grouped by their
    first word, in list order within a group: only those can match at a
    token, which spares trying the whole list at every token as the Go code
    does."""
    out = {}
    for g in groups:
        cat = g["category"]
        for p in g["phrases"]:
            words = tuple(p.split())
            out.setdefault(words[0], []).append((words, cat))
    return out


def _match_at(toks, i, words, masked):
    """Whether words match the tokens from i on, none masked."""
    if i + len(words) > len(toks):
        return False
    for k, w in enumerate(words):
        if masked is not None and masked[i + k]:
            return False
        if toks[i + k].lower != w:
            return False
    return True


def _scan_phrases(toks, masked, entries):
    """Walks the tokens left to right. At each token it takes the longest
    phrase of the list that matches there (the first listed among equals); a
    match uses up its tokens, no match moves one token on. Returns (first,
    last, category) triples."""
    out = []
    i = 0
    while i < len(toks):
        best = None
        for words, cat in entries.get(toks[i].lower, ()):
            if (best is None or len(words) > len(best[0])) and _match_at(toks, i, words, masked):
                best = (words, cat)
        if best is None:
            i += 1
            continue
        words, cat = best
        if cat != "":
            out.append((i, i + len(words) - 1, cat))
        i += len(words)
    return out


def _non_english(t, biz_words):
    """The English test. Tokens that also occur in the business name are
    left out. A text is not English when more than a third of its letters
    are non-ASCII letters, or when it holds at least two words of the
    foreign list and more of them than words of the English list."""
    ascii_n = foreign = en = fo = 0
    for tk in t.toks:
        if not tk.word or tk.lower in biz_words:
            continue
        for ch in tk.text:
            if _is_ascii_letter(ord(ch)):
                ascii_n += 1
            else:
                foreign += 1
        if tk.lower in _ENGLISH_WORDS:
            en += 1
        if tk.lower in _FOREIGN_WORDS:
            fo += 1
    return (ascii_n + foreign > 0 and foreign * 3 > ascii_n + foreign) or (fo >= 2 and fo > en)


def _find_contacts(t):
    """Finds emails, then web addresses, then phone numbers, then street
    addresses; a later match that overlaps an earlier one is dropped.
    Returns (span, kind, canon) triples."""
    out = []
    spans = _Spans()

    def attempt(kind, s):
        if spans.overlaps(s):
            return
        spans.add(s)
        out.append((s, kind, _canon_contact(t, kind, s)))

    low = t.scan_lower
    # An email needs an "@", a web address a "." or "://"; texts without
    # them skip those scans.
    if "@" in low:
        for s in _find_emails(low):
            attempt(_CONTACT_KIND_EMAIL, s)
    if "." in low or "://" in low:
        for s in _find_urls(low):
            if not _alnum_after(low, s):
                attempt(_CONTACT_KIND_URL, s)
    for s in _find_all(_RE_PHONE, low):
        if not _alnum_before(low, s) and not _alnum_after(low, s) and _phone_shape(low[s[0]:s[1]]):
            attempt(_CONTACT_KIND_PHONE, s)
    for m in _find_all(_RE_ADDRESS, t.scan_case + " "):
        s = (m[0], m[1] - 1)
        if not _alnum_before(t.scan_case, s):
            attempt(_CONTACT_KIND_ADDRESS, s)
    return out


def _phone_shape(m):
    """Accepts 10 to 15 digits, or 7 digits written ddd-dddd (the separator
    a space, full stop or hyphen)."""
    digits = sum(1 for c in m if "0" <= c <= "9")
    if 10 <= digits <= 15:
        return True
    if digits != 7 or len(m) != 8 or m[3] not in _PHONE_SEPARATOR_CHARS:
        return False
    for i in range(8):
        if i != 3 and not ("0" <= m[i] <= "9"):
            return False
    return True


def _trim_prefix(s, p):
    return s[len(p):] if s.startswith(p) else s


def _canon_contact(t, kind, s):
    """The form compared between reply and review."""
    low = t.lower_slice(s[0], s[1])
    if kind == _CONTACT_KIND_URL:
        low = _trim_prefix(low, "https://")
        low = _trim_prefix(low, "http://")
        low = _trim_prefix(low, "www.")
        return low.rstrip("/")
    if kind == _CONTACT_KIND_PHONE:
        return "".join(c for c in low if "0" <= c <= "9")
    if kind == _CONTACT_KIND_ADDRESS:
        b = []
        gap = False
        for c in low:
            if "a" <= c <= "z" or "0" <= c <= "9":
                if gap and b:
                    b.append(" ")
                gap = False
                b.append(c)
            else:
                gap = True
        return "".join(b)
    return low


def _find_numbers(t, masked):
    """Finds digit numbers ("3", "3,000", "10:30", "3/14") and number words
    ("three"), by start, as (span, canon) pairs. Commas are dropped from the
    canonical form; number words map to their digits."""
    out = []
    for s in _find_all(_RE_NUMBER, t.scan_lower):
        out.append((s, t.scan_lower[s[0]:s[1]].replace(",", "")))
    for i, tk in enumerate(t.toks):
        if not tk.word or (masked is not None and masked[i]):
            continue
        v = _NUMBER_WORDS.get(tk.lower)
        if v is not None:
            out.append(((tk.start, tk.end), v))
    out.sort(key=lambda n: n[0][0])  # stable, as sort.SliceStable
    return out


def _next_is_star(toks, end):
    """Whether the first token at or after end is "star" or "stars"."""
    for tk in toks:
        if tk.start >= end:
            return tk.lower in _STAR_WORDS
    return False


def _find_names(rp, rv, masked, biz_words):
    """Finds names for the health check: a title followed by a capitalised
    word ("Dr. Patel", "Nurse Amy Lee"), and capitalised words that are not
    common words, not business-name words and either stand mid-sentence or
    also appear, spelt the same, in the review. Returns (span, category)
    pairs by start."""
    toks = rp.toks
    norm = rp.norm

    def gap(i):
        return "".join(map(chr, norm[toks[i - 1].end:toks[i].start]))

    def capital(tk):
        return tk.word and _is_upper(ord(tk.text[0]))

    def name_word(i):
        tk = toks[i]
        rs = tk.text
        return (not masked[i] and tk.word and len(rs) >= 2 and _is_upper(ord(rs[0])) and _is_lower(ord(rs[1]))
                and tk.lower not in _COMMON_WORDS and tk.lower not in biz_words)

    def initial(i):
        return i == 0 or any(c in _SENTENCE_END_CHARS for c in gap(i))

    review_words = {tk.text for tk in rv.toks if tk.word}

    def extend(j):
        while j + 1 < len(toks) and _only_chars(gap(j + 1), _NAME_JOIN_CHARS, 1, 1) and name_word(j + 1):
            j += 1
        return j

    used = [False] * len(toks)
    out = []
    i = 0
    while i + 1 < len(toks):
        if masked[i] or masked[i + 1] or not toks[i].word or toks[i].lower not in _TITLES:
            i += 1
            continue
        if (not capital(toks[i + 1]) or toks[i + 1].lower in biz_words
                or not _only_chars(gap(i + 1), _TITLE_GAP_CHARS, 1, 2)):
            i += 1
            continue
        last = extend(i + 1)
        for k in range(i, last + 1):
            used[k] = True
        out.append(((toks[i].start, toks[last].end), _CAT_NAME))
        i = last + 1
    i = 0
    while i < len(toks):
        if used[i] or not name_word(i) or (initial(i) and toks[i].text not in review_words):
            i += 1
            continue
        last = extend(i)
        k = i
        while k <= last and not used[k]:
            used[k] = True
            k += 1
        out.append(((toks[i].start, toks[last].end), _CAT_NAME))
        i = last + 1
    out.sort(key=lambda c: c[0][0])  # stable, as sort.SliceStable
    return out


# ---------------------------------------------------------------------------
# Health and care businesses (healthcare.go)


def _health_tokens(s):
    """Prepares a business name or type for the health test: full stops are
    removed, the text is normalised and tokenised, and word tokens are split
    where a lower-case ASCII letter is followed by an upper-case one."""
    t = _Text(s.replace(".", ""))
    out = []
    for tk in t.toks:
        rs = tk.text
        start = 0
        for k in range(1, len(rs) + 1):
            if k == len(rs) or (_is_lower(ord(rs[k - 1])) and _is_upper(ord(rs[k]))):
                part = rs[start:k]
                out.append(_Token(tk.start + start, tk.start + k, part, _lower_string(part), tk.word))
                start = k
    return out


def _contains_phrase(toks, entries):
    """Whether any entry matches consecutive tokens."""
    for i in range(len(toks)):
        for words, _ in entries.get(toks[i].lower, ()):
            if _match_at(toks, i, words, None):
                return True
    return False


def _health_match(toks):
    for tk in toks:
        if tk.text in _HEALTH_CREDENTIALS:
            return True
    return _contains_phrase(toks, _HEALTH_KEYWORDS)


def is_healthcare(business_name, business_type=""):
    """Whether a business is a health or care business whose public replies
    must not confirm anything about a patient. The name and the type are
    tested separately: either may match a keyword or a credential, and a
    veterinary word in either makes the answer false."""
    n = _health_tokens(business_name)
    t = _health_tokens(business_type)
    if _contains_phrase(n, _VETERINARY_WORDS) or _contains_phrase(t, _VETERINARY_WORDS):
        return False
    return _health_match(n) or _health_match(t)


# ---------------------------------------------------------------------------
# Safe replies and the kit functions (kit.go)

_SAFE_REPLY_GENERAL = (
    "Thank you for your feedback. We take every comment seriously and would welcome the chance to talk; "
    "please contact us directly."
)
_SAFE_REPLY_HEALTHCARE = (
    "Thank you for your feedback. We take every comment seriously. To protect everyone's privacy, we never "
    "discuss details in public; please contact our office directly so we can talk."
)


def safe_reply(business_name, healthcare):
    """The fixed reply to post when no draft passes. business_name is
    accepted for convenience but deliberately not used: text taken from the
    business could carry a placeholder or a name."""
    del business_name
    return _SAFE_REPLY_HEALTHCARE if healthcare else _SAFE_REPLY_GENERAL


_CHECK_REPLY_FIELDS = ("review", "rating", "business_name", "business_type", "reply")
_IS_HEALTHCARE_FIELDS = ("business_name", "business_type")


def _fold_key(key):
    """Go's encoding/json matches object keys to struct fields case-
    insensitively with Unicode simple folding; for these field names that is
    ASCII case plus U+017F (long s) for "s" and U+212A (Kelvin sign) for "k"."""
    return _lower_string(key).replace("\u017f", "s").replace("\u212a", "k")


def _json_kind(v):
    """The JSON type name Go's errors use for a decoded value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, (list, tuple)):
        return "array"
    return type(v).__name__


_QUOTE_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f",
    "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
}


def _go_quote(s):
    """Go's %q (strconv.Quote) of a string."""
    out = ['"']
    for ch in _go_string(s):
        cp = ord(ch)
        if ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif cp == 0x20 or unicodedata.category(ch)[0] in "LMNPS":
            out.append(ch)
        elif cp < 0x80:
            out.append("\\x%02x" % cp)
        elif cp <= 0xFFFF:
            out.append("\\u%04x" % cp)
        else:
            out.append("\\U%08x" % cp)
    out.append('"')
    return "".join(out)


def _decode_strict(fn, value, fields, raw_field):
    """Decodes a kit input object the way the Go adapter's decodeStrict
    does: the first unknown field or wrongly typed string field, in key
    order, is the error. Returns the fields found (None where null); the raw
    field ("rating") is kept as given."""
    allowed = ", ".join(fields)
    if not isinstance(value, dict):
        raise ValueError("%s: the input must be a JSON object with the fields %s" % (fn, allowed))
    got = {}
    for key, v in value.items():
        folded = _fold_key(key) if isinstance(key, str) else None
        field = folded if folded in fields else None
        if field is None:
            raise ValueError("%s: unknown field %s; the allowed fields are %s" % (fn, _go_quote(str(key)), allowed))
        if field == raw_field:
            got[field] = v
        elif v is None:
            got[field] = None
        elif isinstance(v, str):
            got[field] = _go_string(v)
        else:
            raise ValueError("%s: %s must be a string, not a JSON %s" % (fn, _go_quote(field), _json_kind(v)))
    return got


def _raw_json(v):
    """The JSON text of a decoded value, as Go's error message quotes the raw
    input (a float keeps its fraction: 6.0 reads "6.0")."""
    if isinstance(v, float) and math.isfinite(v):
        return repr(v)
    try:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(v)


def _parse_rating(fn, v):
    """Accepts a JSON number whose value is a whole number from 1 to 5 (5 and
    5.0 alike)."""
    if v is None:
        raise ValueError('%s: "rating" is required: the review\'s star rating, a whole number from 1 to 5' % fn)
    ok = False
    if isinstance(v, bool):
        ok = False  # JSON true is not a number
    elif isinstance(v, int):
        ok = 1 <= v <= 5
    elif isinstance(v, float):
        ok = math.isfinite(v) and v == math.trunc(v) and 1 <= v <= 5
    if not ok:
        raise ValueError('%s: "rating" must be a whole number from 1 to 5, not %s' % (fn, _raw_json(v)))
    return int(v)


# Go's unicode.IsSpace, which strings.TrimSpace trims: not U+001C-U+001F (as
# Python's str.strip would), not U+200B or U+FEFF.
_GO_SPACE = frozenset("\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                      "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _go_blank(s):
    """Whether strings.TrimSpace(s) is empty."""
    return all(c in _GO_SPACE for c in s)


def check_reply(input):
    """The kit function checkReply: input is the decoded JSON object
    {"review": string, "rating": 1..5, "business_name": string,
    "business_type": string, "reply": string}, validated as the Go adapter
    validates it (bad input raises ValueError with the Go message). Returns
    the result as plain dicts and lists, keys in the Go JSON order."""
    fn = "checkReply"
    a = _decode_strict(fn, input, _CHECK_REPLY_FIELDS, "rating")
    review = a.get("review")
    if review is None:
        raise ValueError('%s: "review" is required: the review text as a string ("" for a rating-only review)' % fn)
    rating = _parse_rating(fn, a.get("rating"))
    name = a.get("business_name")
    if name is None or _go_blank(name):
        raise ValueError('%s: "business_name" is required: the business\'s name as a non-empty string' % fn)
    reply = a.get("reply")
    if reply is None:
        raise ValueError('%s: "reply" is required: the reply text as a string' % fn)
    bt = a.get("business_type")
    return check(review, rating, name, reply, bt if bt is not None else "")


def is_healthcare_business(input):
    """The kit function isHealthcareBusiness: {"business_name": string,
    "business_type": string} to a bool, with the Go adapter's validation."""
    fn = "isHealthcareBusiness"
    a = _decode_strict(fn, input, _IS_HEALTHCARE_FIELDS, None)
    name = a.get("business_name")
    if name is None:
        raise ValueError('%s: "business_name" is required: the business\'s name as a string' % fn)
    bt = a.get("business_type")
    return is_healthcare(name, bt if bt is not None else "")


# The package's kit functions by name, as KitFunctions() in kit.go.
KIT_FUNCTIONS = {
    "checkReply": check_reply,
    "isHealthcareBusiness": is_healthcare_business,
}


# ---------------------------------------------------------------------------
# Lists (lists.go and healthcare.go). replyguard_lists.json, beside this
# module, is a byte-for-byte copy of pipelines/sitecheck/replyguard/lists.json,
# the one source that the Go package embeds and both kits read (the Go test
# TestKitListsAreCopies fails while the copy differs; go generate
# ./pipelines/sitecheck/replyguard writes it). Every phrase is written as its
# tokens joined by single spaces, in lower case.

_LISTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "replyguard_lists.json")


def _load_lists():
    with open(_LISTS_FILE, encoding="utf-8") as f:
        return json.load(f)


# The lists as the file holds them; the tests compare them with Go's file.
_LISTS = _load_lists()

_CAT_PATIENT = "patient"
_CAT_VISIT = "visit"
_CAT_TREATMENT = "treatment"
_CAT_WAIT = "wait"
_CAT_BILL = "bill"
_CAT_FAMILY = "family"
_CAT_DATE = "date"
_CAT_NAME = "name"
_CAT_REPEAT_NUMBER = "repeat_number"
_CAT_REPEAT_CONTACT = "repeat_contact"
_PHI_MESSAGES = {
    _CAT_PATIENT: "confirms that the reviewer is a patient or client, or describes their care",
    _CAT_VISIT: "confirms a visit or appointment",
    _CAT_TREATMENT: "confirms a treatment, procedure or diagnosis",
    _CAT_WAIT: "confirms a wait or waiting time",
    _CAT_BILL: "confirms a bill, charge, payment or insurance matter",
    _CAT_FAMILY: "mentions a family member",
    _CAT_DATE: "mentions a day or date that could tie the reviewer to a visit",
    _CAT_NAME: "names a person (the reviewer or staff)",
    _CAT_REPEAT_NUMBER: "repeats a number the reviewer gave",
    _CAT_REPEAT_CONTACT: "repeats contact details the reviewer gave",
}

# Offer phrases: discounts, refunds, free things and compensation promised
# in public.
_OFFER_PHRASES = _phrase_list(_LISTS["offer_phrases"])

# Arguing phrases: blaming or contradicting the reviewer.
_ARGUING_PHRASES = _phrase_list(_LISTS["arguing_phrases"])

# Placeholder phrases (the bracket and upper-case patterns are regexes).
_PLACEHOLDER_PHRASES = _phrase_list(_LISTS["placeholder_phrases"])

# PHI term phrases, checked for health and care businesses only.
_PHI_PHRASES = _phrase_list(_LISTS["phi_phrases"])

# titles start a name: "Dr. Patel", "Nurse Amy".
_TITLES = frozenset(_LISTS["titles"])

# commonWords are capitalised words that are never taken for a name.
_COMMON_WORDS = frozenset(_LISTS["common_words"])

# starWords follow a rating: "5 stars", "five-star".
_STAR_WORDS = frozenset(_LISTS["star_words"])

# numberWords are the number words read as numbers. "one" is not among
# them: it is mostly a pronoun ("no one", "the one").
_NUMBER_WORDS = dict(_LISTS["number_words"])

# englishWords and foreignWords drive the English test.
_ENGLISH_WORDS = frozenset(_LISTS["english_words"])
_FOREIGN_WORDS = frozenset(_LISTS["foreign_words"])

# healthKeywords mark a health or care business in its name or its type.
_HEALTH_KEYWORDS = _phrase_list(_LISTS["health_keywords"])

# healthCredentials are matched case-sensitively as whole tokens, after
# full stops are removed ("M.D." reads "MD").
_HEALTH_CREDENTIALS = frozenset(_LISTS["health_credentials"])

# veterinaryWords veto the health test: animal care is not covered by HIPAA.
_VETERINARY_WORDS = _phrase_list(_LISTS["veterinary_words"])
