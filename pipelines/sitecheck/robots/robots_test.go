package robots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const fixturePath = "../../../testdata/sitecheck/robots_access.json"

type fixtureCase struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Want  json.RawMessage `json:"want"`
}

func loadFixture(t testing.TB) []fixtureCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash(fixturePath))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	var cases []fixtureCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("decode fixture: %v", err)
	}
	return cases
}

// TestFixture runs every shared case (the ones the TypeScript and Python
// ports run too) through the kit function and compares the decoded JSON.
func TestFixture(t *testing.T) {
	cases := loadFixture(t)
	if len(cases) < 170 {
		t.Fatalf("fixture has %d cases, want at least 170", len(cases))
	}
	fn := KitFunctions()["robotsAccess"]
	if fn == nil {
		t.Fatal(`KitFunctions()["robotsAccess"] is missing`)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if c.Name == "" || seen[c.Name] {
			t.Fatalf("fixture case name %q is empty or repeated", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			out, err := fn(c.Input)
			if err != nil {
				t.Fatalf("robotsAccess: %v", err)
			}
			gotJSON, err := json.Marshal(out)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			var got, want any
			if err := json.Unmarshal(gotJSON, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(c.Want, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %s\nwant %s", gotJSON, compact(c.Want))
			}
		})
	}
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func TestKitInputErrors(t *testing.T) {
	fn := KitFunctions()["robotsAccess"]
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", `{"robots_txt":"","status":200,"agents":["x"]}`, `unknown field "agents"`},
		{"missing status", `{"robots_txt":""}`, `"status" is required`},
		{"wrong type", `{"robots_txt":"","status":"200"}`, "bad input"},
		{"not an object", `["x"]`, "bad input"},
		{"trailing data", `{"status":200} {"status":404}`, "after the input object"},
		{"empty", ``, "bad input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fn(json.RawMessage(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestReportSlicesNeverNull(t *testing.T) {
	for _, in := range []AccessInput{
		{Status: 200},
		{Status: 0, Crawlers: []string{}, Paths: []string{}},
		{Status: 404, Crawlers: []string{"X"}, Paths: []string{"/a"}},
	} {
		b, err := json.Marshal(RobotsAccess(in))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("null")) {
			t.Errorf("%+v encodes a null: %s", in, b)
		}
	}
}

func TestAICrawlers(t *testing.T) {
	want := []string{"GPTBot", "OAI-SearchBot", "ChatGPT-User", "ClaudeBot", "Claude-User", "Claude-SearchBot",
		"PerplexityBot", "Perplexity-User", "Google-Extended", "Applebot-Extended", "CCBot", "Bytespider",
		"meta-externalagent", "Amazonbot"}
	if len(AICrawlers) < len(want) {
		t.Fatalf("%d crawlers, want at least %d", len(AICrawlers), len(want))
	}
	seen := map[string]bool{}
	for i, c := range AICrawlers {
		if i < len(want) && c.Token != want[i] {
			t.Errorf("AICrawlers[%d] = %s, want %s", i, c.Token, want[i])
		}
		switch c.Purpose {
		case PurposeTraining, PurposeSearch, PurposeUserRequest:
		default:
			t.Errorf("%s: purpose %q", c.Token, c.Purpose)
		}
		if c.Owner == "" {
			t.Errorf("%s: no owner", c.Token)
		}
		if productToken(c.Token) != asciiLower(c.Token) {
			t.Errorf("%s is not a valid RFC 9309 product token", c.Token)
		}
		if seen[asciiLower(c.Token)] {
			t.Errorf("%s listed twice", c.Token)
		}
		seen[asciiLower(c.Token)] = true
	}
}

func TestFromStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	for _, tc := range []struct {
		status     int
		fetch      string
		public     bool // "/public" allowed
		private    bool // "/private" allowed
		robotsPath bool // "/robots.txt" allowed
	}{
		{200, FetchOK, true, false, true},
		{206, FetchOK, true, false, true},
		{299, FetchOK, true, false, true},
		{400, FetchNotFound, true, true, true},
		{401, FetchNotFound, true, true, true},
		{403, FetchNotFound, true, true, true},
		{404, FetchNotFound, true, true, true},
		{429, FetchNotFound, true, true, true},
		{499, FetchNotFound, true, true, true},
		{500, FetchUnreachable, false, false, true},
		{503, FetchUnreachable, false, false, true},
		{599, FetchUnreachable, false, false, true},
		{0, FetchUnreachable, false, false, true},
		{-1, FetchUnreachable, false, false, true},
		{100, FetchUnreachable, false, false, true},
		{199, FetchUnreachable, false, false, true},
		{301, FetchUnreachable, false, false, true},
		{304, FetchUnreachable, false, false, true},
		{600, FetchUnreachable, false, false, true},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			if got := FetchResult(tc.status); got != tc.fetch {
				t.Errorf("FetchResult = %s, want %s", got, tc.fetch)
			}
			r := FromStatus(tc.status, body)
			for path, want := range map[string]bool{"/public": tc.public, "/private": tc.private, "/robots.txt": tc.robotsPath} {
				d := r.Check("GPTBot", path)
				if d.Allowed != want {
					t.Errorf("%s: allowed = %v, want %v", path, d.Allowed, want)
				}
				if tc.fetch != FetchOK && d.Rule != "" {
					t.Errorf("%s: rule %q without a parsed file", path, d.Rule)
				}
			}
		})
	}
}

