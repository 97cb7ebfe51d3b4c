package robots

// google/robotstxt's suite, run against this package.
//
// The cases below are the 145 EXPECT_TRUE/EXPECT_FALSE checks of
// robots_test.cc in github.com/google/robotstxt at commit
// 22b355ff855419e6a3ff8ff09c0ad7fdb17116f9 that call IsUserAgentAllowed
// (Google's matcher asked whether one crawler may fetch one URL). They are
// transcribed as data — robots.txt body, crawler name, URL and Google's
// answer — from that file, Copyright 2019 Google LLC, Apache License 2.0.
// The checks of that file that test Google's own helpers
// (IsValidUserAgentToObey, GetPathParamsQuery, MaybeEscapePattern, the parse
// handler's line counting and sitemap callback) have no counterpart here.
//
// A case is named "<test>#<n>": n counts the IsUserAgentAllowed checks of
// that TEST in file order, from 1. Tests named ID_* are the ones Google ties
// to a section of RFC 9309 (72 checks); GoogleOnly_* are Google's extensions
// (73 checks).
//
// Every case must give Google's answer, except the ones listed in
// keptDifferent: there this package must give the other answer, and the entry
// says why. For an ID_* case the reason must be an RFC 9309 sentence that
// requires this package's answer.

import (
	"strings"
	"testing"
)

type googleCase struct {
	id     string // "<test>#<n>"
	test   string
	robots string
	agent  string
	url    string
	google bool // Google's expectation: allowed
}

