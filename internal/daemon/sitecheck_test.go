package daemon

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/configs"
	"boxd/pipelines/outbound"
	"boxd/pipelines/sitecheck"
	"boxd/web"
)

// site is a local HTTPS test site: a handler per path (404 otherwise).
type site struct {
	srv   *httptest.Server
	mu    sync.Mutex
	pages map[string]http.HandlerFunc
}

func newSite(t *testing.T, tlsOn bool, pages map[string]http.HandlerFunc) *site {
	t.Helper()
	s := &site{pages: pages}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		f := s.pages[r.URL.Path]
		s.mu.Unlock()
		if f == nil {
			http.NotFound(w, r)
			return
		}
		f(w, r)
	})
	if tlsOn {
		s.srv = httptest.NewTLSServer(h)
	} else {
		s.srv = httptest.NewServer(h)
	}
	t.Cleanup(s.srv.Close)
	return s
}

// host is the site's 127.0.0.1:port.
func (s *site) host() string {
	return strings.TrimPrefix(strings.TrimPrefix(s.srv.URL, "https://"), "http://")
}

func text(ct, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ct)
		fmt.Fprint(w, body)
	}
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// caFile writes the httptest certificate (the same for every httptest TLS
// server) as a PEM file for outbound.ca_file.
func caFile(t *testing.T, s *site) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// siteCheckServer runs boxd with outbound fetches allowed to 127.0.0.1 only
// and the test CA trusted, through the real settings.
func siteCheckServer(t *testing.T, ca string) (*testServer, string) {
	t.Helper()
	cfg := configs.Defaults()
	cfg.Outbound.AllowCIDRs = []string{"127.0.0.1/32"}
	cfg.Outbound.CAFile = ca
	ts := launch(t, cfg, web.Probes{}, nil, nil)
	return ts, session(t, ts, "geo-audit")
}

const homeHTML = `<!doctype html>
<html lang="en">
<head>
<title>Harbor Street Bakery | Portland sourdough</title>
<meta name="description" content="Harbor Street Bakery bakes sourdough, croissants and seasonal pies every morning in Portland, Oregon.">
<link rel="canonical" href="%[1]s/">
<meta property="og:title" content="Harbor Street Bakery">
<script type="application/ld+json">
{"@context": "https://schema.org", "@type": "Bakery", "name": "Harbor Street Bakery",
 "address": {"@type": "PostalAddress", "streetAddress": "418 Harbor Street", "addressLocality": "Portland", "postalCode": "97204", "addressCountry": "US"},
 "url": "%[1]s/", "telephone": "123-456-7890"}
</script>
</head>
<body>
<h1>Harbor Street Bakery</h1>
<p>Fresh bread every morning.</p>
<a href="/menu">Menu</a> <a href="/about/team">Team</a> <a href="https://elsewhere.example/x">Out</a>
<img src="/img/IMG_2041.jpg" alt="IMG_2041.jpg">
<img src="/img/loaves.jpg" alt="Sourdough loaves cooling on a rack">
<img src="/img/logo.png">
</body>
</html>
`

const goodLLMs = "# Harbor Street Bakery\n\n> Sourdough bakery in Portland.\n\n## Pages\n\n- [Menu](https://bakery.example/menu): what we bake\n"

