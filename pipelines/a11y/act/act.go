// Package act runs the audit's checks over the W3C ACT Rules test cases
// (../shared/data/act-rules: testcases.json and the test-case files) and
// reports, for each approved rule, how the checks' outcomes compare with
// the expected ones, in the terms of the ACT implementation reports:
// complete, partial or minimal (consistent), inconsistent, untested.
package act

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/pipelines/a11y/axe"
)

// Outcomes of a test case.
const (
	Passed       = "passed"
	Failed       = "failed"
	Inapplicable = "inapplicable"
	CantTell     = "cantTell"
	Untested     = "untested"
)

// Consistency levels of a rule (the ACT implementation reports' terms).
const (
	Complete     = "complete"
	Partial      = "partial"
	Minimal      = "minimal"
	Inconsistent = "inconsistent"
	NotTested    = "untested"
)

// Prefix is the URL path the test cases expect their folder at (they
// load shared assets by root-relative URLs under it).
const Prefix = "/WAI/content-assets/wcag-act-rules/"

// Case is one test case of testcases.json.
type Case struct {
	RuleID   string `json:"ruleId"`
	RuleName string `json:"ruleName"`
	ID       string `json:"testcaseId"`
	Title    string `json:"testcaseTitle"`
	Expected string `json:"expected"`
	Approved bool   `json:"approved"`
	// RuleApproved: the rule is approved (a proposed rule's cases may
	// be approved or not).
	RuleApproved bool   `json:"-"`
	Path         string `json:"relativePath"`
}

