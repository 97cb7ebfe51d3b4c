"""Python port of the Go package pipelines/sitecheck/robots.

Parses robots.txt files and answers whether a crawler may fetch a path,
following RFC 9309 (Robots Exclusion Protocol), and builds the robotsAccess
report: which AI crawlers a site lets in, path by path.

The specification is the package comment of pipelines/sitecheck/robots/robots.go;
this module follows the Go code decision for decision and is tested against
the shared fixture testdata/sitecheck/robots_access.json.

Everything works on UTF-8 octets, as the Go code does: text is encoded to
bytes first (a lone surrogate, which JSON can carry as an escape, becomes
U+FFFD as in Go's JSON decoder), lower-casing is ASCII only, only spaces and
tabs are trimmed, and the size limit counts bytes.

Standard library only.
"""

import re

__all__ = [
    "MAX_BYTES",
    "AI_CRAWLERS",
    "PURPOSE_TRAINING",
    "PURPOSE_SEARCH",
    "PURPOSE_USER_REQUEST",
    "FETCH_OK",
    "FETCH_NOT_FOUND",
    "FETCH_UNREACHABLE",
    "Robots",
    "parse_robots",
    "from_status",
    "fetch_result",
    "check_robots",
    "lookup_crawler",
    "robots_access",
    "KIT_FUNCTIONS",
]

# How much of a robots.txt body is parsed (RFC 9309 section 2.5 asks for at
# least 500 KiB).
MAX_BYTES = 512000

PURPOSE_TRAINING = "training"
PURPOSE_SEARCH = "search"
PURPOSE_USER_REQUEST = "user request"

# The crawlers robotsAccess reports on by default, in report order:
# (token, owner, purpose).
_CRAWLERS = (
    ("GPTBot", "OpenAI", PURPOSE_TRAINING),
    ("OAI-SearchBot", "OpenAI", PURPOSE_SEARCH),
    ("ChatGPT-User", "OpenAI", PURPOSE_USER_REQUEST),
    ("ClaudeBot", "Anthropic", PURPOSE_TRAINING),
    ("Claude-User", "Anthropic", PURPOSE_USER_REQUEST),
    ("Claude-SearchBot", "Anthropic", PURPOSE_SEARCH),
    ("PerplexityBot", "Perplexity", PURPOSE_SEARCH),
    ("Perplexity-User", "Perplexity", PURPOSE_USER_REQUEST),
    ("Google-Extended", "Google", PURPOSE_TRAINING),
    ("Applebot-Extended", "Apple", PURPOSE_TRAINING),
    ("CCBot", "Common Crawl", PURPOSE_TRAINING),
    ("Bytespider", "ByteDance", PURPOSE_TRAINING),
    ("meta-externalagent", "Meta", PURPOSE_TRAINING),
    ("Amazonbot", "Amazon", PURPOSE_SEARCH),
)

# AI_CRAWLERS as the Go JSON form of Crawler ({"token", "owner", "purpose"}).
# The lookup uses the private table above, so editing these dicts changes
# nothing.
AI_CRAWLERS = tuple({"token": t, "owner": o, "purpose": p} for t, o, p in _CRAWLERS)

FETCH_OK = "ok"
FETCH_NOT_FOUND = "not_found"
FETCH_UNREACHABLE = "unreachable"

_MODE_PARSED = 0
_MODE_ALLOW_ALL = 1
_MODE_DISALLOW_ALL = 2

