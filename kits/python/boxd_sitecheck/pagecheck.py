"""Python port of the Go package pipelines/sitecheck/pagecheck.

Checks the parts of a web page that AI crawlers and answer engines read: the
JSON-LD blocks (extracted, parsed and validated against schema.org rules),
the title / meta description / canonical / robots / Open Graph tags, image
alt texts and /llms.txt; and generates LocalBusiness / Organization JSON-LD
from business facts.

The six kit functions are in KIT_FUNCTIONS, keyed as Go's KitFunctions():
checkPageJsonLd, validateSchemaLocally, checkLiveMeta, hasMeaningfulAltText,
llmsTxtCheck and generateSchemaMarkup. Each takes the already-parsed JSON
input (what json.load gives) and returns plain values (dict, list, str, int,
bool, None) whose JSON is Go's json.Marshal of the Go result; bad input
raises ValueError with Go's error text. The module follows the Go code
decision for decision and is tested against the shared fixtures in
testdata/sitecheck/.

How Go's semantics are kept:

* Go strings are UTF-8 octets; here text is a Python str. Every input
  string (and object key) has its lone surrogates replaced by U+FFFD first,
  which is what Go's JSON decoder does, so every str is valid Unicode. All
  the scanning decisions of the Go code look at ASCII octets only, and
  UTF-8 never uses an ASCII octet inside a multi-byte character, so working
  on code points gives the same results. Where Go reports a byte offset
  (JSONError.offset) it is computed from the UTF-8 length; columns and
  lengths count code points as in Go.
* Lower-casing is ASCII only (asciiLower), trimming uses Go's explicit sets
  (never str.strip() / str.split() without arguments), regular expressions
  are anchored with \\Z (Python's $ also matches before a final newline) and
  use no \\d \\s \\w.
* unicode.IsLetter and strconv.IsPrint (used by %q quoting in error
  messages) come from tables of Go 1.26's Unicode 15.0 data at the end of
  this module, so the Python version's Unicode database does not matter.
* The input checks follow decodeInput and fieldError of kit.go: unknown
  fields first (sorted, quoted as Go's %q), then required fields, then
  types (a JSON boolean is not an integer, although Python's bool is an
  int). encoding/json's matching of struct field names (generateSchemaMarkup's
  facts) is case-insensitive with Go's folding (so "NAME", "\\u017ftreet"
  and "\\u212aey" fold like in Go), and its first error wins.

Differences that Python cannot see, because the kit functions receive
json.load's values instead of the raw JSON text:

* validateSchemaLocally's "nesting too deep" error (an object nested more
  than 100 levels) gives a line, column and offset in the raw text of the
  "object" field; Python computes them for the compact JSON text of the
  value (json.dumps with separators (",", ":") and ensure_ascii=False, keys
  in dict order, numbers as written when they carry their text (see
  loads_input()), else str() of an int and repr() of a float), which
  matches Go when the input was written that way. Otherwise number text
  does not matter: validation uses numbers' values only (Go parses the text
  with strconv.ParseFloat; Python's float() of the same text rounds
  identically, and a huge integer becomes +-inf as in Go), and the error
  for a non-integer status says "a number with a fraction or exponent"
  whatever the number.
* Duplicate object keys: json.load keeps the last value (at the first key's
  position); Go decodes every occurrence in order. The results differ only
  where that matters to Go, e.g. facts {"name": "A", "name": null}: Go keeps
  "A" (null leaves a Go string unchanged), Python sees only the null.
* Python's json.load accepts NaN and Infinity, which Go rejects as invalid
  JSON; such values are treated as numbers here.

Other notes: offsets in Token (scan()) index the Python str, where Go's are
byte offsets; parse_json gives numbers as JSONNumber (the exact text, like
Go's json.Number); validate() and the validators recurse, so an object
nested several hundred levels deep (which validateSchemaLocally and the
JSON-LD blocks of a page refuse beyond 100 levels anyway) can exceed
Python's recursion limit.

Standard library only.
"""

import bisect
import functools
import json
import math
import re

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_TEXT_CHARS",
    "TITLE_MIN",
    "TITLE_MAX",
    "DESCRIPTION_MIN",
    "DESCRIPTION_MAX",
    "SOURCE_SCRIPT",
    "SOURCE_COMMENT",
    "SOURCE_ENTITY",
    "SEVERITY_ERROR",
    "SEVERITY_WARNING",
    "TOK_TEXT",
    "TOK_START_TAG",
    "TOK_END_TAG",
    "TOK_COMMENT",
    "TOK_BOGUS",
    "TOK_RAW_TEXT",
    "LOCAL_BUSINESS_TYPES",
    "ORGANIZATION_TYPES",
    "ARTICLE_TYPES",
    "PRODUCT_TYPES",
    "JSONError",
    "JSONNumber",
    "MarkupError",
    "Token",
    "Block",
    "parse_json",
    "loads_input",
    "scan",
    "decode_entities",
    "extract_text",
    "extract_jsonld",
    "check_page_jsonld",
    "validate",
    "find_placeholder",
    "is_absolute_url",
    "is_iso_date",
    "check_meta",
    "meaningful_alt",
    "check_llms_txt",
    "generate_markup",
    "check_page_jsonld_kit",
    "validate_schema_kit",
    "check_live_meta_kit",
    "meaningful_alt_kit",
    "llms_txt_kit",
    "generate_markup_kit",
    "KIT_FUNCTIONS",
]

MAX_JSON_DEPTH = 100
MAX_TEXT_CHARS = 20000
TITLE_MIN = 10
TITLE_MAX = 60
DESCRIPTION_MIN = 50
DESCRIPTION_MAX = 160

SOURCE_SCRIPT = "script"
SOURCE_COMMENT = "comment"
SOURCE_ENTITY = "entity"

SEVERITY_ERROR = "error"
SEVERITY_WARNING = "warning"


# ================================================================ Go strings

_SURROGATE = re.compile("[\ud800-\udfff]")
_UPPER_TO_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_WS = " \t\n\v\f\r"
_HTML_WS = " \t\n\f\r"


def _go_string(s):
    """s as Go's JSON decoder would give it: lone surrogates become U+FFFD."""
    if _SURROGATE.search(s) is None:
        return s
    return _SURROGATE.sub("\ufffd", s)


def _go_value(v):
    """A json.load value with every string and key made a Go string; tuples
    become lists."""
    if isinstance(v, str):
        return _go_string(v)
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            out[_go_string(k) if isinstance(k, str) else k] = _go_value(x)
        return out
    if isinstance(v, (list, tuple)):
        return [_go_value(x) for x in v]
    return v


def _ascii_lower(s):
    """Lowers A-Z only."""
    return s.translate(_UPPER_TO_LOWER)


def _trim_ascii(s):
    """Trims space, tab, LF, VT, FF and CR at both ends."""
    return s.strip(_ASCII_WS)


def _utf8_len(s):
    return len(s.encode("utf-8"))


def _in_ranges(table, r):
    starts, ends = table
    i = bisect.bisect_right(starts, r) - 1
    return i >= 0 and r <= ends[i]


def _is_letter(ch):
    """Go's unicode.IsLetter (Unicode 15.0)."""
    r = ord(ch)
    if r < 0x80:
        return ("a" <= ch <= "z") or ("A" <= ch <= "Z")
    return _in_ranges(_LETTERS, r)


def _is_print(r):
    """Go's strconv.IsPrint (Unicode 15.0)."""
    return _in_ranges(_PRINTABLE, r)


_QUOTE_ESC = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def _go_quote(s):
    """Go's strconv.Quote (fmt %q) of a valid string."""
    out = ['"']
    for ch in s:
        r = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif _is_print(r):
            out.append(ch)
        elif r in _QUOTE_ESC:
            out.append(_QUOTE_ESC[r])
        elif r < 0x20 or r == 0x7F:
            out.append("\\x%02x" % r)
        elif r < 0x10000:
            out.append("\\u%04x" % r)
        else:
            out.append("\\U%08x" % r)
    out.append('"')
    return "".join(out)


def _hex_digit(c):
    if "0" <= c <= "9":
        return ord(c) - 48
    if "a" <= c <= "f":
        return ord(c) - 87
    if "A" <= c <= "F":
        return ord(c) - 55
    return -1


# ================================================================ JSON parser

class JSONNumber:
    """A JSON number as parse_json gives it: its exact text. float() gives
    its value as Go's strconv.ParseFloat does (+-inf when out of range)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __float__(self):
        return float(self.text)

    def __repr__(self):
        return "JSONNumber(%r)" % self.text

    def __eq__(self, other):
        return isinstance(other, JSONNumber) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


class JSONError(ValueError):
    """A JSON syntax error: a fixed message, the 1-based line and column (in
    code points) and the byte offset (UTF-8) of the offending character.
    str() is Go's Error()."""

    def __init__(self, message, line, column, offset):
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset
        super().__init__("%s at line %d, column %d (offset %d)" % (message, line, column, offset))

    def to_dict(self):
        """The Go JSON form."""
        return {"message": self.message, "line": self.line, "column": self.column, "offset": self.offset}


class _Fail(Exception):
    def __init__(self, message, pos):
        Exception.__init__(self, message)
        self.message = message
        self.pos = pos


_JSON_WS = frozenset(" \t\n\r")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PLAIN_STRING_RUN = re.compile('[^"\\\\\x00-\x1f]+')
_DIGITS = re.compile("[0-9]+")


class _JSONParser:
    def __init__(self, s):
        self.s = s
        self.n = len(s)
        self.i = 0

    def fail(self, msg):
        return _Fail(msg, self.i)

    def eof(self):
        return _Fail("unexpected end of input", self.i)

    def char_at(self):
        ch = self.s[self.i]
        r = ord(ch)
        if r < 0x20 or 0x7F <= r <= 0x9F or r == 0xFEFF:
            return "U+%04X" % r
        return "'" + ch + "'"

    def skip_ws(self):
        s, n, i = self.s, self.n, self.i
        while i < n and s[i] in _JSON_WS:
            i += 1
        self.i = i

    def value(self, depth):
        if self.i >= self.n:
            raise self.eof()
        c = self.s[self.i]
        if c == "{":
            return self.object(depth + 1)
        if c == "[":
            return self.array(depth + 1)
        if c == '"':
            return self.string()
        if c == "-" or "0" <= c <= "9":
            return self.number()
        if c == "t":
            self.literal("true")
            return True
        if c == "f":
            self.literal("false")
            return False
        if c == "n":
            self.literal("null")
            return None
        raise self.fail("expected value, found " + self.char_at())

    def literal(self, word):
        for ch in word:
            if self.i >= self.n:
                raise self.eof()
            if self.s[self.i] != ch:
                raise self.fail("invalid literal")
            self.i += 1

    def object(self, depth):
        if depth > MAX_JSON_DEPTH:
            raise self.fail("nesting too deep")
        s = self.s
        self.i += 1
        obj = {}
        self.skip_ws()
        if self.i < self.n and s[self.i] == "}":
            self.i += 1
            return obj
        while True:
            if self.i >= self.n:
                raise self.eof()
            if s[self.i] != '"':
                raise self.fail("expected string key, found " + self.char_at())
            k = self.string()
            self.skip_ws()
            if self.i >= self.n:
                raise self.eof()
            if s[self.i] != ":":
                raise self.fail("expected ':' after object key, found " + self.char_at())
            self.i += 1
            self.skip_ws()
            v = self.value(depth)
            obj[k] = v
            self.skip_ws()
            if self.i >= self.n:
                raise self.eof()
            c = s[self.i]
            if c == ",":
                self.i += 1
                self.skip_ws()
            elif c == "}":
                self.i += 1
                return obj
            else:
                raise self.fail("expected ',' or '}' after object member, found " + self.char_at())

    def array(self, depth):
        if depth > MAX_JSON_DEPTH:
            raise self.fail("nesting too deep")
        s = self.s
        self.i += 1
        arr = []
        self.skip_ws()
        if self.i < self.n and s[self.i] == "]":
            self.i += 1
            return arr
        while True:
            arr.append(self.value(depth))
            self.skip_ws()
            if self.i >= self.n:
                raise self.eof()
            c = s[self.i]
            if c == ",":
                self.i += 1
                self.skip_ws()
            elif c == "]":
                self.i += 1
                return arr
            else:
                raise self.fail("expected ',' or ']' after array element, found " + self.char_at())

    def string(self):
        s, n = self.s, self.n
        self.i += 1  # opening quote
        parts = []
        while True:
            m = _PLAIN_STRING_RUN.match(s, self.i)
            if m is not None:
                parts.append(m.group())
                self.i = m.end()
            if self.i >= n:
                raise self.eof()
            c = s[self.i]
            if c == '"':
                self.i += 1
                return "".join(parts)
            if c == "\\":
                r = self.escape()
                if 0xD800 <= r <= 0xDBFF and s.startswith("\\u", self.i):
                    save = self.i
                    r2 = self.escape()
                    if 0xDC00 <= r2 <= 0xDFFF:
                        parts.append(chr(0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00)))
                        continue
                    self.i = save
                if 0xD800 <= r <= 0xDFFF:
                    r = 0xFFFD
                parts.append(chr(r))
            else:  # a control character
                raise self.fail("control character in string")

    def escape(self):
        s, n = self.s, self.n
        start = self.i
        if self.i + 1 >= n:
            self.i = n
            raise self.eof()
        c = s[self.i + 1]
        if c in _SIMPLE_ESCAPES:
            self.i += 2
            return ord(_SIMPLE_ESCAPES[c])
        if c != "u":
            raise _Fail("invalid escape sequence", start)
        v = 0
        for k in range(4):
            j = self.i + 2 + k
            if j >= n:
                self.i = n
                raise self.eof()
            d = _hex_digit(s[j])
            if d < 0:
                raise _Fail("invalid escape sequence", start)
            v = v * 16 + d
        self.i += 6
        return v

    def digits(self):
        if self.i >= self.n:
            raise self.eof()
        m = _DIGITS.match(self.s, self.i)
        if m is None:
            raise self.fail("invalid number")
        self.i = m.end()

    def number(self):
        s, n = self.s, self.n
        start = self.i
        if s[self.i] == "-":
            self.i += 1
        if self.i < n and s[self.i] == "0":
            self.i += 1
        else:
            self.digits()
        if self.i < n and s[self.i] == ".":
            self.i += 1
            self.digits()
        if self.i < n and s[self.i] in "eE":
            self.i += 1
            if self.i < n and s[self.i] in "+-":
                self.i += 1
            self.digits()
        return JSONNumber(s[start:self.i])


def _json_error(s, msg, pos):
    """A JSONError for code point position pos of s."""
    line = 1 + s.count("\n", 0, pos)
    ls = s.rfind("\n", 0, pos) + 1
    return JSONError(msg, line, 1 + (pos - ls), _utf8_len(s[:pos]))


def parse_json(s):
    """Parses strict RFC 8259 JSON into dict, list, str, JSONNumber (the
    number's exact text), bool and None, as Go's ParseJSON. Duplicate keys
    keep the last value; a lone UTF-16 surrogate escape gives U+FFFD. Nesting
    deeper than MAX_JSON_DEPTH is an error. Raises JSONError."""
    s = _go_string(s)
    p = _JSONParser(s)
    try:
        p.skip_ws()
        v = p.value(0)
        p.skip_ws()
        if p.i < p.n:
            raise p.fail("unexpected " + p.char_at() + " after JSON value")
    except _Fail as e:
        raise _json_error(s, e.message, e.pos) from None
    return v


class _TextFloat(float):
    """A float that remembers its JSON text."""

    def __new__(cls, text):
        f = float.__new__(cls, text)
        f.text = text
        return f


class _TextInt(int):
    """An int that remembers its JSON text."""

    def __new__(cls, text):
        i = int.__new__(cls, text)
        i.text = text
        return i


def loads_input(text):
    """json.loads that keeps each number's text (on float and int
    subclasses), which only the position of validateSchemaLocally's "nesting
    too deep" error depends on. The kit functions accept plain json.loads
    values as well."""
    return json.loads(text, parse_float=_TextFloat, parse_int=_TextInt)


# ================================================================ JSON output

_QUOTE_NEEDED = re.compile('[\x00-\x1f"\\\\]')
_QUOTE_MAP = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _json_quote(s):
    """Quotes s as Go's jsonQuote: '"' and '\\' escaped, \\b \\t \\n \\f \\r,
    other controls as \\u00xx, everything else as is."""
    return '"' + _QUOTE_NEEDED.sub(lambda m: _QUOTE_MAP.get(m.group()) or "\\u%04x" % ord(m.group()), s) + '"'