// googleSuite builds the cases in robots_test.cc order.
func googleSuite() []googleCase {
	var cases []googleCase
	test := ""
	n := 0
	begin := func(name string) { test, n = name, 0 }
	expect := func(want bool, robots, agent, url string) {
		n++
		cases = append(cases, googleCase{
			id: test + "#" + itoa(n), test: test, robots: robots, agent: agent, url: url, google: want,
		})
	}
	yes := func(robots, agent, url string) { expect(true, robots, agent, url) }
	no := func(robots, agent, url string) { expect(false, robots, agent, url) }

	begin("GoogleOnly_SystemTest")
	{
		r := "user-agent: FooBot\n" + "disallow: /\n"
		yes("", "FooBot", "")
		yes(r, "", "")
		no(r, "FooBot", "")
		yes("", "", "")
	}

	begin("ID_LineSyntax_Line")
	{
		correct := "user-agent: FooBot\n" + "disallow: /\n"
		incorrect := "foo: FooBot\n" + "bar: /\n"
		incorrectAccepted := "user-agent FooBot\n" + "disallow /\n"
		url := "http://foo.bar/x/y"
		no(correct, "FooBot", url)
		yes(incorrect, "FooBot", url)
		no(incorrectAccepted, "FooBot", url)
	}

	begin("ID_LineSyntax_Groups")
	{
		r := "allow: /foo/bar/\n" +
			"\n" +
			"user-agent: FooBot\n" +
			"disallow: /\n" +
			"allow: /x/\n" +
			"user-agent: BarBot\n" +
			"disallow: /\n" +
			"allow: /y/\n" +
			"\n" +
			"\n" +
			"allow: /w/\n" +
			"user-agent: BazBot\n" +
			"\n" +
			"user-agent: FooBot\n" +
			"allow: /z/\n" +
			"disallow: /\n"
		w, x, y, z := "http://foo.bar/w/a", "http://foo.bar/x/b", "http://foo.bar/y/c", "http://foo.bar/z/d"
		foo := "http://foo.bar/foo/bar/"
		yes(r, "FooBot", x)
		yes(r, "FooBot", z)
		no(r, "FooBot", y)
		yes(r, "BarBot", y)
		yes(r, "BarBot", w)
		no(r, "BarBot", z)
		yes(r, "BazBot", z)
		no(r, "FooBot", foo)
		no(r, "BarBot", foo)
		no(r, "BazBot", foo)
	}

	begin("ID_LineSyntax_Groups_OtherRules")
	{
		r := "User-agent: BarBot\n" + "Sitemap: https://foo.bar/sitemap\n" + "User-agent: *\n" + "Disallow: /\n"
		no(r, "FooBot", "http://foo.bar/")
		no(r, "BarBot", "http://foo.bar/")
		r = "User-agent: FooBot\n" + "Invalid-Unknown-Line: unknown\n" + "User-agent: *\n" + "Disallow: /\n"
		no(r, "FooBot", "http://foo.bar/")
		no(r, "BarBot", "http://foo.bar/")
	}

	begin("ID_REPLineNamesCaseInsensitive")
	{
		upper := "USER-AGENT: FooBot\n" + "ALLOW: /x/\n" + "DISALLOW: /\n"
		lower := "user-agent: FooBot\n" + "allow: /x/\n" + "disallow: /\n"
		camel := "uSeR-aGeNt: FooBot\n" + "AlLoW: /x/\n" + "dIsAlLoW: /\n"
		allowed, disallowed := "http://foo.bar/x/y", "http://foo.bar/a/b"
		yes(upper, "FooBot", allowed)
		yes(lower, "FooBot", allowed)
		yes(camel, "FooBot", allowed)
		no(upper, "FooBot", disallowed)
		no(lower, "FooBot", disallowed)
		no(camel, "FooBot", disallowed)
	}

	begin("ID_UserAgentValueCaseInsensitive")
	{
		upper := "User-Agent: FOO BAR\n" + "Allow: /x/\n" + "Disallow: /\n"
		lower := "User-Agent: foo bar\n" + "Allow: /x/\n" + "Disallow: /\n"
		camel := "User-Agent: FoO bAr\n" + "Allow: /x/\n" + "Disallow: /\n"
		allowed, disallowed := "http://foo.bar/x/y", "http://foo.bar/a/b"
		for _, agent := range []string{"Foo", "foo"} {
			yes(upper, agent, allowed)
			yes(lower, agent, allowed)
			yes(camel, agent, allowed)
			no(upper, agent, disallowed)
			no(lower, agent, disallowed)
			no(camel, agent, disallowed)
		}
	}

	begin("GoogleOnly_AcceptUserAgentUpToFirstSpace")
	{
		r := "User-Agent: *\n" + "Disallow: /\n" + "User-Agent: Foo Bar\n" + "Allow: /x/\n" + "Disallow: /\n"
		yes(r, "Foo", "http://foo.bar/x/y")
		no(r, "Foo Bar", "http://foo.bar/x/y")
	}

	begin("ID_GlobalGroups_Secondary")
	{
		global := "user-agent: *\n" + "allow: /\n" + "user-agent: FooBot\n" + "disallow: /\n"
		onlySpecific := "user-agent: FooBot\n" + "allow: /\n" + "user-agent: BarBot\n" + "disallow: /\n" +
			"user-agent: BazBot\n" + "disallow: /\n"
		url := "http://foo.bar/x/y"
		yes("", "FooBot", url)
		no(global, "FooBot", url)
		yes(global, "BarBot", url)
		yes(onlySpecific, "QuxBot", url)
	}

	begin("ID_AllowDisallow_Value_CaseSensitive")
	{
		no("user-agent: FooBot\n"+"disallow: /x/\n", "FooBot", "http://foo.bar/x/y")
		yes("user-agent: FooBot\n"+"disallow: /X/\n", "FooBot", "http://foo.bar/x/y")
	}

	begin("ID_LongestMatch")
	{
		url := "http://foo.bar/x/page.html"
		no("user-agent: FooBot\n"+"disallow: /x/page.html\n"+"allow: /x/\n", "FooBot", url)
		r := "user-agent: FooBot\n" + "allow: /x/page.html\n" + "disallow: /x/\n"
		yes(r, "FooBot", url)
		no(r, "FooBot", "http://foo.bar/x/")
		yes("user-agent: FooBot\n"+"disallow: \n"+"allow: \n", "FooBot", url)
		yes("user-agent: FooBot\n"+"disallow: /\n"+"allow: /\n", "FooBot", url)
		r = "user-agent: FooBot\n" + "disallow: /x\n" + "allow: /x/\n"
		no(r, "FooBot", "http://foo.bar/x")
		yes(r, "FooBot", "http://foo.bar/x/")
		yes("user-agent: FooBot\n"+"disallow: /x/page.html\n"+"allow: /x/page.html\n", "FooBot", url)
		r = "user-agent: FooBot\n" + "allow: /page\n" + "disallow: /*.html\n"
		no(r, "FooBot", "http://foo.bar/page.html")
		yes(r, "FooBot", "http://foo.bar/page")
		r = "user-agent: FooBot\n" + "allow: /x/page.\n" + "disallow: /*.html\n"
		yes(r, "FooBot", url)
		no(r, "FooBot", "http://foo.bar/x/y.html")
		r = "User-agent: *\n" + "Disallow: /x/\n" + "User-agent: FooBot\n" + "Disallow: /y/\n"
		yes(r, "FooBot", "http://foo.bar/x/page")
		no(r, "FooBot", "http://foo.bar/y/page")
	}

	begin("ID_Encoding")
	{
		r := "User-agent: FooBot\n" + "Disallow: /\n" + "Allow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n"
		yes(r, "FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par")
		r = "User-agent: FooBot\n" + "Disallow: /\n" + "Allow: /foo/bar/\u30c4\n"
		yes(r, "FooBot", "http://foo.bar/foo/bar/%E3%83%84")
		no(r, "FooBot", "http://foo.bar/foo/bar/\u30c4")
		r = "User-agent: FooBot\n" + "Disallow: /\n" + "Allow: /foo/bar/%E3%83%84\n"
		yes(r, "FooBot", "http://foo.bar/foo/bar/%E3%83%84")
		no(r, "FooBot", "http://foo.bar/foo/bar/\u30c4")
		r = "User-agent: FooBot\n" + "Disallow: /\n" + "Allow: /foo/bar/%62%61%7A\n"
		no(r, "FooBot", "http://foo.bar/foo/bar/baz")
		yes(r, "FooBot", "http://foo.bar/foo/bar/%62%61%7A")
	}

	begin("ID_SpecialCharacters")
	{
		r := "User-agent: FooBot\n" + "Disallow: /foo/bar/quz\n" + "Allow: /foo/*/qux\n"
		no(r, "FooBot", "http://foo.bar/foo/bar/quz")
		yes(r, "FooBot", "http://foo.bar/foo/quz")
		yes(r, "FooBot", "http://foo.bar/foo//quz")
		yes(r, "FooBot", "http://foo.bar/foo/bax/quz")
		r = "User-agent: FooBot\n" + "Disallow: /foo/bar$\n" + "Allow: /foo/bar/qux\n"
		no(r, "FooBot", "http://foo.bar/foo/bar")
		yes(r, "FooBot", "http://foo.bar/foo/bar/qux")
		yes(r, "FooBot", "http://foo.bar/foo/bar/")
		yes(r, "FooBot", "http://foo.bar/foo/bar/baz")
		r = "User-agent: FooBot\n" + "# Disallow: /\n" + "Disallow: /foo/quz#qux\n" + "Allow: /\n"
		yes(r, "FooBot", "http://foo.bar/foo/bar")
		no(r, "FooBot", "http://foo.bar/foo/quz")
	}

	begin("GoogleOnly_IndexHTMLisDirectory")
	{
		r := "User-Agent: *\n" + "Allow: /allowed-slash/index.html\n" + "Disallow: /\n"
		yes(r, "foobot", "http://foo.com/allowed-slash/")
		no(r, "foobot", "http://foo.com/allowed-slash/index.htm")
		yes(r, "foobot", "http://foo.com/allowed-slash/index.html")
		no(r, "foobot", "http://foo.com/anyother-url")
	}

	begin("GoogleOnly_LineTooLong")
	{
		// Google keeps the first 8 * 2083 - 1 = 16,663 bytes of a line; the
		// rule lines below are 16,666 bytes long, so Google cuts "/qux" to
		// "/".
		const maxLineLen = 2083 * 8
		long := func(key string, c byte) string {
			n := maxLineLen - len("/x/") - len(key) + len("\n")
			return "/x/" + strings.Repeat(string(c), n-len("/x/"))
		}
		line := long("disallow: ", 'a')
		r := "user-agent: FooBot\n" + "disallow: " + line + "/qux\n"
		yes(r, "FooBot", "http://foo.bar/fux")
		no(r, "FooBot", "http://foo.bar"+line+"/fux")

		la, lb := long("allow: ", 'a'), long("allow: ", 'b')
		r = "user-agent: FooBot\n" + "disallow: /\n" + "allow: " + la + "/qux\n" + "allow: " + lb + "/qux\n"
		no(r, "FooBot", "http://foo.bar/")
		yes(r, "FooBot", "http://foo.bar"+la+"/qux")
		yes(r, "FooBot", "http://foo.bar"+lb+"/fux")
	}

	begin("GoogleOnly_DocumentationChecks")
	{
		const u = "http://foo.bar"
		r := "user-agent: FooBot\n" + "disallow: /\n" + "allow: /fish\n"
		no(r, "FooBot", u+"/bar")
		for _, p := range []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html",
			"/fish.html?id=anything"} {
			yes(r, "FooBot", u+p)
		}
		no(r, "FooBot", u+"/Fish.asp")
		no(r, "FooBot", u+"/catfish")
		no(r, "FooBot", u+"/?id=fish")

		r = "user-agent: FooBot\n" + "disallow: /\n" + "allow: /fish*\n"
		no(r, "FooBot", u+"/bar")
		for _, p := range []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html",
			"/fish.html?id=anything"} {
			yes(r, "FooBot", u+p)
		}
		no(r, "FooBot", u+"/Fish.bar")
		no(r, "FooBot", u+"/catfish")
		no(r, "FooBot", u+"/?id=fish")

		r = "user-agent: FooBot\n" + "disallow: /\n" + "allow: /fish/\n"
		no(r, "FooBot", u+"/bar")
		for _, p := range []string{"/fish/", "/fish/salmon", "/fish/?salmon", "/fish/salmon.html", "/fish/?id=anything"} {
			yes(r, "FooBot", u+p)
		}
		no(r, "FooBot", u+"/fish")
		no(r, "FooBot", u+"/fish.html")
		no(r, "FooBot", u+"/Fish/Salmon.html")

		r = "user-agent: FooBot\n" + "disallow: /\n" + "allow: /*.php\n"
		no(r, "FooBot", u+"/bar")
		for _, p := range []string{"/filename.php", "/folder/filename.php", "/folder/filename.php?parameters",
			"//folder/any.php.file.html", "/filename.php/", "/index?f=filename.php/"} {
			yes(r, "FooBot", u+p)
		}
		no(r, "FooBot", u+"/php/")
		no(r, "FooBot", u+"/index?php")
		no(r, "FooBot", u+"/windows.PHP")

		r = "user-agent: FooBot\n" + "disallow: /\n" + "allow: /*.php$\n"
		no(r, "FooBot", u+"/bar")
		yes(r, "FooBot", u+"/filename.php")
		yes(r, "FooBot", u+"/folder/filename.php")
		for _, p := range []string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/php/",
			"/filename?php", "/aaaphpaaa", "//windows.PHP"} {
			no(r, "FooBot", u+p)
		}

		r = "user-agent: FooBot\n" + "disallow: /\n" + "allow: /fish*.php\n"
		no(r, "FooBot", u+"/bar")
		yes(r, "FooBot", u+"/fish.php")
		yes(r, "FooBot", u+"/fishheads/catfish.php?parameters")
		no(r, "FooBot", u+"/Fish.PHP")

		yes("user-agent: FooBot\n"+"allow: /p\n"+"disallow: /\n", "FooBot", "http://example.com/page")
		yes("user-agent: FooBot\n"+"allow: /folder\n"+"disallow: /folder\n", "FooBot", "http://example.com/folder/page")
		no("user-agent: FooBot\n"+"allow: /page\n"+"disallow: /*.htm\n", "FooBot", "http://example.com/page.htm")
		r = "user-agent: FooBot\n" + "allow: /$\n" + "disallow: /\n"
		yes(r, "FooBot", "http://example.com/")
		no(r, "FooBot", "http://example.com/page.html")
	}
	return cases
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// urlPath is the path and query of a URL as the suite writes them
// ("http://host/path?query#fragment"), the form Check takes: the scheme and
// authority are dropped, then the fragment; "" and a URL without a path give
// "/" (Check roots a path that lacks its leading "/").
func urlPath(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+len("://"):]
		if j := strings.IndexAny(u, "/?#"); j >= 0 {
			u = u[j:]
		} else {
			u = ""
		}
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	return u
}

