package a11y

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/pipelines/a11y/forms"
	"boxd/pipelines/a11y/keyboard"
	"boxd/pipelines/a11y/motion"
)

// BenchmarkPasses times each pass on the shop-with-issues sample (one
// page, 2 cores in the reference run): the page load in a fresh browser,
// the rule engine, the motion check's wait, the keyboard pass and the
// form pass, as seconds per page (make bench).
func BenchmarkPasses(b *testing.B) {
	s := serviceB(b)
	var load, rules, moving, keys, form time.Duration
	for range b.N {
		t0 := time.Now()
		tab, err := s.Browser.Open(context.Background(), browser.Policy{Network: browser.Offline})
		if err != nil {
			b.Fatal(err)
		}
		if err := motion.Prepare(tab); err != nil {
			b.Fatal(err)
		}
		if err := tab.LoadHTML(Sample(SampleShopWithIssues)); err != nil {
			b.Fatal(err)
		}
		if err := tab.Do(chromedp.WaitReady("body")); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := s.Axe.Run(tab); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		// The motion check waits for the page's sixth second: what it
		// adds is what the passes before it did not already take.
		if _, err := motion.Check(context.Background(), tab); err != nil {
			b.Fatal(err)
		}
		t2m := time.Now()
		if _, err := keyboard.Pass(context.Background(), tab, 0); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := forms.Pass(context.Background(), tab); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		tab.Close()
		load, rules, moving, keys, form = load+t1.Sub(t0), rules+t2.Sub(t1), moving+t2m.Sub(t2), keys+t3.Sub(t2m), form+t4.Sub(t3)
	}
	n := float64(b.N)
	b.ReportMetric(load.Seconds()/n, "s_load/page")
	b.ReportMetric(rules.Seconds()/n, "s_rules/page")
	b.ReportMetric(moving.Seconds()/n, "s_motion/page")
	b.ReportMetric(keys.Seconds()/n, "s_keyboard/page")
	b.ReportMetric(form.Seconds()/n, "s_forms/page")
	b.Logf("per page: load %.2fs, rule engine %.2fs, motion wait %.2fs, keyboard pass %.2fs, form pass %.2fs", load.Seconds()/n, rules.Seconds()/n, moving.Seconds()/n, keys.Seconds()/n, form.Seconds()/n)
}