_USER_AGENT_KEYS = frozenset((b"user-agent", b"useragent", b"user agent"))
_RULE_KEYS = frozenset((b"allow", b"disallow", b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw"))

_BOM = b"\xef\xbb\xbf"
_UPPER_HEX = b"0123456789ABCDEF"
_HEX = frozenset(b"0123456789abcdefABCDEF")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_TOKEN_RE = re.compile(rb"[A-Za-z_-]*")
_WS_RE = re.compile(rb"[ \t]")
# Octets normalisation may change; a string without them is already normal.
_NEEDS_NORMALIZING = re.compile(rb"[%*$\x80-\xff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


# --------------------------------------------------------------------- bytes

def _to_bytes(s):
    """UTF-8 octets of s. Bytes are taken as they are; a lone surrogate in a
    str (JSON can escape one) becomes U+FFFD, as Go's JSON decoder does."""
    if isinstance(s, (bytes, bytearray, memoryview)):
        return bytes(s)
    return _go_string(s).encode("utf-8")


def _go_string(s):
    """s with every lone surrogate replaced by U+FFFD: the string Go's JSON
    decoder would produce for the same JSON text."""
    return _SURROGATE.sub("\ufffd", s)


def _go_decode(b):
    """bytes to str as Go's JSON encoder writes a string: each octet that is
    not part of valid UTF-8 becomes U+FFFD. (A body that came in as text always
    gives valid UTF-8 here: lines are cut at ASCII octets only.)"""
    return _SURROGATE.sub("\ufffd", b.decode("utf-8", "surrogateescape"))


def _trim_ws(b):
    """Trims spaces and tabs (RFC 9309 WS), nothing else."""
    return b.strip(b" \t")


def _ascii_lower(b):
    # bytes.lower() changes A-Z only.
    return b.lower()


def _is_global_agent(v):
    """A user-agent value that names every crawler: "*" alone or followed by a
    space or tab."""
    return v == b"*" or (len(v) > 1 and v[0:1] == b"*" and v[1:2] in (b" ", b"\t"))


def _product_token(b):
    """The lower-case leading run of [A-Za-z_-] of a crawler name or
    user-agent value (RFC 9309 2.2.1 allows only those characters)."""
    b = _trim_ws(b)
    return _ascii_lower(_TOKEN_RE.match(b).group())


def _normalize(s):
    """Puts a path, or a literal piece of a pattern, in the form both are
    compared in (see the package comment of robots.go)."""
    if not _NEEDS_NORMALIZING.search(s):
        return s
    out = bytearray()
    n = len(s)
    i = 0
    while i < n:
        c = s[i]
        if c == 0x25 and i + 2 < n and s[i + 1] in _HEX and s[i + 2] in _HEX:  # "%XY"
            v = int(s[i + 1:i + 3], 16)
            if v in _UNRESERVED:
                out.append(v)
            else:
                out += b"%" + _UPPER_HEX[v >> 4:(v >> 4) + 1] + _UPPER_HEX[v & 15:(v & 15) + 1]
            i += 3
            continue
        if c >= 0x80 or c == 0x2A or c == 0x24:  # non-ASCII, "*", "$"
            out += b"%" + _UPPER_HEX[c >> 4:(c >> 4) + 1] + _UPPER_HEX[c & 15:(c & 15) + 1]
        else:
            out.append(c)
        i += 1
    return bytes(out)


def _limit(body):
    """Keeps the first MAX_BYTES bytes, cut back to the last line break inside
    them when the body is longer."""
    if len(body) <= MAX_BYTES:
        return body
    body = body[:MAX_BYTES]
    i = max(body.rfind(b"\n"), body.rfind(b"\r"))
    if i < 0:
        return b""
    return body[:i + 1]


def _lines(body):
    """The lines of body; LF, CR and CRLF end a line. Like the Go loop, a
    trailing line break gives no empty last line."""
    n = len(body)
    start = 0
    lf = cr = -1  # the next LF and CR at or after start, n when none is left
    while start < n:
        if lf < start:
            lf = body.find(b"\n", start)
            if lf < 0:
                lf = n
        if cr < start:
            cr = body.find(b"\r", start)
            if cr < 0:
                cr = n
        end = min(lf, cr)
        yield body[start:end]
        if end == n:
            return
        start = end + 2 if end == cr and end + 1 == lf else end + 1


def _split_line(line):
    """Drops the comment and splits "key: value"; the key comes back in lower
    case. A line without ":" that is exactly two words separated by spaces or
    tabs ("disallow /") is read as "key: value"; None for any other line
    without ":"."""
    h = line.find(b"#")
    if h >= 0:
        line = line[:h]
    i = line.find(b":")
    if i >= 0:
        return _ascii_lower(_trim_ws(line[:i])), _trim_ws(line[i + 1:])
    s = _trim_ws(line)
    m = _WS_RE.search(s)
    if m is None:
        return None
    value = _trim_ws(s[m.start():])
    if _WS_RE.search(value):
        return None
    return _ascii_lower(s[:m.start()]), value


# --------------------------------------------------------------------- rules

class _Rule:
    __slots__ = ("allow", "text", "pieces", "anchored", "length")

    def __init__(self, allow, pattern):
        # pattern: the trimmed value as written (bytes).
        self.allow = allow
        self.text = ("allow: " if allow else "disallow: ") + _go_decode(pattern)
        body = pattern
        self.anchored = False
        self.length = 0
        if body.endswith(b"$"):
            self.anchored = True
            body = body[:-1]
            self.length += 1
        raw = body.split(b"*")
        self.pieces = [_normalize(piece) for piece in raw]
        self.length += len(raw) - 1 + sum(len(p) for p in self.pieces)

    def matches(self, p):
        """Whether the normalised path p matches. Each middle piece is taken
        at its leftmost place after the previous one, which leaves the most
        room for the rest, so no backtracking is needed."""
        pieces = self.pieces
        first = pieces[0]
        if len(pieces) == 1:
            if self.anchored:
                return p == first
            return p.startswith(first)
        if not p.startswith(first):
            return False
        pos = len(first)
        last = len(pieces) - 1
        for piece in pieces[1:last]:
            i = p.find(piece, pos)
            if i < 0:
                return False
            pos = i + len(piece)
        tail = pieces[last]
        if self.anchored:
            return len(p) - pos >= len(tail) and p.endswith(tail)
        return p.find(tail, pos) >= 0


class _Group:
    __slots__ = ("is_global", "tokens", "rules")

    def __init__(self):
        self.is_global = False  # a "*" user-agent line
        self.tokens = []  # lower-case product tokens (bytes), never empty
        self.rules = []


class Robots:
    """A parsed robots.txt file, or the outcome of a fetch that gave no file
    (see from_status). Robots() allows everything."""

    __slots__ = ("_mode", "_groups")

    def __init__(self):
        self._mode = _MODE_PARSED
        self._groups = []

    def check(self, agent, path):
        return check_robots(self, agent, path)


# --------------------------------------------------------------------- API

def parse_robots(body):
    """Parses a robots.txt body fetched with a 2xx status. body: bytes, or a
    str (encoded to UTF-8)."""
    r = Robots()
    body = _limit(_to_bytes(body))
    if body.startswith(_BOM):
        body = body[3:]
    cur = None
    has_rules = False
    for line in _lines(body):
        kv = _split_line(line)
        if kv is None:
            continue
        key, value = kv
        if key in _USER_AGENT_KEYS:
            if cur is None or has_rules:
                cur = _Group()
                r._groups.append(cur)
                has_rules = False
            if _is_global_agent(value):
                cur.is_global = True
            else:
                t = _product_token(value)
                if t:
                    cur.tokens.append(t)
        elif key in _RULE_KEYS:
            if cur is None:
                continue  # RFC 9309 2.2.2: rules outside any group are ignored
            has_rules = True
            if not value:
                continue  # an empty pattern matches nothing
            cur.rules.append(_Rule(key == b"allow", value))
    return r


def fetch_result(status):
    """Names the outcome of fetching robots.txt with an HTTP status (0 when no
    answer came): "ok", "not_found" or "unreachable"."""
    if 200 <= status <= 299:
        return FETCH_OK
    if 400 <= status <= 499:
        return FETCH_NOT_FOUND
    return FETCH_UNREACHABLE


def from_status(status, body):
    """RFC 9309 section 2.3.1: 2xx parses the body; 4xx means no usable file,
    so everything is allowed; anything else means unreachable, so everything
    is disallowed."""
    f = fetch_result(status)
    if f == FETCH_OK:
        return parse_robots(body)
    r = Robots()
    r._mode = _MODE_ALLOW_ALL if f == FETCH_NOT_FOUND else _MODE_DISALLOW_ALL
    return r


def check_robots(robots, agent, path):
    """Whether the crawler named agent may fetch path (path plus query, as
    sent): {"allowed": bool, "rule": str}. robots may be None (allows
    everything). agent and path: str or bytes."""
    path = _to_bytes(path)
    if not path.startswith(b"/"):
        path = b"/" + path
    p = _normalize(path)
    if p == b"/robots.txt" or robots is None:
        return {"allowed": True, "rule": ""}
    if robots._mode == _MODE_ALLOW_ALL:
        return {"allowed": True, "rule": ""}
    if robots._mode == _MODE_DISALLOW_ALL:
        return {"allowed": False, "rule": ""}

    best = None

    def consider(g):
        nonlocal best
        for ru in g.rules:
            if best is not None and (ru.length < best.length or
                                     (ru.length == best.length and (best.allow or not ru.allow))):
                continue
            if ru.matches(p):
                best = ru

    named = False
    t = _product_token(_to_bytes(agent))
    if t:
        for g in robots._groups:
            if t in g.tokens:
                named = True
                consider(g)
    if not named:
        for g in robots._groups:
            if g.is_global:
                consider(g)
    if best is None:
        return {"allowed": True, "rule": ""}
    return {"allowed": best.allow, "rule": best.text}


def lookup_crawler(token):
    """The AI_CRAWLERS entry whose token equals token ASCII
    case-insensitively as a whole string, or None ("gptbot" finds GPTBot,
    "GPTBot/1.1" finds nothing)."""
    lt = _ascii_lower(_to_bytes(token))
    for t, o, p in _CRAWLERS:
        if _ascii_lower(t.encode("utf-8")) == lt:
            return {"token": t, "owner": o, "purpose": p}
    return None


def _robots_access_report(robots_txt, status, crawlers, paths):
    """RobotsAccess of access.go: deterministic, crawlers and paths keep the
    given order, duplicates included. Strings are already Go strings."""
    if not crawlers:
        crawlers = [t for t, _, _ in _CRAWLERS]
    if not paths:
        paths = ["/"]
    r = from_status(status, robots_txt)
    out = []
    for name in crawlers:
        c = lookup_crawler(name)
        all_allowed = True
        all_blocked = True
        ps = []
        for p in paths:
            d = check_robots(r, name, p)
            ps.append({"path": p, "allowed": d["allowed"], "rule": d["rule"]})
            if d["allowed"]:
                all_blocked = False
            else:
                all_allowed = False
        out.append({
            "crawler": name,
            "owner": c["owner"] if c else "",
            "purpose": c["purpose"] if c else "",
            "paths": ps,
            "all_allowed": all_allowed,
            "all_blocked": all_blocked,
        })
    return {"fetch": fetch_result(status), "crawlers": out}


# --------------------------------------------------------------------- kit input

_WANT = "robotsAccess: bad input: "
_KIT_FIELDS = "robots_txt, status, crawlers, paths"
_WANT_TYPE = {"robots_txt": "a string", "status": "an integer",
              "crawlers": "a list of strings", "paths": "a list of strings"}
_STATUS_REQUIRED = ('robotsAccess: bad input: "status" is required '
                    '(the HTTP status of the robots.txt fetch, 0 when no answer came)')
_FIELDS = ("robots_txt", "status", "crawlers", "paths")
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _fold_key(key):
    """Go's encoding/json matches object keys to struct fields with
    bytes.EqualFold: ASCII case-insensitively, plus the Unicode characters
    that simple-fold to an ASCII letter (U+017F long s, U+212A Kelvin sign)."""
    out = []
    for ch in key:
        if ch in "s\u017f":
            ch = "S"
        elif ch in "k\u212a":
            ch = "K"
        elif "a" <= ch <= "z":
            ch = ch.upper()
        out.append(ch)
    return "".join(out)


_FIELD_BY_FOLD = {_fold_key(f): f for f in _FIELDS}


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


def _type_error(kind, field, go_type=None):
    """The Go kit's wording of a value of the wrong JSON kind."""
    if kind.startswith("number "):
        phrase = "a number with a fraction or exponent"
    elif kind == "bool":
        phrase = "a JSON boolean"
    else:
        phrase = "a JSON " + kind
    return '"%s" must be %s, not %s' % (field, _WANT_TYPE[field], phrase)


def _decode_string_list(value, backing, field):
    """Decodes a JSON array of strings the way Go's encoding/json decodes into
    an existing []string: elements are written into the slice's backing array
    (which a JSON null element leaves as it was: "" unless an earlier key for
    the same field wrote there), null sets the slice to nil and [] to a new
    empty slice. Returns (result, backing, error)."""
    if value is None:
        return None, [], None
    if not isinstance(value, (list, tuple)):
        return None, backing, _type_error(_json_kind(value), field, "[]string")
    if len(value) == 0:
        return [], [], None
    err = None
    backing = list(backing)
    for i, e in enumerate(value):
        if i >= len(backing):
            backing.append("")
        if e is None:
            continue
        if isinstance(e, str):
            backing[i] = _go_string(e)
        elif err is None:
            err = _type_error(_json_kind(e), field, "string")
    return backing[:len(value)], backing, err


def robots_access(input):
    """The kit function robotsAccess: input is the decoded JSON object
    {"robots_txt": string, "status": int, "crawlers": [string], "paths":
    [string]}, validated as the Go adapter validates it (unknown fields, a
    missing status and wrong types raise ValueError). Returns the report as
    plain dicts and lists, keys in the Go JSON order."""
    if input is None:
        # Go decodes a JSON null into the input struct as a no-op.
        raise ValueError(_STATUS_REQUIRED)
    if not isinstance(input, dict):
        raise ValueError(_WANT + "the input must be a JSON object with the fields " + _KIT_FIELDS)
    robots_txt = None
    status = None
    crawlers = None
    paths = None
    crawlers_backing = []
    paths_backing = []
    err = None  # Go keeps decoding after a type error and reports the first
    for key, value in input.items():
        field = _FIELD_BY_FOLD.get(_fold_key(key)) if isinstance(key, str) else None
        e = None
        if field is None:
            e = "unknown field %s; the allowed fields are %s" % (_go_quote(key), _KIT_FIELDS)
        elif field == "robots_txt":
            if value is None:
                robots_txt = None
            elif isinstance(value, str):
                robots_txt = _go_string(value)
            else:
                e = _type_error(_json_kind(value), field, "string")
        elif field == "status":
            if value is None:
                status = None
            elif isinstance(value, int) and not isinstance(value, bool):
                if _INT64_MIN <= value <= _INT64_MAX:
                    status = int(value)
                else:
                    e = _type_error("number %d" % value, field, "int")
            elif isinstance(value, float):
                e = _type_error("number %r" % value, field, "int")
            else:
                e = _type_error(_json_kind(value), field, "int")
        elif field == "crawlers":
            res, crawlers_backing, e = _decode_string_list(value, crawlers_backing, field)
            if e is None:
                crawlers = res
        else:
            res, paths_backing, e = _decode_string_list(value, paths_backing, field)
            if e is None:
                paths = res
        if e is not None and err is None:
            err = e
    if err is not None:
        raise ValueError(_WANT + err)
    if status is None:
        raise ValueError(_STATUS_REQUIRED)
    return _robots_access_report(robots_txt if robots_txt is not None else "", status, crawlers, paths)


def _go_quote(s):
    """Roughly Go's %q of a string, for error messages."""
    s = str(s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# The package's kit functions by name, as KitFunctions() in access.go.
KIT_FUNCTIONS = {"robotsAccess": robots_access}
