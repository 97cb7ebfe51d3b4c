// Package robots parses robots.txt files and answers whether a crawler may
// fetch a path, following RFC 9309 (Robots Exclusion Protocol). It also builds
// the robotsAccess report: which AI crawlers a site lets in, path by path.
//
// The TypeScript and Python ports are tested against the shared fixture
// testdata/sitecheck/robots_access.json; every decision below is pinned there
// by a case whose name says which rule it checks. google/robotstxt's matcher
// suite runs too (google_suite_test.go); the few cases answered differently
// are listed there, each with the RFC 9309 sentence or decision behind it.
//
// # Parsing
//
//   - Only the first MaxBytes (512000) bytes of the body are parsed. When the
//     body is longer, everything after the last line break (CR or LF) inside
//     those bytes is dropped too, so a line cut by the limit is never half
//     read; a line whose break lies beyond the limit counts as cut.
//   - A UTF-8 byte order mark (EF BB BF) at the very start is skipped; the
//     limit counts it. A BOM anywhere else is an ordinary character.
//   - Lines end at LF, CR or CRLF.
//   - "#" starts a comment anywhere in a line (a literal "#" in a pattern must
//     be written %23).
//   - A line is "key: value", split at the first ":". Key and value are
//     trimmed of spaces and tabs only (RFC 9309 WS); other bytes, including
//     other Unicode spaces, are kept.
//   - A line without ":" that, trimmed, is exactly two words separated by
//     spaces or tabs is read as if the colon stood between them: "disallow /"
//     is "disallow: /", "user-agent GPTBot" is "user-agent: GPTBot" (Google's
//     parser does the same; RFC 9309 2.3.1.5 asks crawlers to try to parse
//     each line). Any other line without ":" ("disallow /a b", "user agent
//     GPTBot", one word) is malformed and skipped.
//   - Keys compare ASCII case-insensitively. Accepted keys: "user-agent" (and
//     the misspellings "useragent", "user agent"), "allow", "disallow" (and
//     the misspellings "dissallow", "dissalow", "disalow", "diasllow",
//     "disallaw"). Every other key (sitemap, crawl-delay, host, unknown keys)
//     and every malformed line is ignored and does not end a group.
//
// # Groups
//
//   - A user-agent line starts a new group when the current group already
//     holds a rule (an allow or disallow line, an empty one included);
//     otherwise it adds its agent to the current group. Blank lines, comments,
//     other records and malformed lines never end a group, so user-agent lines
//     separated by them share the rules that follow.
//   - Allow and disallow lines before the first user-agent line are ignored.
//   - A user-agent value is "*" (the global group) when it is exactly "*" or
//     "*" followed by a space or tab. Otherwise its product token is the
//     leading run of [A-Za-z_-]: "GPTBot/1.1", "GPTBot extra" and "GPTBot2"
//     all give GPTBot; "GPTBot-Extra" gives GPTBot-Extra; "*bot" and "123"
//     give the empty token, which matches no crawler.
//   - The crawler's name is reduced the same way (trimmed of spaces and tabs,
//     then the leading run of [A-Za-z_-]); an empty token matches no named
//     group and so falls back to "*".
//   - Tokens compare ASCII case-insensitively and whole: "GPT" does not match
//     GPTBot, and GPTBot does not match "GPTBot-Extra".
//   - All groups naming the crawler are combined (rules in file order). Only
//     when none names it are all "*" groups combined. With neither, no rule
//     applies and everything is allowed. A named group with no rules allows
//     everything and still hides the "*" groups.
//
// # Matching
//
// The path (path plus query, as sent) and each pattern are normalised with
// the same function, octet by octet:
//
//   - "%XY" with two hex digits: if the octet is unreserved (A-Z a-z 0-9 - .
//     _ ~) it is decoded; otherwise it stays encoded with upper-case hex.
//   - an octet 0x80 or above (UTF-8 of a non-ASCII character) is encoded as
//     %XY with upper-case hex.
//   - a literal "*" or "$" (in the path, or "$" inside a pattern) becomes %2A
//     or %24: RFC 9309 section 2.2.3 says a pattern matches those characters
//     verbatim only through %-encoding, so %2A and "*" (and %24 and "$") are
//     the same octets in a URI.
//   - every other octet is kept as it is. In particular reserved characters
//     are not equal to their encoding ("/" is not %2F, "?" is not %3F), a "%"
//     that does not start a valid escape stays a lone "%", and a space or
//     other ASCII octet is not encoded.
//
// A path that does not start with "/" is rooted by prepending "/" (so "" is
// "/", "page" is "/page" and "?q=1" is "/?q=1"); nothing else is done to it
// (a "#fragment" is compared like any other octets).
//
// A pattern is split at each "*" (a wildcard matching any run of octets, "/"
// included), and a "$" that is the last character of the pattern anchors the
// end of the path; any other "$" is literal. The split comes first, then each
// literal piece is normalised as above. A pattern matches when it matches from
// the first octet of the normalised path. An empty pattern ("Disallow:")
// matches nothing, and a pattern that starts with neither "/" nor "*" can
// never match a path that starts with "/".
//
// The pattern's length is its normalised length in octets: the normalised
// literal pieces plus one octet for each "*" and one for the final "$". The
// matching rule with the greatest length wins; on equal length an allow rule
// beats a disallow rule; among rules of equal length and kind the first in
// file order is reported. No matching rule means allowed. The path
// "/robots.txt" (after normalisation, without a query) is always allowed,
// even when the file was unreachable.
package robots