def _write_json(out, v, indent, cur):
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(_json_quote(v))
    elif isinstance(v, JSONNumber):
        out.append(v.text)
    elif hasattr(v, "text") and isinstance(v, (int, float)):
        out.append(v.text)
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, float):
        out.append(repr(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        out.append("{")
        first = True
        for k, x in v.items():
            if not first:
                out.append(",")
            first = False
            if indent:
                out.append("\n" + cur + indent)
            out.append(_json_quote(k))
            out.append(": " if indent else ":")
            _write_json(out, x, indent, cur + indent)
        if indent:
            out.append("\n" + cur)
        out.append("}")
    elif isinstance(v, (list, tuple)):
        if not v:
            out.append("[]")
            return
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            if indent:
                out.append("\n" + cur + indent)
            _write_json(out, x, indent, cur + indent)
        if indent:
            out.append("\n" + cur)
        out.append("]")
    else:
        raise TypeError("pagecheck: cannot encode %s" % type(v).__name__)


def _snippet(v):
    """v as the indented JSON of a Finding's snippet (two spaces, keys in
    dict order)."""
    out = []
    _write_json(out, v, "  ", "")
    return "".join(out)


def _prop_snippet(p, v):
    return _snippet({p: v})


# ================================================================ HTML scanner

TOK_TEXT = 0
TOK_START_TAG = 1
TOK_END_TAG = 2
TOK_COMMENT = 3
TOK_BOGUS = 4
TOK_RAW_TEXT = 5


class Token:
    """One piece of scanned HTML. start and end delimit the whole token;
    for comments and raw text content_start and content_end delimit the
    content. Offsets index the scanned str (Go's are byte offsets of the
    same places). attrs is a list of (lower-case name, entity-decoded value)
    in source order, the first of duplicates kept."""

    __slots__ = ("kind", "name", "attrs", "start", "end", "content_start", "content_end")

    def __init__(self, kind, name, attrs, start, end, content_start, content_end):
        self.kind = kind
        self.name = name
        self.attrs = attrs
        self.start = start
        self.end = end
        self.content_start = content_start
        self.content_end = content_end

    def attr(self, name):
        """(value, present) of the named attribute (lower-case name)."""
        for n, v in self.attrs:
            if n == name:
                return v, True
        return "", False

    def __repr__(self):
        return "Token(%d, %r, %r, %d, %d, %d, %d)" % (
            self.kind, self.name, self.attrs, self.start, self.end, self.content_start, self.content_end)


_RAW_TEXT_ELEMENTS = frozenset(("script", "style", "textarea", "title"))
_NAME_STOP = frozenset(" \t\n\f\r/>")
_ATTR_NAME_STOP = frozenset(" \t\n\f\r/>=")
_HTML_SPACE = frozenset(_HTML_WS)
_SPACE_OR_SLASH = frozenset(" \t\n\f\r/")
_VALUE_STOP = frozenset(" \t\n\f\r>")


def _is_ascii_letter(c):
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def scan(s):
    """Splits HTML into tokens, as Go's Scan: a small, forgiving scanner,
    not an HTML5 parser."""
    s = _go_string(s)
    toks = []
    n = len(s)
    i = 0
    text_start = 0

    def flush(end):
        if end > text_start:
            toks.append(Token(TOK_TEXT, "", None, text_start, end, text_start, end))

    while i < n:
        i = s.find("<", i)
        if i < 0 or i + 1 >= n:
            break
        c = s[i + 1]
        if c == "!" and s.startswith("<!--", i):
            flush(i)
            cs = i + 4
            if s.startswith(">", cs):
                ce, end = cs, cs + 1
            elif s.startswith("->", cs):
                ce, end = cs, cs + 2
            else:
                k = s.find("-->", cs)
                if k < 0:
                    ce, end = n, n
                else:
                    ce, end = k, k + 3
            toks.append(Token(TOK_COMMENT, "", None, i, end, cs, ce))
            i = text_start = end
        elif c == "!" or c == "?" or (c == "/" and (i + 2 >= n or not _is_ascii_letter(s[i + 2]))):
            flush(i)
            k = s.find(">", i + 2)
            end = n if k < 0 else k + 1
            toks.append(Token(TOK_BOGUS, "", None, i, end, i, end))
            i = text_start = end
        elif c == "/":
            flush(i)
            j = i + 2
            while j < n and s[j] not in _NAME_STOP:
                j += 1
            name = _ascii_lower(s[i + 2:j])
            k = s.find(">", j)
            if k < 0:
                # An unterminated end tag swallows the rest of the input.
                return toks
            end = k + 1
            toks.append(Token(TOK_END_TAG, name, None, i, end, i, end))
            i = text_start = end
        elif _is_ascii_letter(c):
            flush(i)
            tok = _scan_start_tag(s, i)
            if tok is None:
                # An unterminated start tag swallows the rest of the input.
                return toks
            toks.append(tok)
            i = text_start = tok.end
            if tok.name in _RAW_TEXT_ELEMENTS:
                cs = i
                ce, end = _find_raw_end(s, cs, tok.name)
                toks.append(Token(TOK_RAW_TEXT, tok.name, None, cs, ce, cs, ce))
                if ce < n:
                    toks.append(Token(TOK_END_TAG, tok.name, None, ce, end, ce, end))
                i = text_start = end
        else:
            i += 1
    flush(n)
    return toks


def _find_raw_end(s, start, name):
    """(content end, end after the end tag's ">") of a raw text element."""
    n = len(s)
    ln = len(name)
    i = start
    while True:
        i = s.find("</", i)
        if i < 0:
            return n, n
        j = i + 2
        if j + ln > n or _ascii_lower(s[j:j + ln]) != name:
            i += 1
            continue
        j += ln
        if j < n and s[j] not in _NAME_STOP:
            i += 1
            continue
        k = s.find(">", j)
        if k < 0:
            return i, n
        return i, k + 1


def _scan_start_tag(s, i):
    n = len(s)
    j = i + 1
    while j < n and s[j] not in _NAME_STOP:
        j += 1
    name = _ascii_lower(s[i + 1:j])
    attrs = []
    seen = set()
    while True:
        while j < n and s[j] in _SPACE_OR_SLASH:
            j += 1
        if j >= n:
            return None
        if s[j] == ">":
            j += 1
            return Token(TOK_START_TAG, name, attrs, i, j, i, j)
        if s[j] == "=":
            # An attribute name cannot start with "="; skip it.
            j += 1
            continue
        ns = j
        while j < n and s[j] not in _ATTR_NAME_STOP:
            j += 1
        aname = _ascii_lower(s[ns:j])
        k = j
        while k < n and s[k] in _HTML_SPACE:
            k += 1
        value = ""
        if k < n and s[k] == "=":
            k += 1
            while k < n and s[k] in _HTML_SPACE:
                k += 1
            if k >= n:
                return None
            q = s[k]
            if q == '"' or q == "'":
                e = s.find(q, k + 1)
                if e < 0:
                    return None
                value = s[k + 1:e]
                k = e + 1
            else:
                vs = k
                while k < n and s[k] not in _VALUE_STOP:
                    k += 1
                value = s[vs:k]
            j = k
        if aname not in seen:
            seen.add(aname)
            attrs.append((aname, decode_entities(value)))


# ================================================================ entities

_NAMED_ENTITIES = (("amp", "&"), ("lt", "<"), ("gt", ">"), ("quot", '"'), ("apos", "'"), ("nbsp", "\u00a0"))


def decode_entities(s):
    """Decodes HTML character references in one left-to-right pass: &amp;
    &lt; &gt; &quot; &apos; &nbsp; (case-sensitive, ";" required), "&#"
    DIGITS ";" and "&#x" HEX ";" (0, above 0x10FFFF and surrogates give
    U+FFFD). Anything else is kept as written."""
    if "&" not in s:
        return s
    out = []
    i = 0
    while True:
        k = s.find("&", i)
        if k < 0:
            out.append(s[i:])
            break
        out.append(s[i:k])
        r, size = _decode_entity_at(s, k)
        if size:
            out.append(r)
            i = k + size
        else:
            out.append("&")
            i = k + 1
    return "".join(out)


def _decode_entity_at(s, i):
    n = len(s)
    p = i + 1
    if p < n and s[p] == "#":
        j = p + 1
        hexa = False
        if j < n and s[j] in "xX":
            hexa = True
            j += 1
        start = j
        v = 0
        over = False
        while j < n:
            d = _hex_digit(s[j])
            if d < 0 or (not hexa and d > 9):
                break
            v = v * 16 + d if hexa else v * 10 + d
            if v > 0x10FFFF:
                over = True
                v = 0x110000
            j += 1
        if j == start or j >= n or s[j] != ";":
            return "", 0
        size = j - i + 1
        if over or v == 0 or 0xD800 <= v <= 0xDFFF:
            return "\ufffd", size
        return chr(v), size
    for name, ch in _NAMED_ENTITIES:
        if s.startswith(name, p) and s.startswith(";", p + len(name)):
            return ch, len(name) + 2
    return "", 0


# ================================================================ text

_BLOCK_ELEMENTS = frozenset((
    "address", "article", "aside", "blockquote", "body",
    "br", "button", "caption", "dd", "details",
    "dialog", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1",
    "h2", "h3", "h4", "h5", "h6", "head",
    "header", "hr", "html", "li", "main", "nav",
    "ol", "option", "p", "pre", "section",
    "select", "summary", "table", "tbody", "td",
    "textarea", "tfoot", "th", "thead", "title",
    "tr", "ul",
))
_HIDDEN_ELEMENTS = frozenset(("script", "style", "noscript", "template"))
_COLLAPSIBLE_RUN = re.compile("[\t\n\v\f\r \u00a0]+")


def extract_text(html):
    """The page's text as a crawler without JavaScript sees it (Go's
    ExtractText)."""
    html = _go_string(html)
    parts = []
    hidden = 0
    for t in scan(html):
        k = t.kind
        if k == TOK_TEXT:
            if hidden == 0:
                parts.append(html[t.start:t.end])
        elif k == TOK_RAW_TEXT:
            if hidden == 0 and t.name not in _HIDDEN_ELEMENTS:
                parts.append(html[t.content_start:t.content_end])
        elif k == TOK_START_TAG:
            if t.name == "noscript" or t.name == "template":
                hidden += 1
            if t.name in _BLOCK_ELEMENTS or t.name in _HIDDEN_ELEMENTS:
                parts.append(" ")
        elif k == TOK_END_TAG:
            if (t.name == "noscript" or t.name == "template") and hidden > 0:
                hidden -= 1
            if t.name in _BLOCK_ELEMENTS or t.name in _HIDDEN_ELEMENTS:
                parts.append(" ")
    text = _collapse_space(decode_entities("".join(parts)))
    return _truncate_runes(text, MAX_TEXT_CHARS)


def _truncate_runes(s, limit):
    """The first limit code points, a trailing space trimmed when cut."""
    if len(s) > limit:
        return s[:limit].rstrip(" ")
    return s


def _collapse_space(s):
    """Every run of U+0009-U+000D, U+0020 and U+00A0 becomes one space;
    spaces at both ends are trimmed."""
    return _COLLAPSIBLE_RUN.sub(" ", s).strip(" ")


# ================================================================ checks

_RE_ABS_URL = re.compile(r"[Hh][Tt][Tt][Pp][Ss]?://[^ \t\n\v\f\r/?#]+(?:[/?#][^ \t\n\v\f\r]*)?\Z")
_RE_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_RE_HOST_PATH = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/")
_RE_URL_PARTS = re.compile(r"([Hh][Tt][Tt][Pp][Ss]?)://([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?\Z")
_RE_DATE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?"
    r"(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?\Z")
_RE_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?\Z")
_RE_PRICE = re.compile(r"[0-9]+(?:\.[0-9]+)?\Z")
_RE_CURRENCY = re.compile(r"[A-Z]{3}\Z")
_RE_TIME = re.compile(r"(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?\Z")
_DAY = "(?:Mo|Tu|We|Th|Fr|Sa|Su)"
_HM = "(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)"
_RE_OPENING_HRS = re.compile(
    _DAY + "(?:-" + _DAY + ")?(?:," + _DAY + "(?:-" + _DAY + ")?)*(?: " + _HM + "-" + _HM + r")?\Z")


def is_absolute_url(s):
    """Whether s (not trimmed) is an absolute http or https URL with a host."""
    return _RE_ABS_URL.match(s) is not None


def _url_problem(s):
    if is_absolute_url(s):
        return ""
    if _RE_SCHEME.match(s):
        return "bad_url"
    return "relative_url"


def _resolve_url(base, ref):
    scheme, origin, path = "https", "https://<your-domain>", "/"
    m = _RE_URL_PARTS.match(base)
    if m is not None and is_absolute_url(base):
        scheme = _ascii_lower(m.group(1))
        origin = scheme + "://" + m.group(2)
        path = m.group(3) or "/"
    if _ascii_lower(ref).startswith("www.") or _RE_HOST_PATH.match(ref):
        return "https://" + ref
    if ref.startswith("//"):
        return scheme + ":" + ref
    if ref.startswith("/"):
        return origin + ref
    if ref.startswith("?") or ref.startswith("#"):
        return origin + path + ref
    return origin + path[:path.rfind("/") + 1] + ref


def _days_in(year, month):
    if month == 2:
        if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
            return 29
        return 28
    if month in (4, 6, 9, 11):
        return 30
    return 31


def _date_problem(s):
    m = _RE_DATE.match(s)
    if m is None:
        return "bad_date"
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if month < 1 or month > 12 or day < 1 or day > _days_in(year, month):
        return "bad_date"
    if not m.group(4):
        return ""
    hour, minute = int(m.group(4)), int(m.group(5))
    second = int(m.group(6)) if m.group(6) else 0
    if hour > 23 or minute > 59 or second > 59:
        return "bad_date"
    tz = m.group(7) or ""
    if tz == "":
        return "missing_timezone"
    if tz != "Z":
        digits = tz[1:].replace(":", "")
        th = int(digits[:2])
        tm = int(digits[2:]) if len(digits) == 4 else 0
        if th > 23 or tm > 59:
            return "bad_date"
    return ""


def is_iso_date(s):
    """Whether s is a valid date or date-time (a date-time without timezone
    counts as valid)."""
    return _date_problem(s) != "bad_date"


# ================================================================ placeholders

_TEMPLATE_REGEXPS = (
    re.compile(r"\{\{[^{}]*\}\}"),
    re.compile(r"%[a-z][a-z_]{2,}%"),
    re.compile(r"\[(?:(?:your|insert|enter|add) [^\[\]]*|name|business name|company name|address|phone|"
               r"phone number|email|city|state|zip|zip code|url|website|date|description|title)\]"),
)

_PLACEHOLDER_PHRASES = (
    "lorem ipsum", "dolor sit amet",
    "your business name", "business name here", "your company name", "company name here", "your name here",
    "insert here", "insert name", "insert text",
    "sample text", "sample name", "sample description", "sample product", "sample business", "sample company",
    "sample title", "sample address",
    "john doe", "jane doe", "123 main st", "123 main street", "anytown",
    "todo", "tbd", "fixme", "placeholder",
)

_PLACEHOLDER_WHOLE_VALUES = frozenset((
    "asdf", "changeme", "description", "example", "insert", "lorem", "n/a", "name", "null",
    "sample", "string", "test", "title", "undefined", "your company",
))

_PLACEHOLDER_PHONES = (
    "123-456-7890", "(123) 456-7890", "123.456.7890", "1234567890",
    "555-555-5555", "555.555.5555", "5555555555", "(555) 555-",
    "000-000-0000", "0000000000",
)

_PLACEHOLDER_HOSTS = (
    "example.com", "example.org", "example.net", "domain.com", "test.com",
    "yourdomain.com", "yoursite.com", "yourwebsite.com", "yourcompany.com",
)

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_X_RUN = re.compile("x{3,}")


def _find_standalone(low, pat):
    """Index of the first occurrence of pat in low that stands alone, or -1."""
    check_before = pat[0] in _ALNUM
    check_after = pat[-1] in _ALNUM
    n = len(low)
    start = 0
    while True:
        i = low.find(pat, start)
        if i < 0:
            return -1
        j = i + len(pat)
        ok_before = not check_before or i == 0 or low[i - 1] not in _ALNUM
        ok_after = not check_after or j == n or low[j] not in _ALNUM
        if ok_before and ok_after:
            return i
        start = i + 1


def find_placeholder(s):
    """The placeholder text found in s, or None (Go's FindPlaceholder)."""
    s = _go_string(s)
    low = _ascii_lower(s)
    for rx in _TEMPLATE_REGEXPS:
        m = rx.search(low)
        if m is not None:
            return s[m.start():m.end()]
    for p in _PLACEHOLDER_PHRASES:
        if p in low:
            i = _find_standalone(low, p)
            if i >= 0:
                return s[i:i + len(p)]
    n = len(low)
    for m in _X_RUN.finditer(low):
        i, j = m.start(), m.end()
        if (i == 0 or low[i - 1] not in _ALNUM) and (j == n or low[j] not in _ALNUM):
            return s[i:j]
    t = _trim_ascii(s)
    if _ascii_lower(t) in _PLACEHOLDER_WHOLE_VALUES:
        return t
    for group in (_PLACEHOLDER_PHONES, _PLACEHOLDER_HOSTS):
        for p in group:
            if p in low:
                i = _find_standalone(low, p)
                if i >= 0:
                    return s[i:i + len(p)]
    return None


# ================================================================ rules

FAMILY_LOCAL_BUSINESS = "LocalBusiness"
FAMILY_ORGANIZATION = "Organization"
FAMILY_ARTICLE = "Article"
FAMILY_PRODUCT = "Product"
FAMILY_FAQ_PAGE = "FAQPage"
FAMILY_BREADCRUMB_LIST = "BreadcrumbList"
FAMILY_WEB_SITE = "WebSite"

_FAMILY_ORDER = (
    FAMILY_LOCAL_BUSINESS, FAMILY_ORGANIZATION, FAMILY_ARTICLE, FAMILY_PRODUCT,
    FAMILY_FAQ_PAGE, FAMILY_BREADCRUMB_LIST, FAMILY_WEB_SITE,
)

LOCAL_BUSINESS_TYPES = (
    "AccountingService", "AmusementPark", "AnimalShelter", "ArchiveOrganization", "ArtGallery",
    "Attorney", "AutoBodyShop", "AutoDealer", "AutoPartsStore", "AutoRental",
    "AutoRepair", "AutoWash", "AutomatedTeller", "AutomotiveBusiness", "Bakery",
    "BankOrCreditUnion", "BarOrPub", "BeautySalon", "BedAndBreakfast", "BikeStore",
    "BookStore", "BowlingAlley", "Brewery", "CafeOrCoffeeShop", "Campground",
    "Casino", "ChildCare", "ClothingStore", "ComedyClub", "ComputerStore",
    "ConvenienceStore", "DaySpa", "Dentist", "DepartmentStore", "Distillery",
    "DryCleaningOrLaundry", "Electrician", "ElectronicsStore", "EmergencyService", "EmploymentAgency",
    "EntertainmentBusiness", "ExerciseGym", "FastFoodRestaurant", "FinancialService", "FireStation",
    "Florist", "FoodEstablishment", "FurnitureStore", "GardenStore", "GasStation",
    "GeneralContractor", "GolfCourse", "GovernmentOffice", "GroceryStore", "HVACBusiness",
    "HairSalon", "HardwareStore", "HealthAndBeautyBusiness", "HealthClub", "HobbyShop",
    "HomeAndConstructionBusiness", "HomeGoodsStore", "Hospital", "Hostel", "Hotel",
    "HousePainter", "IceCreamShop", "InsuranceAgency", "InternetCafe", "JewelryStore",
    "LegalService", "Library", "LiquorStore", "LocalBusiness", "Locksmith",
    "LodgingBusiness", "MedicalBusiness", "MedicalClinic", "MensClothingStore", "MobilePhoneStore",
    "Motel", "MotorcycleDealer", "MotorcycleRepair", "MovieRentalStore", "MovieTheater",
    "MovingCompany", "MusicStore", "NailSalon", "NightClub", "Notary",
    "OfficeEquipmentStore", "Optician", "OutletStore", "PawnShop", "PetStore",
    "Pharmacy", "Physician", "Physiotherapy", "Plumber", "PoliceStation",
    "PostOffice", "ProfessionalService", "PublicSwimmingPool", "RadioStation", "RealEstateAgent",
    "RecyclingCenter", "Resort", "Restaurant", "RoofingContractor", "SelfStorage",
    "ShoeStore", "ShoppingCenter", "SkiResort", "SportingGoodsStore", "SportsActivityLocation",
    "SportsClub", "StadiumOrArena", "Store", "TattooParlor", "TelevisionStation",
    "TennisComplex", "TireShop", "TouristInformationCenter", "ToyStore", "TravelAgency",
    "VacationRental", "WholesaleStore", "Winery",
)

ORGANIZATION_TYPES = (
    "Airline", "CollegeOrUniversity", "Consortium", "Cooperative", "Corporation",
    "DanceGroup", "EducationalOrganization", "ElementarySchool", "GovernmentOrganization", "HighSchool",
    "LibrarySystem", "MedicalOrganization", "MiddleSchool", "MusicGroup", "NGO",
    "NewsMediaOrganization", "OnlineBusiness", "OnlineStore", "Organization", "PerformingGroup",
    "PoliticalParty", "Preschool", "Project", "ResearchOrganization", "School",
    "SearchRescueOrganization", "SportsOrganization", "SportsTeam", "TheaterGroup", "WorkersUnion",
)

ARTICLE_TYPES = (
    "APIReference", "AdvertiserContentArticle", "AnalysisNewsArticle", "Article", "AskPublicNewsArticle",
    "BackgroundNewsArticle", "BlogPosting", "DiscussionForumPosting", "LiveBlogPosting", "MedicalScholarlyArticle",
    "NewsArticle", "OpinionNewsArticle", "Report", "ReportageNewsArticle", "ReviewNewsArticle",
    "SatiricalArticle", "ScholarlyArticle", "SocialMediaPosting", "TechArticle",
)

PRODUCT_TYPES = ("Car", "IndividualProduct", "Motorcycle", "Product", "ProductModel", "SomeProducts", "Vehicle")


def _build_type_family():
    m = {}
    for t in LOCAL_BUSINESS_TYPES:
        m[t] = FAMILY_LOCAL_BUSINESS
    for t in ORGANIZATION_TYPES:
        m[t] = FAMILY_ORGANIZATION
    for t in ARTICLE_TYPES:
        m[t] = FAMILY_ARTICLE
    for t in PRODUCT_TYPES:
        m[t] = FAMILY_PRODUCT
    m["FAQPage"] = FAMILY_FAQ_PAGE
    m["BreadcrumbList"] = FAMILY_BREADCRUMB_LIST
    m["WebSite"] = FAMILY_WEB_SITE
    return m


_TYPE_FAMILY = _build_type_family()
_KNOWN_TYPES_LOWER = {_ascii_lower(t): t for t in _TYPE_FAMILY}

_AVAILABILITY_VALUES = frozenset((
    "BackOrder", "Discontinued", "InStock", "InStoreOnly", "LimitedAvailability", "MadeToOrder",
    "OnlineOnly", "OutOfStock", "PreOrder", "PreSale", "Reserved", "SoldOut",
))

_OPTIONAL, _RECOMMENDED, _REQUIRED = 0, 1, 2

(K_TEXT, K_URL, K_IMAGE, K_DATE, K_NUMBER, K_PRICE, K_CURRENCY, K_TIME, K_HOURS, K_AVAILABILITY,
 K_OBJECT, K_ITEM, K_POSITION, K_GROUP) = range(14)

_TEXT_ERR, _TEXT_OK, _TEXT_WARN = 0, 1, 2


class _Prop:
    __slots__ = ("name", "level", "kind", "sub", "text", "max_len", "alts", "unless", "except_last",
                 "unless_named", "owner")

    def __init__(self, name, level=_OPTIONAL, kind=K_TEXT, sub="", text=_TEXT_ERR, max_len=0, alts=None,
                 unless="", except_last=False, unless_named="", owner=""):
        self.name = name
        self.level = level
        self.kind = kind
        self.sub = sub
        self.text = text
        self.max_len = max_len
        self.alts = alts
        self.unless = unless
        self.except_last = except_last
        self.unless_named = unless_named
        self.owner = owner


class _Ruleset:
    __slots__ = ("key", "name", "expect", "props")

    def __init__(self, key, name, props, expect=""):
        self.key = key
        self.name = name
        self.expect = expect
        self.props = props
        for p in props:
            p.owner = key


_P = _Prop
_REQ, _REC = _REQUIRED, _RECOMMENDED

_RULESETS = {rs.key: rs for rs in (
    _Ruleset(FAMILY_LOCAL_BUSINESS, "LocalBusiness", [
        _P("name", _REQ, K_TEXT),
        _P("address", _REQ, K_OBJECT, sub="PostalAddress", text=_TEXT_WARN),
        _P("url", _REC, K_URL),
        _P("telephone", _REC, K_TEXT),
        _P("image", _REC, K_IMAGE),
        _P("openingHoursSpecification", _REC, K_GROUP, alts=["openingHoursSpecification", "openingHours"]),
        _P("geo", _REC, K_OBJECT, sub="GeoCoordinates"),
        _P("priceRange", _REC, K_TEXT, max_len=100),
        _P("openingHours", kind=K_HOURS),
        _P("openingHoursSpecification", kind=K_OBJECT, sub="OpeningHoursSpecification"),
        _P("logo", kind=K_IMAGE),
        _P("sameAs", kind=K_URL),
        _P("email", kind=K_TEXT),
        _P("description", kind=K_TEXT),
        _P("aggregateRating", kind=K_OBJECT, sub="AggregateRating"),
    ]),
    _Ruleset(FAMILY_ORGANIZATION, "Organization", [
        _P("name", _REQ, K_TEXT),
        _P("url", _REC, K_URL),
        _P("logo", _REC, K_IMAGE),
        _P("sameAs", kind=K_URL),
        _P("address", kind=K_OBJECT, sub="PostalAddress", text=_TEXT_OK),
        _P("telephone", kind=K_TEXT),
        _P("email", kind=K_TEXT),
        _P("description", kind=K_TEXT),
    ]),
    _Ruleset(FAMILY_ARTICLE, "Article", [
        _P("headline", _REQ, K_TEXT, max_len=110),
        _P("author", _REC, K_OBJECT, sub="Person", text=_TEXT_OK),
        _P("datePublished", _REC, K_DATE),
        _P("dateModified", _REC, K_DATE),
        _P("image", _REC, K_IMAGE),
        _P("publisher", kind=K_OBJECT, sub="Publisher"),
    ]),
    _Ruleset(FAMILY_PRODUCT, "Product", [
        _P("name", _REQ, K_TEXT),
        _P("offers", _REQ, K_GROUP, alts=["offers", "review", "aggregateRating"]),
        _P("image", _REC, K_IMAGE),
        _P("description", _REC, K_TEXT),
        _P("brand", _REC, K_OBJECT, sub="Brand", text=_TEXT_OK),
        _P("offers", kind=K_OBJECT, sub="Offer"),
        _P("aggregateRating", kind=K_OBJECT, sub="AggregateRating"),
        _P("review", kind=K_OBJECT, sub="Review"),
    ]),
    _Ruleset(FAMILY_FAQ_PAGE, "FAQPage", [
        _P("mainEntity", _REQ, K_OBJECT, sub="Question"),
    ]),
    _Ruleset(FAMILY_BREADCRUMB_LIST, "BreadcrumbList", [
        _P("itemListElement", _REQ, K_OBJECT, sub="ListItem"),
    ]),
    _Ruleset(FAMILY_WEB_SITE, "WebSite", [
        _P("name", _REQ, K_TEXT),
        _P("url", _REQ, K_URL),
        _P("description", kind=K_TEXT),
        _P("publisher", kind=K_OBJECT, sub="Publisher"),
    ]),
    _Ruleset("PostalAddress", "PostalAddress", [
        _P("streetAddress", _REC, K_TEXT),
        _P("addressLocality", _REC, K_TEXT),
        _P("postalCode", _REC, K_TEXT),
        _P("addressCountry", _REC, K_TEXT),
        _P("addressRegion", kind=K_TEXT),
    ]),
    _Ruleset("GeoCoordinates", "GeoCoordinates", [
        _P("latitude", _REQ, K_NUMBER),
        _P("longitude", _REQ, K_NUMBER),
    ]),
    _Ruleset("OpeningHoursSpecification", "OpeningHoursSpecification", [
        _P("dayOfWeek", _REQ, K_TEXT),
        _P("opens", _REQ, K_TIME),
        _P("closes", _REQ, K_TIME),
    ]),
    _Ruleset("AggregateRating", "AggregateRating", [
        _P("ratingValue", _REQ, K_NUMBER),
        _P("ratingCount", _REQ, K_GROUP, alts=["ratingCount", "reviewCount"]),
        _P("ratingCount", kind=K_NUMBER),
        _P("reviewCount", kind=K_NUMBER),
        _P("bestRating", kind=K_NUMBER),
        _P("worstRating", kind=K_NUMBER),
    ]),
    _Ruleset("Person", "Person", [
        _P("name", _REQ, K_TEXT),
        _P("url", kind=K_URL),
    ]),
    _Ruleset("Publisher", "Organization", [
        _P("name", _REQ, K_TEXT),
        _P("logo", kind=K_IMAGE),
    ]),
    _Ruleset("Brand", "Brand", [
        _P("name", _REQ, K_TEXT),
    ]),
    _Ruleset("Offer", "Offer", [
        _P("price", _REQ, K_PRICE, unless="priceSpecification"),
        _P("priceCurrency", _REQ, K_CURRENCY, unless="priceSpecification"),
        _P("availability", _REC, K_AVAILABILITY),
        _P("priceSpecification", kind=K_OBJECT, sub="PriceSpecification"),
        _P("url", kind=K_URL),
        _P("priceValidUntil", kind=K_DATE),
    ]),
    _Ruleset("AggregateOffer", "AggregateOffer", [
        _P("lowPrice", _REQ, K_PRICE),
        _P("priceCurrency", _REQ, K_CURRENCY),
        _P("highPrice", kind=K_PRICE),
        _P("offerCount", kind=K_NUMBER),
    ]),
    _Ruleset("PriceSpecification", "PriceSpecification", [
        _P("price", _REQ, K_PRICE),
        _P("priceCurrency", _REQ, K_CURRENCY),
    ]),
    _Ruleset("Review", "Review", [
        _P("author", _REC, K_OBJECT, sub="Person", text=_TEXT_OK),
        _P("reviewRating", _REC, K_OBJECT, sub="Rating"),
    ]),
    _Ruleset("Rating", "Rating", [
        _P("ratingValue", _REQ, K_NUMBER),
    ]),
    _Ruleset("Question", "Question", [
        _P("name", _REQ, K_TEXT),
        _P("acceptedAnswer", _REQ, K_OBJECT, sub="Answer"),
    ], expect="Question"),
    _Ruleset("Answer", "Answer", [
        _P("text", _REQ, K_TEXT),
    ], expect="Answer"),
    _Ruleset("ListItem", "ListItem", [
        _P("position", _REQ, K_POSITION),
        _P("name", _REQ, K_TEXT, unless_named="item"),
        _P("item", _REQ, K_ITEM, except_last=True),
    ], expect="ListItem"),
)}

_EXAMPLES = {
    "@context": "https://schema.org",
    "@type": "Organization",
    "@id": "https://www.example.com/#id",
    "name": "Your Business Name",
    "headline": "Article headline",
    "description": "One or two sentences that describe it.",
    "url": "https://www.example.com/",
    "image": "https://www.example.com/photo.jpg",
    "logo": "https://www.example.com/logo.png",
    "sameAs": ["https://www.example.com/profile"],
    "telephone": "+1-212-555-0100",
    "email": "info@example.com",
    "priceRange": "$$",
    "openingHours": "Mo-Fr 09:00-17:00",
    "datePublished": "2024-01-05T08:00:00+00:00",
    "dateModified": "2024-02-05T09:20:00+00:00",
    "address": {"@type": "PostalAddress", "streetAddress": "1 Harbor Street", "addressLocality": "Springfield",
                "postalCode": "12345", "addressCountry": "US"},
    "streetAddress": "1 Harbor Street",
    "addressLocality": "Springfield",
    "addressRegion": "IL",
    "postalCode": "12345",
    "addressCountry": "US",
    "geo": {"@type": "GeoCoordinates", "latitude": "40.7128", "longitude": "-74.0060"},
    "latitude": "40.7128",
    "longitude": "-74.0060",
    "openingHoursSpecification": {"@type": "OpeningHoursSpecification",
                                  "dayOfWeek": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                                  "opens": "09:00", "closes": "17:00"},
    "dayOfWeek": "Monday",
    "opens": "09:00",
    "closes": "17:00",
    "author": {"@type": "Person", "name": "Author Name", "url": "https://www.example.com/about"},
    "publisher": {"@type": "Organization", "name": "Publisher Name", "logo": "https://www.example.com/logo.png"},
    "brand": {"@type": "Brand", "name": "Brand Name"},
    "offers": {"@type": "Offer", "price": "19.99", "priceCurrency": "USD",
               "availability": "https://schema.org/InStock"},
    "review": {"@type": "Review", "author": {"@type": "Person", "name": "Reviewer Name"},
               "reviewRating": {"@type": "Rating", "ratingValue": "5"}},
    "reviewRating": {"@type": "Rating", "ratingValue": "5"},
    "aggregateRating": {"@type": "AggregateRating", "ratingValue": "4.6", "reviewCount": "89"},
    "ratingValue": "4.6",
    "ratingCount": "89",
    "reviewCount": "89",
    "bestRating": "5",
    "worstRating": "1",
    "offerCount": "3",
    "price": "19.99",
    "lowPrice": "19.99",
    "highPrice": "49.99",
    "priceCurrency": "USD",
    "priceSpecification": {"@type": "PriceSpecification", "price": "19.99", "priceCurrency": "USD"},
    "availability": "https://schema.org/InStock",
    "priceValidUntil": "2025-12-31",
    "mainEntity": [{"@type": "Question", "name": "Question text?",
                    "acceptedAnswer": {"@type": "Answer", "text": "Answer text."}}],
    "acceptedAnswer": {"@type": "Answer", "text": "Answer text."},
    "text": "Answer text.",
    "itemListElement": [{"@type": "ListItem", "position": 1, "name": "Home", "item": "https://www.example.com/"}],
    "position": 1,
    "item": "https://www.example.com/section/",
    "@graph": [{"@type": "Organization", "name": "Your Business Name"}],
}

_OWNER_EXAMPLES = {
    "Person.name": "Author Name",
    "Publisher.name": "Publisher Name",
    "Brand.name": "Brand Name",
    "Product.name": "Product Name",
    "Question.name": "Question text?",
    "ListItem.name": "Home",
    "WebSite.name": "Your Site Name",
}


def _example_of(owner, p):
    v = _OWNER_EXAMPLES.get(owner + "." + p)
    if v is not None:
        return v
    return _example_for(p)


def _example_for(p):
    return _EXAMPLES.get(p, "...")


@functools.lru_cache(maxsize=None)
def _example_snippet(prop, owner, name):
    """The snippet {prop: example of owner's name} (cached: it is text)."""
    return _prop_snippet(prop, _example_of(owner, name))


# ================================================================ messages

_SCRIPT_SNIPPET = "<script type=\"application/ld+json\">\n{\n  \"@context\": \"https://schema.org\"\n}\n</script>"
_CONTEXT_SNIPPET = _snippet({"@context": "https://schema.org"})


def _quote_list(alts):
    s = '"' + alts[0] + '"'
    if len(alts) > 1:
        s += ' (or "' + '", "'.join(alts[1:]) + '")'
    return s


def _article(name):
    return "an" if name and name[0] in "AEIOU" else "a"


def _expected(p):
    k = p.kind
    if k == K_TEXT:
        return "text"
    if k == K_URL:
        return "an absolute URL"
    if k == K_IMAGE:
        return "an absolute URL or an ImageObject"
    if k == K_DATE:
        return "an ISO 8601 date"
    if k == K_NUMBER or k == K_PRICE:
        return "a number"
    if k == K_CURRENCY:
        return "a three-letter ISO 4217 currency code"
    if k == K_TIME:
        return 'a time such as "09:00"'
    if k == K_HOURS:
        return 'text such as "Mo-Fr 09:00-17:00"'
    if k == K_AVAILABILITY:
        return "a schema.org ItemAvailability URL"
    if k == K_OBJECT:
        name = _RULESETS[p.sub].name
        return _article(name) + " " + name + " object"
    if k == K_ITEM:
        return 'an absolute URL or an object with "@id"'
    if k == K_POSITION:
        return "an integer"
    return "a value"


def _msg_missing(label, lvl, alts):
    return (label + " is missing " + lvl + " property " + _quote_list(alts) + ".",
            "Add " + _quote_list(alts) + " to " + label + ".")


def _msg_missing_currency(label):
    return label + ' has no "priceCurrency".', 'Add "priceCurrency" with a three-letter ISO 4217 code.'


def _msg_empty(p):
    return 'Property "' + p + '" is empty.', 'Give "' + p + '" a real value or remove it.'


def _msg_wrong_type(p, want):
    return 'Property "' + p + '" should be ' + want + ".", 'Change "' + p + '" to ' + want + "."


def _msg_relative_url(p, v):
    return ('Property "' + p + '" is a relative URL ("' + v + '").',
            "Use an absolute URL with https:// and the host.")


def _msg_bad_url(p, v):
    return ('Property "' + p + '" is not an http(s) URL ("' + v + '").',
            "Use an absolute URL with https:// and the host.")


def _msg_bad_date(p, v):
    return ('Property "' + p + '" is not an ISO 8601 date ("' + v + '").',
            "Write the date as YYYY-MM-DD or YYYY-MM-DDThh:mm:ss with a timezone offset.")


def _msg_missing_timezone(p, v):
    return ('Property "' + p + '" has a time but no timezone ("' + v + '").',
            'Add "Z" or an offset such as "+01:00" after the time.')


def _msg_bad_number(p, v):
    return ('Property "' + p + '" is not a number ("' + v + '").',
            'Write "' + p + '" as a plain decimal number.')


_FIX_BAD_PRICE = ("Write the price as digits with an optional decimal point, without currency symbols or "
                  'thousands separators, and put the currency in "priceCurrency".')


def _msg_bad_price(p, v):
    return 'Property "' + p + '" is not a plain price ("' + v + '").', _FIX_BAD_PRICE


def _msg_negative_price(p):
    return 'Property "' + p + '" is negative.', _FIX_BAD_PRICE


def _msg_bad_currency(p, v):
    return ('Property "' + p + '" is not a three-letter ISO 4217 code ("' + v + '").',
            'Use an upper-case ISO 4217 code such as "USD" or "EUR".')


def _msg_bad_time(p, v):
    return ('Property "' + p + '" is not a time ("' + v + '").',
            "Write the time as hh:mm or hh:mm:ss (24-hour clock).")


def _msg_bad_hours(p, v):
    return ('Property "' + p + '" does not follow the openingHours format ("' + v + '").',
            'Use two-letter days and 24-hour times such as "Mo-Fr 09:00-17:00", or use openingHoursSpecification.')


def _msg_bad_enum(p, v):
    return ('Property "' + p + '" is not a schema.org ItemAvailability value ("' + v + '").',
            'Use a value such as "https://schema.org/InStock" or "https://schema.org/OutOfStock".')


def _msg_too_long(p, n, limit):
    return ('Property "' + p + '" is ' + str(n) + " characters; keep it to " + str(limit) + ".",
            'Shorten "' + p + '" to at most ' + str(limit) + " characters.")


_FIX_POSITIONS = "Number the breadcrumb items 1, 2, 3, ... in list order."


def _msg_bad_position(p):
    return 'Property "' + p + '" should be a whole number of at least 1.', _FIX_POSITIONS


def _msg_position_order(n):
    return "Breadcrumb item " + str(n) + " does not have position " + str(n) + ".", _FIX_POSITIONS


def _msg_missing_type():
    return ('The object has no "@type".',
            'Add "@type" with the most specific schema.org type, for example "LocalBusiness", "Organization", '
            '"Article" or "Product".')


def _msg_nested_missing_type(p, want):
    return 'The object in "' + p + '" has no "@type"; expected "' + want + '".', 'Add "@type": "' + want + '".'


def _msg_nested_wrong_type(p, got, want):
    return ('The object in "' + p + '" has "@type" "' + got + '"; expected "' + want + '".',
            'Set "@type" to "' + want + '".')


def _msg_bad_type():
    return ('"@type" must be a non-empty string or an array of non-empty strings.',
            'Set "@type" to a schema.org type name.')


def _msg_type_case(got, want):
    return ('"@type" "' + got + '" has the wrong letter case; schema.org type names are case-sensitive.',
            'Write "' + want + '".')


def _msg_missing_context():
    return 'The object has no "@context".', 'Add "@context": "https://schema.org".'


def _msg_bad_context():
    return '"@context" does not point to schema.org.', 'Set "@context" to "https://schema.org".'


def _msg_not_object():
    return "The JSON-LD item is not an object.", 'Make each item a JSON object with "@context" and "@type".'


def _msg_placeholder(p, label):
    return ('Property "' + p + '" contains placeholder text ("' + label + '").',
            "Replace the placeholder with the real value; placeholder data must never be published.")


def _msg_commented_out():
    return ("The JSON-LD block is inside an HTML comment; crawlers ignore it.",
            "Remove the comment markers around the script element if this markup should be used.")


def _msg_entity_encoded():
    return ("The JSON-LD block is HTML-entity-encoded; crawlers read script contents literally and see invalid "
            "JSON.",
            "Write the JSON with plain quotes and characters inside the script element, without HTML entities.")


# ================================================================ validation

def _finding(sev, code, path, prop, msg, fix, snip):
    return {"severity": sev, "code": code, "path": path, "property": prop, "message": msg, "fix": fix,
            "snippet": snip}


class _Opts:
    __slots__ = ("base", "ctx", "has_ctx", "skip_graph", "block_flags", "block_errors")

    def __init__(self, base=""):
        self.base = base
        self.ctx = None
        self.has_ctx = False
        self.skip_graph = False
        self.block_flags = ()
        self.block_errors = ()

    def copy(self):
        o = _Opts(self.base)
        o.ctx, o.has_ctx, o.skip_graph = self.ctx, self.has_ctx, self.skip_graph
        o.block_flags, o.block_errors = self.block_flags, self.block_errors
        return o


_RE_PLAIN_KEY = re.compile(r"[A-Za-z0-9@_$:-]+\Z")
_SCHEMA_PREFIXES = ("https://schema.org/", "http://schema.org/", "schema:")


def _path_key(path, key):
    if _RE_PLAIN_KEY.match(key):
        return path + "." + key
    return path + "[" + _json_quote(key) + "]"


def _path_index(path, i):
    return path + "[" + str(i) + "]"


def _is_number(v):
    return isinstance(v, (int, float, JSONNumber)) and not isinstance(v, bool)


def _number_value(v):
    """(value, ok) of a JSON number, as Go's numberValue."""
    if isinstance(v, bool):
        return 0.0, False
    if isinstance(v, JSONNumber):
        return float(v.text), True
    if isinstance(v, int):
        try:
            return float(v), True
        except OverflowError:
            return (math.inf if v > 0 else -math.inf), True
    if isinstance(v, float):
        return v, True
    return 0.0, False


def _context_ok(c):
    if isinstance(c, str):
        s = _trim_ascii(c)
        if s.endswith("/"):
            s = s[:-1]
        return s == "https://schema.org" or s == "http://schema.org"
    if isinstance(c, dict):
        voc = c.get("@vocab")
        if isinstance(voc, str):
            return _context_ok(voc)
        return False
    if isinstance(c, list):
        return any(_context_ok(e) for e in c)
    return False


def _type_name(s):
    s = _trim_ascii(s)
    for p in _SCHEMA_PREFIXES:
        if s.startswith(p):
            s = s[len(p):]
    return s


def _type_names(t):
    """The @type names, or None when @type is not a non-empty string or a
    non-empty array of non-empty strings."""
    if isinstance(t, str):
        s = _type_name(t)
        return [s] if s else None
    if isinstance(t, list):
        if not t:
            return None
        out = []
        for e in t:
            if not isinstance(e, str):
                return None
            s = _type_name(e)
            if not s:
                return None
            out.append(s)
        return out
    return None


def _pick_family(types):
    best = len(_FAMILY_ORDER)
    family, reported = "", ""
    for t in types:
        f = _TYPE_FAMILY.get(t)
        if f is None:
            continue
        i = _FAMILY_ORDER.index(f)
        if i < best:
            best, family, reported = i, f, t
    if family == "" and types:
        reported = types[0]
    return family, reported


def _nested_label(m, fallback):
    names = _type_names(m.get("@type"))
    if names is not None:
        return names[0]
    return fallback


def _present(m, k):
    return m.get(k) is not None


def _has_name(v):
    return isinstance(v, dict) and _present(v, "name")


class _Validator:
    def __init__(self, base):
        self.base = base
        self.errs = []
        self.warns = []

    def add(self, sev, code, path, prop, msg, fix, snip):
        f = _finding(sev, code, path, prop, msg, fix, snip)
        if sev == SEVERITY_ERROR:
            self.errs.append(f)
        else:
            self.warns.append(f)

    def check_top(self, m, path, o):
        has = "@context" in m
        ctx = m.get("@context")
        ctx_path = _path_key(path, "@context")
        if not has and o.has_ctx:
            ctx, has, ctx_path = o.ctx, True, path
        if not has:
            msg, fix = _msg_missing_context()
            self.add(SEVERITY_ERROR, "missing_context", path, "@context", msg, fix, _CONTEXT_SNIPPET)
        elif not _context_ok(ctx):
            msg, fix = _msg_bad_context()
            self.add(SEVERITY_ERROR, "bad_context", ctx_path, "@context", msg, fix, _CONTEXT_SNIPPET)
        if "@type" not in m:
            msg, fix = _msg_missing_type()
            self.add(SEVERITY_ERROR, "missing_type", path, "@type", msg, fix, _prop_snippet("@type", "Organization"))
            return ""
        types = _type_names(m["@type"])
        if types is None:
            msg, fix = _msg_bad_type()
            self.add(SEVERITY_ERROR, "bad_type", _path_key(path, "@type"), "@type", msg, fix,
                     _prop_snippet("@type", "Organization"))
            return ""
        family, reported = _pick_family(types)
        if family == "":
            for t in types:
                want = _KNOWN_TYPES_LOWER.get(_ascii_lower(t))
                if want is not None:
                    msg, fix = _msg_type_case(t, want)
                    self.add(SEVERITY_ERROR, "type_case", _path_key(path, "@type"), "@type", msg, fix,
                             _prop_snippet("@type", want))
                    break
            return reported
        self.check_ruleset(m, path, _RULESETS[family], reported, (0, 1, ""))
        return reported

    def check_ruleset(self, m, path, rs, label, pos):
        if rs.expect:
            names = _type_names(m.get("@type"))
            if names is None:
                msg, fix = _msg_nested_missing_type(pos[2], rs.expect)
                self.add(SEVERITY_ERROR, "missing_type", path, "@type", msg, fix, _prop_snippet("@type", rs.expect))
            elif rs.expect not in names:
                msg, fix = _msg_nested_wrong_type(pos[2], ", ".join(names), rs.expect)
                self.add(SEVERITY_ERROR, "wrong_type", _path_key(path, "@type"), "@type", msg, fix,
                         _prop_snippet("@type", rs.expect))
        for p in rs.props:
            if p.kind == K_GROUP:
                if not any(_present(m, a) for a in p.alts):
                    self.missing(path, label, p)
                continue
            if p.name not in m:
                if p.unless and _present(m, p.unless):
                    pass
                elif p.except_last and pos[0] == pos[1] - 1:
                    pass
                elif p.unless_named and _has_name(m.get(p.unless_named)):
                    pass
                else:
                    self.missing(path, label, p)
                continue
            val = m[p.name]
            if p.kind == K_POSITION:
                # The position is compared with the object's own place in its list.
                self.check_elem(val, _path_key(path, p.name), p, pos)
                continue
            self.check_value(val, _path_key(path, p.name), p)

    def missing(self, path, label, p):
        alts = p.alts if p.alts is not None else [p.name]
        snip = _example_snippet(alts[0], p.owner, alts[0])
        if p.level == _REQUIRED:
            if alts[0] == "priceCurrency":
                msg, fix = _msg_missing_currency(label)
                self.add(SEVERITY_ERROR, "missing_currency", path, "priceCurrency", msg, fix, snip)
                return
            msg, fix = _msg_missing(label, "required", alts)
            self.add(SEVERITY_ERROR, "missing_required", path, alts[0], msg, fix, snip)
        elif p.level == _RECOMMENDED:
            msg, fix = _msg_missing(label, "recommended", alts)
            self.add(SEVERITY_WARNING, "missing_recommended", path, alts[0], msg, fix, snip)

    def empty(self, path, p):
        sev = SEVERITY_ERROR if p.level == _REQUIRED else SEVERITY_WARNING
        msg, fix = _msg_empty(p.name)
        self.add(sev, "empty_value", path, p.name, msg, fix, _example_snippet(p.name, p.owner, p.name))

    def wrong_type(self, path, p, sev):
        msg, fix = _msg_wrong_type(p.name, _expected(p))
        self.add(sev, "wrong_type", path, p.name, msg, fix, _example_snippet(p.name, p.owner, p.name))

    def check_value(self, val, path, p):
        if val is None:
            self.empty(path, p)
        elif isinstance(val, list):
            if not val:
                self.empty(path, p)
                return
            n = len(val)
            for i, e in enumerate(val):
                self.check_elem(e, _path_index(path, i), p, (i, n, p.name))
        else:
            self.check_elem(val, path, p, (0, 1, p.name))

    def check_elem(self, el, path, p, pos):
        if el is None:
            self.empty(path, p)
            return
        if isinstance(el, list):
            self.wrong_type(path, p, SEVERITY_ERROR)
            return
        is_str = isinstance(el, str)
        t = _trim_ascii(el) if is_str else ""
        is_obj = isinstance(el, dict)
        m = el if is_obj else None
        is_num = _is_number(el)
        k = p.kind
        if k == K_TEXT:
            if is_obj:
                val = m.get("@value")
                if isinstance(val, str):
                    t, is_str = _trim_ascii(val), True
            if is_str and t == "":
                self.empty(path, p)
            elif is_str:
                n = len(t)
                if p.max_len > 0 and n > p.max_len:
                    msg, fix = _msg_too_long(p.name, n, p.max_len)
                    self.add(SEVERITY_WARNING, "too_long", path, p.name, msg, fix,
                             _prop_snippet(p.name, _truncate_runes(t, p.max_len)))
            elif is_num:
                self.wrong_type(path, p, SEVERITY_WARNING)
            else:
                self.wrong_type(path, p, SEVERITY_ERROR)
        elif k == K_URL:
            if not is_str:
                self.wrong_type(path, p, SEVERITY_ERROR)
                return
            self.check_url(t, path, p)
        elif k == K_IMAGE:
            if is_str:
                self.check_url(t, path, p)
            elif is_obj:
                for key in ("url", "contentUrl"):
                    if key in m:
                        self.check_value(m[key], _path_key(path, key), _Prop(key, _RECOMMENDED, K_URL))
                        return
                msg, fix = _msg_missing(_nested_label(m, "ImageObject"), "recommended", ["url"])
                self.add(SEVERITY_WARNING, "missing_recommended", path, "url", msg, fix,
                         _prop_snippet("url", _example_for("image")))
            else:
                self.wrong_type(path, p, SEVERITY_ERROR)
        elif k == K_DATE:
            if not is_str:
                self.wrong_type(path, p, SEVERITY_ERROR)
                return
            if t == "":
                self.empty(path, p)
                return
            problem = _date_problem(t)
            if problem == "bad_date":
                msg, fix = _msg_bad_date(p.name, t)
                self.add(SEVERITY_ERROR, "bad_date", path, p.name, msg, fix,
                         _prop_snippet(p.name, _example_date(p.name)))
            elif problem == "missing_timezone":
                msg, fix = _msg_missing_timezone(p.name, t)
                self.add(SEVERITY_WARNING, "missing_timezone", path, p.name, msg, fix,
                         _prop_snippet(p.name, t + "+00:00"))
        elif k == K_NUMBER:
            if is_num:
                pass
            elif is_str and t == "":
                self.empty(path, p)
            elif is_str and not _RE_NUMBER.match(t):
                msg, fix = _msg_bad_number(p.name, t)
                self.add(SEVERITY_ERROR, "bad_number", path, p.name, msg, fix,
                         _example_snippet(p.name, p.owner, p.name))
            elif not is_str:
                self.wrong_type(path, p, SEVERITY_ERROR)
        elif k == K_PRICE:
            if is_num:
                f, _ = _number_value(el)
                if f < 0:
                    msg, fix = _msg_negative_price(p.name)
                    self.add(SEVERITY_ERROR, "bad_price", path, p.name, msg, fix,
                             _example_snippet(p.name, p.owner, p.name))
            elif is_str and t == "":
                self.empty(path, p)
            elif is_str and not _RE_PRICE.match(t):
                msg, fix = _msg_bad_price(p.name, t)
                self.add(SEVERITY_ERROR, "bad_price", path, p.name, msg, fix,
                         _example_snippet(p.name, p.owner, p.name))
            elif not is_str:
                self.wrong_type(path, p, SEVERITY_ERROR)
        elif k in (K_CURRENCY, K_TIME, K_HOURS, K_AVAILABILITY):
            if not is_str:
                self.wrong_type(path, p, SEVERITY_ERROR)
                return
            if t == "":
                self.empty(path, p)
                return
            self.check_format(t, path, p)
        elif k == K_OBJECT:
            if is_obj:
                sub = p.sub
                if sub == "Offer":
                    names = _type_names(m.get("@type"))
                    if names is not None and "AggregateOffer" in names:
                        sub = "AggregateOffer"
                rs = _RULESETS[sub]
                self.check_ruleset(m, path, rs, _nested_label(m, rs.name), pos)
            elif is_str and p.text == _TEXT_OK:
                if t == "":
                    self.empty(path, p)
            elif is_str and p.text == _TEXT_WARN:
                if t == "":
                    self.empty(path, p)
                else:
                    self.wrong_type(path, p, SEVERITY_WARNING)
            else:
                self.wrong_type(path, p, SEVERITY_ERROR)
        elif k == K_ITEM:
            if is_str:
                self.check_url(t, path, p)
            elif is_obj:
                if "@id" in m:
                    self.check_value(m["@id"], _path_key(path, "@id"), _Prop("@id", _REQUIRED, K_URL))
                    return
                msg, fix = _msg_missing(_nested_label(m, "Thing"), "required", ["@id"])
                self.add(SEVERITY_ERROR, "missing_required", path, "@id", msg, fix,
                         _prop_snippet("@id", _example_for("item")))
            else:
                self.wrong_type(path, p, SEVERITY_ERROR)
        elif k == K_POSITION:
            f, ok = _number_value(el)
            if not ok:
                self.wrong_type(path, p, SEVERITY_ERROR)
                return
            want = pos[0] + 1
            if math.isinf(f) or math.isnan(f) or f != math.trunc(f) or f < 1:
                msg, fix = _msg_bad_position(p.name)
                self.add(SEVERITY_ERROR, "bad_position", path, p.name, msg, fix, _prop_snippet(p.name, want))
            elif f != float(want):
                msg, fix = _msg_position_order(want)
                self.add(SEVERITY_WARNING, "position_order", path, p.name, msg, fix, _prop_snippet(p.name, want))

    def check_format(self, t, path, p):
        k = p.kind
        if k == K_CURRENCY:
            if not _RE_CURRENCY.match(t):
                msg, fix = _msg_bad_currency(p.name, t)
                self.add(SEVERITY_ERROR, "bad_currency", path, p.name, msg, fix, _prop_snippet(p.name, "USD"))
        elif k == K_TIME:
            if not _RE_TIME.match(t):
                msg, fix = _msg_bad_time(p.name, t)
                self.add(SEVERITY_ERROR, "bad_time", path, p.name, msg, fix,
                         _example_snippet(p.name, p.owner, p.name))
        elif k == K_HOURS:
            if not _RE_OPENING_HRS.match(t):
                msg, fix = _msg_bad_hours(p.name, t)
                self.add(SEVERITY_WARNING, "bad_opening_hours", path, p.name, msg, fix,
                         _prop_snippet(p.name, "Mo-Fr 09:00-17:00"))
        elif k == K_AVAILABILITY:
            name = t
            for pre in _SCHEMA_PREFIXES:
                if name.startswith(pre):
                    name = name[len(pre):]
            if name not in _AVAILABILITY_VALUES:
                msg, fix = _msg_bad_enum(p.name, t)
                self.add(SEVERITY_WARNING, "bad_enum", path, p.name, msg, fix,
                         _prop_snippet(p.name, "https://schema.org/InStock"))

    def check_url(self, t, path, p):
        if t == "":
            self.empty(path, p)
            return
        problem = _url_problem(t)
        if problem == "relative_url":
            msg, fix = _msg_relative_url(p.name, t)
            self.add(SEVERITY_ERROR, "relative_url", path, p.name, msg, fix,
                     _prop_snippet(p.name, _resolve_url(self.base, t)))
        elif problem == "bad_url":
            msg, fix = _msg_bad_url(p.name, t)
            self.add(SEVERITY_ERROR, "bad_url", path, p.name, msg, fix,
                     _example_snippet(p.name, p.owner, p.name))

    def scan_placeholders(self, val, path, prop, skip_graph):
        if isinstance(val, str):
            label = find_placeholder(val)
            if label is not None:
                msg, fix = _msg_placeholder(prop, label)
                self.add(SEVERITY_ERROR, "placeholder", path, prop, msg, fix, _prop_snippet(prop, "<real value>"))
        elif isinstance(val, dict):
            for k in sorted(val):
                if skip_graph and k == "@graph":
                    continue
                self.scan_placeholders(val[k], _path_key(path, k), k, False)
        elif isinstance(val, list):
            for i, e in enumerate(val):
                self.scan_placeholders(e, _path_index(path, i), prop, False)


def _example_date(p):
    if p in ("datePublished", "dateModified", "priceValidUntil"):
        return _example_for(p)
    return _example_for("datePublished")


def _validate_node(node, path, o):
    v = _Validator(o.base)
    v.errs = [dict(f) for f in o.block_errors]
    v.warns = [dict(f) for f in o.block_flags]
    typ = ""
    if not isinstance(node, dict):
        msg, fix = _msg_not_object()
        v.add(SEVERITY_ERROR, "not_object", path, "", msg, fix,
              _snippet({"@context": "https://schema.org", "@type": "Organization", "name": "Your Business Name"}))
    else:
        typ = v.check_top(node, path, o)
        v.scan_placeholders(node, path, "", o.skip_graph)
    return {"type": typ, "errors": v.errs, "warnings": v.warns}


def validate(obj):
    """Checks one JSON-LD object (a dict as json.load or parse_json gives
    it) with paths starting at "$"; relative-URL snippets use the origin
    "https://<your-domain>". Returns the Go JSON form of Validation:
    {"type", "errors", "warnings"}."""
    return _validate_node(_go_value(obj), "$", _Opts())


# ================================================================ JSON-LD in pages

class Block:
    """One <script type="application/ld+json"> element found in a page.
    to_dict() gives the Go JSON form {index, source, line, ok, error}."""

    __slots__ = ("index", "source", "line", "ok", "error", "tag_start", "content_start", "content_end",
                 "in_comment", "entity_encoded", "text", "value")

    def __init__(self, index, tag_start, content_start, content_end, in_comment):
        self.index = index
        self.source = ""
        self.line = 0
        self.ok = False
        self.error = None
        self.tag_start = tag_start
        self.content_start = content_start
        self.content_end = content_end
        self.in_comment = in_comment
        self.entity_encoded = False
        self.text = ""
        self.value = None

    def to_dict(self):
        return {"index": self.index, "source": self.source, "line": self.line, "ok": self.ok,
                "error": self.error.to_dict() if self.error is not None else None}


def _is_jsonld_type(t):
    i = t.find(";")
    if i >= 0:
        t = t[:i]
    return _ascii_lower(t.strip(_HTML_WS)) == "application/ld+json"


def extract_jsonld(html):
    """The JSON-LD blocks of a page in document order, including blocks
    inside HTML comments, parsed (Go's ExtractJSONLD)."""
    html = _go_string(html)
    blocks = []
    # Blocks come in document order, so line numbers are counted on from the
    # previous block.
    line_at = [0, 1]  # offset, line there

    def walk(toks, base, in_comment):
        for k, t in enumerate(toks):
            if t.kind == TOK_COMMENT and not in_comment:
                inner = html[base + t.content_start:base + t.content_end]
                walk(scan(inner), base + t.content_start, True)
            elif t.kind == TOK_START_TAG and t.name == "script":
                typ, _ = t.attr("type")
                if not _is_jsonld_type(typ) or k + 1 >= len(toks) or toks[k + 1].kind != TOK_RAW_TEXT:
                    continue
                raw = toks[k + 1]
                b = Block(len(blocks), base + t.start, base + raw.content_start, base + raw.content_end, in_comment)
                line_at[1] += html.count("\n", line_at[0], b.tag_start)
                line_at[0] = b.tag_start
                b.line = line_at[1]
                _parse_block(b, html[b.content_start:b.content_end])
                blocks.append(b)

    walk(scan(html), 0, False)
    return blocks


def _parse_block(b, content):
    text = content
    t = content.strip(_HTML_WS)
    if len(t) >= 7 and t.startswith("<!--") and t.endswith("-->"):
        text = t[4:len(t) - 3]
        b.in_comment = True
    v, err = None, None
    try:
        v = parse_json(text)
    except JSONError as e:
        err = e
    if err is not None and "&" in text:
        dec = decode_entities(text)
        try:
            v2 = parse_json(dec)
        except JSONError:
            pass
        else:
            v, err, text = v2, None, dec
            b.entity_encoded = True
    b.text = text
    b.ok = err is None
    b.error = err
    b.value = v
    if b.in_comment:
        b.source = SOURCE_COMMENT
    elif b.entity_encoded:
        b.source = SOURCE_ENTITY
    else:
        b.source = SOURCE_SCRIPT


def check_page_jsonld(html, page_url=""):
    """Extracts and validates the JSON-LD of a page (Go's CheckPageJSONLD);
    returns the Go JSON form of PageReport."""
    html = _go_string(html)
    page_url = _go_string(page_url)
    blocks = extract_jsonld(html)
    objects = []
    error_count = 0
    warning_count = 0
    for b in blocks:
        if not b.ok:
            error_count += 1
            continue
        o = _Opts(page_url)
        if b.entity_encoded:
            msg, fix = _msg_entity_encoded()
            o.block_errors = [_finding(SEVERITY_ERROR, "entity_encoded", "", "", msg, fix, _SCRIPT_SNIPPET)]
        if b.in_comment:
            msg, fix = _msg_commented_out()
            o.block_flags = [_finding(SEVERITY_WARNING, "commented_out", "", "", msg, fix, _SCRIPT_SNIPPET)]
        for path, value in _top_items(b.value):
            objects.extend(_item_reports(b.index, path, value, o))
    for r in objects:
        error_count += len(r["errors"])
        warning_count += len(r["warnings"])
    return {
        "blocks": [b.to_dict() for b in blocks],
        "objects": objects,
        "error_count": error_count,
        "warning_count": warning_count,
        "text": extract_text(html),
    }


def _top_items(v):
    if isinstance(v, list):
        return [(_path_index("$", i), e) for i, e in enumerate(v)]
    return [("$", v)]


def _item_reports(block, path, v, o):
    def report(node, p, opts):
        val = _validate_node(node, p, opts)
        for f in val["errors"]:
            if f["path"] == "":
                f["path"] = p
        for f in val["warnings"]:
            if f["path"] == "":
                f["path"] = p
        return {"block": block, "path": p, "type": val["type"], "errors": val["errors"], "warnings": val["warnings"]}

    if not isinstance(v, dict):
        return [report(v, path, o)]
    if "@graph" not in v:
        return [report(v, path, o)]
    g = v["@graph"]
    gpath = _path_key(path, "@graph")
    if isinstance(g, list):
        nodes = [(_path_index(gpath, i), e) for i, e in enumerate(g)]
    elif isinstance(g, dict):
        nodes = [(gpath, g)]
    else:
        co = o.copy()
        co.skip_graph = True
        r = report(v, path, co)
        msg, fix = _msg_wrong_type("@graph", "an array of objects")
        r["errors"].append(_finding(SEVERITY_ERROR, "wrong_type", gpath, "@graph", msg, fix,
                                    _prop_snippet("@graph", _example_for("@graph"))))
        return [r]
    out = []
    if "@type" in v:
        co = o.copy()
        co.skip_graph = True
        out.append(report(v, path, co))
    has_ctx = "@context" in v
    ctx = v.get("@context")
    for npath, node in nodes:
        no = o.copy()
        no.ctx, no.has_ctx = ctx, has_ctx
        out.append(report(node, npath, no))
    return out


# ================================================================ meta

def _problem(code, msg, fix):
    return {"code": code, "message": msg, "fix": fix}


def _split_html_space(s):
    return [f for f in re.split("[ \t\n\f\r]+", s) if f]


def check_meta(html, page_url=""):
    """Reads a page's title, meta description, canonical link, html lang,
    robots directives and Open Graph tags and lists their problems (Go's
    CheckMeta); returns the Go JSON form of MetaReport."""
    html = _go_string(html)
    page_url = _go_string(page_url)
    have_title = have_desc = have_lang = False
    title = description = lang = ""
    canonicals = []
    robots = []
    og = {}
    svg = 0
    toks = scan(html)
    for k, t in enumerate(toks):
        if t.kind == TOK_START_TAG:
            name = t.name
            if name == "svg":
                svg += 1
            elif name == "html":
                if not have_lang:
                    have_lang = True
                    lang = _trim_ascii(t.attr("lang")[0])
            elif name == "title":
                if not have_title and svg == 0 and k + 1 < len(toks) and toks[k + 1].kind == TOK_RAW_TEXT:
                    have_title = True
                    raw = toks[k + 1]
                    title = _collapse_space(decode_entities(html[raw.content_start:raw.content_end]))
            elif name == "link":
                rel, _ = t.attr("rel")
                # A canonical link without an href (or with an empty one) is
                # ignored, as browsers and search engines ignore it.
                href = _trim_ascii(t.attr("href")[0])
                if href != "" and "canonical" in _split_html_space(_ascii_lower(rel)):
                    canonicals.append(href)
            elif name == "meta":
                mname = _ascii_lower(_trim_ascii(t.attr("name")[0]))
                content = _collapse_space(t.attr("content")[0])
                if mname == "description":
                    if not have_desc:
                        have_desc = True
                        description = content
                elif mname == "robots" or mname == "googlebot":
                    if content != "":
                        robots.append(content)
                prop, ok = t.attr("property")
                if not ok:
                    prop = mname
                prop = _ascii_lower(_trim_ascii(prop))
                if prop.startswith("og:") and prop not in og:
                    og[prop] = content
        elif t.kind == TOK_END_TAG:
            if t.name == "svg" and svg > 0:
                svg -= 1
    r = {
        "title": title,
        "description": description,
        "canonical": canonicals[0] if canonicals else "",
        "lang": lang,
        "robots": ", ".join(robots),
        "noindex": False,
        "nosnippet": False,
        "og": {
            "title": og.get("og:title", ""),
            "description": og.get("og:description", ""),
            "image": _trim_ascii(og.get("og:image", "")),
            "type": og.get("og:type", ""),
        },
        "problems": [],
    }
    for d in _ascii_lower(r["robots"]).split(","):
        d = d.replace(" ", "")
        if d in ("noindex", "none"):
            r["noindex"] = True
        elif d in ("nosnippet", "max-snippet:0"):
            r["nosnippet"] = True
    r["problems"] = _meta_problems(r, canonicals, page_url)
    return r


def _meta_problems(r, canonicals, page_url):
    ps = []

    def add(code, msg, fix):
        ps.append(_problem(code, msg, fix))

    tl = len(r["title"])
    if tl == 0:
        add("missing_title", "The page has no <title>.",
            "Add a <title> of 10 to 60 characters that names the page topic and the business.")
    elif tl < TITLE_MIN:
        add("title_too_short", "The title is " + str(tl) + " characters; use at least 10.",
            "Write a descriptive title of 10 to 60 characters.")
    elif tl > TITLE_MAX:
        add("title_too_long", "The title is " + str(tl) + " characters; titles are cut after about 60.",
            "Shorten the title to at most 60 characters, most important words first.")
    dl = len(r["description"])
    if dl == 0:
        add("missing_description", "The page has no meta description.",
            'Add <meta name="description" content="..."> with a 50 to 160 character summary of the page.')
    elif dl < DESCRIPTION_MIN:
        add("description_too_short", "The meta description is " + str(dl) + " characters; use at least 50.",
            "Write a 50 to 160 character summary that answers what the page offers.")
    elif dl > DESCRIPTION_MAX:
        add("description_too_long",
            "The meta description is " + str(dl) + " characters; descriptions are cut after about 160.",
            "Shorten the meta description to at most 160 characters.")
    canonical = r["canonical"]
    if canonical == "":
        add("missing_canonical", "The page has no canonical link.",
            'Add <link rel="canonical" href="https://..."> with the page\'s preferred absolute URL.')
    elif not is_absolute_url(canonical):
        add("relative_canonical", 'The canonical URL "' + canonical + '" is not an absolute http(s) URL.',
            "Use an absolute canonical URL with https:// and the host.")
    elif is_absolute_url(page_url) and _normalize_url(canonical) != _normalize_url(page_url):
        add("canonical_mismatch",
            'The canonical URL "' + canonical + '" points to another URL than the page ("' + page_url + '").',
            "Point the canonical link at this page's own URL unless the page is a deliberate duplicate.")
    distinct = []
    for c in canonicals:
        if c not in distinct:
            distinct.append(c)
    if len(distinct) > 1:
        add("multiple_canonical", "The page declares " + str(len(distinct)) + " different canonical URLs.",
            'Keep exactly one <link rel="canonical">.')
    if r["noindex"]:
        add("noindex", "The robots meta directives include noindex, so search engines and AI answers drop the page.",
            'Remove noindex (and none) from <meta name="robots"> and <meta name="googlebot"> if the page should '
            'be found.')
    if r["nosnippet"]:
        add("nosnippet",
            "The robots meta directives include nosnippet or max-snippet:0, so no text of the page can be quoted "
            "in answers.",
            "Remove nosnippet and max-snippet:0 unless quoting must be prevented.")
    if r["lang"] == "":
        add("missing_lang", "The <html> element has no lang attribute.",
            'Declare the page language, for example <html lang="en">.')
    og = r["og"]
    missing = [k for k, v in (("og:title", og["title"]), ("og:description", og["description"]),
                              ("og:image", og["image"])) if v == ""]
    if missing:
        add("missing_og", "Open Graph tags are missing: " + ", ".join(missing) + ".",
            'Add <meta property="og:title">, <meta property="og:description"> and <meta property="og:image"> tags.')
    if og["image"] != "" and not is_absolute_url(og["image"]):
        add("relative_og_image", 'og:image "' + og["image"] + '" is not an absolute http(s) URL.',
            "Use an absolute image URL with https:// and the host.")
    return ps


def _normalize_url(u):
    m = _RE_URL_PARTS.match(u)
    if m is None:
        return u
    scheme = _ascii_lower(m.group(1))
    host = _ascii_lower(m.group(2))
    if (scheme == "http" and host.endswith(":80")) or (scheme == "https" and host.endswith(":443")):
        host = host[:host.rfind(":")]
    path = m.group(3) or "/"
    return scheme + "://" + host + path + (m.group(4) or "")


# ================================================================ alt text

_GENERIC_ALT_WORDS = frozenset((
    "alt", "alt image", "alt tag", "alt text", "avatar", "background", "banner", "bg",
    "blank", "click here", "default", "description", "dummy", "featured image", "figure",
    "graphic", "header image", "hero", "hero image", "icon", "image", "image alt",
    "image description", "images", "img", "insert alt text", "logo", "my image", "n a",
    "none", "null", "photo", "photograph", "photos", "pic", "picture", "pictures",
    "placeholder", "sample", "screenshot", "spacer", "stock photo", "tbd", "test",
    "thumb", "thumbnail", "todo", "undefined", "untitled",
))

_DROPPED_ALT_TOKENS = frozenset((
    "a", "an", "the", "of",
    "jpg", "jpeg", "png", "gif", "webp", "svg", "avif", "bmp", "tif", "tiff", "heic",
))

_RE_CAMERA_TOKEN = re.compile(r"(?:img|dsc|dscn|dscf|pxl|mvimg|gopr|dji|pict|wp|wa|screenshot)[0-9]+\Z")
_RE_CAMERA_PREFIX = re.compile(r"(?:img|dsc|dscn|dscf|pxl|mvimg|gopr|dji|pict|wp|wa|screenshot)\Z")
_RE_DIGITS_TOKEN = re.compile(r"[0-9]+\Z")
_RE_FILE_NAME = re.compile(r"[^ /]+\.(?:jpe?g|png|gif|webp|svg|avif|bmp|tiff?|heic|ico)\Z")
_RE_NOT_ALNUM_LOWER = re.compile("[^a-z0-9]+")


def _norm_alnum(s):
    """ASCII letters lowered, every other character a space, spaces
    collapsed and trimmed."""
    return _RE_NOT_ALNUM_LOWER.sub(" ", _ascii_lower(s)).strip(" ")


def meaningful_alt(alt, src=""):
    """Whether an image's alt text describes it (Go's MeaningfulAlt). alt
    None means the attribute is missing; src (may be "") is the image URL."""
    if alt is None:
        return False
    t = _collapse_space(_go_string(alt))
    src = _go_string(src)
    if t == "" or len(t) < 2:
        return False
    if not any(_is_letter(ch) for ch in t):
        return False
    lt = _ascii_lower(t)
    for p in ("http://", "https://", "www.", "data:"):
        if lt.startswith(p):
            return False
    if _RE_FILE_NAME.match(lt):
        return False
    n = _norm_alnum(t)
    if src != "":
        file = src
        cut = [i for i in (file.find("?"), file.find("#")) if i >= 0]
        if cut:
            file = file[:min(cut)]
        file = file[file.rfind("/") + 1:]
        stem = file
        i = stem.rfind(".")
        if i >= 0:
            stem = stem[:i]
        if lt == _ascii_lower(file) or (n != "" and n == _norm_alnum(stem)):
            return False
    if n != "":
        toks = n.split(" ")
        kept = []
        for i, tok in enumerate(toks):
            # A camera token: a camera prefix followed by digits ("dsc01234"),
            # or a camera prefix alone before a digit-only token ("dsc 0042").
            camera = _RE_CAMERA_TOKEN.match(tok) is not None or (
                _RE_CAMERA_PREFIX.match(tok) is not None and i + 1 < len(toks)
                and _RE_DIGITS_TOKEN.match(toks[i + 1]) is not None)
            if camera or _RE_DIGITS_TOKEN.match(tok) or tok in _DROPPED_ALT_TOKENS:
                continue
            kept.append(tok)
        if not kept or " ".join(kept) in _GENERIC_ALT_WORDS:
            return False
    if find_placeholder(t) is not None:
        return False
    return True


# ================================================================ llms.txt

_RE_LLMS_TITLE = re.compile(r"#[ \t]+[^ \t]")
_RE_LLMS_SECTION = re.compile(r"##[ \t]+[^ \t]")
_RE_LLMS_LINK = re.compile(r"[ \t]*[-*+][ \t]+\[[^\]]+\]\([^ \t)]+\)")

_FIX_ADD_LLMS_TXT = (
    'Publish a Markdown file at /llms.txt: a first line "# Site name", then a "> one or two sentence summary" '
    'line, then "## " sections listing links as "- [Page title](https://...): what it covers", served as '
    "text/plain or text/markdown.")


def check_llms_txt(status, content_type="", body=""):
    """Checks a fetched /llms.txt (Go's CheckLLMsTxt); returns the Go JSON
    form of LLMsTxtReport."""
    content_type = _go_string(content_type)
    body = _go_string(body)
    r = {"found": False, "ok": False, "is_html": False, "title": "", "summary": "", "links": 0, "sections": 0,
         "problems": []}

    def add(code, msg, fix):
        r["problems"].append(_problem(code, msg, fix))

    if status == 404 or status == 410:
        add("not_found", "There is no /llms.txt (HTTP " + str(status) + ").", _FIX_ADD_LLMS_TXT)
        return r
    if status < 200 or status > 299:
        add("bad_status", "Fetching /llms.txt gave HTTP status " + str(status) + ".",
            "Make /llms.txt answer 200 with the Markdown file.")
        return r
    r["found"] = True
    ct = content_type
    i = ct.find(";")
    if i >= 0:
        ct = ct[:i]
    ct = _ascii_lower(_trim_ascii(ct))
    if body.startswith("\ufeff"):
        body = body[1:]
    lead = _ascii_lower(body.lstrip(_HTML_WS))
    if (ct == "text/html" or ct == "application/xhtml+xml" or lead.startswith("<!doctype")
            or lead.startswith("<html")):
        r["is_html"] = True
        add("served_html",
            "An HTML page is served in place of /llms.txt (often a soft 404 or a single-page-app fallback).",
            "Serve a real Markdown file at /llms.txt with Content-Type text/plain or text/markdown.")
        return r
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    if _trim_ascii(body) == "":
        add("empty", "The llms.txt file is empty.", _FIX_ADD_LLMS_TXT)
        return r
    if ct != "" and ct not in ("text/plain", "text/markdown", "text/x-markdown"):
        add("unexpected_content_type", 'llms.txt is served as "' + ct + '"; expected text/plain or text/markdown.',
            "Serve /llms.txt with Content-Type text/plain; charset=utf-8 or text/markdown.")
    lines = body.split("\n")

    def blank(s):
        return s.strip(" \t") == ""

    i = 0
    while i < len(lines) and blank(lines[i]):
        i += 1
    if _RE_LLMS_TITLE.match(lines[i]):
        r["title"] = lines[i][1:].strip(" \t")
        i += 1
        while i < len(lines) and blank(lines[i]):
            i += 1
    quote = []
    while i < len(lines) and lines[i].startswith(">"):
        l = lines[i][1:]
        if l.startswith(" "):
            l = l[1:]
        quote.append(l)
        i += 1
    r["summary"] = _collapse_space(" ".join(quote))
    for l in lines:
        if _RE_LLMS_SECTION.match(l):
            r["sections"] += 1
        if _RE_LLMS_LINK.match(l):
            r["links"] += 1
    if r["title"] == "":
        add("missing_title", 'The first line is not a "# Title" heading.',
            'Start the file with "# " and the site or project name.')
    if r["summary"] == "":
        add("missing_summary", 'No "> summary" blockquote follows the title.',
            'Add a line starting with "> " right after the title that sums up the site in one or two sentences.')
    if r["links"] == 0:
        add("no_links", "The file lists no links.",
            'Add "## " sections with list items such as "- [Services](https://www.example.com/services.md): '
            'what they cover".')
    r["ok"] = len(r["problems"]) == 0
    return r


# ================================================================ markup

class MarkupError(ValueError):
    """Invalid facts for generate_markup; str() is Go's error text."""


FACT_FIELDS = (
    "name", "type", "url", "telephone", "email", "street", "city", "region", "postal_code", "country",
    "opening_hours", "price_range", "same_as", "description", "logo", "latitude", "longitude",
)
_FACT_LISTS = frozenset(("opening_hours", "same_as"))

_RE_EMAIL = re.compile(r"[^@ \t\n\v\f\r]+@[^@ \t\n\v\f\r]+\.[^@ \t\n\v\f\r]+\Z")
_RE_EMAIL_SPACE = re.compile(r"[ \t\n\v\f\r]")
_RE_PHONE_CHAR = re.compile(r"[0-9+ ().-]+\Z")
_RE_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?\Z")


def _is_email_address(s):
    """Whether _RE_EMAIL matches s, in linear time. Alone, the regex is
    quadratic when a character it forbids follows a long domain ("a@" +
    "." * n + " "): the domain's first [^@…]+ gives back one character at a
    time, and at each full stop the last one runs to the forbidden
    character again. A match holds one "@" and none of the spaces, so a
    string with a space or a second "@" is turned away first (the regex
    fails it too); in any other the domain, if any, runs to the end of s
    and the regex settles at the last full stop with a character after it,
    reading s about twice."""
    return (_RE_EMAIL_SPACE.search(s) is None and s.count("@") <= 1
            and _RE_EMAIL.match(s) is not None)


def generate_markup(facts):
    """Builds JSON-LD for a business (Go's GenerateMarkup). facts is a dict
    with the JSON names of Go's Facts (name, type, url, telephone, email,
    street, city, region, postal_code, country, opening_hours, price_range,
    same_as, description, logo, latitude, longitude); a missing or None
    entry is "not given". Returns the markup as a dict in Go's key order;
    invalid facts raise MarkupError."""
    def text(k):
        v = facts.get(k)
        return _trim_ascii(_go_string(v)) if v is not None else ""

    name, typ_in, url, tel, email = text("name"), text("type"), text("url"), text("telephone"), text("email")
    street, city, region, postal, country = (text("street"), text("city"), text("region"), text("postal_code"),
                                             text("country"))
    price_range, description, logo, lat, lon = (text("price_range"), text("description"), text("logo"),
                                                text("latitude"), text("longitude"))
    hours = _trim_list(facts.get("opening_hours"))
    same = _trim_list(facts.get("same_as"))

    def ph(field, v):
        label = find_placeholder(v)
        if label is not None:
            raise MarkupError("facts." + field + ' contains placeholder text ("' + label + '")')

    def abs_url(field, v):
        ph(field, v)
        if not is_absolute_url(v):
            raise MarkupError("facts." + field + " must be an absolute http(s) URL")

    if name == "":
        raise MarkupError("facts.name is required")
    ph("name", name)
    typ = ""
    if typ_in != "":
        low = _ascii_lower(typ_in)
        if low == "organization":
            typ = "Organization"
        for t in LOCAL_BUSINESS_TYPES:
            if _ascii_lower(t) == low:
                typ = t
        if typ == "":
            raise MarkupError('facts.type "' + typ_in +
                              '" is not Organization, LocalBusiness or a supported LocalBusiness subtype')
    if url != "":
        abs_url("url", url)
    if tel != "":
        ph("telephone", tel)
        digits = sum(1 for c in tel if "0" <= c <= "9")
        if not _RE_PHONE_CHAR.match(tel) or digits < 7:
            raise MarkupError("facts.telephone must hold at least 7 digits and only digits, spaces and + ( ) . -")
    if email != "":
        ph("email", email)
        if not _is_email_address(email):
            raise MarkupError("facts.email must be an email address")
    for field, v in (("street", street), ("city", city), ("region", region), ("postal_code", postal),
                     ("country", country)):
        ph(field, v)
    for i, h in enumerate(hours):
        field = "opening_hours[" + str(i) + "]"
        ph(field, h)
        if not _RE_OPENING_HRS.match(h):
            raise MarkupError("facts." + field + ' must look like "Mo-Fr 09:00-17:00"')
    if price_range != "":
        ph("price_range", price_range)
        if len(price_range) > 100:
            raise MarkupError("facts.price_range must be at most 100 characters")
    for i, s in enumerate(same):
        abs_url("same_as[" + str(i) + "]", s)
    ph("description", description)
    if logo != "":
        abs_url("logo", logo)
    if (lat == "") != (lon == ""):
        raise MarkupError("facts.latitude and facts.longitude must be given together")
    if lat != "":
        if not _coord_ok(lat, 90):
            raise MarkupError("facts.latitude must be a decimal number from -90 to 90")
        if not _coord_ok(lon, 180):
            raise MarkupError("facts.longitude must be a decimal number from -180 to 180")
    has_address = street != "" or city != "" or region != "" or postal != "" or country != ""
    local = len(hours) > 0 or price_range != "" or lat != ""
    if typ == "":
        typ = "LocalBusiness" if has_address else "Organization"
    if typ != "Organization" and not has_address:
        raise MarkupError("facts.type " + typ + " needs an address (facts.street, facts.city, ...)")
    if typ == "Organization" and local:
        raise MarkupError("facts.opening_hours, facts.price_range, facts.latitude and facts.longitude need a "
                          "LocalBusiness: give an address")

    o = {"@context": "https://schema.org", "@type": typ, "name": name}
    for k, v in (("description", description), ("url", url), ("logo", logo), ("telephone", tel), ("email", email)):
        if v != "":
            o[k] = v
    if has_address:
        addr = {"@type": "PostalAddress"}
        for k, v in (("streetAddress", street), ("addressLocality", city), ("addressRegion", region),
                     ("postalCode", postal), ("addressCountry", country)):
            if v != "":
                addr[k] = v
        o["address"] = addr
    if lat != "":
        o["geo"] = {"@type": "GeoCoordinates", "latitude": lat, "longitude": lon}
    if hours:
        o["openingHours"] = hours
    if price_range != "":
        o["priceRange"] = price_range
    if same:
        o["sameAs"] = same
    return o


def _coord_ok(s, limit):
    if not _RE_DECIMAL.match(s):
        return False
    ip, _, frac = (s[1:] if s.startswith("-") else s).partition(".")
    ip = ip.lstrip("0")
    if len(ip) > 3:
        return False
    n = int("0" + ip)
    return n < limit or (n == limit and frac.strip("0") == "")


def _trim_list(values):
    out = []
    for s in values or ():
        if s is None:
            continue
        s = _trim_ascii(_go_string(s))
        if s != "":
            out.append(s)
    return out


# ================================================================ kit

def _json_kind(v):
    """The JSON kind of a value, as encoding/json names it in an
    UnmarshalTypeError's Value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float, JSONNumber)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    return "object"


def _number_text(v):
    """The JSON text of a number: its own text when it carries one (see
    loads_input), else str() of an int and repr() of a float."""
    t = getattr(v, "text", None)
    if isinstance(t, str):
        return t
    if isinstance(v, int):
        return str(v)
    return repr(v)


class _TypeErr:
    """What encoding/json's UnmarshalTypeError says: the JSON value
    ("number", "number 1.5", "bool", "string", "array", "object"), the
    struct field it was decoded into ("" at the top) and whether the Go type
    is a slice."""

    __slots__ = ("value", "field", "slice")

    def __init__(self, value, field="", slice_=False):
        self.value = value
        self.field = field
        self.slice = slice_


class _UnknownField:
    """encoding/json's "unknown field" error (DisallowUnknownFields)."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key


def _kind_phrase(value):
    """Go's kindPhrase: the JSON kind of an UnmarshalTypeError value."""
    if value == "bool":
        return "a JSON boolean"
    if value.startswith("number "):
        return "a number with a fraction or exponent"
    return "a JSON " + value


def _field_error(name, what, err):
    """Go's fieldError: a field's decoding error in JSON terms."""
    if isinstance(err, _TypeErr) and err.field:
        # Inside an object field (the facts of generateSchemaMarkup).
        want = "a list of strings" if err.slice else "a string"
        return "field %s: %s must be %s, not %s" % (_go_quote(name), _go_quote(err.field), want,
                                                    _kind_phrase(err.value))
    if isinstance(err, _TypeErr):
        return "field %s must be %s, not %s" % (_go_quote(name), what, _kind_phrase(err.value))
    return "field %s has an unknown field %s; it must be %s" % (_go_quote(name), _go_quote(err.key), what)


def _unmarshal_string(v, nullable=False):
    """None, or the error of decoding v into a Go string (*string when
    nullable)."""
    if isinstance(v, str) or (nullable and v is None):
        return None
    return _TypeErr(_json_kind(v))


def _unmarshal_int(v):
    """None, or the error of decoding v into a Go int (64 bits)."""
    if isinstance(v, int) and not isinstance(v, bool):
        if -(1 << 63) <= v < (1 << 63):
            return None
        return _TypeErr("number " + _number_text(v))
    if isinstance(v, (float, JSONNumber)):
        return _TypeErr("number " + _number_text(v))
    return _TypeErr(_json_kind(v))


# Non-ASCII runes that encoding/json's case folding (ToUpper(ToLower(r)))
# maps to an ASCII letter: U+0130 and U+0131 to I, U+017F to S, U+212A to K.
_FOLD_SPECIAL = {"\u0130": "I", "\u0131": "I", "\u017f": "S", "\u212a": "K"}
_FACT_BY_FOLD = {f.upper(): f for f in FACT_FIELDS}


def _fold_name(k):
    out = []
    for ch in k:
        if ch < "\x80":
            out.append(ch.upper() if "a" <= ch <= "z" else ch)
        else:
            out.append(_FOLD_SPECIAL.get(ch, ch))
    return "".join(out)


def _unmarshal_facts(v):
    """(facts dict, None) or (None, error) of decoding v into Go's Facts
    with DisallowUnknownFields: members in order, the first error wins."""
    if not isinstance(v, dict):
        return None, _TypeErr(_json_kind(v))
    facts = {}
    for k, x in v.items():
        k = _go_string(k)
        f = k if k in FACT_FIELDS else _FACT_BY_FOLD.get(_fold_name(k))
        if f is None:
            return None, _UnknownField(k)
        if f in _FACT_LISTS:
            if x is None:
                facts[f] = []
            elif isinstance(x, list):
                items = []
                for e in x:
                    if e is None:
                        items.append("")
                    elif isinstance(e, str):
                        items.append(_go_string(e))
                    else:
                        return None, _TypeErr(_json_kind(e), f)
                facts[f] = items
            else:
                return None, _TypeErr(_json_kind(x), f, slice_=True)
        elif x is None:
            pass  # null leaves a Go string unchanged
        elif isinstance(x, str):
            facts[f] = _go_string(x)
        else:
            return None, _TypeErr(_json_kind(x), f)
    return facts, None


# Field kinds of _decode_input.
_ANY, _STRING, _NULLABLE_STRING, _INT, _FACTS = range(5)


def _decode_input(fn, raw, fields):
    """Go's decodeInput over a json.load value: fields are (name, required,
    kind, what). Returns the decoded values by name (absent optional fields
    left out); raises ValueError with Go's message."""
    if not isinstance(raw, dict):
        raise ValueError("%s: bad input: want one JSON object" % fn)
    # Only the keys here: each field's value is made a Go value when it is
    # decoded, and "object" only after its depth was checked.
    m = {_go_string(k): v for k, v in raw.items()}
    names = [f[0] for f in fields]
    for k in sorted(m):
        if k not in names:
            raise ValueError("%s: bad input: unknown field %s (allowed: %s)" % (fn, _go_quote(k), ", ".join(names)))
    out = {}
    for name, required, kind, what in fields:
        if name not in m:
            if required:
                raise ValueError("%s: bad input: field %s is required (%s)" % (fn, _go_quote(name), what))
            continue
        v = m[name]
        if kind == _ANY:
            out[name] = v
            continue
        if v is None and name != "alt":
            raise ValueError("%s: bad input: field %s must be %s, not null" % (fn, _go_quote(name), what))
        if kind == _STRING or kind == _NULLABLE_STRING:
            err = _unmarshal_string(v, nullable=kind == _NULLABLE_STRING)
            if err is None and v is not None:
                v = _go_string(v)
        elif kind == _INT:
            err = _unmarshal_int(v)
        else:
            v, err = _unmarshal_facts(v)
        if err is not None:
            raise ValueError("%s: bad input: %s" % (fn, _field_error(name, what, err)))
        out[name] = v
    return out


def check_page_jsonld_kit(inp):
    """Kit function checkPageJsonLd: {"html": str, "url"?: str}."""
    d = _decode_input("checkPageJsonLd", inp, [
        ("html", True, _STRING, "a string"),
        ("url", False, _STRING, "a string"),
    ])
    return check_page_jsonld(d["html"], d.get("url", ""))


def _depth_error(v):
    """The "nesting too deep" JSONError Go's ParseJSON gives for the compact
    JSON text of v, or None when v nests at most MAX_JSON_DEPTH levels."""
    # Walk the compact text of v in order, counting its code points and
    # UTF-8 bytes, up to the first container at depth MAX_JSON_DEPTH + 1.
    cps = 0
    nbytes = 0
    stack = [(False, v, 1)]  # (is layout text, value or text, depth)
    while stack:
        is_text, x, depth = stack.pop()
        if is_text:
            s = x
        elif isinstance(x, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                return JSONError("nesting too deep", 1, cps + 1, nbytes)
            parts = []
            if isinstance(x, dict):
                parts.append((True, "{", 0))
                for i, (k, e) in enumerate(x.items()):
                    parts.append((True, ("," if i else "") + json.dumps(_go_string(k), ensure_ascii=False) + ":", 0))
                    parts.append((False, e, depth + 1))
                parts.append((True, "}", 0))
            else:
                parts.append((True, "[", 0))
                for i, e in enumerate(x):
                    if i:
                        parts.append((True, ",", 0))
                    parts.append((False, e, depth + 1))
                parts.append((True, "]", 0))
            stack.extend(reversed(parts))
            continue
        elif x is None:
            s = "null"
        elif isinstance(x, bool):
            s = "true" if x else "false"
        elif isinstance(x, (int, float)):
            s = _number_text(x)
        elif isinstance(x, JSONNumber):
            s = x.text
        else:
            s = json.dumps(_go_string(x) if isinstance(x, str) else x, ensure_ascii=False)
        cps += len(s)
        nbytes += _utf8_len(s)
    return None


def validate_schema_kit(inp):
    """Kit function validateSchemaLocally: {"object": any JSON value}."""
    d = _decode_input("validateSchemaLocally", inp, [("object", True, _ANY, "any JSON value")])
    obj = d["object"]
    err = _depth_error(obj)
    if err is not None:
        raise ValueError("validateSchemaLocally: bad input: %s" % err)
    return _validate_node(_go_value(obj), "$", _Opts())


def check_live_meta_kit(inp):
    """Kit function checkLiveMeta: {"html": str, "url"?: str}."""
    d = _decode_input("checkLiveMeta", inp, [
        ("html", True, _STRING, "a string"),
        ("url", False, _STRING, "a string"),
    ])
    return check_meta(d["html"], d.get("url", ""))


def meaningful_alt_kit(inp):
    """Kit function hasMeaningfulAltText: {"alt"?: str or null, "src"?: str}."""
    d = _decode_input("hasMeaningfulAltText", inp, [
        ("alt", False, _NULLABLE_STRING, "a string or null"),
        ("src", False, _STRING, "a string"),
    ])
    return meaningful_alt(d.get("alt"), d.get("src", ""))


def llms_txt_kit(inp):
    """Kit function llmsTxtCheck: {"status": int, "content_type"?: str,
    "body"?: str}."""
    d = _decode_input("llmsTxtCheck", inp, [
        ("status", True, _INT, "an integer (the HTTP status of the /llms.txt fetch)"),
        ("content_type", False, _STRING, "a string"),
        ("body", False, _STRING, "a string"),
    ])
    return check_llms_txt(int(d["status"]), d.get("content_type", ""), d.get("body", ""))


def generate_markup_kit(inp):
    """Kit function generateSchemaMarkup: {"facts": {...}}; invalid facts
    give {"error": message}."""
    d = _decode_input("generateSchemaMarkup", inp, [
        ("facts", True, _FACTS,
         "an object of business facts (name, type, url, telephone, email, street, city, region, postal_code, "
         "country, opening_hours, price_range, same_as, description, logo, latitude, longitude)"),
    ])
    try:
        return generate_markup(d["facts"])
    except MarkupError as e:
        return {"error": str(e)}


KIT_FUNCTIONS = {
    "checkPageJsonLd": check_page_jsonld_kit,
    "validateSchemaLocally": validate_schema_kit,
    "checkLiveMeta": check_live_meta_kit,
    "hasMeaningfulAltText": meaningful_alt_kit,
    "llmsTxtCheck": llms_txt_kit,
    "generateSchemaMarkup": generate_markup_kit,
}


# ================================================================ Unicode tables

# Go 1.26 (Unicode 15.0.0) unicode.IsLetter and strconv.IsPrint as code point
# ranges (hex, "a-b" or "a"), so that results do not depend on the Unicode
# version of Python's unicodedata.
_GO_LETTER_RANGES = (
    "41-5a 61-7a aa b5 ba c0-d6 d8-f6 f8-2c1 2c6-2d1 2e0-2e4 2ec 2ee 370-374 "
    "376-377 37a-37d 37f 386 388-38a 38c 38e-3a1 3a3-3f5 3f7-481 48a-52f "
    "531-556 559 560-588 5d0-5ea 5ef-5f2 620-64a 66e-66f 671-6d3 6d5 6e5-6e6 "
    "6ee-6ef 6fa-6fc 6ff 710 712-72f 74d-7a5 7b1 7ca-7ea 7f4-7f5 7fa 800-815 "
    "81a 824 828 840-858 860-86a 870-887 889-88e 8a0-8c9 904-939 93d 950 "
    "958-961 971-980 985-98c 98f-990 993-9a8 9aa-9b0 9b2 9b6-9b9 9bd 9ce "
    "9dc-9dd 9df-9e1 9f0-9f1 9fc a05-a0a a0f-a10 a13-a28 a2a-a30 a32-a33 "
    "a35-a36 a38-a39 a59-a5c a5e a72-a74 a85-a8d a8f-a91 a93-aa8 aaa-ab0 "
    "ab2-ab3 ab5-ab9 abd ad0 ae0-ae1 af9 b05-b0c b0f-b10 b13-b28 b2a-b30 "
    "b32-b33 b35-b39 b3d b5c-b5d b5f-b61 b71 b83 b85-b8a b8e-b90 b92-b95 "
    "b99-b9a b9c b9e-b9f ba3-ba4 ba8-baa bae-bb9 bd0 c05-c0c c0e-c10 c12-c28 "
    "c2a-c39 c3d c58-c5a c5d c60-c61 c80 c85-c8c c8e-c90 c92-ca8 caa-cb3 "
    "cb5-cb9 cbd cdd-cde ce0-ce1 cf1-cf2 d04-d0c d0e-d10 d12-d3a d3d d4e "
    "d54-d56 d5f-d61 d7a-d7f d85-d96 d9a-db1 db3-dbb dbd dc0-dc6 e01-e30 "
    "e32-e33 e40-e46 e81-e82 e84 e86-e8a e8c-ea3 ea5 ea7-eb0 eb2-eb3 ebd "
    "ec0-ec4 ec6 edc-edf f00 f40-f47 f49-f6c f88-f8c 1000-102a 103f 1050-1055 "
    "105a-105d 1061 1065-1066 106e-1070 1075-1081 108e 10a0-10c5 10c7 10cd "
    "10d0-10fa 10fc-1248 124a-124d 1250-1256 1258 125a-125d 1260-1288 "
    "128a-128d 1290-12b0 12b2-12b5 12b8-12be 12c0 12c2-12c5 12c8-12d6 "
    "12d8-1310 1312-1315 1318-135a 1380-138f 13a0-13f5 13f8-13fd 1401-166c "
    "166f-167f 1681-169a 16a0-16ea 16f1-16f8 1700-1711 171f-1731 1740-1751 "
    "1760-176c 176e-1770 1780-17b3 17d7 17dc 1820-1878 1880-1884 1887-18a8 "
    "18aa 18b0-18f5 1900-191e 1950-196d 1970-1974 1980-19ab 19b0-19c9 "
    "1a00-1a16 1a20-1a54 1aa7 1b05-1b33 1b45-1b4c 1b83-1ba0 1bae-1baf "
    "1bba-1be5 1c00-1c23 1c4d-1c4f 1c5a-1c7d 1c80-1c88 1c90-1cba 1cbd-1cbf "
    "1ce9-1cec 1cee-1cf3 1cf5-1cf6 1cfa 1d00-1dbf 1e00-1f15 1f18-1f1d "
    "1f20-1f45 1f48-1f4d 1f50-1f57 1f59 1f5b 1f5d 1f5f-1f7d 1f80-1fb4 "
    "1fb6-1fbc 1fbe 1fc2-1fc4 1fc6-1fcc 1fd0-1fd3 1fd6-1fdb 1fe0-1fec "
    "1ff2-1ff4 1ff6-1ffc 2071 207f 2090-209c 2102 2107 210a-2113 2115 "
    "2119-211d 2124 2126 2128 212a-212d 212f-2139 213c-213f 2145-2149 214e "
    "2183-2184 2c00-2ce4 2ceb-2cee 2cf2-2cf3 2d00-2d25 2d27 2d2d 2d30-2d67 "
    "2d6f 2d80-2d96 2da0-2da6 2da8-2dae 2db0-2db6 2db8-2dbe 2dc0-2dc6 "
    "2dc8-2dce 2dd0-2dd6 2dd8-2dde 2e2f 3005-3006 3031-3035 303b-303c "
    "3041-3096 309d-309f 30a1-30fa 30fc-30ff 3105-312f 3131-318e 31a0-31bf "
    "31f0-31ff 3400-4dbf 4e00-a48c a4d0-a4fd a500-a60c a610-a61f a62a-a62b "
    "a640-a66e a67f-a69d a6a0-a6e5 a717-a71f a722-a788 a78b-a7ca a7d0-a7d1 "
    "a7d3 a7d5-a7d9 a7f2-a801 a803-a805 a807-a80a a80c-a822 a840-a873 "
    "a882-a8b3 a8f2-a8f7 a8fb a8fd-a8fe a90a-a925 a930-a946 a960-a97c "
    "a984-a9b2 a9cf a9e0-a9e4 a9e6-a9ef a9fa-a9fe aa00-aa28 aa40-aa42 "
    "aa44-aa4b aa60-aa76 aa7a aa7e-aaaf aab1 aab5-aab6 aab9-aabd aac0 aac2 "
    "aadb-aadd aae0-aaea aaf2-aaf4 ab01-ab06 ab09-ab0e ab11-ab16 ab20-ab26 "
    "ab28-ab2e ab30-ab5a ab5c-ab69 ab70-abe2 ac00-d7a3 d7b0-d7c6 d7cb-d7fb "
    "f900-fa6d fa70-fad9 fb00-fb06 fb13-fb17 fb1d fb1f-fb28 fb2a-fb36 "
    "fb38-fb3c fb3e fb40-fb41 fb43-fb44 fb46-fbb1 fbd3-fd3d fd50-fd8f "
    "fd92-fdc7 fdf0-fdfb fe70-fe74 fe76-fefc ff21-ff3a ff41-ff5a ff66-ffbe "
    "ffc2-ffc7 ffca-ffcf ffd2-ffd7 ffda-ffdc 10000-1000b 1000d-10026 "
    "10028-1003a 1003c-1003d 1003f-1004d 10050-1005d 10080-100fa 10280-1029c "
    "102a0-102d0 10300-1031f 1032d-10340 10342-10349 10350-10375 10380-1039d "
    "103a0-103c3 103c8-103cf 10400-1049d 104b0-104d3 104d8-104fb 10500-10527 "
    "10530-10563 10570-1057a 1057c-1058a 1058c-10592 10594-10595 10597-105a1 "
    "105a3-105b1 105b3-105b9 105bb-105bc 10600-10736 10740-10755 10760-10767 "
    "10780-10785 10787-107b0 107b2-107ba 10800-10805 10808 1080a-10835 "
    "10837-10838 1083c 1083f-10855 10860-10876 10880-1089e 108e0-108f2 "
    "108f4-108f5 10900-10915 10920-10939 10980-109b7 109be-109bf 10a00 "
    "10a10-10a13 10a15-10a17 10a19-10a35 10a60-10a7c 10a80-10a9c 10ac0-10ac7 "
    "10ac9-10ae4 10b00-10b35 10b40-10b55 10b60-10b72 10b80-10b91 10c00-10c48 "
    "10c80-10cb2 10cc0-10cf2 10d00-10d23 10e80-10ea9 10eb0-10eb1 10f00-10f1c "
    "10f27 10f30-10f45 10f70-10f81 10fb0-10fc4 10fe0-10ff6 11003-11037 "
    "11071-11072 11075 11083-110af 110d0-110e8 11103-11126 11144 11147 "
    "11150-11172 11176 11183-111b2 111c1-111c4 111da 111dc 11200-11211 "
    "11213-1122b 1123f-11240 11280-11286 11288 1128a-1128d 1128f-1129d "
    "1129f-112a8 112b0-112de 11305-1130c 1130f-11310 11313-11328 1132a-11330 "
    "11332-11333 11335-11339 1133d 11350 1135d-11361 11400-11434 11447-1144a "
    "1145f-11461 11480-114af 114c4-114c5 114c7 11580-115ae 115d8-115db "
    "11600-1162f 11644 11680-116aa 116b8 11700-1171a 11740-11746 11800-1182b "
    "118a0-118df 118ff-11906 11909 1190c-11913 11915-11916 11918-1192f 1193f "
    "11941 119a0-119a7 119aa-119d0 119e1 119e3 11a00 11a0b-11a32 11a3a 11a50 "
    "11a5c-11a89 11a9d 11ab0-11af8 11c00-11c08 11c0a-11c2e 11c40 11c72-11c8f "
    "11d00-11d06 11d08-11d09 11d0b-11d30 11d46 11d60-11d65 11d67-11d68 "
    "11d6a-11d89 11d98 11ee0-11ef2 11f02 11f04-11f10 11f12-11f33 11fb0 "
    "12000-12399 12480-12543 12f90-12ff0 13000-1342f 13441-13446 14400-14646 "
    "16800-16a38 16a40-16a5e 16a70-16abe 16ad0-16aed 16b00-16b2f 16b40-16b43 "
    "16b63-16b77 16b7d-16b8f 16e40-16e7f 16f00-16f4a 16f50 16f93-16f9f "
    "16fe0-16fe1 16fe3 17000-187f7 18800-18cd5 18d00-18d08 1aff0-1aff3 "
    "1aff5-1affb 1affd-1affe 1b000-1b122 1b132 1b150-1b152 1b155 1b164-1b167 "
    "1b170-1b2fb 1bc00-1bc6a 1bc70-1bc7c 1bc80-1bc88 1bc90-1bc99 1d400-1d454 "
    "1d456-1d49c 1d49e-1d49f 1d4a2 1d4a5-1d4a6 1d4a9-1d4ac 1d4ae-1d4b9 1d4bb "
    "1d4bd-1d4c3 1d4c5-1d505 1d507-1d50a 1d50d-1d514 1d516-1d51c 1d51e-1d539 "
    "1d53b-1d53e 1d540-1d544 1d546 1d54a-1d550 1d552-1d6a5 1d6a8-1d6c0 "
    "1d6c2-1d6da 1d6dc-1d6fa 1d6fc-1d714 1d716-1d734 1d736-1d74e 1d750-1d76e "
    "1d770-1d788 1d78a-1d7a8 1d7aa-1d7c2 1d7c4-1d7cb 1df00-1df1e 1df25-1df2a "
    "1e030-1e06d 1e100-1e12c 1e137-1e13d 1e14e 1e290-1e2ad 1e2c0-1e2eb "
    "1e4d0-1e4eb 1e7e0-1e7e6 1e7e8-1e7eb 1e7ed-1e7ee 1e7f0-1e7fe 1e800-1e8c4 "
    "1e900-1e943 1e94b 1ee00-1ee03 1ee05-1ee1f 1ee21-1ee22 1ee24 1ee27 "
    "1ee29-1ee32 1ee34-1ee37 1ee39 1ee3b 1ee42 1ee47 1ee49 1ee4b 1ee4d-1ee4f "
    "1ee51-1ee52 1ee54 1ee57 1ee59 1ee5b 1ee5d 1ee5f 1ee61-1ee62 1ee64 "
    "1ee67-1ee6a 1ee6c-1ee72 1ee74-1ee77 1ee79-1ee7c 1ee7e 1ee80-1ee89 "
    "1ee8b-1ee9b 1eea1-1eea3 1eea5-1eea9 1eeab-1eebb 20000-2a6df 2a700-2b739 "
    "2b740-2b81d 2b820-2cea1 2ceb0-2ebe0 2f800-2fa1d 30000-3134a 31350-323af"
)

_GO_PRINT_RANGES = (
    "20-7e a1-ac ae-377 37a-37f 384-38a 38c 38e-3a1 3a3-52f 531-556 559-58a "
    "58d-58f 591-5c7 5d0-5ea 5ef-5f4 606-61b 61d-6dc 6de-70d 710-74a 74d-7b1 "
    "7c0-7fa 7fd-82d 830-83e 840-85b 85e 860-86a 870-88e 898-8e1 8e3-983 "
    "985-98c 98f-990 993-9a8 9aa-9b0 9b2 9b6-9b9 9bc-9c4 9c7-9c8 9cb-9ce 9d7 "
    "9dc-9dd 9df-9e3 9e6-9fe a01-a03 a05-a0a a0f-a10 a13-a28 a2a-a30 a32-a33 "
    "a35-a36 a38-a39 a3c a3e-a42 a47-a48 a4b-a4d a51 a59-a5c a5e a66-a76 "
    "a81-a83 a85-a8d a8f-a91 a93-aa8 aaa-ab0 ab2-ab3 ab5-ab9 abc-ac5 ac7-ac9 "
    "acb-acd ad0 ae0-ae3 ae6-af1 af9-aff b01-b03 b05-b0c b0f-b10 b13-b28 "
    "b2a-b30 b32-b33 b35-b39 b3c-b44 b47-b48 b4b-b4d b55-b57 b5c-b5d b5f-b63 "
    "b66-b77 b82-b83 b85-b8a b8e-b90 b92-b95 b99-b9a b9c b9e-b9f ba3-ba4 "
    "ba8-baa bae-bb9 bbe-bc2 bc6-bc8 bca-bcd bd0 bd7 be6-bfa c00-c0c c0e-c10 "
    "c12-c28 c2a-c39 c3c-c44 c46-c48 c4a-c4d c55-c56 c58-c5a c5d c60-c63 "
    "c66-c6f c77-c8c c8e-c90 c92-ca8 caa-cb3 cb5-cb9 cbc-cc4 cc6-cc8 cca-ccd "
    "cd5-cd6 cdd-cde ce0-ce3 ce6-cef cf1-cf3 d00-d0c d0e-d10 d12-d44 d46-d48 "
    "d4a-d4f d54-d63 d66-d7f d81-d83 d85-d96 d9a-db1 db3-dbb dbd dc0-dc6 dca "
    "dcf-dd4 dd6 dd8-ddf de6-def df2-df4 e01-e3a e3f-e5b e81-e82 e84 e86-e8a "
    "e8c-ea3 ea5 ea7-ebd ec0-ec4 ec6 ec8-ece ed0-ed9 edc-edf f00-f47 f49-f6c "
    "f71-f97 f99-fbc fbe-fcc fce-fda 1000-10c5 10c7 10cd 10d0-1248 124a-124d "
    "1250-1256 1258 125a-125d 1260-1288 128a-128d 1290-12b0 12b2-12b5 "
    "12b8-12be 12c0 12c2-12c5 12c8-12d6 12d8-1310 1312-1315 1318-135a "
    "135d-137c 1380-1399 13a0-13f5 13f8-13fd 1400-167f 1681-169c 16a0-16f8 "
    "1700-1715 171f-1736 1740-1753 1760-176c 176e-1770 1772-1773 1780-17dd "
    "17e0-17e9 17f0-17f9 1800-180d 180f-1819 1820-1878 1880-18aa 18b0-18f5 "
    "1900-191e 1920-192b 1930-193b 1940 1944-196d 1970-1974 1980-19ab "
    "19b0-19c9 19d0-19da 19de-1a1b 1a1e-1a5e 1a60-1a7c 1a7f-1a89 1a90-1a99 "
    "1aa0-1aad 1ab0-1ace 1b00-1b4c 1b50-1b7e 1b80-1bf3 1bfc-1c37 1c3b-1c49 "
    "1c4d-1c88 1c90-1cba 1cbd-1cc7 1cd0-1cfa 1d00-1f15 1f18-1f1d 1f20-1f45 "
    "1f48-1f4d 1f50-1f57 1f59 1f5b 1f5d 1f5f-1f7d 1f80-1fb4 1fb6-1fc4 "
    "1fc6-1fd3 1fd6-1fdb 1fdd-1fef 1ff2-1ff4 1ff6-1ffe 2010-2027 2030-205e "
    "2070-2071 2074-208e 2090-209c 20a0-20c0 20d0-20f0 2100-218b 2190-2426 "
    "2440-244a 2460-2b73 2b76-2b95 2b97-2cf3 2cf9-2d25 2d27 2d2d 2d30-2d67 "
    "2d6f-2d70 2d7f-2d96 2da0-2da6 2da8-2dae 2db0-2db6 2db8-2dbe 2dc0-2dc6 "
    "2dc8-2dce 2dd0-2dd6 2dd8-2dde 2de0-2e5d 2e80-2e99 2e9b-2ef3 2f00-2fd5 "
    "2ff0-2ffb 3001-303f 3041-3096 3099-30ff 3105-312f 3131-318e 3190-31e3 "
    "31f0-321e 3220-a48c a490-a4c6 a4d0-a62b a640-a6f7 a700-a7ca a7d0-a7d1 "
    "a7d3 a7d5-a7d9 a7f2-a82c a830-a839 a840-a877 a880-a8c5 a8ce-a8d9 "
    "a8e0-a953 a95f-a97c a980-a9cd a9cf-a9d9 a9de-a9fe aa00-aa36 aa40-aa4d "
    "aa50-aa59 aa5c-aac2 aadb-aaf6 ab01-ab06 ab09-ab0e ab11-ab16 ab20-ab26 "
    "ab28-ab2e ab30-ab6b ab70-abed abf0-abf9 ac00-d7a3 d7b0-d7c6 d7cb-d7fb "
    "f900-fa6d fa70-fad9 fb00-fb06 fb13-fb17 fb1d-fb36 fb38-fb3c fb3e "
    "fb40-fb41 fb43-fb44 fb46-fbc2 fbd3-fd8f fd92-fdc7 fdcf fdf0-fe19 "
    "fe20-fe52 fe54-fe66 fe68-fe6b fe70-fe74 fe76-fefc ff01-ffbe ffc2-ffc7 "
    "ffca-ffcf ffd2-ffd7 ffda-ffdc ffe0-ffe6 ffe8-ffee fffc-fffd 10000-1000b "
    "1000d-10026 10028-1003a 1003c-1003d 1003f-1004d 10050-1005d 10080-100fa "
    "10100-10102 10107-10133 10137-1018e 10190-1019c 101a0 101d0-101fd "
    "10280-1029c 102a0-102d0 102e0-102fb 10300-10323 1032d-1034a 10350-1037a "
    "10380-1039d 1039f-103c3 103c8-103d5 10400-1049d 104a0-104a9 104b0-104d3 "
    "104d8-104fb 10500-10527 10530-10563 1056f-1057a 1057c-1058a 1058c-10592 "
    "10594-10595 10597-105a1 105a3-105b1 105b3-105b9 105bb-105bc 10600-10736 "
    "10740-10755 10760-10767 10780-10785 10787-107b0 107b2-107ba 10800-10805 "
    "10808 1080a-10835 10837-10838 1083c 1083f-10855 10857-1089e 108a7-108af "
    "108e0-108f2 108f4-108f5 108fb-1091b 1091f-10939 1093f 10980-109b7 "
    "109bc-109cf 109d2-10a03 10a05-10a06 10a0c-10a13 10a15-10a17 10a19-10a35 "
    "10a38-10a3a 10a3f-10a48 10a50-10a58 10a60-10a9f 10ac0-10ae6 10aeb-10af6 "
    "10b00-10b35 10b39-10b55 10b58-10b72 10b78-10b91 10b99-10b9c 10ba9-10baf "
    "10c00-10c48 10c80-10cb2 10cc0-10cf2 10cfa-10d27 10d30-10d39 10e60-10e7e "
    "10e80-10ea9 10eab-10ead 10eb0-10eb1 10efd-10f27 10f30-10f59 10f70-10f89 "
    "10fb0-10fcb 10fe0-10ff6 11000-1104d 11052-11075 1107f-110bc 110be-110c2 "
    "110d0-110e8 110f0-110f9 11100-11134 11136-11147 11150-11176 11180-111df "
    "111e1-111f4 11200-11211 11213-11241 11280-11286 11288 1128a-1128d "
    "1128f-1129d 1129f-112a9 112b0-112ea 112f0-112f9 11300-11303 11305-1130c "
    "1130f-11310 11313-11328 1132a-11330 11332-11333 11335-11339 1133b-11344 "
    "11347-11348 1134b-1134d 11350 11357 1135d-11363 11366-1136c 11370-11374 "
    "11400-1145b 1145d-11461 11480-114c7 114d0-114d9 11580-115b5 115b8-115dd "
    "11600-11644 11650-11659 11660-1166c 11680-116b9 116c0-116c9 11700-1171a "
    "1171d-1172b 11730-11746 11800-1183b 118a0-118f2 118ff-11906 11909 "
    "1190c-11913 11915-11916 11918-11935 11937-11938 1193b-11946 11950-11959 "
    "119a0-119a7 119aa-119d7 119da-119e4 11a00-11a47 11a50-11aa2 11ab0-11af8 "
    "11b00-11b09 11c00-11c08 11c0a-11c36 11c38-11c45 11c50-11c6c 11c70-11c8f "
    "11c92-11ca7 11ca9-11cb6 11d00-11d06 11d08-11d09 11d0b-11d36 11d3a "
    "11d3c-11d3d 11d3f-11d47 11d50-11d59 11d60-11d65 11d67-11d68 11d6a-11d8e "
    "11d90-11d91 11d93-11d98 11da0-11da9 11ee0-11ef8 11f00-11f10 11f12-11f3a "
    "11f3e-11f59 11fb0 11fc0-11ff1 11fff-12399 12400-1246e 12470-12474 "
    "12480-12543 12f90-12ff2 13000-1342f 13440-13455 14400-14646 16800-16a38 "
    "16a40-16a5e 16a60-16a69 16a6e-16abe 16ac0-16ac9 16ad0-16aed 16af0-16af5 "
    "16b00-16b45 16b50-16b59 16b5b-16b61 16b63-16b77 16b7d-16b8f 16e40-16e9a "
    "16f00-16f4a 16f4f-16f87 16f8f-16f9f 16fe0-16fe4 16ff0-16ff1 17000-187f7 "
    "18800-18cd5 18d00-18d08 1aff0-1aff3 1aff5-1affb 1affd-1affe 1b000-1b122 "
    "1b132 1b150-1b152 1b155 1b164-1b167 1b170-1b2fb 1bc00-1bc6a 1bc70-1bc7c "
    "1bc80-1bc88 1bc90-1bc99 1bc9c-1bc9f 1cf00-1cf2d 1cf30-1cf46 1cf50-1cfc3 "
    "1d000-1d0f5 1d100-1d126 1d129-1d172 1d17b-1d1ea 1d200-1d245 1d2c0-1d2d3 "
    "1d2e0-1d2f3 1d300-1d356 1d360-1d378 1d400-1d454 1d456-1d49c 1d49e-1d49f "
    "1d4a2 1d4a5-1d4a6 1d4a9-1d4ac 1d4ae-1d4b9 1d4bb 1d4bd-1d4c3 1d4c5-1d505 "
    "1d507-1d50a 1d50d-1d514 1d516-1d51c 1d51e-1d539 1d53b-1d53e 1d540-1d544 "
    "1d546 1d54a-1d550 1d552-1d6a5 1d6a8-1d7cb 1d7ce-1da8b 1da9b-1da9f "
    "1daa1-1daaf 1df00-1df1e 1df25-1df2a 1e000-1e006 1e008-1e018 1e01b-1e021 "
    "1e023-1e024 1e026-1e02a 1e030-1e06d 1e08f 1e100-1e12c 1e130-1e13d "
    "1e140-1e149 1e14e-1e14f 1e290-1e2ae 1e2c0-1e2f9 1e2ff 1e4d0-1e4f9 "
    "1e7e0-1e7e6 1e7e8-1e7eb 1e7ed-1e7ee 1e7f0-1e7fe 1e800-1e8c4 1e8c7-1e8d6 "
    "1e900-1e94b 1e950-1e959 1e95e-1e95f 1ec71-1ecb4 1ed01-1ed3d 1ee00-1ee03 "
    "1ee05-1ee1f 1ee21-1ee22 1ee24 1ee27 1ee29-1ee32 1ee34-1ee37 1ee39 1ee3b "
    "1ee42 1ee47 1ee49 1ee4b 1ee4d-1ee4f 1ee51-1ee52 1ee54 1ee57 1ee59 1ee5b "
    "1ee5d 1ee5f 1ee61-1ee62 1ee64 1ee67-1ee6a 1ee6c-1ee72 1ee74-1ee77 "
    "1ee79-1ee7c 1ee7e 1ee80-1ee89 1ee8b-1ee9b 1eea1-1eea3 1eea5-1eea9 "
    "1eeab-1eebb 1eef0-1eef1 1f000-1f02b 1f030-1f093 1f0a0-1f0ae 1f0b1-1f0bf "
    "1f0c1-1f0cf 1f0d1-1f0f5 1f100-1f1ad 1f1e6-1f202 1f210-1f23b 1f240-1f248 "
    "1f250-1f251 1f260-1f265 1f300-1f6d7 1f6dc-1f6ec 1f6f0-1f6fc 1f700-1f776 "
    "1f77b-1f7d9 1f7e0-1f7eb 1f7f0 1f800-1f80b 1f810-1f847 1f850-1f859 "
    "1f860-1f887 1f890-1f8ad 1f8b0-1f8b1 1f900-1fa53 1fa60-1fa6d 1fa70-1fa7c "
    "1fa80-1fa88 1fa90-1fabd 1fabf-1fac5 1face-1fadb 1fae0-1fae8 1faf0-1faf8 "
    "1fb00-1fb92 1fb94-1fbca 1fbf0-1fbf9 20000-2a6df 2a700-2b739 2b740-2b81d "
    "2b820-2cea1 2ceb0-2ebe0 2f800-2fa1d 30000-3134a 31350-323af e0100-e01ef"
)


def _parse_ranges(text):
    starts, ends = [], []
    for item in text.split():
        a, _, b = item.partition("-")
        starts.append(int(a, 16))
        ends.append(int(b or a, 16))
    return starts, ends


_LETTERS = _parse_ranges(_GO_LETTER_RANGES)
_PRINTABLE = _parse_ranges(_GO_PRINT_RANGES)