func TestSiteCheckReport(t *testing.T) {
	var s *site
	s = newSite(t, true, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, homeHTML, s.srv.URL)
		},
		"/robots.txt": text("text/plain", "User-agent: GPTBot\nDisallow: /\n\nUser-agent: ChatGPT-User\nUser-agent: PerplexityBot\nDisallow: /\n\nUser-agent: *\nDisallow: /menu\n"),
		"/llms.txt":   text("text/markdown", goodLLMs),
	})
	ts, token := siteCheckServer(t, caFile(t, s))
	r := ts.do(t, call{method: "POST", path: "/geo/site-check", token: token, body: map[string]string{"domain": s.host(), "name": "Harbor Street Bakery"}})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var rep sitecheck.Report
	if err := json.Unmarshal(r.body, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.URL != s.srv.URL+"/" || !rep.HTTPS || rep.Page.Status != 200 || rep.Domain != s.host() || rep.Name == nil || *rep.Name != "Harbor Street Bakery" {
		t.Errorf("page: %+v", rep.Page)
	}
	// Robots: every AI crawler, for "/", "/llms.txt" and the first-level
	// same-site links.
	wantPaths := []string{"/", "/llms.txt", "/menu", "/about/"}
	if fmt.Sprint(rep.Robots.Paths) != fmt.Sprint(wantPaths) || rep.Robots.Fetch != "ok" || rep.Robots.Status != 200 {
		t.Errorf("robots: %+v", rep.Robots)
	}
	if len(rep.Robots.Crawlers) != 14 {
		t.Errorf("%d crawlers, want 14", len(rep.Robots.Crawlers))
	}
	access := map[string][]bool{}
	for _, c := range rep.Robots.Crawlers {
		for _, p := range c.Paths {
			access[c.Crawler] = append(access[c.Crawler], p.Allowed)
		}
	}
	for crawler, want := range map[string]string{
		"GPTBot": "[false false false false]", "ChatGPT-User": "[false false false false]", "PerplexityBot": "[false false false false]",
		"ClaudeBot": "[true true false true]", "OAI-SearchBot": "[true true false true]",
	} {
		if got := fmt.Sprint(access[crawler]); got != want {
			t.Errorf("%s: %s, want %s", crawler, got, want)
		}
	}
	if rep.Summary.Crawlers != 14 || rep.Summary.CrawlersBlocked != 3 || rep.Summary.CrawlersAllowed != 11 {
		t.Errorf("summary: %+v", rep.Summary)
	}
	// llms.txt passes.
	if !rep.LLMsTxt.OK || rep.LLMsTxt.Title != "Harbor Street Bakery" || rep.Summary.LLMsTxt != "ok" {
		t.Errorf("llms.txt: %+v", rep.LLMsTxt)
	}
	// JSON-LD: the placeholder phone is an error with a fix and a snippet.
	if len(rep.JSONLD.Blocks) != 1 || len(rep.JSONLD.Objects) != 1 || rep.JSONLD.ErrorCount == 0 {
		t.Fatalf("jsonld: %+v", rep.JSONLD)
	}
	if !strings.Contains(rep.Text, "Fresh bread every morning.") {
		t.Errorf("text: %q", rep.Text)
	}
	if rep.Images.Count != 3 || rep.Images.Meaningful != 1 || rep.Images.MissingAlt != 1 || rep.Images.NotMeaningful != 1 {
		t.Errorf("images: %+v", rep.Images)
	}
	codes := map[string]sitecheck.Fix{}
	for _, f := range rep.Fixes {
		codes[f.Code] = f
		if f.Message == "" || f.Fix == "" || f.Area == "" {
			t.Errorf("fix without message, fix or area: %+v", f)
		}
	}
	for _, c := range []string{"answer_crawlers_blocked", "training_crawlers_blocked", "path_blocked", "alt_text"} {
		if _, ok := codes[c]; !ok {
			t.Errorf("no %s fix in %+v", c, rep.Fixes)
		}
	}
	if f := codes["answer_crawlers_blocked"]; f.Severity != "error" || !strings.Contains(f.Snippet, "User-agent: ChatGPT-User") {
		t.Errorf("answer crawlers fix: %+v", f)
	}
	placeholder := false
	for _, f := range rep.Fixes {
		if f.Area == "jsonld" && f.Severity == "error" && strings.Contains(f.Message, "telephone") && f.Snippet != "" {
			placeholder = true
		}
	}
	if !placeholder {
		t.Errorf("no JSON-LD error fix for the placeholder telephone: %+v", rep.Fixes)
	}
	for i := 1; i < len(rep.Fixes); i++ {
		if sevRankT(rep.Fixes[i-1].Severity) > sevRankT(rep.Fixes[i].Severity) {
			t.Errorf("fixes not ordered by severity at %d", i)
		}
	}
	// The record is signed by this box and covers every section.
	raw, _ := json.Marshal(map[string]any{"record": rep.Record})
	v := ts.do(t, call{method: "POST", path: "/record/verify", body: raw}).json(t)
	if v["ok"] != true || v["signed_by_this_box"] != true {
		t.Errorf("record does not verify: %v", v)
	}
	if rep.Record.Kind != "site-check" || rep.Record.ID != rep.ID || len(rep.Record.Entries) != 9 {
		t.Errorf("record: kind %s id %s entries %d", rep.Record.Kind, rep.Record.ID, len(rep.Record.Entries))
	}
	var robotsEntry sitecheck.RobotsSection
	if err := json.Unmarshal([]byte(*rep.Record.Entries[1].Text), &robotsEntry); err != nil || len(robotsEntry.Crawlers) != 14 {
		t.Errorf("robots entry: %v", err)
	}
}

func sevRankT(s string) int { return map[string]int{"error": 0, "warning": 1, "info": 2}[s] }

