// Package axe runs the accessibility rule engine, axe-core (npm, pinned in
// npm/package.json), inside a page the browser engine holds, and maps its
// results to WCAG 2.2 success criteria from data_dir. The script's version
// and sha256 are what an audit's `checked` names.
package axe

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
)

// Engine is a loaded axe-core script.
type Engine struct {
	Script  string
	Version string
	SHA256  string // of the script's bytes
}

// Load reads axe-core from dir (node_modules/axe-core, or the copy a
// package installs): axe.min.js and the version in package.json.
func Load(dir string) (*Engine, error) {
	script, err := os.ReadFile(filepath.Join(dir, "axe.min.js"))
	if err != nil {
		return nil, fmt.Errorf("axe: the rule engine's script: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("axe: the rule engine's package.json: %w", err)
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil || pkg.Name != "axe-core" || pkg.Version == "" {
		return nil, fmt.Errorf("axe: %s is not axe-core's package.json", filepath.Join(dir, "package.json"))
	}
	sum := sha256.Sum256(script)
	return &Engine{Script: string(script), Version: pkg.Version, SHA256: hex.EncodeToString(sum[:])}, nil
}

// Outcomes of a rule on a page, as axe-core reports them.
const (
	Violation    = "violation"
	NeedsReview  = "incomplete" // axe could not decide (contrast over an image, …)
	Passed       = "pass"
	Inapplicable = "inapplicable"
)

// Node is one element a rule reported.
type Node struct {
	Target  []string `json:"target"` // CSS selectors, outermost document first
	HTML    string   `json:"html"`
	Summary string   `json:"failure_summary,omitempty"`
}

// Result is one rule's outcome on a page.
type Result struct {
	Rule        string   `json:"rule"`
	Outcome     string   `json:"outcome"`
	Impact      string   `json:"impact,omitempty"`
	Help        string   `json:"help"`
	HelpURL     string   `json:"help_url"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	// WCAG are the success criteria its tags name ("1.1.1"), in order.
	WCAG  []string `json:"wcag"`
	Nodes []Node   `json:"nodes"`
}

// Enabled are the rules the engine leaves off by default that the
// default run turns on: target-size, WCAG 2.2's 2.5.8 (Target Size,
// Minimum: 24 by 24 CSS pixels, or spaced so a 24 px circle round each
// touches no other).
var Enabled = []string{"target-size"}

// run is the script run in the page: axe-core's results, kept small.
const run = `(async (only, enable) => {
  const opts = {resultTypes: ["violations", "incomplete"], reporter: "v2"};
  if (only.length) opts.runOnly = {type: "rule", values: only};
  else opts.rules = Object.fromEntries(enable.map(r => [r, {enabled: true}]));
  const r = await axe.run(document, opts);
  const pick = (outcome) => (x) => ({rule: x.id, outcome, impact: x.impact || "", help: x.help, help_url: x.helpUrl,
    description: x.description, tags: x.tags,
    nodes: (x.nodes || []).map(n => ({target: n.target.map(String), html: n.html, failure_summary: n.failureSummary || ""}))});
  return [].concat(r.violations.map(pick("violation")), r.incomplete.map(pick("incomplete")),
    r.passes.map(x => ({rule: x.id, outcome: "pass", help: x.help, help_url: x.helpUrl, description: x.description, tags: x.tags, nodes: []})),
    r.inapplicable.map(x => ({rule: x.id, outcome: "inapplicable", help: x.help, help_url: x.helpUrl, description: x.description, tags: x.tags, nodes: []})));
})`

// Run injects axe-core into the tab's page and runs its default rules
// and Enabled: the violations and the rules it could not decide with
// their elements, the passed and inapplicable rules without.
func (e *Engine) Run(tab *browser.Tab) ([]Result, error) {
	return e.RunRules(tab, nil)
}

// RunRules runs only the named rules (rules the engine leaves off by
// default, like color-contrast-enhanced, run too); nil runs the default
// set and Enabled.
func (e *Engine) RunRules(tab *browser.Tab, rules []string) ([]Result, error) {
	if _, err := chromedp.Run(tab.Context(), chromedp.Evaluate[bool](e.Script+"\n;typeof axe === 'object'")); err != nil {
		return nil, fmt.Errorf("axe: inject the rule engine: %w", err)
	}
	return e.run(tab, rules)
}

func (e *Engine) run(tab *browser.Tab, only []string) ([]Result, error) {
	if only == nil {
		only = []string{}
	}
	arg, err := json.Marshal(only)
	if err != nil {
		return nil, err
	}
	enable, err := json.Marshal(Enabled)
	if err != nil {
		return nil, err
	}
	rs, err := chromedp.Run(tab.Context(), chromedp.Evaluate[[]Result](run+"("+string(arg)+", "+string(enable)+")", chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("axe: run the rules: %w", err)
	}
	for i := range rs {
		if rs[i].Nodes == nil {
			rs[i].Nodes = []Node{}
		}
	}
	if err := refine(tab, rs); err != nil {
		return nil, err
	}
	for i := range rs {
		rs[i].WCAG = Criteria(rs[i].Tags)
	}
	return rs, nil
}

var scTag = regexp.MustCompile(`^wcag(\d)(\d)(\d{1,2})$`)

// Criteria are the success criteria axe-core's tags name: "wcag111" is
// 1.1.1 and "wcag1412" 1.4.12; level tags ("wcag2aa") name none.
func Criteria(tags []string) []string {
	var out []string
	for _, t := range tags {
		if m := scTag.FindStringSubmatch(t); m != nil {
			out = append(out, m[1]+"."+m[2]+"."+strings.TrimLeft(m[3], "0"))
		}
	}
	return out
}

// Criterion is one WCAG 2.2 success criterion.
type Criterion struct {
	SC    string `json:"sc"`
	Name  string `json:"name"`
	Level string `json:"level"`
	URL   string `json:"url"`
}

// LoadCriteria reads data_dir's wcag/wcag22-success-criteria.csv (num,
// title, level, …, url) into criteria by number.
func LoadCriteria(dataDir string) (map[string]Criterion, error) {
	f, err := os.Open(filepath.Join(dataDir, "wcag", "wcag22-success-criteria.csv"))
	if err != nil {
		return nil, fmt.Errorf("axe: WCAG 2.2 criteria: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("axe: WCAG 2.2 criteria: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"num", "title", "level", "url"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("axe: WCAG 2.2 criteria: no %s column", need)
		}
	}
	out := map[string]Criterion{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("axe: WCAG 2.2 criteria: %w", err)
		}
		out[rec[col["num"]]] = Criterion{SC: rec[col["num"]], Name: rec[col["title"]], Level: rec[col["level"]], URL: rec[col["url"]]}
	}
	if len(out) < 80 {
		return nil, fmt.Errorf("axe: WCAG 2.2 criteria: %d rows, want the 86 of WCAG 2.2", len(out))
	}
	return out, nil
}
