package samples

import (
	"bytes"
	"testing"
)

// TestSamplesDeterministic: each sample is a PDF, the same bytes every
// time it is generated (receipts and tests rely on its hash); an unknown
// id is nil.
func TestSamplesDeterministic(t *testing.T) {
	for id, gen := range map[string]func() ([]byte, error){BornDigital: bornDigitalPDF, Scanned: scannedPDF} {
		a, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := gen()
		got, err := Get(id)
		if err != nil || !bytes.HasPrefix(a, []byte("%PDF-")) || !bytes.Equal(a, b) || !bytes.Equal(a, got) {
			t.Errorf("%s: not the same PDF each time (%v)", id, err)
		}
	}
	if b, err := Get("nope"); b != nil || err != nil {
		t.Errorf("unknown: %d bytes, %v", len(b), err)
	}
}
