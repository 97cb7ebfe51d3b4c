package chart

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"boxd/engine/attest"
)

func key(seed byte) *attest.Key {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	return attest.NewKey(ed25519.NewKeyFromSeed(s))
}

// TestReceiptRejectsTampering: a signed chart result verifies; changing
// the data, the image, the result id or the signer fails the check that
// names it.
func TestReceiptRejectsTampering(t *testing.T) {
	k := key(1)
	m := 14.2
	fresh := func() *Result {
		r := &Result{ID: "chart-1", Method: "geometry", Image: Image{SHA256: "aa", Type: "image/png", Width: 10, Height: 10, PixelSHA256: "bb"},
			Chart:    &Chart{Type: "kaplan_meier", Series: []Series{{Name: "Arm A", Median: &m, Steps: []Step{{0, 1}}}}, AtRisk: []RiskRow{{Label: "Arm A", Times: []float64{0, 6}, Counts: []int{100, 80}}}},
			Receipts: []ModelCallRef{}}
		if err := Sign(k, r, Revisions{Chart: Revision, OCR: "tesseract"}, true); err != nil {
			t.Fatal(err)
		}
		return r
	}
	ok := func(cs []Check) bool {
		for _, c := range cs {
			if !c.OK {
				return false
			}
		}
		return true
	}
	if cs, err := Verify(fresh(), k.PublicKey()); err != nil || !ok(cs) {
		t.Fatalf("fresh: %v %+v", err, cs)
	}
	for _, c := range []struct {
		name   string
		change func(*Result)
		check  string
	}{
		{"median", func(r *Result) { v := 20.0; r.Chart.Series[0].Median = &v }, "table"},
		{"at risk", func(r *Result) { r.Chart.AtRisk[0].Counts[1] = 81 }, "table"},
		{"image", func(r *Result) { r.Image.PixelSHA256 = "cc" }, "image"},
		{"result id", func(r *Result) { r.ID = "chart-2" }, "result"},
		{"method", func(r *Result) { r.Method = "model" }, "result"},
		{"receipt's chart hash", func(r *Result) { r.Receipt.Chart = strings.Repeat("0", 64) }, "signature"},
	} {
		r := fresh()
		c.change(r)
		cs, err := Verify(r, k.PublicKey())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		failed := ""
		for _, ch := range cs {
			if !ch.OK && failed == "" {
				failed = ch.Name
			}
		}
		if failed != c.check {
			t.Errorf("%s: first failed check %q, want %q (%+v)", c.name, failed, c.check, cs)
		}
	}
	if cs, _ := Verify(fresh(), key(2).PublicKey()); ok(cs) {
		t.Error("another box's key verified the receipt")
	}
}
