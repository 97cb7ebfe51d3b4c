package sitecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/pipelines/outbound"
	"boxd/pipelines/sitecheck/pagecheck"
	"boxd/pipelines/sitecheck/robots"
)

// Fetch limits of a site check.
const (
	MaxPageBytes    = 2 << 20 // the home page
	MaxLLMsTxtBytes = 1 << 20 // /llms.txt
	// MaxSitePaths bounds the first-level paths taken from the home page's
	// links for the robots report (besides "/" and "/llms.txt").
	MaxSitePaths = 8
	// maxImageExamples bounds the images listed without meaningful alt text.
	maxImageExamples = 10
	// maxNameLen bounds the optional business name.
	maxNameLen = 200
)

// Checker runs site checks.
type Checker struct {
	Client *outbound.Client
	Key    *attest.Key
	Now    func() time.Time
}

// Request is the body of POST /geo/site-check.
type Request struct {
	Domain string `json:"domain"`
	Name   string `json:"name"`
}

// FetchError is a failure to read the home page, the cause of the
// problem.Error Run returns: problem.Invalid when the request named
// something the box will not or cannot fetch (a refused address, a host
// that does not resolve, a bad URL), problem.Upstream when the site failed
// (connection, TLS, timeout, too large, too many redirects). Kind names
// the failure for logs.
type FetchError struct {
	Kind string
	Msg  string
}

func (e *FetchError) Error() string { return e.Msg }

// fetchFailed is a failure to read the home page as a problem of kind k.
func fetchFailed(k problem.Kind, kind, msg string) error {
	return problem.Wrap(k, &FetchError{Kind: kind, Msg: msg}, "%s", msg)
}

// Report is the answer of a site check.
type Report struct {
	ID      string               `json:"id"`
	Domain  string               `json:"domain"`
	Name    *string              `json:"name"`
	URL     string               `json:"url"`
	HTTPS   bool                 `json:"https"`
	Page    PageFetch            `json:"page"`
	Robots  RobotsSection        `json:"robots"`
	LLMsTxt LLMsTxtSection       `json:"llms_txt"`
	JSONLD  JSONLDSection        `json:"jsonld"`
	Meta    pagecheck.MetaReport `json:"meta"`
	Images  ImagesSection        `json:"images"`
	Text    string               `json:"text"`
	Fixes   []Fix                `json:"fixes"`
	Summary Summary              `json:"summary"`
	// Cut says what was left out to keep the record bounded (bound.go);
	// empty for most pages.
	Cut    []Cut          `json:"cut"`
	Record *attest.Record `json:"record"`
}

// PageFetch describes the home page fetch.
type PageFetch struct {
	URL         string   `json:"url"`
	Status      int      `json:"status"`
	ContentType string   `json:"content_type"`
	Bytes       int      `json:"bytes"`
	Redirects   []string `json:"redirects"`
	// HTTPSError says why https failed when the page came over http.
	HTTPSError string `json:"https_error,omitempty"`
}

// RobotsSection is the robots.txt fetch and the access of every AI crawler
// to the paths that matter.
type RobotsSection struct {
	URL       string                 `json:"url"`
	Status    int                    `json:"status"` // 0 when unreachable
	Error     string                 `json:"error,omitempty"`
	Bytes     int                    `json:"bytes"`
	Truncated bool                   `json:"truncated"`
	Fetch     string                 `json:"fetch"` // ok, not_found, unreachable
	Paths     []string               `json:"paths"`
	Crawlers  []robots.CrawlerAccess `json:"crawlers"`
}

// LLMsTxtSection is the /llms.txt fetch and its check.
type LLMsTxtSection struct {
	URL    string `json:"url"`
	Status int    `json:"status"` // 0 when unreachable
	Error  string `json:"error,omitempty"`
	pagecheck.LLMsTxtReport
}

// JSONLDSection is every JSON-LD block and object of the home page.
type JSONLDSection struct {
	Blocks       []pagecheck.Block        `json:"blocks"`
	Objects      []pagecheck.ObjectReport `json:"objects"`
	ErrorCount   int                      `json:"error_count"`
	WarningCount int                      `json:"warning_count"`
}

// ImagesSection summarises the alt text of the home page's images.
type ImagesSection struct {
	Count         int        `json:"count"`
	Meaningful    int        `json:"meaningful"`
	Decorative    int        `json:"decorative"` // alt=""
	MissingAlt    int        `json:"missing_alt"`
	NotMeaningful int        `json:"not_meaningful"`
	Examples      []ImageAlt `json:"examples"` // up to 10 without meaningful alt
}

// ImageAlt is one image without meaningful alt text.
type ImageAlt struct {
	Src string  `json:"src"`
	Alt *string `json:"alt"`
}

