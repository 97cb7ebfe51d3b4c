package sitecheck

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck"
	"boxd/pipelines/sitecheck/robots"
)

// Fix severities, in report order.
const (
	SevError   = "error"
	SevWarning = "warning"
	SevInfo    = "info"
)

// sitePaths are the paths the robots report covers: "/", "/llms.txt" and
// up to MaxSitePaths first-level paths of the home page's same-origin links,
// in the order they first appear. toks is the scanned page (none when the
// page is not HTML).
func sitePaths(toks []pagecheck.Token, pageURL string) []string {
	paths := []string{"/", "/llms.txt"}
	base, err := url.Parse(pageURL)
	if err != nil || len(toks) == 0 {
		return paths
	}
	seen := map[string]bool{"/": true, "/llms.txt": true, "/robots.txt": true}
	extra := 0
	for _, t := range toks {
		if extra == MaxSitePaths {
			break
		}
		if t.Kind != pagecheck.TokStartTag || t.Name != "a" {
			continue
		}
		href, ok := t.Attr("href")
		if !ok {
			continue
		}
		u, err := base.Parse(strings.TrimSpace(href))
		if err != nil || u.Scheme != base.Scheme || !strings.EqualFold(u.Host, base.Host) {
			continue
		}
		p := firstLevel(u.EscapedPath())
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		paths = append(paths, p)
		extra++
	}
	return paths
}

// firstLevel returns "/segment/" for a path under a first-level directory,
// "/segment" for a first-level page, "" for the root.
func firstLevel(p string) string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return ""
	}
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return "/" + p[:i+1]
	}
	return "/" + p
}

// images summarises the alt text of the <img> elements of the scanned
// page.
func images(toks []pagecheck.Token, pageURL string) ImagesSection {
	sec := ImagesSection{Examples: []ImageAlt{}}
	if len(toks) == 0 {
		return sec
	}
	base, _ := url.Parse(pageURL)
	for _, t := range toks {
		if t.Kind != pagecheck.TokStartTag || t.Name != "img" {
			continue
		}
		sec.Count++
		src, _ := t.Attr("src")
		var alt *string
		if a, ok := t.Attr("alt"); ok {
			alt = &a
		}
		if pagecheck.MeaningfulAlt(alt, src) {
			sec.Meaningful++
			continue
		}
		if alt != nil && strings.TrimSpace(*alt) == "" {
			sec.Decorative++ // alt="" marks a decorative image (WCAG H67)
			continue
		}
		if alt == nil {
			sec.MissingAlt++
		} else {
			sec.NotMeaningful++
		}
		if len(sec.Examples) < maxImageExamples {
			if base != nil {
				if u, err := base.Parse(src); err == nil {
					src = u.String()
				}
			}
			sec.Examples = append(sec.Examples, ImageAlt{Src: src, Alt: alt})
		}
	}
	return sec
}

// fixList keeps the first MaxFixes fixes of each severity and counts them
// all: the report lists MaxFixes, errors first, and its summary counts
// every fix.
type fixList struct {
	kept  map[string][]Fix
	count map[string]int
}

func (l *fixList) add(f Fix) {
	l.count[f.Severity]++
	if len(l.kept[f.Severity]) < MaxFixes {
		l.kept[f.Severity] = append(l.kept[f.Severity], f)
	}
}

// total is how many fixes there were.
func (l *fixList) total() int { return l.count[SevError] + l.count[SevWarning] + l.count[SevInfo] }

// list is the fixes kept, errors first, at most MaxFixes.
func (l *fixList) list() []Fix {
	out := []Fix{}
	for _, sev := range []string{SevError, SevWarning, SevInfo} {
		out = append(out, l.kept[sev]...)
	}
	return out[:min(len(out), MaxFixes)]
}

