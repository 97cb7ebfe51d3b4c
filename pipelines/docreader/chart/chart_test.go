package chart

import (
	"context"
	"math"
	"os"
	"testing"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/ocr"
	"boxd/pipelines/docreader/samples"
)

func newOCR(t *testing.T) *ocr.OCR {
	t.Helper()
	o, err := ocr.New()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tesseract: %v (make deps installs it)", err)
		}
		t.Skipf("tesseract: %v", err)
	}
	t.Cleanup(o.Close)
	return o
}

// readDrawn draws a chart and reads it back (OCR then geometry).
func readDrawn(t *testing.T, o *ocr.OCR, spec samples.KMChart) *Chart {
	t.Helper()
	g, err := samples.DrawKM(spec)
	if err != nil {
		t.Fatal(err)
	}
	img := raster.FromImage(g)
	words, opt := ocrWords(t, o, img)
	c, err := Read(img, words, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ocrWords OCRs a chart's raster and gives the reading options that read
// a missed label again, as the document reader does.
func ocrWords(t *testing.T, o *ocr.OCR, img *raster.Image) ([]Word, Options) {
	t.Helper()
	conv := func(ws []ocr.Word) []Word {
		out := make([]Word, len(ws))
		for i, w := range ws {
			out[i] = Word{Text: w.Text, Box: w.Box}
		}
		return out
	}
	ws, err := o.ReadRegion(context.Background(), img, nil, raster.Box{X1: float64(img.W), Y1: float64(img.H)}, 144)
	if err != nil {
		t.Fatal(err)
	}
	return conv(ws), Options{Reread: func(b raster.Box) []Word {
		ws, err := o.ReadBlock(context.Background(), img, nil, b, 144)
		if err != nil {
			t.Fatal(err)
		}
		return conv(ws)
	}}
}

// TestKaplanMeier: synthetic Kaplan–Meier charts drawn from simulated
// trials (known event times) read back: every drawn median within ±1
// month of the true one, every number at risk exact, the hazard ratio
// as printed; and every seeded disagreement (a printed median 2 to 4
// months off the drawing) flagged, while no honest chart is.
func TestKaplanMeier(t *testing.T) {
	o := newOCR(t)
	ticks := []float64{0, 6, 12, 18, 24}
	seeded, flagged, honestFlags := 0, 0, 0
	worst := 0.0
	for k := range 6 {
		a := samples.SimArm("Arm A", 100+20*k, 11+float64(k), 24, uint64(10+k), samples.ArmColors[0])
		b := samples.SimArm("Arm B", 90+15*k, 6+float64(k)/2, 24, uint64(50+k), samples.ArmColors[1])
		spec := samples.KMChart{Arms: []samples.Arm{a, b}, MaxT: 24, Ticks: ticks, HR: "HR 0.62 (95% CI 0.45-0.85)"}
		seed := k%2 == 1
		if seed {
			spec.PrintedMedians = []float64{math.Round((a.Median()+2+float64(k%3))*10) / 10, math.Round(b.Median()*10) / 10}
			seeded++
		}
		c := readDrawn(t, o, spec)
		if len(c.Series) != 2 {
			t.Fatalf("chart %d: %d series", k, len(c.Series))
		}
		for i, arm := range spec.Arms {
			s := c.Series[seriesByName(c, arm.Name)]
			if s.Median == nil || math.Abs(*s.Median-arm.Median()) > 1 {
				t.Errorf("chart %d %s: drawn median %v, true %.1f", k, arm.Name, s.Median, arm.Median())
			} else {
				worst = max(worst, math.Abs(*s.Median-arm.Median()))
			}
			if s.Flag != "" {
				if seed && i == 0 {
					flagged++
				} else {
					honestFlags++
					t.Errorf("chart %d %s flagged: %s", k, arm.Name, s.Flag)
				}
			}
		}
		if len(c.AtRisk) != 2 {
			t.Fatalf("chart %d: %d rows at risk", k, len(c.AtRisk))
		}
		for _, row := range c.AtRisk {
			arm := spec.Arms[0]
			if row.Series == "Arm B" {
				arm = spec.Arms[1]
			}
			if len(row.Counts) != len(ticks) {
				t.Errorf("chart %d %s: counts %v at %v", k, row.Series, row.Counts, row.Times)
				continue
			}
			for j, tk := range ticks {
				if row.Times[j] != tk || row.Counts[j] != arm.AtRisk(tk) {
					t.Errorf("chart %d %s at %v: %d, want %d", k, row.Series, tk, row.Counts[j], arm.AtRisk(tk))
				}
			}
		}
		if hr := c.HazardRatio; hr == nil || hr.Value != 0.62 || hr.Low == nil || *hr.Low != 0.45 || *hr.High != 0.85 {
			t.Errorf("chart %d: hazard ratio %+v", k, hr)
		}
	}
	t.Logf("12 curves: worst median error %.2f months; %d of %d seeded disagreements flagged; %d false flags", worst, flagged, seeded, honestFlags)
	if flagged != seeded || honestFlags != 0 {
		t.Errorf("%d of %d seeded disagreements flagged, %d false flags", flagged, seeded, honestFlags)
	}
}

func seriesByName(c *Chart, name string) int {
	for i, s := range c.Series {
		if s.Name == name {
			return i
		}
	}
	return 0
}

// TestNotCalibrated: a picture with no axes, or axes without numbers,
// cannot be calibrated, and says why.
func TestNotCalibrated(t *testing.T) {
	blank := &raster.Image{W: 200, H: 100, Pix: make([]byte, 200*100*3)}
	for i := range blank.Pix {
		blank.Pix[i] = 255
	}
	if _, err := Read(blank, nil, Options{}); err == nil {
		t.Fatal("a blank picture was read")
	} else if _, ok := err.(*NotCalibrated); !ok {
		t.Errorf("%T %v", err, err)
	}
	g, err := samples.DrawKM(samples.KMChart{Arms: []samples.Arm{samples.SimArm("A", 50, 10, 24, 1, samples.ArmColors[0])}, MaxT: 24, Ticks: []float64{0, 12, 24}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(raster.FromImage(g), nil, Options{}); err == nil {
		t.Error("axes without tick labels were calibrated")
	}
}
