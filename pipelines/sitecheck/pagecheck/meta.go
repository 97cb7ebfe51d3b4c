package pagecheck

import (
	"strconv"
	"strings"
)

// Limits of CheckMeta, in code points after whitespace collapsing.
const (
	TitleMin       = 10
	TitleMax       = 60
	DescriptionMin = 50
	DescriptionMax = 160
)

// Problem is one problem of a page's meta data or of an llms.txt file.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// OpenGraph holds a page's og:title, og:description, og:image and og:type.
type OpenGraph struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Image       string `json:"image"`
	Type        string `json:"type"`
}

// MetaReport is the result of CheckMeta.
type MetaReport struct {
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Canonical   string    `json:"canonical"`
	Lang        string    `json:"lang"`
	Robots      string    `json:"robots"`
	Noindex     bool      `json:"noindex"`
	Nosnippet   bool      `json:"nosnippet"`
	OG          OpenGraph `json:"og"`
	Problems    []Problem `json:"problems"`
}

// CheckMeta reads a page's title, meta description, canonical link, html
// lang, robots directives and Open Graph tags, and lists their problems.
// pageURL, when it is an absolute http(s) URL, is compared with the
// canonical URL. Canonical links are the <link> elements whose rel holds
// the token "canonical" and whose href, trimmed of ASCII whitespace, is not
// empty; the first one is the page's canonical URL.
func CheckMeta(html, pageURL string) MetaReport { return CheckMetaTokens(html, Scan(html), pageURL) }

// CheckMetaTokens is CheckMeta over toks, which must be Scan(html).
func CheckMetaTokens(html string, toks []Token, pageURL string) MetaReport {
	r := MetaReport{Problems: []Problem{}}
	var (
		haveTitle, haveDesc, haveLang bool
		canonicals                    []string
		robots                        []string
		og                            = map[string]string{}
		svg                           int
	)
	for k, t := range toks {
		switch t.Kind {
		case TokStartTag:
			switch t.Name {
			case "svg":
				svg++
			case "html":
				if !haveLang {
					haveLang = true
					r.Lang, _ = t.Attr("lang")
					r.Lang = trimASCII(r.Lang)
				}
			case "title":
				if !haveTitle && svg == 0 && k+1 < len(toks) && toks[k+1].Kind == TokRawText {
					haveTitle = true
					raw := toks[k+1]
					r.Title = collapseSpace(DecodeEntities(html[raw.ContentStart:raw.ContentEnd]))
				}
			case "link":
				rel, _ := t.Attr("rel")
				// A canonical link without an href (or with an empty one) is
				// ignored, as browsers and search engines ignore it.
				if href, _ := t.Attr("href"); trimASCII(href) != "" && contains(splitHTMLSpace(asciiLower(rel)), "canonical") {
					canonicals = append(canonicals, trimASCII(href))
				}
			case "meta":
				name, _ := t.Attr("name")
				name = asciiLower(trimASCII(name))
				content, _ := t.Attr("content")
				content = collapseSpace(content)
				switch name {
				case "description":
					if !haveDesc {
						haveDesc = true
						r.Description = content
					}
				case "robots", "googlebot":
					if content != "" {
						robots = append(robots, content)
					}
				}
				prop, ok := t.Attr("property")
				if !ok {
					prop = name
				}
				prop = asciiLower(trimASCII(prop))
				if strings.HasPrefix(prop, "og:") {
					if _, seen := og[prop]; !seen {
						og[prop] = content
					}
				}
			}
		case TokEndTag:
			if t.Name == "svg" && svg > 0 {
				svg--
			}
		}
	}
	r.OG = OpenGraph{Title: og["og:title"], Description: og["og:description"], Image: trimASCII(og["og:image"]), Type: og["og:type"]}
	r.Robots = strings.Join(robots, ", ")
	for _, d := range strings.Split(asciiLower(r.Robots), ",") {
		switch strings.ReplaceAll(d, " ", "") {
		case "noindex", "none":
			r.Noindex = true
		case "nosnippet", "max-snippet:0":
			r.Nosnippet = true
		}
	}
	if len(canonicals) > 0 {
		r.Canonical = canonicals[0]
	}
	r.Problems = metaProblems(r, canonicals, pageURL)
	return r
}

