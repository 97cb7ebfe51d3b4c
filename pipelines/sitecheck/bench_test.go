package sitecheck

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/pipelines/outbound"
)

// bigPage is a synthetic home page of about size bytes: navigation links,
// images, paragraphs with entities, comments and JSON-LD blocks, the mix a
// large page builder's output has.
func bigPage(size int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><title>Harbor Street Bakery | Portland sourdough</title>
<meta name="description" content="Harbor Street Bakery bakes sourdough, croissants and seasonal pies every morning in Portland.">
<link rel="canonical" href="https://bakery.example/"><meta property="og:title" content="Harbor Street Bakery">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Bakery","name":"Harbor Street Bakery","url":"https://bakery.example/"}</script>
<style>body{margin:0}</style></head><body>
`)
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, `<div class="section s%d" data-id="%d" style="color:#333"><a href="/menu/item-%d?ref=nav&amp;x=%d" class="nav-link">Item %d</a>`, i, i, i, i, i)
		fmt.Fprintf(&b, `<img src="/img/photo-%d.jpg" alt="Loaf number %d on the counter" width="640" height="480" loading="lazy">`, i, i)
		fmt.Fprintf(&b, "<p>Fresh bread &amp; pastries, baked at 5&nbsp;am: rye, spelt &#x26; sourdough. Order %d.</p>\n", i)
		if i%50 == 0 {
			fmt.Fprintf(&b, "<!-- section %d --><script>window.x%d = 1;</script>\n", i, i)
		}
		if i%500 == 0 {
			fmt.Fprintf(&b, `<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Loaf %d","offers":{"@type":"Offer","price":"5.00","priceCurrency":"USD"}}</script>`+"\n", i)
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// testChecker is a Checker whose client may reach 127.0.0.1 only.
func testChecker() *Checker {
	key := attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	c := outbound.New(outbound.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	return &Checker{Client: c, Key: key}
}

// BenchmarkRun is a whole site check of a 2 MiB home page served over
// loopback http (robots.txt and llms.txt answer 404).
func BenchmarkRun(b *testing.B) {
	page := bigPage(MaxPageBytes - 1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	c := testChecker()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Run(context.Background(), Request{Domain: srv.URL}); err != nil {
			b.Fatal(err)
		}
	}
}