// Load reads dir/testcases.json and keeps the test cases of approved
// rules, and of the proposed rules boxd has a check for (the keyboard
// trap), whose files are present.
func Load(dir string) ([]Case, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "testcases.json"))
	if err != nil {
		return nil, fmt.Errorf("act: %w", err)
	}
	var doc struct {
		Testcases []Case `json:"testcases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("act: testcases.json: %w", err)
	}
	approved := map[string]bool{}
	for _, c := range doc.Testcases {
		approved[c.RuleID] = approved[c.RuleID] || c.Approved
	}
	var out []Case
	for _, c := range doc.Testcases {
		c.RuleApproved = approved[c.RuleID]
		if _, checked := procedures[c.RuleID]; !c.Approved && (c.RuleApproved || !checked) {
			continue // an approved rule's unapproved case, or a proposed rule boxd does not check
		}
		if strings.Contains(c.Path, "..") {
			return nil, fmt.Errorf("act: testcases.json names %q, outside the folder", c.Path)
		}
		if _, err := os.Stat(filepath.Join(dir, c.Path)); err != nil {
			return nil, fmt.Errorf("act: test case %s of rule %s: %w", c.ID, c.RuleID, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("act: testcases.json holds no approved test case")
	}
	return out, nil
}

// Result is one test case's outcome.
type Result struct {
	Case
	Outcome string `json:"outcome"`
	// Correct: the outcome is what the rule expects (cantTell and
	// untested are neither correct nor wrong).
	Correct bool   `json:"correct"`
	Note    string `json:"note,omitempty"`
}

// Rule is one rule's line of the report.
type Rule struct {
	ID          string   `json:"rule_id"`
	Name        string   `json:"rule_name"`
	Approved    bool     `json:"approved"`
	Procedure   string   `json:"procedure"`
	Consistency string   `json:"consistency"`
	Cases       int      `json:"cases"`
	Correct     int      `json:"correct"`
	FalsePos    int      `json:"false_positives"`
	FalseNeg    int      `json:"false_negatives"`
	CantTell    int      `json:"cant_tell"`
	Untested    int      `json:"untested"`
	Results     []Result `json:"results"`
}

// Report is the whole run.
// The counts are of the approved rules only.
type Report struct {
	RuleEngine   string  `json:"rule_engine"`
	Rules        []Rule  `json:"rules"`
	Consistent   int     `json:"consistent"`
	Inconsistent int     `json:"inconsistent"`
	Untested     int     `json:"untested"`
	ElapsedS     float64 `json:"elapsed_s"`
}

// Consistency grades a rule's outcomes as the ACT implementation reports
// do: a failed outcome on a passed or inapplicable case makes it
// inconsistent; complete when every case is tested, every failed case
// reported failed (or cantTell) and at least one failed; partial when at
// least one failed case is reported failed; minimal when it only says
// cantTell and never fails an inapplicable case.
func Consistency(rs []Result) string {
	var falsePos, falseNeg, untested, truePos, cantTell, inappOK = false, false, false, false, false, true
	tested := false
	for _, r := range rs {
		switch {
		case r.Expected != Failed && r.Outcome == Failed:
			falsePos = true
		case r.Expected == Failed && r.Outcome == Failed:
			truePos = true
		case r.Expected == Failed && (r.Outcome == Passed || r.Outcome == Inapplicable || r.Outcome == Untested):
			falseNeg = true
		}
		if r.Outcome == Untested {
			untested = true
		} else {
			tested = true
		}
		if r.Outcome == CantTell {
			cantTell = true
		}
		if r.Expected == Inapplicable && r.Outcome != Passed && r.Outcome != Inapplicable {
			inappOK = false
		}
	}
	switch {
	case !tested:
		return NotTested
	case falsePos:
		return Inconsistent
	case truePos && !untested && !falseNeg:
		return Complete
	case truePos:
		return Partial
	case cantTell && inappOK:
		return Minimal
	}
	return Inconsistent
}

// Runner runs the test cases in chromium.
type Runner struct {
	Pool *browser.Pool
	Axe  *axe.Engine
	// Dir is the act-rules folder (testcases.json, testcases/,
	// test-assets/).
	Dir string
	// Tabs run at once (0: the pool's slots are shared by 2).
	Tabs int
	// CaseTimeout bounds one test case (0: 20 s).
	CaseTimeout time.Duration
}

// Run runs cases (all approved rules' unless filtered by the caller) and
// grades each rule; progress, if not nil, hears each case as it ends.
func (r *Runner) Run(ctx context.Context, cases []Case, progress func(Result)) (*Report, error) {
	start := time.Now()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("act: serve the test cases: %w", err)
	}
	srv := &http.Server{Handler: http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServer(http.Dir(r.Dir))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	tabs := r.Tabs
	if tabs <= 0 {
		tabs = 2
	}
	timeout := r.CaseTimeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	jobs := make(chan int)
	results := make([]Result, len(cases))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range tabs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{r: r, base: base, timeout: timeout}
			defer w.close()
			for i := range jobs {
				res := w.run(ctx, cases[i])
				results[i] = res
				if progress != nil {
					mu.Lock()
					progress(res)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range cases {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Report{RuleEngine: "axe-core " + r.Axe.Version}
	byRule := map[string][]Result{}
	var order []string
	for _, res := range results {
		if _, ok := byRule[res.RuleID]; !ok {
			order = append(order, res.RuleID)
		}
		byRule[res.RuleID] = append(byRule[res.RuleID], res)
	}
	for _, id := range order {
		rs := byRule[id]
		line := Rule{ID: id, Name: rs[0].RuleName, Approved: rs[0].RuleApproved, Procedure: procedureFor(id).Name, Consistency: Consistency(rs), Cases: len(rs), Results: rs}
		for _, x := range rs {
			switch {
			case x.Correct:
				line.Correct++
			case x.Outcome == CantTell:
				line.CantTell++
			case x.Outcome == Untested:
				line.Untested++
			case x.Outcome == Failed:
				line.FalsePos++
			default:
				line.FalseNeg++
			}
		}
		rep.Rules = append(rep.Rules, line)
		if !line.Approved {
			continue // proposed rules are listed, not counted
		}
		switch line.Consistency {
		case Complete, Partial:
			rep.Consistent++
		case Inconsistent:
			rep.Inconsistent++
		default:
			rep.Untested++
		}
	}
	sort.SliceStable(rep.Rules, func(i, j int) bool { return rep.Rules[i].ID < rep.Rules[j].ID })
	rep.ElapsedS = float64(time.Since(start).Milliseconds()) / 1000
	return rep, nil
}

// worker is one tab running test cases one after another (a fresh tab
// after a case that timed out or crashed).
type worker struct {
	r       *Runner
	base    string
	timeout time.Duration
	tab     *browser.Tab
}

func (w *worker) close() {
	if w.tab != nil {
		w.tab.Close()
		w.tab = nil
	}
}

func (w *worker) run(ctx context.Context, c Case) Result {
	res := Result{Case: c, Outcome: Untested}
	p := procedureFor(c.RuleID)
	if p.Name == "" {
		res.Note = "no check of boxd's answers this rule"
		return res
	}
	if w.tab == nil {
		tab, err := w.r.Pool.Open(ctx, browser.Policy{Network: browser.ReadOnly, Origins: []string{w.base}, Fetch: browser.ClientFetcher{}})
		if err != nil {
			res.Note = err.Error()
			return res
		}
		w.tab = tab
	}
	type done struct {
		outcome, note string
	}
	ch := make(chan done, 1)
	tab := w.tab
	go func() {
		o, note, err := p.decide(ctx, w.r.Axe, tab, w.base+Prefix+c.Path)
		if err != nil {
			ch <- done{Untested, err.Error()}
			return
		}
		ch <- done{o, note}
	}()
	select {
	case d := <-ch:
		res.Outcome, res.Note = d.outcome, d.note
	case <-time.After(w.timeout):
		res.Note = fmt.Sprintf("timed out after %s", w.timeout)
		w.close()
	case <-ctx.Done():
		w.close()
	}
	res.Correct = res.Outcome == c.Expected || (c.Expected != Failed && (res.Outcome == Passed || res.Outcome == Inapplicable))
	return res
}

// load opens url in tab and waits for it to settle.
func load(tab *browser.Tab, url string) error {
	return tab.Do(chromedp.Navigate(url), chromedp.Sleep(50*time.Millisecond))
}

// fromAxe is a rule's outcome from the axe rules that implement it: failed
// when one found a violation, cantTell when one could not decide, passed
// when one passed, else inapplicable.
func fromAxe(rs []axe.Result, rules []string) string {
	out := Inapplicable
	for _, x := range rs {
		if !slices.Contains(rules, x.Rule) {
			continue
		}
		switch {
		case x.Outcome == axe.Violation:
			return Failed
		case x.Outcome == axe.NeedsReview:
			out = CantTell
		case x.Outcome == axe.Passed && out == Inapplicable:
			out = Passed
		}
	}
	return out
}
