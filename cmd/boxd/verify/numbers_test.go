package verify

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/internal/run"
	"boxd/pipelines/docreader"
	"boxd/pipelines/docreader/chart"
)

// TestVerifyNumbersAsWritten: boxd verify takes a document's deskew and a
// chart's decimals only as the box wrote them; the same value spelled
// otherwise (169.50, 1.695e2, -0 for 0) is NOT VERIFIED, naming the field.
// Before, every spelling verified.
func TestVerifyNumbersAsWritten(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := attest.NewKey(priv)
	dir := t.TempDir()
	verify := func(name, body string) (int, string) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, _ := runCLI(t, "verify", path, "--pubkey", key.PublicKeyHex())
		return code, out
	}
	d, err := (&docreader.Service{Key: key}).Read(context.Background(), run.Env{}, docreader.ReadRequest{Sample: docreader.SampleBornDigital})
	if err != nil {
		t.Fatal(err)
	}
	median := 169.5
	r := &chart.Result{ID: "ch_1", Image: chart.Image{SHA256: strings.Repeat("c", 64), Type: "image/png", Width: 4, Height: 4, PixelSHA256: strings.Repeat("d", 64)},
		Method: "geometry", ConfBP: 9000, Chart: &chart.Chart{Type: "kaplan_meier", Series: []chart.Series{{Name: "A", Steps: []chart.Step{}, Median: &median}}},
		Models: []any{}, Receipts: []chart.ModelCallRef{}}
	if err := chart.Sign(key, r, chart.Revisions{Chart: "1", OCR: "none"}, true); err != nil {
		t.Fatal(err)
	}
	docJSON, _ := json.Marshal(d)
	chartJSON, _ := json.Marshal(r)
	for _, c := range []struct {
		what, json, field, written string
		others                     []string
		want                       string
	}{
		{"document", string(docJSON), `"deskew":`, "0", []string{"-0", "0.0", "0e0"}, "document.pages[0].deskew is written "},
		{"chart", string(chartJSON), `"median":`, "169.5", []string{"169.50", "1.695e2", "1.695E+2"}, "chart.chart.series[0].median is written "},
	} {
		if !strings.Contains(c.json, c.field+c.written+",") {
			t.Fatalf("%s: no %s%s", c.what, c.field, c.written)
		}
		if code, out := verify(c.what+".json", c.json); code != 0 {
			t.Errorf("%s as written: exit %d\n%s", c.what, code, out)
		}
		for _, o := range c.others {
			sent := strings.Replace(c.json, c.field+c.written+",", c.field+o+",", 1)
			if code, out := verify(c.what+"-"+o+".json", sent); code != 1 || !strings.Contains(out, c.want+o) || !strings.Contains(out, "NOT VERIFIED") {
				t.Errorf("%s with %s: exit %d\n%s", c.what, o, code, out)
			}
		}
	}
}