// fixes lists what to change, errors first. page's objects may be fewer
// than the page's (a bounded check): the findings of those it did not keep
// are counted as the fixes they would have made.
func fixes(rep *Report, page pagecheck.PageReport, name string) *fixList {
	out := &fixList{kept: map[string][]Fix{}, count: map[string]int{}}
	add := out.add

	if !rep.HTTPS {
		msg := "The site answers over plain http only."
		if rep.Page.HTTPSError != "" {
			msg = "The site does not answer over https (" + rep.Page.HTTPSError + "); the check read it over plain http."
		}
		add(Fix{Area: "https", Severity: SevWarning, Code: "no_https", Message: msg,
			Fix: "Serve the site over https with a certificate from a public authority and redirect http to https."})
	}
	if rep.Page.Status < 200 || rep.Page.Status > 299 {
		add(Fix{Area: "page", Severity: SevError, Code: "page_status",
			Message: fmt.Sprintf("The home page %s answered HTTP %d.", rep.Page.URL, rep.Page.Status),
			Fix:     "Make the home page answer 200 with its HTML; crawlers skip pages that answer errors."})
	} else if !strings.Contains(strings.ToLower(rep.Page.ContentType), "html") && len(rep.JSONLD.Blocks) == 0 && rep.Text == "" {
		add(Fix{Area: "page", Severity: SevError, Code: "not_html",
			Message: fmt.Sprintf("The home page is served as %q, not HTML.", rep.Page.ContentType),
			Fix:     "Serve the home page as text/html."})
	}

	robotsFixes(rep, add)
	llmsFixes(rep, add)

	unlisted := map[string]int{SevError: page.ErrorCount, SevWarning: page.WarningCount}
	for _, b := range page.Blocks {
		if b.Error != nil {
			unlisted[SevError]--
			add(Fix{Area: "jsonld", Severity: SevError, Code: "invalid_json",
				Message: fmt.Sprintf("JSON-LD block %d (line %d of the page) is not valid JSON: %s.", b.Index, b.Line, b.Error.Error()),
				Fix:     "Correct the JSON syntax of the block; a validator such as the one in this kit (validateSchemaLocally) or `python3 -m json.tool` shows where it breaks."})
		}
	}
	for _, o := range page.Objects {
		for _, f := range o.Errors {
			unlisted[SevError]--
			add(Fix{Area: "jsonld", Severity: SevError, Code: f.Code, Message: jsonldMsg(o, f), Fix: f.Fix, Snippet: f.Snippet})
		}
		for _, f := range o.Warnings {
			unlisted[SevWarning]--
			add(Fix{Area: "jsonld", Severity: SevWarning, Code: f.Code, Message: jsonldMsg(o, f), Fix: f.Fix, Snippet: f.Snippet})
		}
	}
	for sev, n := range unlisted {
		if n > 0 {
			out.count[sev] += n
		}
	}
	if len(page.Blocks) == 0 {
		add(Fix{Area: "jsonld", Severity: SevWarning, Code: "no_jsonld",
			Message: "The home page has no JSON-LD, so AI answers cannot read the business's name, address, hours or contact details from it.",
			Fix:     "Add a <script type=\"application/ld+json\"> block describing the business (fill in the real address, phone and hours).",
			Snippet: markupSnippet(name, rep)})
	} else if name != "" && !namesBusiness(page.Blocks, name) {
		add(Fix{Area: "jsonld", Severity: SevWarning, Code: "name_not_found",
			Message: fmt.Sprintf("No JSON-LD object on the home page has the name %q.", name),
			Fix:     "Give the Organization or LocalBusiness object the business's name exactly as customers know it.",
			Snippet: fmt.Sprintf("\"name\": %s", jsonString(name))})
	}

	for _, p := range rep.Meta.Problems {
		sev := SevWarning
		if p.Code == "noindex" || p.Code == "missing_title" {
			sev = SevError
		}
		add(Fix{Area: "meta", Severity: sev, Code: p.Code, Message: p.Message, Fix: p.Fix})
	}

	if n := rep.Images.MissingAlt + rep.Images.NotMeaningful; n > 0 {
		var srcs []string
		for _, e := range rep.Images.Examples {
			srcs = append(srcs, e.Src)
		}
		snippet := `<img src="…" alt="What the picture shows, e.g. Fresh sourdough loaves on the counter">`
		if len(srcs) > 0 {
			snippet = fmt.Sprintf(`<img src=%s alt="What the picture shows">`, jsonString(srcs[0]))
		}
		add(Fix{Area: "images", Severity: SevWarning, Code: "alt_text",
			Message: fmt.Sprintf("%d of %d images have no meaningful alt text (%d without alt, %d with a file name, placeholder or generic word; alt=\"\" counts as decorative): %s.",
				n, rep.Images.Count, rep.Images.MissingAlt, rep.Images.NotMeaningful, strings.Join(srcs, ", ")),
			Fix:     "Describe each informative image in its alt attribute; give purely decorative images alt=\"\".",
			Snippet: snippet})
	}

	return out
}

