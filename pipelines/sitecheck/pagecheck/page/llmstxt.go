package page

import (
	"regexp"
	"strconv"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/text"
)

// LLMsTxtReport is the result of CheckLLMsTxt.
type LLMsTxtReport struct {
	Found    bool      `json:"found"`
	OK       bool      `json:"ok"`
	IsHTML   bool      `json:"is_html"`
	Title    string    `json:"title"`
	Summary  string    `json:"summary"`
	Links    int       `json:"links"`
	Sections int       `json:"sections"`
	Problems []Problem `json:"problems"`
}

var (
	reLLMsTitle   = regexp.MustCompile(`^#[ \t]+[^ \t]`)
	reLLMsSection = regexp.MustCompile(`^##[ \t]+[^ \t]`)
	reLLMsLink    = regexp.MustCompile(`^[ \t]*[-*+][ \t]+\[[^\]]+\]\([^ \t)]+\)`)
)

const fixAddLLMsTxt = `Publish a Markdown file at /llms.txt: a first line "# Site name", then a "> one or two sentence summary" line, then "## " sections listing links as "- [Page title](https://...): what it covers", served as text/plain or text/markdown.`

// CheckLLMsTxt checks a fetched /llms.txt against the llms.txt proposal
// (llmstxt.org): an H1 title line first, a blockquote summary right after
// it, then optional text and "## " sections of Markdown link lists.
func CheckLLMsTxt(status int, contentType, body string) LLMsTxtReport {
	r := LLMsTxtReport{Problems: []Problem{}}
	add := func(code, msg, fix string) { r.Problems = append(r.Problems, Problem{code, msg, fix}) }
	switch {
	case status == 404 || status == 410:
		add("not_found", "There is no /llms.txt (HTTP "+strconv.Itoa(status)+").", fixAddLLMsTxt)
		return r
	case status < 200 || status > 299:
		add("bad_status", "Fetching /llms.txt gave HTTP status "+strconv.Itoa(status)+".",
			"Make /llms.txt answer 200 with the Markdown file.")
		return r
	}
	r.Found = true
	ct := contentType
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = text.ASCIILower(text.TrimASCII(ct))
	body = strings.TrimPrefix(body, "\ufeff")
	lead := text.ASCIILower(strings.TrimLeft(body, " \t\n\f\r"))
	if ct == "text/html" || ct == "application/xhtml+xml" || strings.HasPrefix(lead, "<!doctype") || strings.HasPrefix(lead, "<html") {
		r.IsHTML = true
		add("served_html", "An HTML page is served in place of /llms.txt (often a soft 404 or a single-page-app fallback).",
			"Serve a real Markdown file at /llms.txt with Content-Type text/plain or text/markdown.")
		return r
	}
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	if text.TrimASCII(body) == "" {
		add("empty", "The llms.txt file is empty.", fixAddLLMsTxt)
		return r
	}
	if ct != "" && ct != "text/plain" && ct != "text/markdown" && ct != "text/x-markdown" {
		add("unexpected_content_type", `llms.txt is served as "`+ct+`"; expected text/plain or text/markdown.`,
			"Serve /llms.txt with Content-Type text/plain; charset=utf-8 or text/markdown.")
	}
	lines := strings.Split(body, "\n")
	blank := func(s string) bool { return strings.Trim(s, " \t") == "" }
	i := 0
	for i < len(lines) && blank(lines[i]) {
		i++
	}
	if reLLMsTitle.MatchString(lines[i]) {
		r.Title = strings.Trim(lines[i][1:], " \t")
		i++
		for i < len(lines) && blank(lines[i]) {
			i++
		}
	}
	var quote []string
	for ; i < len(lines) && strings.HasPrefix(lines[i], ">"); i++ {
		l := strings.TrimPrefix(lines[i][1:], " ")
		quote = append(quote, l)
	}
	r.Summary = text.CollapseSpace(strings.Join(quote, " "))
	for _, l := range lines {
		if reLLMsSection.MatchString(l) {
			r.Sections++
		}
		if reLLMsLink.MatchString(l) {
			r.Links++
		}
	}
	if r.Title == "" {
		add("missing_title", `The first line is not a "# Title" heading.`,
			`Start the file with "# " and the site or project name.`)
	}
	if r.Summary == "" {
		add("missing_summary", `No "> summary" blockquote follows the title.`,
			`Add a line starting with "> " right after the title that sums up the site in one or two sentences.`)
	}
	if r.Links == 0 {
		add("no_links", "The file lists no links.",
			`Add "## " sections with list items such as "- [Services](https://www.example.com/services.md): what they cover".`)
	}
	r.OK = len(r.Problems) == 0
	return r
}