func siteCheck(t *testing.T, ts *testServer, token string, body any) (sitecheck.Report, reply) {
	t.Helper()
	r := ts.do(t, call{method: "POST", path: "/geo/site-check", token: token, body: body})
	var rep sitecheck.Report
	if r.status == 200 {
		if err := json.Unmarshal(r.body, &rep); err != nil {
			t.Fatal(err)
		}
	}
	return rep, r
}

func fixCodes(rep sitecheck.Report) string {
	var c []string
	for _, f := range rep.Fixes {
		c = append(c, f.Severity+":"+f.Code)
	}
	return strings.Join(c, " ")
}

// TestSiteCheckOutcomes covers each fetch outcome of robots.txt, llms.txt
// and the home page that still yields a report.
func TestSiteCheckOutcomes(t *testing.T) {
	page := text("text/html", `<html lang="en"><head><title>Corner Dental Clinic</title></head><body><p>Hello</p></body></html>`)
	bigRobots := "User-agent: *\nDisallow: /private\n" + strings.Repeat("# padding padding padding padding\n", 20000) + "User-agent: ClaudeBot\nDisallow: /\n"
	// A rule line that straddles the 512,000-byte limit: the first 512,000
	// bytes end in "Disallow: /", which would block every crawler were it
	// read; RFC 9309 parsers (and the kits, given the whole file) drop the
	// cut line, so the group has no rules and everything is allowed.
	cutRobots := func() string {
		head := "User-agent: *\n"
		cut := "Disallow: /private/area\n"
		pad := 512000 - len("Disallow: /") - len(head)
		line := "# padding padding padding padding padding padding padding\n"
		body := head + strings.Repeat(line, pad/len(line)-1)
		rest := 512000 - len("Disallow: /") - len(body)
		body += "#" + strings.Repeat(" ", rest-2) + "\n"
		if len(body)+len("Disallow: /") != 512000 {
			t.Fatalf("cut line at %d", len(body))
		}
		return body + cut + "User-agent: Nobody\nAllow: /\n"
	}()
	bigLLMs := "# Harbor Street Bakery\n\n> Sourdough bakery.\n\n## Pages\n\n" + strings.Repeat("- [Menu](https://bakery.example/menu): what we bake\n", 25000)
	cases := []struct {
		name  string
		pages map[string]http.HandlerFunc
		check func(t *testing.T, rep sitecheck.Report)
	}{
		{"robots 404 allows all", map[string]http.HandlerFunc{"/": page}, func(t *testing.T, rep sitecheck.Report) {
			if rep.Robots.Fetch != "not_found" || rep.Summary.CrawlersAllowed != 14 || !strings.Contains(fixCodes(rep), "info:robots_not_found") {
				t.Errorf("robots: %+v / %s", rep.Robots, fixCodes(rep))
			}
			if rep.LLMsTxt.Found || rep.Summary.LLMsTxt != "missing" || !strings.Contains(fixCodes(rep), "warning:not_found") {
				t.Errorf("llms: %+v", rep.LLMsTxt)
			}
			if !strings.Contains(fixCodes(rep), "warning:no_jsonld") {
				t.Errorf("no no_jsonld fix: %s", fixCodes(rep))
			}
			for _, f := range rep.Fixes {
				if f.Code == "no_jsonld" && (!strings.HasPrefix(f.Snippet, `<script type="application/ld+json">`) || !strings.Contains(f.Snippet, `"name": "Corner Dental Clinic"`)) {
					t.Errorf("no markup snippet: %q", f.Snippet)
				}
				if f.Code == "not_found" && !strings.HasPrefix(f.Snippet, "# Corner Dental Clinic\n") {
					t.Errorf("llms.txt snippet: %q", f.Snippet)
				}
			}
		}},
		{"robots 503 disallows all", map[string]http.HandlerFunc{"/": page, "/robots.txt": status(503)}, func(t *testing.T, rep sitecheck.Report) {
			if rep.Robots.Fetch != "unreachable" || rep.Robots.Status != 503 || rep.Summary.CrawlersBlocked != 14 || !strings.Contains(fixCodes(rep), "error:robots_unreachable") {
				t.Errorf("robots: %+v / %s", rep.Robots, fixCodes(rep))
			}
		}},
		{"robots 401 allows all", map[string]http.HandlerFunc{"/": page, "/robots.txt": status(401)}, func(t *testing.T, rep sitecheck.Report) {
			if rep.Robots.Fetch != "not_found" || rep.Summary.CrawlersAllowed != 14 {
				t.Errorf("robots: %+v", rep.Robots)
			}
		}},
		{"robots beyond the parse limit is cut", map[string]http.HandlerFunc{"/": page, "/robots.txt": text("text/plain", bigRobots)}, func(t *testing.T, rep sitecheck.Report) {
			if !rep.Robots.Truncated || rep.Robots.Bytes != 512000 || rep.Summary.CrawlersAllowed != 14 || !strings.Contains(fixCodes(rep), "warning:robots_too_large") {
				t.Errorf("robots: truncated %v bytes %d allowed %d %s", rep.Robots.Truncated, rep.Robots.Bytes, rep.Summary.CrawlersAllowed, fixCodes(rep))
			}
		}},
		{"robots line cut by the parse limit is dropped", map[string]http.HandlerFunc{"/": page, "/robots.txt": text("text/plain", cutRobots)}, func(t *testing.T, rep sitecheck.Report) {
			if rep.Robots.Fetch != "ok" || !rep.Robots.Truncated || rep.Robots.Bytes != 512000 || !strings.Contains(fixCodes(rep), "warning:robots_too_large") {
				t.Errorf("robots: fetch %s truncated %v bytes %d %s", rep.Robots.Fetch, rep.Robots.Truncated, rep.Robots.Bytes, fixCodes(rep))
			}
			if rep.Summary.CrawlersAllowed != 14 || strings.Contains(fixCodes(rep), "answer_crawlers_blocked") {
				t.Errorf("the cut line was applied: %d allowed, %s", rep.Summary.CrawlersAllowed, fixCodes(rep))
			}
			for _, c := range rep.Robots.Crawlers {
				for _, p := range c.Paths {
					if !p.Allowed || p.Rule != "" {
						t.Errorf("%s %s: allowed %v by %q", c.Crawler, p.Path, p.Allowed, p.Rule)
					}
				}
			}
		}},
		{"robots exactly at the parse limit is whole", map[string]http.HandlerFunc{"/": page, "/robots.txt": text("text/plain", cutRobots[:512000-len("Disallow: /")]+"Disallow: /")}, func(t *testing.T, rep sitecheck.Report) {
			if rep.Robots.Truncated || rep.Robots.Bytes != 512000 || rep.Summary.CrawlersBlocked != 14 || strings.Contains(fixCodes(rep), "robots_too_large") {
				t.Errorf("robots: truncated %v bytes %d blocked %d %s", rep.Robots.Truncated, rep.Robots.Bytes, rep.Summary.CrawlersBlocked, fixCodes(rep))
			}
		}},
		{"llms.txt answering 503 is unreachable", map[string]http.HandlerFunc{"/": page, "/llms.txt": status(503)}, func(t *testing.T, rep sitecheck.Report) {
			if rep.LLMsTxt.Found || rep.LLMsTxt.Status != 503 || rep.Summary.LLMsTxt != "unreachable" || !strings.Contains(fixCodes(rep), "error:bad_status") {
				t.Errorf("llms: %+v summary %s %s", rep.LLMsTxt, rep.Summary.LLMsTxt, fixCodes(rep))
			}
		}},
		{"llms.txt over 1 MiB is found and too large", map[string]http.HandlerFunc{"/": page, "/llms.txt": text("text/markdown", bigLLMs)}, func(t *testing.T, rep sitecheck.Report) {
			if !rep.LLMsTxt.Found || rep.LLMsTxt.OK || rep.LLMsTxt.Status != 200 || rep.Summary.LLMsTxt != "problems" || !strings.Contains(fixCodes(rep), "error:too_large") {
				t.Errorf("llms: %+v summary %s %s", rep.LLMsTxt, rep.Summary.LLMsTxt, fixCodes(rep))
			}
		}},
		{"llms.txt redirected into a refused address is unreachable", map[string]http.HandlerFunc{"/": page, "/llms.txt": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://10.1.2.3/llms.txt", http.StatusFound)
		}}, func(t *testing.T, rep sitecheck.Report) {
			if rep.LLMsTxt.Found || rep.LLMsTxt.Status != 0 || !strings.Contains(rep.LLMsTxt.Error, "only fetches public addresses") ||
				rep.Summary.LLMsTxt != "unreachable" || !strings.Contains(fixCodes(rep), "error:unreachable") {
				t.Errorf("llms: %+v summary %s %s", rep.LLMsTxt, rep.Summary.LLMsTxt, fixCodes(rep))
			}
		}},
		{"llms.txt served as HTML", map[string]http.HandlerFunc{"/": page, "/llms.txt": page}, func(t *testing.T, rep sitecheck.Report) {
			if !rep.LLMsTxt.IsHTML || rep.LLMsTxt.OK || !strings.Contains(fixCodes(rep), "error:served_html") {
				t.Errorf("llms: %+v %s", rep.LLMsTxt, fixCodes(rep))
			}
		}},
		{"llms.txt without summary and links", map[string]http.HandlerFunc{"/": page, "/llms.txt": text("text/plain", "# Corner Dental\n\nWe fix teeth.\n")}, func(t *testing.T, rep sitecheck.Report) {
			if rep.LLMsTxt.OK || !strings.Contains(fixCodes(rep), "error:missing_summary") || !strings.Contains(fixCodes(rep), "error:no_links") {
				t.Errorf("llms: %s", fixCodes(rep))
			}
		}},
		{"home page answers 500", map[string]http.HandlerFunc{"/": status(500)}, func(t *testing.T, rep sitecheck.Report) {
			if rep.Page.Status != 500 || !strings.Contains(fixCodes(rep), "error:page_status") {
				t.Errorf("page: %+v %s", rep.Page, fixCodes(rep))
			}
		}},
		{"commented and invalid JSON-LD", map[string]http.HandlerFunc{"/": text("text/html", `<html><head><!-- <script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"A","url":"https://a.example/"}</script> --><script type="application/ld+json">{"@type": "Organization",}</script></head></html>`)}, func(t *testing.T, rep sitecheck.Report) {
			if len(rep.JSONLD.Blocks) != 2 || !strings.Contains(fixCodes(rep), "error:invalid_json") {
				t.Errorf("jsonld: %+v %s", rep.JSONLD.Blocks, fixCodes(rep))
			}
		}},
		{"redirect to another path", map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/en/", http.StatusMovedPermanently) }, "/en/": page}, func(t *testing.T, rep sitecheck.Report) {
			if !strings.HasSuffix(rep.URL, "/en/") || len(rep.Page.Redirects) != 1 {
				t.Errorf("redirect: %+v", rep.Page)
			}
		}},
	}
	ca := caFile(t, newSite(t, true, nil))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSite(t, true, c.pages)
			ts, token := siteCheckServer(t, ca)
			rep, r := siteCheck(t, ts, token, map[string]string{"domain": s.host()})
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			c.check(t, rep)
		})
	}
}