func metaProblems(r MetaReport, canonicals []string, pageURL string) []Problem {
	ps := []Problem{}
	add := func(code, msg, fix string) { ps = append(ps, Problem{code, msg, fix}) }
	n := strconv.Itoa
	tl := runeCount(r.Title)
	switch {
	case tl == 0:
		add("missing_title", "The page has no <title>.",
			"Add a <title> of 10 to 60 characters that names the page topic and the business.")
	case tl < TitleMin:
		add("title_too_short", "The title is "+n(tl)+" characters; use at least 10.",
			"Write a descriptive title of 10 to 60 characters.")
	case tl > TitleMax:
		add("title_too_long", "The title is "+n(tl)+" characters; titles are cut after about 60.",
			"Shorten the title to at most 60 characters, most important words first.")
	}
	dl := runeCount(r.Description)
	switch {
	case dl == 0:
		add("missing_description", "The page has no meta description.",
			`Add <meta name="description" content="..."> with a 50 to 160 character summary of the page.`)
	case dl < DescriptionMin:
		add("description_too_short", "The meta description is "+n(dl)+" characters; use at least 50.",
			"Write a 50 to 160 character summary that answers what the page offers.")
	case dl > DescriptionMax:
		add("description_too_long", "The meta description is "+n(dl)+" characters; descriptions are cut after about 160.",
			"Shorten the meta description to at most 160 characters.")
	}
	switch {
	case r.Canonical == "":
		add("missing_canonical", "The page has no canonical link.",
			`Add <link rel="canonical" href="https://..."> with the page's preferred absolute URL.`)
	case !IsAbsoluteURL(r.Canonical):
		add("relative_canonical", `The canonical URL "`+r.Canonical+`" is not an absolute http(s) URL.`,
			"Use an absolute canonical URL with https:// and the host.")
	case IsAbsoluteURL(pageURL) && normalizeURL(r.Canonical) != normalizeURL(pageURL):
		add("canonical_mismatch", `The canonical URL "`+r.Canonical+`" points to another URL than the page ("`+pageURL+`").`,
			"Point the canonical link at this page's own URL unless the page is a deliberate duplicate.")
	}
	distinct := map[string]bool{}
	for _, c := range canonicals {
		distinct[c] = true
	}
	if len(distinct) > 1 {
		add("multiple_canonical", "The page declares "+n(len(distinct))+" different canonical URLs.",
			`Keep exactly one <link rel="canonical">.`)
	}
	if r.Noindex {
		add("noindex", "The robots meta directives include noindex, so search engines and AI answers drop the page.",
			`Remove noindex (and none) from <meta name="robots"> and <meta name="googlebot"> if the page should be found.`)
	}
	if r.Nosnippet {
		add("nosnippet", "The robots meta directives include nosnippet or max-snippet:0, so no text of the page can be quoted in answers.",
			"Remove nosnippet and max-snippet:0 unless quoting must be prevented.")
	}
	if r.Lang == "" {
		add("missing_lang", "The <html> element has no lang attribute.",
			`Declare the page language, for example <html lang="en">.`)
	}
	var missing []string
	for _, kv := range [][2]string{{"og:title", r.OG.Title}, {"og:description", r.OG.Description}, {"og:image", r.OG.Image}} {
		if kv[1] == "" {
			missing = append(missing, kv[0])
		}
	}
	if len(missing) > 0 {
		add("missing_og", "Open Graph tags are missing: "+strings.Join(missing, ", ")+".",
			`Add <meta property="og:title">, <meta property="og:description"> and <meta property="og:image"> tags.`)
	}
	if r.OG.Image != "" && !IsAbsoluteURL(r.OG.Image) {
		add("relative_og_image", `og:image "`+r.OG.Image+`" is not an absolute http(s) URL.`,
			"Use an absolute image URL with https:// and the host.")
	}
	return ps
}

// normalizeURL lowers the scheme and host, drops the default port (":80"
// for http, ":443" for https) and the fragment, and makes an empty path "/".
func normalizeURL(u string) string {
	m := reURLParts.FindStringSubmatch(u)
	if m == nil {
		return u
	}
	scheme := asciiLower(m[1])
	host := asciiLower(m[2])
	if (scheme == "http" && strings.HasSuffix(host, ":80")) || (scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	path := m[3]
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path + m[4]
}

// splitHTMLSpace splits s at runs of HTML whitespace (tab, LF, FF, CR,
// space), dropping empty fields.
func splitHTMLSpace(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && isHTMLSpace(byte(r)) })
}