// difference is why this package answers a case of Google's suite the other
// way. rfc is the RFC 9309 section whose sentence requires this package's
// answer, quoted in sentence; for a GoogleOnly case that no RFC sentence
// decides, rfc is "" and why gives the package's own reason.
type difference struct {
	rfc      string
	sentence string
	why      string
}

// Sentences of RFC 9309 (September 2022), quoted exactly.
const (
	rfcEncode = "Octets in the URI and robots.txt paths outside the range of the ASCII coded character set, " +
		"and those in the reserved range defined by [RFC3986], MUST be percent-encoded as defined by [RFC3986] " +
		"prior to comparison."
	rfcUnencode = "If a percent-encoded ASCII octet is encountered in the URI, it MUST be unencoded prior to " +
		"comparison, unless it is a reserved character in the URI as defined by [RFC3986] or the character is " +
		"outside the unreserved character range."
	rfcMostSpecific = "The most specific match found MUST be used. The most specific match is the match that " +
		"has the most octets."
	rfcParseable = "Crawlers MUST try to parse each line of the robots.txt file. Crawlers MUST use the parseable rules."
)

// keptDifferent lists the cases of googleSuite this package answers the
// other way, on purpose.
var keptDifferent = map[string]difference{
	"ID_Encoding#3": {rfc: "2.2.2", sentence: rfcEncode,
		why: "the URL's path /foo/bar/ツ is compared as /foo/bar/%E3%83%84 and matches the allow rule; " +
			"Google compares the raw octets and leaves percent-encoding the URL to its caller"},
	"ID_Encoding#5": {rfc: "2.2.2", sentence: rfcEncode,
		why: "as ID_Encoding#3, with the rule written /foo/bar/%E3%83%84"},
	"ID_Encoding#6": {rfc: "2.2.2", sentence: rfcUnencode + " (Figure 4 of the same section gives " +
		"/foo/bar/%62%61%7A the path to match /foo/bar/baz.)",
		why: "%62%61%7A are unreserved octets, compared as baz, so the allow rule matches /foo/bar/baz; " +
			"Google compares the encoded octets as written"},
	"GoogleOnly_IndexHTMLisDirectory#1": {rfc: "2.2.2", sentence: rfcMostSpecific,
		why: "the only rule whose path matches /allowed-slash/ is \"Disallow: /\"; Google also reads " +
			"\"Allow: /allowed-slash/index.html\" as \"Allow: /allowed-slash/$\", a rule the file does not hold"},
	"GoogleOnly_LineTooLong#2": {rfc: "2.3.1.5", sentence: rfcParseable,
		why: "a 16,666-byte line lies well inside the 512,000 bytes parsed (section 2.5 asks for at least " +
			"500 KiB) and is used as written; Google keeps the first 16,663 bytes of a line and uses the cut " +
			"pattern, which matches a path the written rule does not"},
	"GoogleOnly_LineTooLong#5": {rfc: "2.3.1.5", sentence: rfcParseable,
		why: "as GoogleOnly_LineTooLong#2: the written allow rule ends in /qux and does not match .../fux, " +
			"so \"Disallow: /\" applies"},
	"GoogleOnly_AcceptUserAgentUpToFirstSpace#2": {
		why: "the crawler name \"Foo Bar\" is not a product token (RFC 9309 2.2.1 allows only letters, \"_\" " +
			"and \"-\") and the RFC does not say how to match one; this package reduces a crawler name to its " +
			"leading product token, as it does a user-agent line (fixture case " +
			"ua/crawler-name-with-version-reduced-to-token), so \"Foo Bar\" obeys the Foo group; Google " +
			"compares the whole name and falls back to \"*\""},
}