// TestSiteCheckFallsBackToHTTP: a site without TLS is read over http and
// the report says https failed.
func TestSiteCheckFallsBackToHTTP(t *testing.T) {
	plain := newSite(t, false, map[string]http.HandlerFunc{"/": text("text/html", "<title>Plain</title>")})
	tlsSite := newSite(t, true, nil)
	ts, token := siteCheckServer(t, caFile(t, tlsSite))
	rep, r := siteCheck(t, ts, token, map[string]string{"domain": plain.host()})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if rep.HTTPS || !strings.HasPrefix(rep.URL, "http://") || rep.Page.HTTPSError == "" || !strings.Contains(fixCodes(rep), "warning:no_https") {
		t.Errorf("fallback: https %v url %s error %q fixes %s", rep.HTTPS, rep.URL, rep.Page.HTTPSError, fixCodes(rep))
	}
	// An explicit https URL is not downgraded.
	_, r = siteCheck(t, ts, token, map[string]string{"domain": "https://" + plain.host() + "/"})
	if r.status != http.StatusBadGateway || !strings.Contains(r.errMsg(t), "TLS") {
		t.Errorf("explicit https: %d %s", r.status, r.body)
	}
}

// TestSiteCheckUntrustedCertificate: a certificate from an authority the
// box does not trust is a TLS failure (502), not a fallback to http when
// https was asked for.
func TestSiteCheckUntrustedCertificate(t *testing.T) {
	s := newSite(t, true, map[string]http.HandlerFunc{"/": text("text/html", "<title>x</title>")})
	ts, token := siteCheckServer(t, "")
	_, r := siteCheck(t, ts, token, map[string]string{"domain": "https://" + s.host()})
	if r.status != 502 || !strings.Contains(r.errMsg(t), "certificate") {
		t.Errorf("%d %s", r.status, r.body)
	}
}