import (
	"strings"
)

// MaxBytes is how much of a robots.txt body is parsed (RFC 9309 section 2.5
// asks for at least 500 KiB).
const MaxBytes = 512000

// Decision is the answer for one crawler and one path.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Rule is the winning rule as "allow: <pattern>" or "disallow: <pattern>",
	// with the pattern as written (trimmed, not normalised), or "" when no rule
	// matched.
	Rule string `json:"rule"`
}

type mode int

const (
	modeParsed mode = iota
	modeAllowAll
	modeDisallowAll
)

// Robots is a parsed robots.txt file, or the outcome of a fetch that gave no
// file (see FromStatus). The zero value allows everything.
type Robots struct {
	mode   mode
	groups []group
}

type group struct {
	global bool     // a "*" user-agent line
	tokens []string // lower-case product tokens, never empty
	rules  []rule
}

type rule struct {
	allow    bool
	text     string   // "allow: <pattern>" as reported
	pieces   []string // normalised literal pieces between wildcards
	anchored bool     // ends with "$"
	length   int      // normalised length in octets
}

// Parse reads a robots.txt body fetched with a 2xx status.
func Parse(body []byte) *Robots {
	r := &Robots{mode: modeParsed}
	body = limit(body)
	if len(body) >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF {
		body = body[3:]
	}
	var cur *group
	hasRules := false
	for len(body) > 0 {
		var line []byte
		line, body = nextLine(body)
		key, value, ok := splitLine(line)
		if !ok {
			continue
		}
		switch key {
		case "user-agent", "useragent", "user agent":
			if cur == nil || hasRules {
				r.groups = append(r.groups, group{})
				cur = &r.groups[len(r.groups)-1]
				hasRules = false
			}
			if isGlobalAgent(value) {
				cur.global = true
			} else if t := productToken(value); t != "" {
				cur.tokens = append(cur.tokens, t)
			}
		case "allow", "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw":
			if cur == nil {
				continue // RFC 9309 2.2.2: rules outside any group are ignored
			}
			hasRules = true
			if value == "" {
				continue // an empty pattern matches nothing
			}
			cur.rules = append(cur.rules, compileRule(key == "allow", value))
		}
	}
	return r
}

// FromStatus applies RFC 9309 section 2.3.1 to a fetch result: 2xx parses the
// body; 4xx means no usable file, so everything is allowed; anything else
// (5xx, 0 for no answer, and 1xx, 3xx or out-of-range codes, which a
// redirect-following fetcher never hands over) means unreachable, so
// everything is disallowed.
func FromStatus(status int, body []byte) *Robots {
	switch FetchResult(status) {
	case FetchOK:
		return Parse(body)
	case FetchNotFound:
		return &Robots{mode: modeAllowAll}
	default:
		return &Robots{mode: modeDisallowAll}
	}
}

// The fetch outcomes reported by RobotsAccess.
const (
	FetchOK          = "ok"
	FetchNotFound    = "not_found"
	FetchUnreachable = "unreachable"
)

// FetchResult names the outcome of fetching robots.txt with an HTTP status
// (0 when no answer came).
func FetchResult(status int) string {
	switch {
	case status >= 200 && status <= 299:
		return FetchOK
	case status >= 400 && status <= 499:
		return FetchNotFound
	default:
		return FetchUnreachable
	}
}

