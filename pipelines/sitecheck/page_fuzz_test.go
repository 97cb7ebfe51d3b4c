package sitecheck

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"boxd/internal/problem"
	"boxd/pipelines/sitecheck/pagecheck"
)

// FuzzParseDomain: the domain field of POST /geo/site-check never panics;
// a refusal is a 400 with a message; an accepted domain is an ASCII host
// (lower case, or a bracketed IPv6 address) with an optional port, to be
// fetched over https and/or http, and it parses the same a second time.
func FuzzParseDomain(f *testing.F) {
	for _, s := range []string{
		"example.com", "Example.COM.", "https://example.com/path?q#f", "http://example.com:8443", "example.com:0",
		"[2001:db8::1]:443", "[2001:db8::1%eth0]", "[::ffff:1.2.3.4]x", "0x7f.1", "127.1", "1.2.3.4.5", "999.1.1.1",
		"xn--bcher-kva.example", "bücher.example", "user:pw@example.com", "ftp://example.com", "https://", "a..b",
		"-a.example", strings.Repeat("a", 64) + ".example", strings.Repeat("a.", 130), " example.com ", "exa mple.com", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseDomain(s)
		if err != nil {
			if p, ok := problem.As(err); !ok || p.Kind != problem.Invalid || p.Message == "" {
				t.Fatalf("refusal %v (%T), want a 400", err, err)
			}
			return
		}
		if tg.Host == "" || len(tg.Schemes) == 0 {
			t.Fatalf("target %+v", tg)
		}
		for _, sc := range tg.Schemes {
			if sc != "https" && sc != "http" {
				t.Fatalf("scheme %q", sc)
			}
		}
		for _, r := range tg.Host {
			if r < 0x21 || r > 0x7e || (r >= 'A' && r <= 'Z') || strings.ContainsRune("/?#@\\", r) {
				t.Fatalf("host %q has %q", tg.Host, r)
			}
		}
		u, err := url.Parse("https://" + tg.Host + "/")
		if err != nil || u.Host != tg.Host || u.Path != "/" {
			t.Fatalf("host %q does not make a URL: %v", tg.Host, err)
		}
		again, err := ParseDomain(tg.Host)
		if err != nil || again.Host != tg.Host {
			t.Fatalf("host %q parses again as %+v, %v", tg.Host, again, err)
		}
	})
}

// FuzzPageSections: the parts of a site check that read the fetched home
// page (its paths for robots, its images' alt text, whether it is HTML
// at all) never panic, whatever the page and its URL: the robots paths
// are few, distinct and start with /; the image counts add up; the
// sections marshal to JSON.
func FuzzPageSections(f *testing.F) {
	for _, s := range []string{
		`<a href="/about/team">a</a><a href="https://example.com/contact">c</a><a href="//other.example/x">o</a><a href=" /blog ">b</a>`,
		`<img src="logo.png" alt="Smile Dental logo"><img src="x.jpg"><img alt="" src="spacer.gif"><img alt="IMG_2041.JPG" src="IMG_2041.JPG">`,
		`<a href="/%zz">bad</a><a href="javascript:alert(1)">js</a><a href="?q">q</a><a href="/a/b/c">abc</a>`,
		`<!doctype html><html><body>` + strings.Repeat(`<a href="/p`, 3) + `</body>`,
		`<A HREF=/x>x</A><IMG SRC=a ALT=b>`,
		"\xef\xbb\xbf<html>",
		`plain text`,
	} {
		f.Add(s, "https://example.com/", "text/html; charset=utf-8")
	}
	f.Add(`<a href="/x">`, "http://[::1]:8080", "")
	f.Add(`<a href="/x">`, "%", "application/xhtml+xml")
	f.Fuzz(func(t *testing.T, html, pageURL, contentType string) {
		toks := pagecheck.Scan(html)
		paths := sitePaths(toks, pageURL)
		if len(paths) < 2 || len(paths) > 2+MaxSitePaths || paths[0] != "/" || paths[1] != "/llms.txt" {
			t.Fatalf("robots paths %q", paths)
		}
		seen := map[string]bool{}
		for _, p := range paths {
			if !strings.HasPrefix(p, "/") || seen[p] {
				t.Fatalf("robots paths %q", paths)
			}
			seen[p] = true
		}
		sec := images(toks, pageURL)
		if sec.Meaningful+sec.Decorative+sec.MissingAlt+sec.NotMeaningful != sec.Count || len(sec.Examples) > maxImageExamples {
			t.Fatalf("images %+v", sec)
		}
		if !reflect.DeepEqual(sec, images(toks, pageURL)) {
			t.Fatal("images is not deterministic")
		}
		if _, err := json.Marshal(sec); err != nil {
			t.Fatal(err)
		}
		_ = isHTML(contentType, []byte(html))
		_ = originOf(pageURL)
	})
}