// TestSiteCheckFetchFailures: every way the home page fetch fails gets its
// status and a message that says what failed.
func TestSiteCheckFetchFailures(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newSite(t, true, map[string]http.HandlerFunc{
		"/": text("text/html", "<title>x</title>"),
		"/slow/": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		},
	})
	big := newSite(t, true, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(make([]byte, 3<<20))
	}})
	var loop *site
	loop = newSite(t, true, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.srv.URL+"/", http.StatusFound)
	}})
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := ln.Addr().String()
		ln.Close()
		return a
	}()
	pool := s.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no resolver in tests")
	}}
	cfg := configs.Defaults()
	ts := launch(t, cfg, web.Probes{}, nil, func(srv *Box) {
		c := outbound.New(outbound.Policy{Allow: mustPrefixes(t, "127.0.0.1/32"), RootCAs: pool, Resolver: noDNS, Timeout: 500 * time.Millisecond})
		srv.SiteCheck = &sitecheck.Checker{Client: c, Key: srv.deps.Key, Now: srv.now}
	})
	token := session(t, ts, "geo-audit")
	cases := []struct {
		domain string
		status int
		want   string
	}{
		{"https://" + s.host() + "/slow/", 200, ""}, // the path is ignored: the home page is read
		{"https://" + big.host(), 502, "at most 2097152 bytes"},
		{"https://" + loop.host(), 502, "more than 5 redirects"},
		{"https://" + closed, 502, "could not connect"},
		{closed, 502, "could not be reached"},
		{"shop.boxd-test.invalid", 400, "check the domain's spelling"},
	}
	for _, c := range cases {
		_, r := siteCheck(t, ts, token, map[string]string{"domain": c.domain})
		if r.status != c.status {
			t.Errorf("%s: %d %s; want %d", c.domain, r.status, r.body, c.status)
			continue
		}
		if c.want != "" && !strings.Contains(r.errMsg(t), c.want) {
			t.Errorf("%s: %q does not say %q", c.domain, r.errMsg(t), c.want)
		}
	}
	// A page that does not answer in time: 502 naming the timeout.
	s.mu.Lock()
	s.pages["/"] = s.pages["/slow/"]
	s.mu.Unlock()
	_, r := siteCheck(t, ts, token, map[string]string{"domain": "https://" + s.host()})
	if r.status != 502 || !strings.Contains(r.errMsg(t), "did not answer within") {
		t.Errorf("timeout: %d %s", r.status, r.body)
	}
}

