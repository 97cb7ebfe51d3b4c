package sitecheck

import (
	"strings"
	"testing"

	"boxd/pipelines/sitecheck/pagecheck"
)

func TestParseDomain(t *testing.T) {
	cases := []struct {
		in, host, schemes, err string
	}{
		{"example.com", "example.com", "https http", ""},
		{"  Example.COM.  ", "example.com", "https http", ""},
		{"shop.example.com:8443", "shop.example.com:8443", "https http", ""},
		{"https://www.example.com/menu?x=1#top", "www.example.com", "https", ""},
		{"HTTP://example.com", "example.com", "http", ""},
		{"http://example.com:8080/", "example.com:8080", "http", ""},
		{"203.0.113.9", "203.0.113.9", "https http", ""},
		{"[2001:DB8::1]:8443", "[2001:db8::1]:8443", "https http", ""},
		{"[::ffff:10.0.0.1]", "[::ffff:10.0.0.1]", "https http", ""},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", "https http", ""},
		{"_dmarc.example.com", "_dmarc.example.com", "https http", ""},
		{"", "", "", "domain is empty"},
		{"bücher.example", "", "", "xn--"},
		{"exa mple.com", "", "", "spaces"},
		{"example.com/menu", "", "", "neither a domain nor a URL"},
		{"mailto:a@example.com", "", "", "neither"},
		{"ftp://example.com", "", "", `scheme "ftp"`},
		{"https://", "", "", "no host"},
		{"https://u:p@example.com", "", "", "user name or password"},
		{"a..example", "", "", "empty label"},
		{".example", "", "", "empty label"},
		{"-a.example", "", "", "hyphen"},
		{strings.Repeat("a", 64) + ".example", "", "", "longer than 63"},
		{strings.Repeat("abcdefghi.", 26) + "com", "", "", "longer than 253"},
		{"exa!mple.com", "", "", "character '!'"},
		{"example.com:0", "", "", "port"},
		{"example.com:65536", "", "", "port"},
		{"example.com:080", "", "", "port"},
		{"example.com:", "", "", "port"},
		{"example.com:http", "", "", "port"},
		{"2001:db8::1", "", "", "brackets"},
		{"[2001:db8::1", "", "", "unclosed"},
		{"[2001:db8::1]x", "", "", "text after"},
		{"[10.0.0.1]", "", "", "not an IPv6 address"},
		{"[fe80::1%25eth0]", "", "", "not an IPv6 address"},
		{strings.Repeat("a", 2049), "", "", "at most 2048"},
		// IPv4 in the forms the WHATWG URL parser (and inet_aton) accepts
		// but net.ParseIP does not: refused, naming the dotted form.
		{"2130706433", "", "", "dotted decimal, e.g. 127.0.0.1,"},
		{"0177.0.0.1", "", "", "dotted decimal, e.g. 127.0.0.1,"},
		{"0x7f.0.0.1", "", "", "dotted decimal, e.g. 127.0.0.1,"},
		{"0X7F.0.0.1:8443", "", "", "dotted decimal, e.g. 127.0.0.1,"},
		{"127.1", "", "", "dotted decimal, e.g. 127.0.0.1,"},
		{"http://0x7f000001/", "", "", "dotted decimal, e.g. 127.0.0.1,"},
		{"10.0x10.1", "", "", "dotted decimal, e.g. 10.16.0.1,"},
		{"203.0.113.011", "", "", "dotted decimal, e.g. 203.0.113.9,"},
		{"203.0.113.09", "", "", "not a valid one"}, // 09 is no octal number
		{"0x", "", "", "dotted decimal, e.g. 0.0.0.0,"},
		{"256.1.1.1", "", "", "not a valid one"},
		{"1.2.3.4.5", "", "", "not a valid one"},
		{"4294967296", "", "", "not a valid one"},
		{"99999999999999999999999", "", "", "not a valid one"},
		{"shop.2024", "", "", "ends in a number"},
		{"shop.example.0x1f", "", "", "ends in a number"},
		// Names that only look numeric stay names.
		{"123.example", "123.example", "https http", ""},
		{"shop.0xg", "shop.0xg", "https http", ""},
		{"1x.example.com9", "1x.example.com9", "https http", ""},
		{"0xdead.beef", "0xdead.beef", "https http", ""},
	}
	for _, c := range cases {
		got, err := ParseDomain(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.Host != c.host || strings.Join(got.Schemes, " ") != c.schemes {
			t.Errorf("%q: %+v %v; want %s %s", c.in, got, err, c.host, c.schemes)
		}
	}
}

func TestSitePaths(t *testing.T) {
	html := `<a href="/menu">m</a><a href="menu">again</a><a href="/about/team">t</a><a href="/about/history">h</a>
<a href="https://other.example/x">out</a><a href="http://site.example/plain">other scheme</a><a href="#top">top</a>
<a href="/llms.txt">l</a><a href="/robots.txt">r</a><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/d">d</a>
<a href="/e">e</a><a href="/f">f</a><a href="/g">g</a><A HREF="/h">h</A>`
	got := strings.Join(sitePaths(pagecheck.Scan(html), "https://site.example/"), " ")
	want := "/ /llms.txt /menu /about/ /a /b /c /d /e /f"
	if got != want {
		t.Errorf("paths %s, want %s", got, want)
	}
	if got := strings.Join(sitePaths(nil, "https://site.example/"), " "); got != "/ /llms.txt" {
		t.Errorf("no html: %s", got)
	}
}

func TestImages(t *testing.T) {
	sec := images(pagecheck.Scan(`<img src="a.jpg" alt="A red bicycle leaning on a wall"><img src="/b/IMG_1234.JPG" alt="IMG_1234"><img src="c.png"><img src="d.png" alt="">`), "https://site.example/shop/")
	if sec.Count != 4 || sec.Meaningful != 1 || sec.MissingAlt != 1 || sec.NotMeaningful != 1 || sec.Decorative != 1 || len(sec.Examples) != 2 {
		t.Fatalf("%+v", sec)
	}
	if sec.Examples[0].Src != "https://site.example/b/IMG_1234.JPG" || sec.Examples[1].Alt != nil || sec.Examples[1].Src != "https://site.example/shop/c.png" {
		t.Errorf("examples %+v", sec.Examples)
	}
}

func TestCleanDraft(t *testing.T) {
	for in, want := range map[string]string{
		"  Thanks!  ":          "Thanks!",
		`"Thanks for coming."`: "Thanks for coming.",
		`"`:                    `"`,
		"":                     "",
	} {
		if got := cleanDraft(in); got != want {
			t.Errorf("cleanDraft(%q) = %q, want %q", in, got, want)
		}
	}
}