// TestGoogleSuite runs google/robotstxt's IsUserAgentAllowed checks: every
// case agrees with Google except the ones of keptDifferent, which must give
// the other answer; every kept difference of an ID_* case cites the RFC 9309
// sentence that requires it.
func TestGoogleSuite(t *testing.T) {
	cases := googleSuite()
	seen := map[string]bool{}
	var all, agreed, rfcAll, rfcAgreed int
	for _, c := range cases {
		if seen[c.id] {
			t.Fatalf("case %s listed twice", c.id)
		}
		seen[c.id] = true
		rfcNamed := strings.HasPrefix(c.test, "ID_")
		all++
		if rfcNamed {
			rfcAll++
		}
		got := Parse([]byte(c.robots)).Check(c.agent, urlPath(c.url)).Allowed
		if got == c.google {
			agreed++
			if rfcNamed {
				rfcAgreed++
			}
		}
		diff, kept := keptDifferent[c.id]
		switch {
		case !kept && got != c.google:
			t.Errorf("%s: allowed = %v, Google says %v (agent %q, url %.80q)", c.id, got, c.google, c.agent, c.url)
		case kept && got == c.google:
			t.Errorf("%s: listed as kept different, but now agrees with Google (%v); remove it from keptDifferent",
				c.id, got)
		case kept && rfcNamed && (diff.rfc == "" || diff.sentence == ""):
			t.Errorf("%s: an RFC-named case kept different needs the RFC 9309 sentence that requires it", c.id)
		case kept && diff.why == "":
			t.Errorf("%s: kept different without a reason", c.id)
		}
	}
	for id := range keptDifferent {
		if !seen[id] {
			t.Errorf("keptDifferent names %s, which is not a case of the suite", id)
		}
	}
	t.Logf("google/robotstxt suite: %d/%d agree with Google; RFC-named (ID_*): %d/%d (%d listed as kept different, %d of them RFC-named)",
		agreed, all, rfcAgreed, rfcAll, len(keptDifferent), keptRFCNamed())
	// The suite's size is fixed by the commit it was transcribed from.
	if all != 145 || rfcAll != 72 {
		t.Errorf("suite has %d cases, %d RFC-named; robots_test.cc has 145 and 72", all, rfcAll)
	}
}

func keptRFCNamed() int {
	n := 0
	for id := range keptDifferent {
		if strings.HasPrefix(id, "ID_") {
			n++
		}
	}
	return n
}

func TestURLPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "",
		"http://foo.bar":                     "",
		"http://foo.bar/":                    "/",
		"http://foo.bar/x/y":                 "/x/y",
		"http://foo.bar//folder/a.html":      "//folder/a.html",
		"http://foo.bar?x":                   "?x",
		"http://foo.bar/a?b=http://c.d?e&f":  "/a?b=http://c.d?e&f",
		"http://foo.bar/a#frag":              "/a",
		"http://foo.bar/foo/bar/%E3%83%84#x": "/foo/bar/%E3%83%84",
	} {
		if got := urlPath(in); got != want {
			t.Errorf("urlPath(%q) = %q, want %q", in, got, want)
		}
	}
}