func mustPrefixes(t *testing.T, cidrs ...string) []netip.Prefix {
	t.Helper()
	p, err := outbound.PolicyFromSettings(false, cidrs, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return p.Allow
}

// TestSiteCheckRefusesPrivateAddresses: without the operator's setting,
// every private, loopback, link-local and metadata range is refused, also
// when a public-looking fetch is redirected into one.
func TestSiteCheckRefusesPrivateAddresses(t *testing.T) {
	ts := launch(t, configs.Defaults(), web.Probes{}, nil, nil)
	token := session(t, ts, "geo-audit")
	for _, d := range []string{
		"127.0.0.1", "127.8.9.10:8443", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
		"0.0.0.0", "[::1]", "[fe80::1]", "[fc00::1]", "[::ffff:10.0.0.1]", "https://192.168.0.10/admin", "198.18.0.1", "[64:ff9b::a00:1]",
	} {
		_, r := siteCheck(t, ts, token, map[string]string{"domain": d})
		if r.status != 400 || !strings.Contains(r.errMsg(t), "only fetches public addresses") {
			t.Errorf("%s: %d %s", d, r.status, r.body)
		}
	}
	// IPv4 in number, octal, hex or short form: browsers (the WHATWG URL
	// parser) and inet_aton read these as 127.0.0.1, net.ParseIP as names.
	// They are refused before any lookup, asking for dotted decimal.
	for _, d := range []string{"2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.1", "0x7f000001", "https://017700000001/", "http://127.0.1:8080/"} {
		_, r := siteCheck(t, ts, token, map[string]string{"domain": d})
		if r.status != 400 || !strings.Contains(r.errMsg(t), "write the address in dotted decimal, e.g. 127.0.0.1,") {
			t.Errorf("%s: %d %s", d, r.status, r.body)
		}
	}
	// A site on an allowed address that redirects into a refused one.
	for _, target := range []string{"https://127.0.0.2:%s/", "https://10.1.2.3/", "http://169.254.169.254/latest/meta-data/", "https://[::1]:%s/"} {
		var s *site
		s = newSite(t, true, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
			u := target
			if strings.Contains(u, "%s") {
				u = fmt.Sprintf(u, strings.Split(s.host(), ":")[1])
			}
			http.Redirect(w, r, u, http.StatusFound)
		}})
		ts2, token2 := siteCheckServer(t, caFile(t, s))
		_, r := siteCheck(t, ts2, token2, map[string]string{"domain": s.host()})
		if r.status != 400 || !strings.Contains(r.errMsg(t), "only fetches public addresses") {
			t.Errorf("redirect to %s: %d %s", target, r.status, r.body)
		}
	}
}

