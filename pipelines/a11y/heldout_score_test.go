package a11y

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
	"boxd/pipelines/a11y/findings"
)

// heldOut is heldout/testdata/truth.json: shop pages written without
// reading this package (see heldout/testdata/README.md), each planted
// failure with its success criterion and element.
type heldOut struct {
	Pages []struct {
		File     string `json:"file"`
		Clean    bool   `json:"clean"`
		Failures []struct {
			ID       string `json:"id"`
			SC       string `json:"sc"`
			Selector string `json:"selector"`
			What     string `json:"what"`
			// AlsoSC are other criteria a right finding may name;
			// Related other elements it may land on.
			AlsoSC  []string `json:"also_sc"`
			Related []string `json:"related"`
		} `json:"failures"`
	} `json:"pages"`
}

// related says, in the page, for each pair of selectors whether they
// find the same element or one inside the other.
const related = `((pairs) => pairs.map(([a, b]) => { try { const x = document.querySelector(a), y = document.querySelector(b);
  return !!x && !!y && (x === y || x.contains(y) || y.contains(x)); } catch (e) { return false; } }))`

// TestHeldOutShop scores the audit (no model: judge false) on the
// held-out shop pages: a planted failure is found when a finding names
// its success criterion (or one the tester allowed beside it) on its
// element (or one inside or around it, or one the tester allowed); a
// finding that matches no planted failure is counted false (on the clean
// pages, every finding). axe-core alone (its violations, by its own
// success-criterion tags) is scored beside it. The figures are logged;
// the floors hold what the audit reached, so a change that loses a
// finding or adds a false one fails here.
func TestHeldOutShop(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("heldout", "testdata", "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth heldOut
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	s := service(t)
	no, yes := false, true
	var planted, found, axeFound, falseN, axeFalse int
	var report []string
	for _, pg := range truth.Pages {
		html, err := os.ReadFile(filepath.Join("heldout", "testdata", pg.File))
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Audit(context.Background(), Request{HTML: string(html), Synthetic: &yes, Judge: &no}, &events{}, Caller{})
		if err != nil {
			t.Fatalf("%s: %v", pg.File, err)
		}
		// axe-core alone, and the relations between selectors, in a tab
		// of the same page.
		tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
		if err := tab.LoadHTML(string(html)); err != nil {
			t.Fatal(err)
		}
		rules, err := s.Axe.Run(tab)
		if err != nil {
			t.Fatal(err)
		}
		type hit struct {
			sel string
			scs []string
			fi  *findings.Finding
		}
		var ours, axes []hit
		for i, f := range res.Findings {
			var scs []string
			for _, c := range f.WCAG {
				scs = append(scs, c.SC)
			}
			ours = append(ours, hit{f.Element.Selector, scs, &res.Findings[i]})
		}
		for _, r := range rules {
			if r.Outcome != "violation" {
				continue
			}
			for _, n := range r.Nodes {
				if len(n.Target) > 0 {
					axes = append(axes, hit{sel: n.Target[len(n.Target)-1], scs: r.WCAG})
				}
			}
		}
		// Each failure's elements: its own and those a right finding
		// may land on.
		var elems [][]string
		width := 0
		for _, f := range pg.Failures {
			elems = append(elems, append([]string{f.Selector}, f.Related...))
			width += 1 + len(f.Related)
		}
		pairs := [][2]string{}
		for _, h := range append(slices.Clone(ours), axes...) {
			for _, es := range elems {
				for _, e := range es {
					pairs = append(pairs, [2]string{h.sel, e})
				}
			}
		}
		arg, _ := json.Marshal(pairs)
		rel, err := chromedp.Run(tab.Context(), chromedp.Evaluate[[]bool](related+"("+string(arg)+")"))
		if err != nil {
			t.Fatal(err)
		}
		tab.Close()
		match := func(i int, h hit) []bool { // which planted failures hit h matches
			out := make([]bool, len(pg.Failures))
			k := i * width
			for j, f := range pg.Failures {
				sc := slices.Contains(h.scs, f.SC)
				for _, a := range f.AlsoSC {
					sc = sc || slices.Contains(h.scs, a)
				}
				for range elems[j] {
					out[j] = out[j] || sc && rel[k]
					k++
				}
			}
			return out
		}
		got, axeGot := make([]bool, len(pg.Failures)), make([]bool, len(pg.Failures))
		var falses, axeFalses []string
		for i, h := range ours {
			m := match(i, h)
			if !slices.Contains(m, true) {
				falses = append(falses, fmt.Sprintf("%s %s %v %q at %s", h.fi.Priority, h.fi.Source, h.scs, h.fi.Title, h.sel))
			}
			for j := range m {
				got[j] = got[j] || m[j]
			}
		}
		for i, h := range axes {
			m := match(len(ours)+i, h)
			if !slices.Contains(m, true) {
				axeFalses = append(axeFalses, fmt.Sprintf("%v at %s", h.scs, h.sel))
			}
			for j := range m {
				axeGot[j] = axeGot[j] || m[j]
			}
		}
		var missed []string
		n, an := 0, 0
		for j, f := range pg.Failures {
			if got[j] {
				n++
			} else {
				missed = append(missed, f.ID+" "+f.SC+" "+f.Selector)
			}
			if axeGot[j] {
				an++
			}
		}
		planted += len(pg.Failures)
		found, axeFound, falseN, axeFalse = found+n, axeFound+an, falseN+len(falses), axeFalse+len(axeFalses)
		report = append(report, fmt.Sprintf("%s: %d of %d found (axe-core alone %d), %d false (axe-core alone %d)\n    missed: %v\n    false: %s",
			pg.File, n, len(pg.Failures), an, len(falses), len(axeFalses), missed, strings.Join(falses, "; ")))
	}
	t.Logf("held-out shop pages:\n  %s", strings.Join(report, "\n  "))
	t.Logf("TOTAL: %d of %d planted failures found, %d missed, %d false findings; axe-core alone: %d found, %d false", found, planted, planted-found, falseN, axeFound, axeFalse)
	if planted != 40 {
		t.Errorf("the held-out set plants %d failures, not 40", planted)
	}
	if found < heldOutFloor || falseN > heldOutFalseCeiling {
		t.Errorf("found %d (floor %d), false %d (ceiling %d)", found, heldOutFloor, falseN, heldOutFalseCeiling)
	}
}

// The held-out figures the audit reached (docs/decisions.md, issue 33):
// 29 of 40 found and 2 false findings (axe-core alone 14 and 0). Before
// issue 33's work the same pages gave 18 found and 74 false. The bounds
// leave one finding of room either way: a carousel that advances while
// the keyboard pass walks can add or take one on a loaded machine.
const (
	heldOutFloor        = 28
	heldOutFalseCeiling = 3
)
