package pagecheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeEntities(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"no references", "no references"},
		{"Smith &amp; Sons", "Smith & Sons"},
		{"&lt;b&gt; &quot;q&quot; &apos;a&apos;", `<b> "q" 'a'`},
		{"a&nbsp;b", "a\u00a0b"},
		{"&amp;lt;", "&lt;"}, // one pass only
		{"&AMP; &Amp;", "&AMP; &Amp;"},
		{"&amp &lt", "&amp &lt"}, // ";" required
		{"&copy; &hellip;", "&copy; &hellip;"},
		{"&#65;&#x42;&#X43;&#0000068;", "ABCD"},
		{"&#8211;&#x2014;", "\u2013\u2014"},
		{"&#0;", "\ufffd"},
		{"&#xD800;&#xdfff;", "\ufffd\ufffd"},
		{"&#x110000;&#1114112;", "\ufffd\ufffd"},
		{"&#99999999999999999999999;", "\ufffd"},
		{"&#x10FFFF;", "\U0010ffff"},
		{"&#x80;&#150;", "\u0080\u0096"}, // C1 controls kept
		{"&#;&#x;&#x1G;&#12a;", "&#;&#x;&#x1G;&#12a;"},
		{"&#65", "&#65"},
		{"&&amp;;", "&&;"},
		{"&", "&"},
		{"&#", "&#"},
		{"&#x", "&#x"},
		{"caf\u00e9 &amp; cr\u00e8me", "caf\u00e9 & cr\u00e8me"},
	}
	for _, c := range cases {
		if got := DecodeEntities(c.in); got != c.want {
			t.Errorf("DecodeEntities(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// tokString renders tokens compactly for the Scan tests.
func tokString(s string, toks []Token) string {
	kinds := []string{"text", "start", "end", "comment", "bogus", "raw"}
	var parts []string
	for _, t := range toks {
		p := kinds[t.Kind]
		if t.Name != "" {
			p += ":" + t.Name
		}
		for _, a := range t.Attrs {
			p += fmt.Sprintf(" %s=%q", a.Name, a.Value)
		}
		p += fmt.Sprintf("[%d,%d]", t.Start, t.End)
		if t.Kind == TokComment || t.Kind == TokRawText {
			p += fmt.Sprintf("(%q)", s[t.ContentStart:t.ContentEnd])
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func TestScan(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain", "text[0,5]"},
		{"a < b", "text[0,5]"},
		{"x<", "text[0,2]"},
		{"<p>hi</p>", "start:p[0,3] text[3,5] end:p[5,9]"},
		{"<P CLASS=Big>", `start:p class="Big"[0,13]`},
		{`<img src='a.png' alt="x &amp; y" data-x=1 hidden>`,
			`start:img src="a.png" alt="x & y" data-x="1" hidden=""[0,49]`},
		{`<a href = "x" HREF="y">`, `start:a href="x"[0,23]`},
		{`<br/>`, `start:br[0,5]`},
		{`<a =x b>`, `start:a x="" b=""[0,8]`},
		{`<a b=c/>`, `start:a b="c/"[0,8]`},
		{`<a b="unterminated>text`, ``},
		{`text<a b`, `text[0,4]`},
		{`<a b=`, ``},
		{"<!-- c -->x", `comment[0,10](" c ") text[10,11]`},
		{"<!-->x", `comment[0,5]("") text[5,6]`},
		{"<!--->x", `comment[0,6]("") text[6,7]`},
		{"<!-- open", `comment[0,9](" open")`},
		{"<!doctype html><?xml x?>", `bogus[0,15] bogus[15,24]`},
		{"</ x>y", `bogus[0,5] text[5,6]`},
		{"</3>", `bogus[0,4]`},
		{"</", `bogus[0,2]`},
		{"<!", `bogus[0,2]`},
		{"</div class=x>", `end:div[0,14]`},
		{"a</div", `text[0,1]`},
		{"<3 <a", `text[0,3]`},
		{"<script>if (a<b) x='</p>';</script >z",
			`start:script[0,8] raw:script[8,26]("if (a<b) x='</p>';") end:script[26,36] text[36,37]`},
		{"<SCRIPT>a</scripts></Script>", `start:script[0,8] raw:script[8,19]("a</scripts>") end:script[19,28]`},
		{"<style>a", `start:style[0,7] raw:style[7,8]("a")`},
		{"<title>a</title", `start:title[0,7] raw:title[7,8]("a") end:title[8,15]`},
		{"<textarea></textarea/>", `start:textarea[0,10] raw:textarea[10,10]("") end:textarea[10,22]`},
		{"<title>", `start:title[0,7] raw:title[7,7]("")`},
	}
	for _, c := range cases {
		if got := tokString(c.in, Scan(c.in)); got != c.want {
			t.Errorf("Scan(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestScanManyAttributes checks the duplicate handling of tags with many
// attributes (the map path of scanStartTag).
func TestScanManyAttributes(t *testing.T) {
	var b strings.Builder
	var want []Attr
	b.WriteString("<div")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, " a%d=v%d", i, i)
		want = append(want, Attr{fmt.Sprintf("a%d", i), fmt.Sprintf("v%d", i)})
		if i%7 == 0 {
			fmt.Fprintf(&b, " A%d=dup A0=dup", i/2)
		}
		if i == 30 {
			b.WriteString(" late=1")
			want = append(want, Attr{"late", "1"})
		}
	}
	b.WriteString(" LATE=2>")
	toks := Scan(b.String())
	if len(toks) != 1 {
		t.Fatalf("%d tokens", len(toks))
	}
	if !reflect.DeepEqual(toks[0].Attrs, want) {
		t.Errorf("attrs\n got %v\nwant %v", toks[0].Attrs, want)
	}
}

func TestDateProblem(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2024-01-05", ""},
		{"2024-02-29", ""},
		{"2000-02-29", ""},
		{"1900-02-29", "bad_date"},
		{"2023-02-29", "bad_date"},
		{"2024-04-31", "bad_date"},
		{"2024-12-31", ""},
		{"2024-13-01", "bad_date"},
		{"2024-00-10", "bad_date"},
		{"2024-01-00", "bad_date"},
		{"2024-1-5", "bad_date"},
		{"24-01-05", "bad_date"},
		{"2024/01/05", "bad_date"},
		{"05.01.2024", "bad_date"},
		{"January 5, 2024", "bad_date"},
		{"2024-01-05T08:00", "missing_timezone"},
		{"2024-01-05T08:00:00", "missing_timezone"},
		{"2024-01-05T08:00:00.123456", "missing_timezone"},
		{"2024-01-05T08:00:00Z", ""},
		{"2024-01-05T08:00Z", ""},
		{"2024-01-05T08:00:00+01:00", ""},
		{"2024-01-05T08:00:00-0530", ""},
		{"2024-01-05T08:00:00+01", ""},
		{"2024-01-05T23:59:59+23:59", ""},
		{"2024-01-05T24:00:00Z", "bad_date"},
		{"2024-01-05T08:60:00Z", "bad_date"},
		{"2024-01-05T08:00:60Z", "bad_date"},
		{"2024-01-05T08:00:00+24:00", "bad_date"},
		{"2024-01-05T08:00:00+01:60", "bad_date"},
		{"2024-01-05T08:00:00+1", "bad_date"},
		{"2024-01-05t08:00:00Z", "bad_date"},
		{"2024-01-05 08:00:00Z", "bad_date"},
		{"2024-01-05T08", "bad_date"},
		{"2024-01-05Z", "bad_date"},
		{"2024-01-05T08:00:00z", "bad_date"},
		{"2024-01-05T08:00:00.Z", "bad_date"},
		{"", "bad_date"},
		{"２０２４-01-05", "bad_date"},
	}
	for _, c := range cases {
		if got := dateProblem(c.in); got != c.want {
			t.Errorf("dateProblem(%q) = %q, want %q", c.in, got, c.want)
		}
		if got, want := IsISODate(c.in), c.want != "bad_date"; got != want {
			t.Errorf("IsISODate(%q) = %v, want %v", c.in, got, want)
		}
	}
}

func TestFindPlaceholder(t *testing.T) {
	cases := []struct {
		in    string
		label string // "" = none
	}{
		{"", ""},
		{"Harbor Street Bakery", ""},
		{"Hello {{ name }}!", "{{ name }}"},
		{"{{}}", "{{}}"},
		{"{{a{b}}", ""},
		{"Call %PHONE_NUMBER%", "%PHONE_NUMBER%"},
		{"%ab%", ""},
		{"100% of 50%", ""},
		{"[Your Business Name] in [City]", "[Your Business Name]"},
		{"[CITY]", "[CITY]"},
		{"[Insert address]", "[Insert address]"},
		{"[citation needed]", ""},
		{"Lorem ipsum dolor sit amet", "Lorem ipsum"},
		{"Our TODO list", "TODO"},
		{"today", ""},
		{"todos", ""},
		{"TBD.", "TBD"},
		{"fixme!", "fixme"},
		{"Photo by John Doe", "John Doe"},
		{"123 Main Street, Anytown", "123 Main Street"}, // "123 main st" does not stand alone here
		{"123 Main St., Anytown", "123 Main St"},
		{"Anytown, USA", "Anytown"},
		{"XXX-XXXX", "XXX"},
		{"xx", ""},
		{"Exxxon", ""},
		{"box xxxl", ""},
		{"  Sample  ", "Sample"},
		{"free samples", ""},
		{"Sampler", ""},
		{"N/A", "N/A"},
		{"name", "name"},
		{"Name:", ""},
		{"Test", "Test"},
		{"Test drive", ""},
		{"Call 123-456-7890", "123-456-7890"},
		{"9123-456-78901", ""},
		{"(555) 555-0199", "(555) 555-"},
		{"+1 555-555-5555", "555-555-5555"},
		{"info@example.com", "example.com"},
		{"https://www.example.com/page", "example.com"},
		{"myexample.com", ""},
		{"example.community", ""},
		{"example.com.au", "example.com"},
		{"shop.yourdomain.com", "yourdomain.com"},
		{"https://schema.org", ""},
	}
	for _, c := range cases {
		label, ok := FindPlaceholder(c.in)
		if ok != (c.label != "") || label != c.label {
			t.Errorf("FindPlaceholder(%q) = %q, %v; want %q", c.in, label, ok, c.label)
		}
	}
}

func TestIsAbsoluteURL(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"https://a.example", true},
		{"https://a.example/", true},
		{"HTTP://A.EXAMPLE/x?y#z", true},
		{"https://a.example?q", true},
		{"https://a.example#f", true},
		{"https://user@a.example:8443/p", true},
		{"https://", false},
		{"https:///path", false},
		{"https://a.example/with space", false},
		{" https://a.example/", false},
		{"ftp://a.example/", false},
		{"//a.example/", false},
		{"/path", false},
		{"a.example", false},
		{"mailto:a@b.example", false},
		{"https:a.example", false},
	}
	for _, c := range cases {
		if got := IsAbsoluteURL(c.in); got != c.want {
			t.Errorf("IsAbsoluteURL(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"HTTPS://WWW.A.Example", "https://www.a.example/"},
		{"https://a.example:443/X#f", "https://a.example/X"},
		{"http://a.example:80/", "http://a.example/"},
		{"http://a.example:443/", "http://a.example:443/"},
		{"https://a.example:80/", "https://a.example:80/"},
		{"https://a.example/?q=1#f", "https://a.example/?q=1"},
		{"/relative", "/relative"},
	}
	for _, c := range cases {
		if got := normalizeURL(c.in); got != c.want {
			t.Errorf("normalizeURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestResolveURL(t *testing.T) {
	base := "HTTP://A.example/blog/post.html?x#y"
	cases := []struct{ base, ref, want string }{
		{base, "/img/a.png", "http://A.example/img/a.png"},
		{base, "img/a.png", "http://A.example/blog/img/a.png"},
		{base, "../a.png", "http://A.example/blog/../a.png"},
		{base, "?page=2", "http://A.example/blog/post.html?page=2"},
		{base, "#top", "http://A.example/blog/post.html#top"},
		{base, "//cdn.example/a.png", "http:" + "//cdn.example/a.png"},
		{base, "www.facebook.com/page", "https://www.facebook.com/page"},
		{base, "facebook.com/page", "https://facebook.com/page"},
		{base, "facebook.com", "http://A.example/blog/facebook.com"},
		{"https://a.example", "x", "https://a.example/x"},
		{"", "/x", "https://<your-domain>/x"},
		{"", "x", "https://<your-domain>/x"},
		{"not a url", "?q", "https://<your-domain>/?q"},
	}
	for _, c := range cases {
		if got := resolveURL(c.base, c.ref); got != c.want {
			t.Errorf("resolveURL(%q, %q) = %q, want %q", c.base, c.ref, got, c.want)
		}
	}
}

func TestCollapseAndTruncate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{" \t\n\r\v\f\u00a0 ", ""},
		{"  a \n\n b\u00a0\u00a0c  ", "a b c"},
		{"a\u2003b", "a\u2003b"}, // only ASCII whitespace and NBSP collapse
	} {
		if got := collapseSpace(c.in); got != c.want {
			t.Errorf("collapseSpace(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"ab cd", 3, "ab"},
		{"\u00e9\u00e9\u00e9\u00e9", 2, "\u00e9\u00e9"},
		{"", 0, ""},
	} {
		if got := truncateRunes(c.in, c.max); got != c.want {
			t.Errorf("truncateRunes(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestExtractText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"<p>a</p><p>b</p>", "a b"},
		{"<span>a</span><span>b</span>", "ab"},
		{"a<br>b", "a b"},
		{"x<script>var a = '<p>';</script>y", "x y"},
		{"x<style>p{}</style>y<noscript><p>no js</p></noscript>z", "x y z"},
		{"<template><b>t</b></template>shown", "shown"},
		{"a<!-- hidden -->b", "ab"},
		{"<title>T &amp; U</title><textarea>v</textarea>", "T & U v"},
		{"&lt;b&gt;", "<b>"},
	}
	for _, c := range cases {
		if got := ExtractText(c.in); got != c.want {
			t.Errorf("ExtractText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCoordOK(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want bool
	}{
		{"0", 90, true},
		{"-0", 90, true},
		{"45.5152", 90, true},
		{"90", 90, true},
		{"90.000", 90, true},
		{"-90", 90, true},
		{"90.0001", 90, false},
		{"91", 90, false},
		{"180", 180, true},
		{"-180.5", 180, false},
		{"00000179.9", 180, true},
		{"1000", 180, false},
		{"1e2", 180, false},
		{"+45", 90, false},
		{"45.", 90, false},
		{".5", 90, false},
		{"", 90, false},
	}
	for _, c := range cases {
		if got := coordOK(c.in, c.max); got != c.want {
			t.Errorf("coordOK(%q, %d) = %v, want %v", c.in, c.max, got, c.want)
		}
	}
}

func TestParseJSONErrors(t *testing.T) {
	cases := []struct {
		in       string
		msg      string
		line     int
		col, off int
	}{
		{"", "unexpected end of input", 1, 1, 0},
		{"  ", "unexpected end of input", 1, 3, 2},
		{"{", "unexpected end of input", 1, 2, 1},
		{`{"a"`, "unexpected end of input", 1, 5, 4},
		{`{"a" 1}`, "expected ':' after object key, found '1'", 1, 6, 5},
		{`{'a': 1}`, "expected string key, found '''", 1, 2, 1},
		{`{"a": 1,}`, "expected string key, found '}'", 1, 9, 8},
		{`[1,]`, "expected value, found ']'", 1, 4, 3},
		{`[1 2]`, "expected ',' or ']' after array element, found '2'", 1, 4, 3},
		{`{"a":1 "b":2}`, "expected ',' or '}' after object member, found '\"'", 1, 8, 7},
		{"{}\n x", "unexpected 'x' after JSON value", 2, 2, 4},
		{"\ufeff{}", "expected value, found U+FEFF", 1, 1, 0},
		{"{\"a\":\"\x01\"}", "control character in string", 1, 7, 6},
		{`"\x"`, "invalid escape sequence", 1, 2, 1},
		{`"\u12G4"`, "invalid escape sequence", 1, 2, 1},
		{`"\u12`, "unexpected end of input", 1, 6, 5},
		{`tru`, "unexpected end of input", 1, 4, 3},
		{`trUe`, "invalid literal", 1, 3, 2},
		{`-`, "unexpected end of input", 1, 2, 1},
		{`-a`, "invalid number", 1, 2, 1},
		{`1.e5`, "invalid number", 1, 3, 2},
		{`01`, "unexpected '1' after JSON value", 1, 2, 1},
		{"\"\u00e9\u00e9\" x", "unexpected 'x' after JSON value", 1, 6, 7},
		{strings.Repeat("[", MaxJSONDepth+1), "nesting too deep", 1, MaxJSONDepth + 1, MaxJSONDepth},
	}
	for _, c := range cases {
		_, err := ParseJSON(c.in)
		if err == nil {
			t.Errorf("ParseJSON(%q): no error", c.in)
			continue
		}
		if err.Message != c.msg || err.Line != c.line || err.Column != c.col || err.Offset != c.off {
			t.Errorf("ParseJSON(%q) = %q at %d:%d (%d), want %q at %d:%d (%d)",
				c.in, err.Message, err.Line, err.Column, err.Offset, c.msg, c.line, c.col, c.off)
		}
	}
	if _, err := ParseJSON(strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)); err != nil {
		t.Errorf("nesting %d rejected: %v", MaxJSONDepth, err)
	}
}

func TestParseJSONValues(t *testing.T) {
	cases := []struct {
		in   string
		want any
	}{
		{` {"a": [1, -0.5e+3, true, false, null], "a": "last"} `, map[string]any{"a": "last"}},
		{`"\u00e9\ud83d\ude00\/\b\f\n\r\t"`, "\u00e9\U0001f600/\b\f\n\r\t"},
		{`"\ud800x\udc00"`, "\ufffdx\ufffd"},
		{`"\ud800\u0041"`, "\ufffdA"},
		{"\"\xff\"", "\ufffd"},
		{`123456789012345678901234567890`, json.Number("123456789012345678901234567890")},
		{`[]`, []any{}},
		{`{}`, map[string]any{}},
	}
	for _, c := range cases {
		got, err := ParseJSON(c.in)
		if err != nil {
			t.Errorf("ParseJSON(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseJSON(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestJSONQuoteAndSnippet(t *testing.T) {
	if got, want := jsonQuote("a\"\\\b\f\n\r\t\x01\x7f\u2028</&é"), `"a\"\\\b\f\n\r\t\u0001`+"\x7f\u2028</&é"+`"`; got != want {
		t.Errorf("jsonQuote = %s, want %s", got, want)
	}
	got := snippet(obj("a", 1, "b", []any{}, "c", Object{}, "d", []string{"x", "y"}, "e", obj("f", nil, "g", true)))
	want := "{\n  \"a\": 1,\n  \"b\": [],\n  \"c\": {},\n  \"d\": [\n    \"x\",\n    \"y\"\n  ],\n  \"e\": {\n    \"f\": null,\n    \"g\": true\n  }\n}"
	if got != want {
		t.Errorf("snippet:\n%s\nwant\n%s", got, want)
	}
}