func jsonldMsg(o pagecheck.ObjectReport, f pagecheck.Finding) string {
	where := fmt.Sprintf("JSON-LD block %d, %s", o.Block, f.Path)
	if o.Type != "" {
		where += " (" + o.Type + ")"
	}
	return where + ": " + f.Message
}

// robotsFixes explains robots.txt outcomes: a file that blocks everyone,
// crawlers that answer people's questions blocked, training crawlers
// blocked (a choice: info), and paths of the site blocked.
func robotsFixes(rep *Report, add func(Fix)) {
	r := rep.Robots
	switch r.Fetch {
	case robots.FetchUnreachable:
		why := fmt.Sprintf("answered HTTP %d", r.Status)
		if r.Status == 0 {
			why = "could not be fetched (" + r.Error + ")"
		}
		add(Fix{Area: "robots", Severity: SevError, Code: "robots_unreachable",
			Message: fmt.Sprintf("%s %s, so crawlers must treat the whole site as disallowed (RFC 9309 section 2.3.1.4).", r.URL, why),
			Fix:     "Make /robots.txt answer 200 with your rules, or 404 if you have none (which allows everything).",
			Snippet: "User-agent: *\nAllow: /\n"})
		return
	case robots.FetchNotFound:
		add(Fix{Area: "robots", Severity: SevInfo, Code: "robots_not_found",
			Message: fmt.Sprintf("%s answered HTTP %d: every crawler may fetch everything.", r.URL, r.Status),
			Fix:     "Nothing to change for AI access; publish a robots.txt if you want to steer crawlers.",
			Snippet: "User-agent: *\nAllow: /\n"})
	}
	if r.Truncated {
		add(Fix{Area: "robots", Severity: SevWarning, Code: "robots_too_large",
			Message: fmt.Sprintf("robots.txt is larger than %d bytes; crawlers read only its first %d bytes (RFC 9309 section 2.5).", robots.MaxBytes, robots.MaxBytes),
			Fix:     "Shorten robots.txt; put the rules for AI crawlers near the top."})
	}
	var answer, training []string
	blockedPaths := map[string][]string{}
	var pathOrder []string
	for _, c := range r.Crawlers {
		home := true
		for _, p := range c.Paths {
			if p.Path == "/" && !p.Allowed {
				home = false
			}
		}
		if !home {
			if c.Purpose == robots.PurposeTraining {
				training = append(training, c.Crawler)
			} else {
				answer = append(answer, c.Crawler)
			}
			continue
		}
		if c.Purpose == robots.PurposeTraining {
			continue
		}
		for _, p := range c.Paths {
			if !p.Allowed {
				if _, ok := blockedPaths[p.Path]; !ok {
					pathOrder = append(pathOrder, p.Path)
				}
				blockedPaths[p.Path] = append(blockedPaths[p.Path], c.Crawler)
			}
		}
	}
	if len(answer) > 0 {
		add(Fix{Area: "robots", Severity: SevError, Code: "answer_crawlers_blocked",
			Message: fmt.Sprintf("robots.txt keeps %s from the home page, so AI search and assistants cannot read or cite the site.", strings.Join(answer, ", ")),
			Fix:     "Allow the crawlers that fetch pages for AI answers; put a group for them in robots.txt.",
			Snippet: allowGroups(answer)})
	}
	if len(training) > 0 {
		add(Fix{Area: "robots", Severity: SevInfo, Code: "training_crawlers_blocked",
			Message: fmt.Sprintf("robots.txt keeps the model-training crawlers %s out; that is a choice and does not stop AI search from citing the site.", strings.Join(training, ", ")),
			Fix:     "Keep it if you do not want the site in training data; to allow them, add a group like the snippet.",
			Snippet: allowGroups(training)})
	}
	for _, p := range pathOrder {
		sev := SevWarning
		add(Fix{Area: "robots", Severity: sev, Code: "path_blocked",
			Message: fmt.Sprintf("robots.txt keeps %s from %s.", strings.Join(blockedPaths[p], ", "), p),
			Fix:     fmt.Sprintf("If %s should appear in AI answers, allow it for these crawlers.", p),
			Snippet: allowPathGroups(blockedPaths[p], p)})
	}
}

