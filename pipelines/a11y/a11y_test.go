package a11y

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/engine/browser"
	"boxd/internal/records"
	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/findings"
)

type events struct{ types []string }

func (e *events) Emit(typ string, _ any) { e.types = append(e.types, typ) }

func service(t *testing.T) *Service {
	t.Helper()
	return serviceB(t)
}

// serviceB is the audit service for a test or a benchmark: chromium, the
// npm rule engine, the WCAG table from the test data.
func serviceB(t testing.TB) *Service {
	t.Helper()
	p, err := browser.NewPool(browser.Options{Slots: 1, TabTimeout: 2 * time.Minute})
	if errors.Is(err, browser.ErrNoBrowser) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	e, err := axe.Load(filepath.Join("axe", "npm", "node_modules", "axe-core"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		t.Skip("BOXD_TEST_DATA is not set")
	}
	crit, err := axe.LoadCriteria(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Service{Browser: p, Axe: e, Criteria: crit, Key: attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, 32)))}
}

func titles(fs []findings.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Priority+" "+f.Source+": "+f.Title)
	}
	return strings.Join(out, "\n")
}

// TestSamples: the shop with issues yields its planted problems with the
// right priority and source (the unreachable add-to-cart first), the
// product page its own, the clean shop none; each audit is signed, and
// its events come in the contract's order.
func TestSamples(t *testing.T) {
	s := service(t)
	audit := func(id string) (*Result, *events) {
		ev := &events{}
		r, err := s.Audit(context.Background(), Request{SampleID: id}, ev, Caller{})
		if err != nil {
			t.Fatal(err)
		}
		return r, ev
	}
	shop, ev := audit(SampleShopWithIssues)
	got := titles(shop.Findings)
	for _, want := range []string{
		`P1 keyboard pass: "Add to cart" cannot be reached with the keyboard`,
		"P1 rule-engine: Buttons must have discernible text",
		"rule-engine: Images must have alternative text",
		"rule-engine: <html> element must have a lang attribute",
		"rule-engine: Elements must meet minimum color contrast ratio thresholds",
		`P2 keyboard pass: Focus on "Checkout" cannot be seen`,
		`form pass: The "coupon" field has no label`,
		"form pass: The form can be sent empty",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("shop-with-issues lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(got, "P1") || shop.Checked.RuleEngine.Version != "4.14.1" || shop.Checked.TabStops == 0 || shop.Checked.FormsSubmitted != 2 || shop.Record == nil {
		t.Errorf("shop %+v", shop.Checked)
	}
	if strings.Join(ev.types, " ") != "start page names errors "+strings.Repeat("finding ", len(shop.Findings))+"result" {
		t.Errorf("events %v", ev.types)
	}
	// The record verifies as boxd verify checks it, and a changed finding
	// does not.
	raw, err := json.Marshal(shop.Record)
	if err != nil {
		t.Fatal(err)
	}
	if v := records.Verify(raw, s.Key.PublicKey()); !v.OK {
		t.Errorf("the record does not verify: %+v", v)
	}
	if v := records.Verify(bytes.Replace(raw, []byte("Add to cart"), []byte("Add to kart"), 1), s.Key.PublicKey()); v.OK {
		t.Error("a changed record verifies")
	}
	product, _ := audit(SampleProductPage)
	pg := titles(product.Findings)
	for _, want := range []string{`P1 keyboard pass: The keyboard is trapped at "Gift message"`, `keyboard pass: "M" cannot be reached with the keyboard`, `P1 form pass: The "qty" field has no label`, "rule-engine: Links must have discernible text"} {
		if !strings.Contains(pg, want) {
			t.Errorf("product-page lacks %q:\n%s", want, pg)
		}
	}
	if strings.Contains(pg, `"Add to cart" cannot be reached`) || strings.Contains(pg, "Form elements must have labels") {
		t.Errorf("product-page: the button beyond the trap counted unreachable, or the unlabelled field twice:\n%s", pg)
	}
	clean, _ := audit(SampleCleanShop)
	if len(clean.Findings) != 0 {
		t.Errorf("clean-shop findings:\n%s", titles(clean.Findings))
	}
}

// TestContrastFromPixels: text over gradients, which the rule engine
// cannot decide, is measured from the rendered pixels: grey on grey is a
// finding that gives the measured ratio and colours; black on near-white
// is settled and leaves no advisory.
func TestContrastFromPixels(t *testing.T) {
	s := service(t)
	yes := true
	page := `<!doctype html><html lang="en"><head><title>Sale</title></head><body><main><h1>Sale</h1>
<p id="faint" style="background:linear-gradient(#888888,#8a8a8a);color:#777777;font-size:16px">Free shipping on orders over 50 euros</p>
<p id="clear" style="background:linear-gradient(#ffffff,#fdfdfd);color:#000000;font-size:16px">Returns are free for 30 days</p>
</main></body></html>`
	out, err := s.Audit(context.Background(), Request{HTML: page, Synthetic: &yes}, &events{}, Caller{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Record.Meta["synthetic"]; got != "true" {
		t.Errorf("the record's meta synthetic is %q for a page sent with synthetic: true", got)
	}
	var faint *findings.Finding
	for i, f := range out.Findings {
		if f.Element.Selector == "#faint" {
			faint = &out.Findings[i]
		}
	}
	if faint == nil || !strings.Contains(faint.Detail, "the rendered pixels measure 1.") || !strings.Contains(faint.Detail, "under the 4.5:1 required") || faint.Source != findings.SourceRules {
		t.Fatalf("faint: %+v\nfindings:\n%s\nadv %+v", faint, titles(out.Findings), out.Advisories)
	}
	for _, a := range append(out.Advisories, out.Findings...) {
		if a.Element.Selector == "#clear" {
			t.Errorf("black on white left a finding or advisory: %+v", a)
		}
	}
}
