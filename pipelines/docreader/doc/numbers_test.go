package doc

import (
	"encoding/json"
	"strings"
	"testing"

	"boxd/pipelines/docreader/exact/exacttest"
)

// TestDeskewAsWritten: a page's deskew verifies only as the box wrote it
// (0.5, or 0 for a page not turned); the same value spelled otherwise,
// and -0 for 0 (which the receipt, leaving 0 out, cannot tell apart), are
// refused with the field's path. Before, all of them verified.
func TestDeskewAsWritten(t *testing.T) {
	k := testKey()
	for _, c := range []struct {
		deskew  float64
		written string
		others  []string
	}{
		{0.5, "0.5", []string{"0.50", "5e-1", "5E-1", "0.5e0", "50e-2"}},
		{0, "0", []string{"-0", "0.0", "0e0", "-0.0", "0E+0"}},
		{-2.25, "-2.25", []string{"-2.250", "-2.25e0", "-225e-2"}},
	} {
		var d Document
		exacttest.Fill(&d, "Receipt")
		d.Pages[0].Deskew = c.deskew
		if err := Sign(k, &d, Revisions{Parser: "p", OCR: "o", Layout: "l"}, nil, true); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		field := `"deskew":` + c.written + `,`
		if !strings.HasPrefix(string(raw[strings.Index(string(raw), `"deskew":`):]), field) {
			t.Fatalf("no %s in the document: %s", field, raw)
		}
		if ok, why := verified(raw, k.PublicKey()); !ok {
			t.Errorf("%s as written: %s", c.written, why)
		}
		for _, o := range c.others {
			// The page's, then (when not 0) the receipt's page's.
			sent := strings.Replace(string(raw), field, `"deskew":`+o+`,`, 1)
			if ok, why := verified([]byte(sent), k.PublicKey()); ok || !strings.HasPrefix(why, "document.pages[0].deskew is written "+o+" where the box writes ") {
				t.Errorf("%s for %s: %v %s", o, c.written, ok, why)
			}
			if i := strings.LastIndex(string(raw), field); c.deskew != 0 && i > 0 {
				sent := string(raw[:i]) + `"deskew":` + o + `,` + string(raw[i+len(field):])
				if ok, why := verified([]byte(sent), k.PublicKey()); ok || !strings.HasPrefix(why, "document.receipt.pages[0].deskew is written "+o) {
					t.Errorf("%s for %s in the receipt: %v %s", o, c.written, ok, why)
				}
			}
		}
	}
}
