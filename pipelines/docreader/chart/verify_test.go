package chart

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"

	"boxd/pipelines/docreader/exact/exacttest"
)

// chartVerified reads raw as the verifiers do and reports whether every
// check holds (false with the reason otherwise).
func chartVerified(raw []byte, pub ed25519.PublicKey) (bool, string) {
	r, err := DecodeResult(raw)
	if err != nil {
		return false, err.Error()
	}
	cs, err := Verify(r, pub)
	if err != nil {
		return false, err.Error()
	}
	for _, c := range cs {
		if !c.OK {
			return false, c.Name + ": " + c.Detail
		}
	}
	return true, ""
}

// TestEveryChartFieldUnderTheSignature: a chart result with every field
// filled in verifies, and every change to it is refused or fails a check:
// conf_bp, the note, the models and the receipts changed or removed
// (which verified before), every other value, a field added to any
// object, each list shortened or lengthened.
func TestEveryChartFieldUnderTheSignature(t *testing.T) {
	k := key(2)
	var r Result
	exacttest.Fill(&r, "Receipt")
	if err := Sign(k, &r, Revisions{Chart: Revision, OCR: "tesseract"}, true); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := chartVerified(raw, k.PublicKey()); !ok {
		t.Fatalf("the signed result does not verify: %s", why)
	}
	ms, err := exacttest.Mutations(raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d mutations of a %d-byte result", len(ms), len(raw))
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.What] = true
		if ok, _ := chartVerified(m.JSON, k.PublicKey()); ok {
			t.Errorf("%s: verifies", m.What)
		}
	}
	for _, want := range []string{".conf_bp changed", ".models[0] changed", ".receipts removed", ".note changed", ": a field added"} {
		if !seen[want] {
			t.Errorf("no mutation %q among %d", want, len(ms))
		}
	}
}

// TestOlderChartReceiptsRefused: a receipt that binds no conf_bp (signed
// before the confidence, note and models were bound) does not verify:
// they could be anything.
func TestOlderChartReceiptsRefused(t *testing.T) {
	k := key(3)
	r := &Result{ID: "chart-1", Method: "geometry", Chart: &Chart{Type: "kaplan_meier"}, Receipts: []ModelCallRef{}, Models: []any{}}
	if err := Sign(k, r, Revisions{}, true); err != nil {
		t.Fatal(err)
	}
	old := r.Receipt.receiptBody
	old.ConfBP, old.Note, old.Models = nil, "", ""
	sig, _, err := k.Sign(ReceiptFormat, old)
	if err != nil {
		t.Fatal(err)
	}
	r.Receipt = Receipt{receiptBody: old, Sig: sig}
	raw, _ := json.Marshal(r)
	if ok, why := chartVerified(raw, k.PublicKey()); ok || !strings.Contains(why, "binds no conf_bp") {
		t.Errorf("an older receipt: %v %s", ok, why)
	}
}
