package page

import (
	"slices"
	"strconv"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/schema"
	"boxd/pipelines/sitecheck/pagecheck/text"
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
func CheckMeta(html, pageURL string) MetaReport {
	return CheckMetaTokens(html, text.Scan(html), pageURL)
}

// CheckMetaTokens is CheckMeta over toks, which must be text.Scan(html).
func CheckMetaTokens(html string, toks []text.Token, pageURL string) MetaReport {
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
		case text.TokStartTag:
			switch t.Name {
			case "svg":
				svg++
			case "html":
				if !haveLang {
					haveLang = true
					r.Lang, _ = t.Attr("lang")
					r.Lang = text.TrimASCII(r.Lang)
				}
			case "title":
				if !haveTitle && svg == 0 && k+1 < len(toks) && toks[k+1].Kind == text.TokRawText {
					haveTitle = true
					raw := toks[k+1]
					r.Title = text.CollapseSpace(text.DecodeEntities(html[raw.ContentStart:raw.ContentEnd]))
				}
			case "link":
				rel, _ := t.Attr("rel")
				// A canonical link without an href (or with an empty one) is
				// ignored, as browsers and search engines ignore it.
				if href, _ := t.Attr("href"); text.TrimASCII(href) != "" && slices.Contains(splitHTMLSpace(text.ASCIILower(rel)), "canonical") {
					canonicals = append(canonicals, text.TrimASCII(href))
				}
			case "meta":
				name, _ := t.Attr("name")
				name = text.ASCIILower(text.TrimASCII(name))
				content, _ := t.Attr("content")
				content = text.CollapseSpace(content)
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
				prop = text.ASCIILower(text.TrimASCII(prop))
				if strings.HasPrefix(prop, "og:") {
					if _, seen := og[prop]; !seen {
						og[prop] = content
					}
				}
			}
		case text.TokEndTag:
			if t.Name == "svg" && svg > 0 {
				svg--
			}
		}
	}
	r.OG = OpenGraph{Title: og["og:title"], Description: og["og:description"], Image: text.TrimASCII(og["og:image"]), Type: og["og:type"]}
	r.Robots = strings.Join(robots, ", ")
	for _, d := range strings.Split(text.ASCIILower(r.Robots), ",") {
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
	tl := text.RuneCount(r.Title)
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
	dl := text.RuneCount(r.Description)
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
	case !schema.IsAbsoluteURL(r.Canonical):
		add("relative_canonical", `The canonical URL "`+r.Canonical+`" is not an absolute http(s) URL.`,
			"Use an absolute canonical URL with https:// and the host.")
	case schema.IsAbsoluteURL(pageURL) && schema.NormalizeURL(r.Canonical) != schema.NormalizeURL(pageURL):
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
	if r.OG.Image != "" && !schema.IsAbsoluteURL(r.OG.Image) {
		add("relative_og_image", `og:image "`+r.OG.Image+`" is not an absolute http(s) URL.`,
			"Use an absolute image URL with https:// and the host.")
	}
	return ps
}

// splitHTMLSpace splits s at runs of HTML whitespace (tab, LF, FF, CR,
// space), dropping empty fields.
func splitHTMLSpace(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && text.IsHTMLSpace(byte(r)) })
}