func allowGroups(crawlers []string) string {
	var b strings.Builder
	for _, c := range crawlers {
		b.WriteString("User-agent: " + c + "\n")
	}
	b.WriteString("Allow: /\n")
	return b.String()
}

func allowPathGroups(crawlers []string, path string) string {
	var b strings.Builder
	for _, c := range crawlers {
		b.WriteString("User-agent: " + c + "\n")
	}
	b.WriteString("Allow: " + path + "\n")
	return b.String()
}

// llmsFixes turns llms.txt problems into fixes, with a starting file built
// from the page where one is missing.
func llmsFixes(rep *Report, add func(Fix)) {
	for _, p := range rep.LLMsTxt.Problems {
		sev := SevError
		snippet := ""
		switch p.Code {
		case "not_found":
			sev = SevWarning
			snippet = llmsSnippet(rep)
		case "unexpected_content_type":
			sev = SevWarning
		case "empty", "missing_title", "missing_summary", "no_links", "served_html":
			snippet = llmsSnippet(rep)
		}
		add(Fix{Area: "llms_txt", Severity: sev, Code: p.Code, Message: p.Message, Fix: p.Fix, Snippet: snippet})
	}
}

// llmsSnippet drafts an llms.txt from the page's title, description and
// first-level links.
func llmsSnippet(rep *Report) string {
	title := rep.Meta.Title
	if rep.Name != nil {
		title = *rep.Name
	}
	if title == "" {
		title = rep.Domain
	}
	summary := rep.Meta.Description
	if summary == "" {
		summary = "One or two sentences on what the business does and where."
	}
	origin := originOf(rep.URL)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n> %s\n\n## Pages\n\n- [Home](%s/): the home page\n", title, summary, origin)
	for _, p := range rep.Robots.Paths {
		if p == "/" || p == "/llms.txt" {
			continue
		}
		label := strings.Trim(p, "/")
		fmt.Fprintf(&b, "- [%s](%s%s): what this page covers\n", label, origin, p)
	}
	return b.String()
}

// markupSnippet builds JSON-LD for the business from what the check knows
// (the name and the site's URL); the caller fills in the rest.
func markupSnippet(name string, rep *Report) string {
	if name == "" {
		name = rep.Meta.Title
	}
	if name == "" {
		name = rep.Domain
	}
	o, err := pagecheck.GenerateMarkup(pagecheck.Facts{Name: name, URL: originOf(rep.URL) + "/", Description: rep.Meta.Description})
	if err != nil {
		return ""
	}
	j, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return ""
	}
	return "<script type=\"application/ld+json\">\n" + string(j) + "\n</script>"
}

// namesBusiness reports whether any JSON-LD object has the given name
// (compared case-insensitively after trimming).
func namesBusiness(blocks []pagecheck.Block, name string) bool {
	want := strings.ToLower(strings.TrimSpace(name))
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			if n, ok := x["name"].(string); ok && strings.ToLower(strings.TrimSpace(n)) == want {
				return true
			}
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	for _, b := range blocks {
		if b.OK && walk(b.Value) {
			return true
		}
	}
	return false
}

// summarise counts the report's findings: objects is how many JSON-LD
// objects the page had, fx every fix (listed or not).
func summarise(rep *Report, objects int, fx *fixList) Summary {
	s := Summary{Crawlers: len(rep.Robots.Crawlers), JSONLDObjects: objects,
		JSONLDErrors: rep.JSONLD.ErrorCount, JSONLDWarnings: rep.JSONLD.WarningCount}
	for _, c := range rep.Robots.Crawlers {
		allowed := true
		for _, p := range c.Paths {
			if p.Path == "/" {
				allowed = p.Allowed
			}
		}
		if allowed {
			s.CrawlersAllowed++
		} else {
			s.CrawlersBlocked++
		}
	}
	switch {
	case !rep.LLMsTxt.Found && (rep.LLMsTxt.Status == 404 || rep.LLMsTxt.Status == 410):
		s.LLMsTxt = "missing"
	case !rep.LLMsTxt.Found:
		s.LLMsTxt = "unreachable"
	case rep.LLMsTxt.OK:
		s.LLMsTxt = "ok"
	default:
		s.LLMsTxt = "problems"
	}
	s.Errors, s.Warnings, s.Infos = fx.count[SevError], fx.count[SevWarning], fx.count[SevInfo]
	return s
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