// Check says whether the crawler named agent may fetch path (path plus query,
// as sent).
func (r *Robots) Check(agent, path string) Decision {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	p := normalize(path)
	if p == "/robots.txt" {
		return Decision{Allowed: true}
	}
	if r == nil {
		return Decision{Allowed: true}
	}
	switch r.mode {
	case modeAllowAll:
		return Decision{Allowed: true}
	case modeDisallowAll:
		return Decision{Allowed: false}
	}
	var best *rule
	consider := func(g *group) {
		for i := range g.rules {
			ru := &g.rules[i]
			if best != nil && (ru.length < best.length || ru.length == best.length && (best.allow || !ru.allow)) {
				continue
			}
			if ru.matches(p) {
				best = ru
			}
		}
	}
	named := false
	if t := productToken(agent); t != "" {
		for i := range r.groups {
			if r.groups[i].names(t) {
				named = true
				consider(&r.groups[i])
			}
		}
	}
	if !named {
		for i := range r.groups {
			if r.groups[i].global {
				consider(&r.groups[i])
			}
		}
	}
	if best == nil {
		return Decision{Allowed: true}
	}
	return Decision{Allowed: best.allow, Rule: best.text}
}

func (g *group) names(token string) bool {
	for _, t := range g.tokens {
		if t == token {
			return true
		}
	}
	return false
}

// limit keeps the first MaxBytes bytes, cut back to the last line break
// inside them when the body is longer.
func limit(body []byte) []byte {
	if len(body) <= MaxBytes {
		return body
	}
	body = body[:MaxBytes]
	for i := len(body) - 1; i >= 0; i-- {
		if body[i] == '\n' || body[i] == '\r' {
			return body[:i+1]
		}
	}
	return nil
}

// nextLine splits off the first line; LF, CR and CRLF end a line.
func nextLine(b []byte) (line, rest []byte) {
	for i, c := range b {
		switch c {
		case '\n':
			return b[:i], b[i+1:]
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				return b[:i], b[i+2:]
			}
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// splitLine drops the comment and splits "key: value"; the key comes back in
// lower case. A line without ":" that is exactly two words separated by
// spaces or tabs ("disallow /") is read as "key: value" (see the package
// comment); any other line without ":" is malformed.
func splitLine(line []byte) (key, value string, ok bool) {
	s := string(line)
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return asciiLower(trimWS(s[:i])), trimWS(s[i+1:]), true
	}
	s = trimWS(s)
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return "", "", false
	}
	value = trimWS(s[i:])
	if strings.ContainsAny(value, " \t") {
		return "", "", false
	}
	return asciiLower(s[:i]), value, true
}

// trimWS trims spaces and tabs (RFC 9309 WS), nothing else.
func trimWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// isGlobalAgent reports a user-agent value that names every crawler: "*"
// alone or followed by a space or tab.
func isGlobalAgent(v string) bool {
	return v == "*" || len(v) > 1 && v[0] == '*' && (v[1] == ' ' || v[1] == '\t')
}

// productToken is the lower-case leading run of [A-Za-z_-] of a crawler name
// or user-agent value (RFC 9309 2.2.1 allows only those characters).
func productToken(s string) string {
	s = trimWS(s)
	n := 0
	for n < len(s) {
		c := s[n]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' {
			n++
			continue
		}
		break
	}
	return asciiLower(s[:n])
}

func compileRule(allow bool, pattern string) rule {
	ru := rule{allow: allow}
	if allow {
		ru.text = "allow: " + pattern
	} else {
		ru.text = "disallow: " + pattern
	}
	body := pattern
	if strings.HasSuffix(body, "$") {
		ru.anchored = true
		body = body[:len(body)-1]
		ru.length++
	}
	raw := strings.Split(body, "*")
	ru.pieces = make([]string, len(raw))
	ru.length += len(raw) - 1
	for i, piece := range raw {
		ru.pieces[i] = normalize(piece)
		ru.length += len(ru.pieces[i])
	}
	return ru
}

// matches reports whether the normalised path p matches the rule. Each
// middle piece is taken at its leftmost place after the previous one, which
// leaves the most room for the rest, so no backtracking is needed.
func (ru *rule) matches(p string) bool {
	first := ru.pieces[0]
	if len(ru.pieces) == 1 {
		if ru.anchored {
			return p == first
		}
		return strings.HasPrefix(p, first)
	}
	if !strings.HasPrefix(p, first) {
		return false
	}
	pos := len(first)
	last := len(ru.pieces) - 1
	for _, piece := range ru.pieces[1:last] {
		i := strings.Index(p[pos:], piece)
		if i < 0 {
			return false
		}
		pos += i + len(piece)
	}
	tail := ru.pieces[last]
	if ru.anchored {
		return len(p)-pos >= len(tail) && strings.HasSuffix(p, tail)
	}
	return strings.Contains(p[pos:], tail)
}

const upperHex = "0123456789ABCDEF"

// normalize puts a path, or a literal piece of a pattern, in the form both
// are compared in (see the package comment).
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[v>>4])
				b.WriteByte(upperHex[v&15])
			}
			i += 2
		case c >= 0x80 || c == '*' || c == '$':
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// isUnreserved is RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
