package text

import (
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

func TestCollapseAndTruncate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{" \t\n\r\v\f\u00a0 ", ""},
		{"  a \n\n b\u00a0\u00a0c  ", "a b c"},
		{"a\u2003b", "a\u2003b"}, // only ASCII whitespace and NBSP collapse
	} {
		if got := CollapseSpace(c.in); got != c.want {
			t.Errorf("CollapseSpace(%q) = %q, want %q", c.in, got, c.want)
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
		if got := TruncateRunes(c.in, c.max); got != c.want {
			t.Errorf("TruncateRunes(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
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