// Fix is one thing to change, with a snippet to paste where one helps.
// Severity is error, warning or info; Area is https, robots, llms_txt,
// jsonld, meta or images.
type Fix struct {
	Area     string `json:"area"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
	Snippet  string `json:"snippet"`
}

// Summary counts the report's findings.
type Summary struct {
	Crawlers        int    `json:"crawlers"`
	CrawlersAllowed int    `json:"crawlers_allowed"` // allowed to fetch "/"
	CrawlersBlocked int    `json:"crawlers_blocked"`
	LLMsTxt         string `json:"llms_txt"` // ok, problems, missing (404 or 410) or unreachable (no answer, another HTTP error)
	JSONLDObjects   int    `json:"jsonld_objects"`
	JSONLDErrors    int    `json:"jsonld_errors"`
	JSONLDWarnings  int    `json:"jsonld_warnings"`
	Errors          int    `json:"errors"`
	Warnings        int    `json:"warnings"`
	Infos           int    `json:"infos"`
}

// Run checks the site named by req. Errors are *problem.Error: Invalid
// for a domain or name to fix, Invalid or Upstream with a *FetchError
// cause when the home page could not be read.
func (c *Checker) Run(ctx context.Context, req Request) (*Report, error) {
	t, err := ParseDomain(req.Domain)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(req.Name)
	if len([]rune(name)) > maxNameLen {
		return nil, inputErr("name is longer than %d characters; send the business name only", maxNameLen)
	}
	home, httpsErr, err := c.fetchHome(ctx, t)
	if err != nil {
		return nil, err
	}
	origin := originOf(home.URL)
	rep := &Report{ID: newID(), Domain: t.Host, URL: home.URL, HTTPS: strings.HasPrefix(home.URL, "https://")}
	if name != "" {
		rep.Name = &name
	}
	rep.Page = PageFetch{URL: home.URL, Status: home.Status, ContentType: home.ContentType, Bytes: len(home.Body),
		Redirects: nonNil(home.Redirects), HTTPSError: httpsErr}

	// The page is scanned once; every check below reads these tokens.
	html := ""
	var toks []pagecheck.Token
	if isHTML(home.ContentType, home.Body) {
		html = string(home.Body)
		toks = pagecheck.Scan(html)
	}
	paths := sitePaths(toks, home.URL)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rep.Robots = c.fetchRobots(ctx, origin, paths) }()
	go func() { defer wg.Done(); rep.LLMsTxt = c.fetchLLMsTxt(ctx, origin) }()
	page, droppedObjects := pagecheck.CheckPageJSONLDLimit(html, toks, home.URL, MaxJSONLDObjects)
	rep.JSONLD = JSONLDSection{Blocks: page.Blocks, Objects: page.Objects, ErrorCount: page.ErrorCount, WarningCount: page.WarningCount}
	rep.Text = page.Text
	rep.Meta = pagecheck.CheckMetaTokens(html, toks, home.URL)
	rep.Images = images(toks, home.URL)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	fx := fixes(rep, page, name)
	rep.Fixes = fx.list()
	rep.Summary = summarise(rep, len(page.Objects)+droppedObjects, fx)
	rep.Cut = bound(rep, droppedObjects, fx.total())
	rec, err := c.record(rep)
	if err != nil {
		return nil, fmt.Errorf("sign the site-check record: %w", err)
	}
	rep.Record = rec
	return rep, nil
}

// fetchHome reads the home page, trying the target's schemes in order. A
// later scheme is tried only when the earlier one could not connect or
// failed its TLS handshake; httpsErr then says why https failed.
func (c *Checker) fetchHome(ctx context.Context, t Target) (resp *outbound.Response, httpsErr string, err error) {
	var tried []string
	for i, scheme := range t.Schemes {
		u := scheme + "://" + t.Host + "/"
		resp, err := c.Client.Get(ctx, u, MaxPageBytes)
		if err == nil {
			if i > 0 {
				httpsErr = strings.Join(tried, "; ")
			}
			return resp, httpsErr, nil
		}
		var oe *outbound.Error
		if !errors.As(err, &oe) {
			return nil, "", fetchFailed(problem.Upstream, "fetch", fmt.Sprintf("%s: %v", u, err))
		}
		switch oe.Kind {
		case outbound.KindCanceled:
			return nil, "", ctx.Err()
		case outbound.KindRefused, outbound.KindDNS, outbound.KindBadURL:
			return nil, "", fetchFailed(problem.Invalid, oe.Kind, fetchMsg(oe))
		case outbound.KindConnect, outbound.KindTLS:
			tried = append(tried, oe.Msg)
			continue
		}
		return nil, "", fetchFailed(problem.Upstream, oe.Kind, fetchMsg(oe))
	}
	return nil, "", fetchFailed(problem.Upstream, "unreachable", "the site could not be reached: "+strings.Join(tried, "; "))
}

// fetchMsg words an outbound error about the home page for the caller.
func fetchMsg(e *outbound.Error) string {
	switch e.Kind {
	case outbound.KindDNS:
		return e.Msg + "; check the domain's spelling and its DNS records"
	case outbound.KindTooLarge:
		return fmt.Sprintf("%s; the home page may be at most %d bytes", e.Msg, MaxPageBytes)
	}
	return e.Msg
}

// fetchRobots reads /robots.txt and reports every AI crawler's access to
// paths. It reads one byte past robots.MaxBytes, so that robots.Parse sees
// whether the file goes on and drops a line the limit cuts, as the kits do
// with the whole file; Bytes is the length read, at most robots.MaxBytes,
// and Truncated says the file is longer. A fetch that fails at the
// transport is "unreachable": disallow all (RFC 9309 section 2.3.1.4).
func (c *Checker) fetchRobots(ctx context.Context, origin string, paths []string) RobotsSection {
	sec := RobotsSection{URL: origin + "/robots.txt", Paths: paths}
	var body []byte
	resp, err := c.Client.GetPrefix(ctx, sec.URL, robots.MaxBytes+1)
	if err != nil {
		sec.Error = err.Error()
	} else {
		sec.Status, body = resp.Status, resp.Body
		sec.Truncated = len(body) > robots.MaxBytes
		sec.Bytes = min(len(body), robots.MaxBytes)
	}
	ar := robots.RobotsAccess(robots.AccessInput{RobotsTxt: string(body), Status: sec.Status, Paths: paths})
	sec.Fetch, sec.Crawlers = ar.Fetch, ar.Crawlers
	return sec
}

// fetchLLMsTxt reads and checks /llms.txt. A file that answers 2xx but is
// longer than MaxLLMsTxtBytes is found, with the problem too_large (an HTML
// page served in its place is still reported as served_html); a fetch that
// fails at the transport has the problem unreachable.
func (c *Checker) fetchLLMsTxt(ctx context.Context, origin string) LLMsTxtSection {
	sec := LLMsTxtSection{URL: origin + "/llms.txt"}
	resp, err := c.Client.GetPrefix(ctx, sec.URL, MaxLLMsTxtBytes)
	if err != nil {
		sec.Error = err.Error()
		sec.LLMsTxtReport = pagecheck.LLMsTxtReport{Problems: []pagecheck.Problem{{
			Code: "unreachable", Message: "/llms.txt could not be fetched: " + err.Error(),
			Fix: "Make /llms.txt answer 200 with a Markdown file (or 404 if there is none) within the fetch limits.",
		}}}
		return sec
	}
	sec.Status = resp.Status
	sec.LLMsTxtReport = pagecheck.CheckLLMsTxt(resp.Status, resp.ContentType, string(resp.Body))
	if resp.Truncated && sec.Found && !sec.IsHTML {
		sec.LLMsTxtReport = pagecheck.LLMsTxtReport{Found: true, Problems: []pagecheck.Problem{{
			Code:    "too_large",
			Message: fmt.Sprintf("/llms.txt is larger than %d bytes; the check does not read files that large.", MaxLLMsTxtBytes),
			Fix:     "Keep /llms.txt a short Markdown index of the site's main pages; put long content in separate Markdown files and link them from it.",
		}}}
	}
	return sec
}

// record signs the report: one entry per section, its JSON as the entry's
// text (numbers stay inside the text, as signed records require), and a
// "cut" entry after them when bound left something out.
func (c *Checker) record(rep *Report) (*attest.Record, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	meta := map[string]string{"domain": rep.Domain, "url": rep.URL}
	if rep.Name != nil {
		meta["name"] = *rep.Name
	}
	b := attest.NewRecord("site-check", rep.ID, meta)
	sections := []struct {
		typ string
		v   any
	}{
		{"page", rep.Page}, {"robots", rep.Robots}, {"llms_txt", rep.LLMsTxt}, {"jsonld", rep.JSONLD},
		{"meta", rep.Meta}, {"images", rep.Images}, {"text", rep.Text}, {"fixes", rep.Fixes}, {"summary", rep.Summary},
	}
	if len(rep.Cut) > 0 {
		sections = append(sections, struct {
			typ string
			v   any
		}{"cut", rep.Cut})
	}
	for _, s := range sections {
		j, err := json.Marshal(s.v)
		if err != nil {
			return nil, err
		}
		b.AddText(s.typ, string(j), map[string]any{"section": s.typ})
	}
	return b.Sign(c.Key, now())
}

// newID makes a site-check id.
func newID() string { return ids.New("sc_", 12) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// originOf returns scheme://host of an absolute URL.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return strings.TrimSuffix(raw, "/")
	}
	return u.Scheme + "://" + u.Host
}

// isHTML reports whether a body is an HTML page: an HTML content type, or
// none and a body that starts like HTML.
func isHTML(contentType string, body []byte) bool {
	ct := strings.ToLower(contentType)
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	if ct == "text/html" || ct == "application/xhtml+xml" {
		return true
	}
	if ct != "" && ct != "text/plain" && ct != "application/octet-stream" {
		return false
	}
	return strings.HasPrefix(strings.ToLower(http.DetectContentType(body)), "text/html")
}