func TestNilAndZeroRobotsAllow(t *testing.T) {
	var r *Robots
	if d := r.Check("GPTBot", "/x"); !d.Allowed || d.Rule != "" {
		t.Errorf("nil: %+v", d)
	}
	if d := (&Robots{}).Check("GPTBot", "/x"); !d.Allowed || d.Rule != "" {
		t.Errorf("zero: %+v", d)
	}
}

func TestGrouping(t *testing.T) {
	r := Parse([]byte(strings.Join([]string{
		"Disallow: /ignored",         // before any user-agent: dropped
		"User-agent: A/1.0",          // group 0
		"sitemap: https://e.x/s.xml", // does not end the agent list
		"User-agent: b c",            // group 0
		"User-agent: *",              // group 0
		"Disallow: /x",               // group 0 rule
		"crawl-delay: 4",             // does not end the group
		"Allow: /y",                  // group 0 rule
		"User-agent: C-d",            // group 1
		"Disallow:",                  // empty: ends the agent list, no rule stored
		"User-agent: e",              // group 2
		"User-agent: *x",             // group 2: no token, not global
	}, "\n")))
	type g struct {
		global bool
		tokens []string
		rules  []string
	}
	var got []g
	for _, gr := range r.groups {
		x := g{global: gr.global, tokens: gr.tokens}
		for _, ru := range gr.rules {
			x.rules = append(x.rules, ru.text)
		}
		got = append(got, x)
	}
	want := []g{
		{true, []string{"a", "b"}, []string{"disallow: /x", "allow: /y"}},
		{false, []string{"c-d"}, nil},
		{false, []string{"e"}, nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups\n got %+v\nwant %+v", got, want)
	}
}

// refSplitLine is splitLine written another way: the comment cut, then the
// first ":" splits; without one, the line must be exactly two runs of
// octets other than space and tab.
func refSplitLine(line []byte) (key, value string, ok bool) {
	s, _, _ := strings.Cut(string(line), "#")
	if k, v, found := strings.Cut(s, ":"); found {
		return strings.ToLower(strings.Trim(k, " \t")), strings.Trim(v, " \t"), true
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(words) != 2 {
		return "", "", false
	}
	return strings.ToLower(words[0]), words[1], true
}

// checkSplitLine fails when splitLine and refSplitLine disagree on line.
// strings.ToLower in the reference changes non-ASCII letters too, so keys
// holding octets 0x80 and above are compared in ASCII lower case only.
func checkSplitLine(t *testing.T, line []byte) {
	t.Helper()
	k, v, ok := splitLine(line)
	rk, rv, rok := refSplitLine(line)
	if ok != rok || v != rv || ok && k != asciiLower(k) {
		t.Fatalf("splitLine(%q) = %q, %q, %v; reference %q, %q, %v", line, k, v, ok, rk, rv, rok)
	}
	if ok && strings.ToLower(k) != rk {
		t.Fatalf("splitLine(%q) key %q, reference %q", line, k, rk)
	}
}

func TestSplitLine(t *testing.T) {
	for _, tc := range []struct {
		line, key, value string
		ok               bool
	}{
		{"Disallow: /a b", "disallow", "/a b", true},
		{"a b:c d", "a b", "c d", true},
		{":", "", "", true},
		{"disallow /", "disallow", "/", true},
		{"  Disallow \t /x \t", "disallow", "/x", true},
		{"USER-AGENT FooBot # the bot", "user-agent", "FooBot", true},
		{"user-agent *", "user-agent", "*", true},
		{"disallow /x#frag", "disallow", "/x", true},
		{"disallow /a b", "", "", false},
		{"user agent FooBot", "", "", false},
		{"disallow", "", "", false},
		{"disallow\u00a0/", "", "", false},
		{"# disallow /", "", "", false},
		{"", "", "", false},
		{" \t ", "", "", false},
	} {
		k, v, ok := splitLine([]byte(tc.line))
		if k != tc.key || v != tc.value || ok != tc.ok {
			t.Errorf("splitLine(%q) = %q, %q, %v; want %q, %q, %v", tc.line, k, v, ok, tc.key, tc.value, tc.ok)
		}
		checkSplitLine(t, []byte(tc.line))
	}
}

// TestLineWithoutColon: a two-word line without ":" is a user-agent or rule
// line, so it starts groups, ends agent lists and carries rules; a line of
// three words is skipped and ends nothing.
func TestLineWithoutColon(t *testing.T) {
	for _, tc := range []struct {
		name, body, agent, path string
		want                    Decision
	}{
		{"google ID_LineSyntax_Line#3", "user-agent FooBot\ndisallow /\n", "FooBot", "/x/y", Decision{false, "disallow: /"}},
		{"allow without colon", "User-agent: *\nDisallow: /\nAllow /x\n", "a", "/x/y", Decision{true, "allow: /x"}},
		{"user-agent without colon ends the rules of the group before",
			"User-agent: A\nDisallow: /a\nUser-agent B\nDisallow: /b\n", "A", "/b", Decision{true, ""}},
		{"three words skipped, group kept", "User-agent: A\nthe rest is prose\nUser-agent: B\nDisallow: /\n", "A", "/x",
			Decision{false, "disallow: /"}},
		{"user agent without colon is three words", "User agent A\nDisallow: /\n", "A", "/x", Decision{true, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse([]byte(tc.body)).Check(tc.agent, tc.path); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRuleTextKeepsPatternAsWritten(t *testing.T) {
	r := Parse([]byte("User-agent: *\n\tDISSALLOW :   /a%7e b$  \t# c\n"))
	d := r.Check("x", "/a~ b")
	if d.Allowed || d.Rule != "disallow: /a%7e b$" {
		t.Errorf("got %+v", d)
	}
}

func TestEmptyPathIsRoot(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /$\n"))
	if d := r.Check("x", ""); d.Allowed || d.Rule != "disallow: /$" {
		t.Errorf("got %+v", d)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"":               "",
		"/":              "/",
		"/%62%61%7A":     "/baz",
		"/%7e%7E%2d%2E":  "/~~-.",
		"/%5f%30%39":     "/_09",
		"/%2f%2F":        "/%2F%2F",
		"/%3a%3F%3d":     "/%3A%3F%3D",
		"/%e3%83%84":     "/%E3%83%84",
		"/\u30c4":        "/%E3%83%84",
		"/\u00e9":        "/%C3%A9",
		"/a*b$c":         "/a%2Ab%24c",
		"/%2a%24":        "/%2A%24",
		"/100%":          "/100%",
		"/100%2":         "/100%2",
		"/%zz%g1":        "/%zz%g1",
		"/%2541":         "/%2541",
		"/a b\"<>{}|\\^": "/a b\"<>{}|\\^",
		"/%20":           "/%20",
		"/?q=%41&r=%2B":  "/?q=A&r=%2B",
		"\xff\x80":       "%FF%80",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRuleLength(t *testing.T) {
	for pattern, want := range map[string]int{
		"/":          1,
		"*":          1,
		"$":          1,
		"/$":         2,
		"/a*":        3,
		"/a**b":      5,
		"*.gif$":     6,
		"/%61%62":    3, // "/ab"
		"/%2f":       4, // "/%2F"
		"/\u00fc":    7, // "/%C3%BC"
		"/a$b":       6, // "/a%24b"
		"/a$$":       6, // "/a%24" + anchor
		"/file-%2A":  9,
		"/%E3%83%84": 10,
	} {
		if got := compileRule(false, pattern).length; got != want {
			t.Errorf("length(%q) = %d, want %d", pattern, got, want)
		}
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{
		"GPTBot":        "gptbot",
		"GPTBot/1.1":    "gptbot",
		"GPTBot extra":  "gptbot",
		"  GPTBot\t":    "gptbot",
		"GPTBot2":       "gptbot",
		"GPTBot-Extra":  "gptbot-extra",
		"Claude_Bot":    "claude_bot",
		"*":             "",
		"*bot":          "",
		"123":           "",
		"":              "",
		"\u00a0GPTBot":  "",
		"Mozilla/5.0 x": "mozilla",
	} {
		if got := productToken(in); got != want {
			t.Errorf("productToken(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{"*": true, "* x": true, "*\tx": true, "*x": false, "*/1": false, "": false, "x *": false} {
		if got := isGlobalAgent(in); got != want {
			t.Errorf("isGlobalAgent(%q) = %v, want %v", in, got, want)
		}
	}
}

// padTo returns prefix followed by comment lines, exactly n bytes long.
func padTo(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for b.Len() < n {
		left := n - b.Len()
		k := min(left, 4096)
		if left-k == 1 {
			k--
		}
		if k < 2 {
			panic("padTo: cannot fill")
		}
		b.WriteString("#")
		b.WriteString(strings.Repeat("p", k-2))
		b.WriteString("\n")
	}
	if b.Len() != n {
		panic("padTo: overshoot")
	}
	return b.String()
}

func TestParseLimit(t *testing.T) {
	const head = "User-agent: *\nDisallow: /before\n"
	blocked := func(body, path string) bool {
		return !Parse([]byte(body)).Check("GPTBot", path).Allowed
	}
	t.Run("exactly the limit with an unterminated last line is all parsed", func(t *testing.T) {
		body := padTo(head, MaxBytes-len("Disallow: /last")) + "Disallow: /last"
		if len(body) != MaxBytes || !blocked(body, "/last") || !blocked(body, "/before") {
			t.Fatal("last line inside the limit was not applied")
		}
	})
	t.Run("a line cut by the limit is dropped", func(t *testing.T) {
		body := padTo(head, MaxBytes-len("Disallow: /la")) + "Disallow: /last\n"
		if blocked(body, "/la") || blocked(body, "/last") {
			t.Fatal("a cut line was applied")
		}
		if !blocked(body, "/before") {
			t.Fatal("a rule before the limit was not applied")
		}
	})
	t.Run("a line whose break lies past the limit counts as cut", func(t *testing.T) {
		body := padTo(head, MaxBytes-len("Disallow: /edge")) + "Disallow: /edge\n"
		if len(body) != MaxBytes+1 || blocked(body, "/edge") {
			t.Fatal("a line without its break inside the limit was applied")
		}
	})
	t.Run("a line break on the last byte keeps the line", func(t *testing.T) {
		body := padTo(head, MaxBytes-len("Disallow: /edge\n")) + "Disallow: /edge\nDisallow: /after\n"
		if !blocked(body, "/edge") || blocked(body, "/after") {
			t.Fatal("wrong cut at an exact line end")
		}
	})
	t.Run("CR on the last byte and LF past it keeps the line", func(t *testing.T) {
		body := padTo(head, MaxBytes-len("Disallow: /crlf\r")) + "Disallow: /crlf\r\nDisallow: /after\r\n"
		if !blocked(body, "/crlf") || blocked(body, "/after") {
			t.Fatal("wrong cut inside a CRLF")
		}
	})
	t.Run("the BOM counts toward the limit", func(t *testing.T) {
		const bom = "\xEF\xBB\xBF"
		fits := bom + padTo(head, MaxBytes-len(bom)-len("Disallow: /b\n")) + "Disallow: /b\nDisallow: /after\n"
		if !blocked(fits, "/b") || blocked(fits, "/after") || !blocked(fits, "/before") {
			t.Fatal("BOM-prefixed body cut in the wrong place")
		}
		over := bom + padTo(head, MaxBytes-len("Disallow: /b\n")) + "Disallow: /b\n"
		if blocked(over, "/b") {
			t.Fatal("the BOM was not counted")
		}
	})
	t.Run("rules far past the limit are ignored", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(head)
		for b.Len() < 3*MaxBytes {
			b.WriteString("Disallow: /late\n")
		}
		body := b.String()
		// "/late" lines inside the limit do apply; make the late rule unique.
		body += "Disallow: /very-late\n"
		if !blocked(body, "/before") || !blocked(body, "/late") || blocked(body, "/very-late") {
			t.Fatal("wrong rules applied for a 1.5 MB body")
		}
	})
	t.Run("no line break inside the limit parses nothing", func(t *testing.T) {
		body := "User-agent: * Disallow: /" + strings.Repeat("x", MaxBytes) + "\nUser-agent: *\nDisallow: /\n"
		if blocked(body, "/") {
			t.Fatal("something past the limit was parsed")
		}
	})
}

// ---------------------------------------------------------------------------
// Reference matcher for FuzzMatch: written independently of the package's
// matcher, octet by octet, with memoised backtracking over wildcards.

// refNormalize is the normalisation of the package comment, unit by unit.
func refNormalize(s string) string {
	const unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	var units []string
	for i := 0; i < len(s); {
		if s[i] == '%' && i+3 <= len(s) && isHexPair(s[i+1:i+3]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if strings.IndexByte(unreserved, byte(v)) >= 0 {
				units = append(units, string(rune(v)))
			} else {
				units = append(units, fmt.Sprintf("%%%02X", v))
			}
			i += 3
			continue
		}
		c := s[i]
		if c >= 0x80 || c == '*' || c == '$' {
			units = append(units, fmt.Sprintf("%%%02X", c))
		} else {
			units = append(units, string([]byte{c}))
		}
		i++
	}
	return strings.Join(units, "")
}

func isHexPair(s string) bool {
	for _, c := range []byte(s) {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
			return false
		}
	}
	return len(s) == 2
}

type refToken struct {
	wild bool
	lit  string
}

// refCompile turns a pattern into tokens and its length in octets.
func refCompile(pattern string) (toks []refToken, anchored bool, length int) {
	if n := len(pattern); n > 0 && pattern[n-1] == '$' {
		anchored, pattern, length = true, pattern[:n-1], 1
	}
	for i, part := range strings.Split(pattern, "*") {
		if i > 0 {
			toks = append(toks, refToken{wild: true})
			length++
		}
		lit := refNormalize(part)
		toks = append(toks, refToken{lit: lit})
		length += len(lit)
	}
	return toks, anchored, length
}

func refMatch(pattern, path string) bool {
	toks, anchored, _ := refCompile(pattern)
	text := refNormalize(path)
	memo := map[[2]int]bool{}
	var match func(t, pos int) bool
	match = func(t, pos int) bool {
		key := [2]int{t, pos}
		if v, ok := memo[key]; ok {
			return v
		}
		var ok bool
		switch {
		case t == len(toks):
			ok = !anchored || pos == len(text)
		case toks[t].wild:
			for p := pos; p <= len(text) && !ok; p++ {
				ok = match(t+1, p)
			}
		default:
			lit := toks[t].lit
			ok = pos+len(lit) <= len(text) && text[pos:pos+len(lit)] == lit && match(t+1, pos+len(lit))
		}
		memo[key] = ok
		return ok
	}
	return match(0, 0)
}

func TestReferenceMatcherAgrees(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"/a/*/c", "/a/b/c", true},
		{"/a/*/c", "/a/c", false},
		{"/*.gif$", "/x.gif", true},
		{"/*.gif$", "/x.gif?y", false},
		{"/a$b", "/a$b", true},
		{"/a$$", "/a$", true},
		{"/a$$", "/a", false},
		{"$", "", true},
		{"*", "", true},
		{"/%2A", "/*", true},
		{"/%2F", "/", false},
		{"/\u30c4", "/%e3%83%84", true},
		{"/*aab*x", "/aaab-x", true},
		{"/*ab$", "/abab", true},
		{"/*a*a$", "/a", false},
		{"/*a*a$", "/aa", true},
		{"/*a*a$", "/aaa", true},
	} {
		ru := compileRule(false, tc.pattern)
		if got := ru.matches(normalize(tc.path)); got != tc.want {
			t.Errorf("matcher(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
		if got := refMatch(tc.pattern, tc.path); got != tc.want {
			t.Errorf("reference(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"/", "/"}, {"/a/*/c", "/a/b/c"}, {"/*.gif$", "/x.gif"}, {"*", ""}, {"$", ""},
		{"/a$b", "/a%24b"}, {"/a$$", "/a$"}, {"/%2A", "/*"}, {"/%2f", "/%2F"}, {"/\u30c4", "/%e3%83%84"},
		{"/*aab*x", "/aaab-x"}, {"/**", "/x"}, {"/*a*a$", "/aaa"}, {"/caf%C3", "/caf\u00e9"},
		{"/%zz", "/%zz"}, {"/a%4", "/a%41"}, {"/p?id=%41", "/p?id=A"}, {"*.pdf", "/a.pdf.bak"},
		// google/robotstxt ID_Encoding#3, #5 and #6, kept as RFC 9309 2.2.2 requires.
		{"/foo/bar/\u30c4", "/foo/bar/\u30c4"}, {"/foo/bar/%E3%83%84", "/foo/bar/\u30c4"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 256 || len(path) > 1024 {
			return
		}
		ru := compileRule(false, pattern)
		want := refMatch(pattern, path)
		if got := ru.matches(normalize(path)); got != want {
			t.Fatalf("matches(%q, %q) = %v, reference says %v", pattern, path, got, want)
		}
		if _, _, n := refCompile(pattern); ru.length != n {
			t.Fatalf("length(%q) = %d, reference says %d", pattern, ru.length, n)
		}
		// End to end, for patterns a robots.txt line can carry as they are.
		if pattern == "" || strings.ContainsAny(pattern, "#\r\n") || trimWS(pattern) != pattern {
			return
		}
		d := Parse([]byte("User-agent: *\nDisallow: "+pattern+"\n")).Check("AnyBot", path)
		p := path
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		blocked := refMatch(pattern, p) && refNormalize(p) != "/robots.txt"
		if d.Allowed == blocked {
			t.Fatalf("Check(%q) with Disallow: %q = %+v, reference says blocked=%v", path, pattern, d, blocked)
		}
		if blocked && d.Rule != "disallow: "+pattern || !blocked && d.Rule != "" {
			t.Fatalf("Check(%q) with Disallow: %q reports rule %q", path, pattern, d.Rule)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []struct{ body, agent, path string }{
		{"User-agent: *\nDisallow: /\n", "GPTBot", "/x"},
		{"User-agent: GPTBot\nDisallow: /a\nAllow: /a/b\n", "GPTBot", "/a/b/c"},
		{"\xEF\xBB\xBFUser-agent: *\r\nDisallow: /*.gif$\r\n", "x", "/a.gif"},
		{"User-agent: a\rUser-agent: b\rAllow: /\rDisallow: *\r", "b", "/"},
		{"Disallow: /\nUser-agent: *\nsitemap: x\nDisallow:\n", "c", "/robots.txt"},
		{"user agent: GPTBot/1.1 # c\ndissallow: /%e3%83%84$\n", "gptbot", "/\u30c4"},
		{"User-agent: *\nAllow: /$\nDisallow: /\n", "Claude-User", ""},
		{"::::\n#\n\n\r\r\n", "", ""},
		// A line without ":" that is two words is "key: value" (google/robotstxt
		// ID_LineSyntax_Line#3); three words, one word or a non-breaking space
		// are not.
		{"user-agent FooBot\ndisallow /\n", "FooBot", "/x/y"},
		{"User-agent *\n\tAllow\t/a # c d\nDisallow /a b\nuser agent x\nDisallow\u00a0/\n", "x", "/a"},
		// Encoding (ID_Encoding#3, #5, #6): raw UTF-8 in the path is compared
		// percent-encoded, encoded unreserved octets decoded.
		{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/\u30c4\n", "FooBot", "/foo/bar/\u30c4"},
		{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "/foo/bar/\u30c4"},
		{"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "/foo/bar/baz"},
	} {
		f.Add([]byte(s.body), s.agent, s.path)
	}
	disallowAll := Parse([]byte("User-agent: *\nDisallow: /\n"))
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		line, _ := nextLine(body)
		checkSplitLine(t, line)
		r := Parse(body)
		d := r.Check(agent, path)
		if again := r.Check(agent, path); again != d {
			t.Fatalf("Check not deterministic: %+v then %+v", d, again)
		}
		if other := Parse(body).Check(agent, path); other != d {
			t.Fatalf("Parse not deterministic: %+v then %+v", d, other)
		}
		switch {
		case d.Rule == "":
			if !d.Allowed {
				t.Fatalf("blocked without a rule: %+v", d)
			}
		case strings.HasPrefix(d.Rule, "allow: "):
			if !d.Allowed {
				t.Fatalf("allow rule but blocked: %+v", d)
			}
		case strings.HasPrefix(d.Rule, "disallow: "):
			if d.Allowed {
				t.Fatalf("disallow rule but allowed: %+v", d)
			}
		default:
			t.Fatalf("malformed rule text: %+v", d)
		}
		rooted := path
		if !strings.HasPrefix(rooted, "/") {
			rooted = "/" + rooted
		}
		isRobots := normalize(rooted) == "/robots.txt"
		if da := disallowAll.Check(agent, path); !isRobots && (da.Allowed || da.Rule != "disallow: /") {
			t.Fatalf("disallow-all file lets %q fetch %q: %+v", agent, path, da)
		}
		// The same with the crawler named in the group: whether its name
		// matches the line or not, the group's disallow-all applies.
		if !strings.ContainsAny(agent, "#\r\n") {
			named := Parse([]byte("User-agent: " + agent + "\nUser-agent: *\nDisallow: /\n"))
			if dn := named.Check(agent, path); !isRobots && (dn.Allowed || dn.Rule != "disallow: /") {
				t.Fatalf("disallow-all group naming %q lets it fetch %q: %+v", agent, path, dn)
			}
		}
		if u := FromStatus(503, body).Check(agent, path); u.Allowed != isRobots {
			t.Fatalf("unreachable file: %q -> %+v", path, u)
		}
		if n := FromStatus(404, body).Check(agent, path); !n.Allowed {
			t.Fatalf("unavailable file blocks %q", path)
		}
		if isRobots && !d.Allowed {
			t.Fatalf("/robots.txt blocked")
		}
	})
}