func TestSiteCheckBadInput(t *testing.T) {
	ts := launch(t, configs.Defaults(), web.Probes{}, nil, nil)
	token := session(t, ts, "geo-audit")
	other := session(t, ts, "review-reply")
	cases := []struct {
		body   any
		token  string
		status int
		want   string
	}{
		{map[string]string{"domain": ""}, token, 400, "domain is empty"},
		{map[string]any{}, token, 400, "domain is empty"},
		{map[string]string{"domain": "exa mple.com"}, token, 400, "spaces"},
		{map[string]string{"domain": "ftp://example.com"}, token, 400, "scheme"},
		{map[string]string{"domain": "user:pw@example.com"}, token, 400, "neither a domain nor a URL"},
		{map[string]string{"domain": "https://user:pw@example.com/"}, token, 400, "user name or password"},
		{map[string]string{"domain": "bücher.example"}, token, 400, "xn--"},
		{map[string]string{"domain": "a..example"}, token, 400, "empty label"},
		{map[string]string{"domain": "-a.example"}, token, 400, "hyphen"},
		{map[string]string{"domain": "example.com:99999"}, token, 400, "port"},
		{map[string]string{"domain": "example.com:"}, token, 400, "port"},
		{map[string]string{"domain": "2001:db8::1"}, token, 400, "brackets"},
		{map[string]string{"domain": strings.Repeat("a", 3000) + ".com"}, token, 400, "at most 2048"},
		{map[string]string{"domain": "example.com", "name": strings.Repeat("n", 201)}, token, 400, "name is longer"},
		{map[string]any{"domain": 5}, token, 400, "domain must be a string"},
		{map[string]any{"domain": "example.com", "url": "x"}, token, 400, "unknown field"},
		{`{"domain": "example.com"`, token, 400, "middle of its JSON"},
		{`{"domain": "` + strings.Repeat("a", 9000) + `"}`, token, 413, "limit"},
		{map[string]string{"domain": "example.com"}, "", 401, "Authorization"},
		{map[string]string{"domain": "example.com"}, other, 403, ""},
	}
	for _, c := range cases {
		r := ts.do(t, call{method: "POST", path: "/geo/site-check", token: c.token, body: c.body})
		if r.status != c.status {
			t.Errorf("%v: %d %s; want %d", c.body, r.status, r.body, c.status)
			continue
		}
		if msg := r.errMsg(t); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q does not say %q", c.body, msg, c.want)
		}
	}
}

// TestSiteCheckOneRunPerToken: a demo token runs one site check at a time.
func TestSiteCheckOneRunPerToken(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	s := newSite(t, true, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		fmt.Fprint(w, "<title>slow</title>")
	}})
	ts, token := siteCheckServer(t, caFile(t, s))
	done := make(chan reply, 1)
	go func() {
		done <- ts.do(t, call{method: "POST", path: "/geo/site-check", token: token, body: map[string]string{"domain": s.host()}})
	}()
	<-entered
	r := ts.do(t, call{method: "POST", path: "/geo/site-check", token: token, body: map[string]string{"domain": s.host()}})
	if r.status != http.StatusConflict {
		t.Errorf("second run: %d %s", r.status, r.body)
	}
	close(release)
	if first := <-done; first.status != 200 {
		t.Errorf("first run: %d %s", first.status, first.body)
	}
}

