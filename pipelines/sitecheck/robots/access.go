package robots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Crawler is a known AI crawler: its robots.txt product token, who runs it,
// and what it fetches for ("training", "search" or "user request").
type Crawler struct {
	Token   string `json:"token"`
	Owner   string `json:"owner"`
	Purpose string `json:"purpose"`
}

// The purposes a Crawler may have.
const (
	PurposeTraining    = "training"
	PurposeSearch      = "search"
	PurposeUserRequest = "user request"
)

// AICrawlers are the crawlers robotsAccess reports on by default, in report
// order.
var AICrawlers = []Crawler{
	{"GPTBot", "OpenAI", PurposeTraining},
	{"OAI-SearchBot", "OpenAI", PurposeSearch},
	{"ChatGPT-User", "OpenAI", PurposeUserRequest},
	{"ClaudeBot", "Anthropic", PurposeTraining},
	{"Claude-User", "Anthropic", PurposeUserRequest},
	{"Claude-SearchBot", "Anthropic", PurposeSearch},
	{"PerplexityBot", "Perplexity", PurposeSearch},
	{"Perplexity-User", "Perplexity", PurposeUserRequest},
	{"Google-Extended", "Google", PurposeTraining},
	{"Applebot-Extended", "Apple", PurposeTraining},
	{"CCBot", "Common Crawl", PurposeTraining},
	{"Bytespider", "ByteDance", PurposeTraining},
	{"meta-externalagent", "Meta", PurposeTraining},
	{"Amazonbot", "Amazon", PurposeSearch},
}

// AccessInput is the robotsAccess input. Crawlers defaults to every
// AICrawlers token in order and Paths to ["/"]; an absent, null or empty list
// takes the default.
type AccessInput struct {
	RobotsTxt string   `json:"robots_txt"`
	Status    int      `json:"status"`
	Crawlers  []string `json:"crawlers,omitempty"`
	Paths     []string `json:"paths,omitempty"`
}

// AccessReport is the robotsAccess output.
type AccessReport struct {
	Fetch    string          `json:"fetch"` // ok, not_found or unreachable
	Crawlers []CrawlerAccess `json:"crawlers"`
}

// CrawlerAccess is one crawler's access, path by path, in input order.
type CrawlerAccess struct {
	Crawler    string       `json:"crawler"` // as given
	Owner      string       `json:"owner"`   // "" for a crawler not in AICrawlers
	Purpose    string       `json:"purpose"` // "" for a crawler not in AICrawlers
	Paths      []PathAccess `json:"paths"`
	AllAllowed bool         `json:"all_allowed"`
	AllBlocked bool         `json:"all_blocked"`
}

// PathAccess is the decision for one path.
type PathAccess struct {
	Path    string `json:"path"` // as given
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`
}

// RobotsAccess reports which crawlers the fetched robots.txt lets fetch which
// paths. It is deterministic: crawlers and paths keep the given order,
// duplicates included.
func RobotsAccess(in AccessInput) AccessReport {
	crawlers := in.Crawlers
	if len(crawlers) == 0 {
		crawlers = make([]string, len(AICrawlers))
		for i, c := range AICrawlers {
			crawlers[i] = c.Token
		}
	}
	paths := in.Paths
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	r := FromStatus(in.Status, []byte(in.RobotsTxt))
	rep := AccessReport{
		Fetch:    FetchResult(in.Status),
		Crawlers: make([]CrawlerAccess, 0, len(crawlers)),
	}
	for _, name := range crawlers {
		ca := CrawlerAccess{
			Crawler:    name,
			Paths:      make([]PathAccess, 0, len(paths)),
			AllAllowed: true,
			AllBlocked: true,
		}
		if c, ok := LookupCrawler(name); ok {
			ca.Owner, ca.Purpose = c.Owner, c.Purpose
		}
		for _, p := range paths {
			d := r.Check(name, p)
			ca.Paths = append(ca.Paths, PathAccess{Path: p, Allowed: d.Allowed, Rule: d.Rule})
			if d.Allowed {
				ca.AllBlocked = false
			} else {
				ca.AllAllowed = false
			}
		}
		rep.Crawlers = append(rep.Crawlers, ca)
	}
	return rep
}

// LookupCrawler finds a crawler of AICrawlers by its token, compared ASCII
// case-insensitively as a whole string ("gptbot" finds GPTBot, "GPTBot/1.1"
// finds nothing).
func LookupCrawler(token string) (Crawler, bool) {
	lt := asciiLower(token)
	for _, c := range AICrawlers {
		if asciiLower(c.Token) == lt {
			return c, true
		}
	}
	return Crawler{}, false
}

// KitFunctions are this package's kit functions by name.
func KitFunctions() map[string]func(json.RawMessage) (any, error) {
	return map[string]func(json.RawMessage) (any, error){
		"robotsAccess": robotsAccessKit,
	}
}

// robotsAccessKit decodes a robotsAccess input strictly: unknown fields,
// a missing status and trailing data are errors.
func robotsAccessKit(raw json.RawMessage) (any, error) {
	var in struct {
		RobotsTxt *string  `json:"robots_txt"`
		Status    *int     `json:"status"`
		Crawlers  []string `json:"crawlers"`
		Paths     []string `json:"paths"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, kitInputError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("robotsAccess: bad input: unexpected data after the input object")
	}
	if in.Status == nil {
		return nil, errors.New(`robotsAccess: bad input: "status" is required (the HTTP status of the robots.txt fetch, 0 when no answer came)`)
	}
	ai := AccessInput{Status: *in.Status, Crawlers: in.Crawlers, Paths: in.Paths}
	if in.RobotsTxt != nil {
		ai.RobotsTxt = *in.RobotsTxt
	}
	return RobotsAccess(ai), nil
}

const kitFields = "robots_txt, status, crawlers, paths"

// kitInputError words a decoding error of the robotsAccess input the same
// way in every kit language: what is wrong, in JSON terms.
func kitInputError(err error) error {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return errors.New("robotsAccess: bad input: the input must be a JSON object with the fields " + kitFields)
	case errors.As(err, &te):
		want := map[string]string{"robots_txt": "a string", "status": "an integer", "crawlers": "a list of strings", "paths": "a list of strings"}[te.Field]
		return fmt.Errorf("robotsAccess: bad input: %q must be %s, not %s", te.Field, want, jsonKind(te.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("robotsAccess: bad input: unknown field %s; the allowed fields are %s", strings.TrimPrefix(err.Error(), "json: unknown field "), kitFields)
	}
	return fmt.Errorf("robotsAccess: bad input: the input is not valid JSON: %v", err)
}

// jsonKind names the JSON kind of an UnmarshalTypeError value.
func jsonKind(v string) string {
	switch {
	case v == "bool":
		return "a JSON boolean"
	case v == "array", v == "object":
		return "a JSON " + v
	case strings.HasPrefix(v, "number "):
		return "a number with a fraction or exponent"
	}
	return "a JSON " + v
}
