package axe

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
)

func engine(t *testing.T) *Engine {
	t.Helper()
	e, err := Load(filepath.Join("npm", "node_modules", "axe-core"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (make deps installs axe-core)", err)
		}
		t.Skip(err)
	}
	return e
}

func tab(t *testing.T) *browser.Tab {
	t.Helper()
	return browsertest.Tab(t, browser.Policy{Network: browser.Offline})
}

// TestRunFindsPlantedProblems: axe-core, injected into an offline page with
// planted problems, reports each with its WCAG criteria (an image without
// a text alternative, 1.1.1; a button without a name, 4.1.2; no page
// language, 3.1.1; grey text on grey, 1.4.3), and a clean page none of
// them; its version and the script's hash are the pinned package's.
func TestRunFindsPlantedProblems(t *testing.T) {
	e := engine(t)
	if e.Version != "4.14.1" || len(e.SHA256) != 64 {
		t.Fatalf("engine %s %s", e.Version, e.SHA256)
	}
	tb := tab(t)
	page := `<!doctype html><html><head><title>Shop</title></head><body><main>
<h1>Shoes</h1><img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" width="40" height="40">
<button></button><p style="color:#aaa;background:#bbb">Sale ends soon</p></main></body></html>`
	if err := tb.LoadHTML(page); err != nil {
		t.Fatal(err)
	}
	rs, err := e.Run(tb)
	if err != nil {
		t.Fatal(err)
	}
	violations := map[string][]string{}
	for _, r := range rs {
		if r.Outcome == Violation {
			violations[r.Rule] = r.WCAG
			if len(r.Nodes) == 0 || r.Help == "" || r.HelpURL == "" {
				t.Errorf("%s: %+v", r.Rule, r)
			}
		}
	}
	for rule, sc := range map[string]string{"image-alt": "1.1.1", "button-name": "4.1.2", "html-has-lang": "3.1.1", "color-contrast": "1.4.3"} {
		if !slices.Contains(violations[rule], sc) {
			t.Errorf("%s not reported with %s: %v", rule, sc, violations)
		}
	}
	clean := `<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><h1>Shoes</h1>
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" alt="Red running shoe" width="40" height="40">
<button>Add to cart</button><p>Sale ends soon</p></main></body></html>`
	if err := tb.LoadHTML(clean); err != nil {
		t.Fatal(err)
	}
	rs, err = e.Run(tb)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Outcome == Violation {
			t.Errorf("the clean page: %s (%v)", r.Rule, r.Nodes)
		}
	}
}

// TestCriteria: axe-core's tags to success criteria, and data_dir's WCAG
// 2.2 table (86 criteria) giving each its name, level and link.
func TestCriteria(t *testing.T) {
	if got := Criteria([]string{"cat.text-alternatives", "wcag2a", "wcag111", "wcag1412", "wcag21aa", "best-practice"}); !slices.Equal(got, []string{"1.1.1", "1.4.12"}) {
		t.Errorf("criteria %v", got)
	}
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		t.Skip("BOXD_TEST_DATA is not set")
	}
	cs, err := LoadCriteria(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := cs["1.4.3"]; len(cs) != 86 || c.Name != "Contrast (Minimum)" || c.Level != "AA" || c.URL != "https://www.w3.org/TR/WCAG22/#contrast-minimum" {
		t.Errorf("%d criteria; 1.4.3 %+v", len(cs), c)
	}
}