// TestSiteCheckRobotsRedirects: robots.txt is read through up to 5
// redirects, across hosts (RFC 9309 section 2.3.1.2); a sixth redirect, or
// a redirect into a refused address, leaves no answer, which disallows
// everything (section 2.3.1.4) and says why.
func TestSiteCheckRobotsRedirects(t *testing.T) {
	page := text("text/html", `<html lang="en"><head><title>Corner Dental Clinic</title></head><body><p>Hello</p></body></html>`)
	robotsTxt := text("text/plain", "User-agent: GPTBot\nDisallow: /\n")
	// chain redirects /robots.txt of a to b's /hop/1, then back and forth
	// between the two hosts until /hop/<n> serves the file: n redirects.
	chain := func(a, b *site, n int) {
		other := map[*site]*site{a: b, b: a}
		for _, s := range []*site{a, b} {
			s.mu.Lock()
			for i := 1; i <= n; i++ {
				if i == n {
					s.pages[fmt.Sprintf("/hop/%d", i)] = robotsTxt
					continue
				}
				next := fmt.Sprintf("%s/hop/%d", other[s].srv.URL, i+1)
				s.pages[fmt.Sprintf("/hop/%d", i)] = func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, next, http.StatusFound) }
			}
			s.mu.Unlock()
		}
		first := b.srv.URL + "/hop/1"
		a.mu.Lock()
		a.pages["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, first, http.StatusMovedPermanently) }
		a.mu.Unlock()
	}
	ca := caFile(t, newSite(t, true, nil))
	ts, token := siteCheckServer(t, ca)
	for _, c := range []struct {
		name   string
		setup  func(a, b *site)
		fetch  string
		status int
		err    string
	}{
		{"5 redirects across hosts are followed", func(a, b *site) { chain(a, b, 5) }, "ok", 200, ""},
		{"6 redirects leave no answer", func(a, b *site) { chain(a, b, 6) }, "unreachable", 0, "more than 5 redirects"},
		{"a redirect into a refused address leaves no answer", func(a, b *site) {
			a.mu.Lock()
			a.pages["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://127.0.0.2:"+strings.Split(a.host(), ":")[1]+"/robots.txt", http.StatusFound)
			}
			a.mu.Unlock()
		}, "unreachable", 0, "only fetches public addresses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newSite(t, true, map[string]http.HandlerFunc{"/": page})
			b := newSite(t, true, map[string]http.HandlerFunc{})
			c.setup(a, b)
			rep, r := siteCheck(t, ts, token, map[string]string{"domain": a.host()})
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			rb := rep.Robots
			if rb.URL != a.srv.URL+"/robots.txt" || rb.Fetch != c.fetch || rb.Status != c.status || !strings.Contains(rb.Error, c.err) {
				t.Errorf("robots: url %s fetch %s status %d error %q", rb.URL, rb.Fetch, rb.Status, rb.Error)
			}
			switch c.fetch {
			case "ok": // the file at the end of the chain: only GPTBot is kept out
				if rep.Summary.CrawlersBlocked != 1 || rep.Summary.CrawlersAllowed != 13 || rb.Crawlers[0].Crawler != "GPTBot" || rb.Crawlers[0].Paths[0].Allowed {
					t.Errorf("summary %+v", rep.Summary)
				}
			default:
				if rep.Summary.CrawlersBlocked != 14 || !strings.Contains(fixCodes(rep), "error:robots_unreachable") {
					t.Errorf("summary %+v, fixes %s", rep.Summary, fixCodes(rep))
				}
				for _, f := range rep.Fixes {
					if f.Code == "robots_unreachable" && !strings.Contains(f.Message, c.err) {
						t.Errorf("the fix does not say why: %s", f.Message)
					}
				}
			}
		})
	}
}

// TestSiteCheckDeveloperKeys: developer keys reach the site-check routes
// for the verticals they are allowed, and only those.
func TestSiteCheckDeveloperKeys(t *testing.T) {
	s := newSite(t, true, map[string]http.HandlerFunc{"/": text("text/html", "<title>Corner Dental Clinic</title>")})
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	cfg.Outbound.AllowCIDRs = []string{"127.0.0.1/32"}
	cfg.Outbound.CAFile = caFile(t, s)
	ts := launch(t, cfg, web.Probes{}, nil, nil)
	geoKey, _ := createKey(t, ts, map[string]any{"verticals": []string{"geo-audit"}})
	reviewKey, _ := createKey(t, ts, map[string]any{"verticals": []string{"review-reply"}})
	siteBody := map[string]string{"domain": s.host()}
	review := reviewBodyJSON(nil)
	for _, c := range []struct {
		name, key, path string
		body            any
		status          int
		want            string
	}{
		{"geo-audit key checks a site", geoKey, "/geo/site-check", siteBody, 200, ""},
		{"geo-audit key on the reply guard", geoKey, "/reviews/check", review, 403, "not allowed the review-reply vertical (allowed: geo-audit)"},
		{"geo-audit key drafting a reply", geoKey, "/reviews/reply", reviewBodyJSON(map[string]any{"reply": nil}), 403, "not allowed the review-reply vertical"},
		{"review-reply key checks a reply", reviewKey, "/reviews/check", review, 200, ""},
		{"review-reply key on the site check", reviewKey, "/geo/site-check", siteBody, 403, "not allowed the geo-audit vertical (allowed: review-reply)"},
	} {
		r := ts.do(t, call{method: "POST", path: c.path, token: c.key, body: c.body})
		if r.status != c.status {
			t.Errorf("%s: %d %s; want %d", c.name, r.status, r.body, c.status)
			continue
		}
		if c.status != 200 && !strings.Contains(r.errMsg(t), c.want) {
			t.Errorf("%s: %q does not say %q", c.name, r.errMsg(t), c.want)
		}
		if c.status == 200 && c.path == "/geo/site-check" {
			var rep sitecheck.Report
			if err := json.Unmarshal(r.body, &rep); err != nil || rep.Record == nil || rep.URL != s.srv.URL+"/" {
				t.Errorf("%s: %v %.300s", c.name, err, r.body)
			}
		}
	}
}
