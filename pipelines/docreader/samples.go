package docreader

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"sync"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Samples are generated here, deterministically (no third-party
// documents): a born-digital referral letter with a text layer, and a
// scanned chart note (an image-only PDF, read by OCR). The same bytes
// every time, so their hashes and readings are stable.
const (
	SampleBornDigital = "born-digital"
	SampleScanned     = "scanned-chart"
)

// SampleIDs lists the samples.
var SampleIDs = []string{SampleBornDigital, SampleScanned}

var (
	samplesOnce sync.Once
	samples     map[string][]byte
	samplesErr  error
)

// Sample returns a sample PDF's bytes (nil for an unknown id).
func Sample(id string) ([]byte, error) {
	samplesOnce.Do(func() {
		samples = map[string][]byte{}
		if b, err := bornDigitalPDF(); err != nil {
			samplesErr = err
		} else {
			samples[SampleBornDigital] = b
		}
		if b, err := scannedPDF(); err != nil {
			samplesErr = err
		} else {
			samples[SampleScanned] = b
		}
	})
	if samplesErr != nil {
		return nil, samplesErr
	}
	return samples[id], nil
}

var sampleTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newPDF() *fpdf.Fpdf {
	p := fpdf.New("P", "pt", "Letter", "")
	p.SetCreationDate(sampleTime)
	p.SetModificationDate(sampleTime)
	p.SetCatalogSort(true)
	p.SetProducer("boxd docreader samples", false)
	p.SetAutoPageBreak(false, 0)
	return p
}

// bornDigitalPDF is a one-page referral letter: a running header, a
// title, a paragraph, a list, two columns and a footer, all in the text
// layer (Helvetica).
func bornDigitalPDF() ([]byte, error) {
	p := newPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 8)
	p.Text(54, 30, "Lakeside Family Clinic - Referral")
	p.SetFont("Helvetica", "B", 18)
	p.Text(54, 90, "Referral to Cardiology")
	p.SetFont("Helvetica", "", 10)
	para := []string{
		"Patient: Jordan Sample (synthetic), date of birth 1961-04-12.",
		"Reason: exertional chest tightness for three weeks, relieved by rest.",
		"Blood pressure 142/88 mmHg; resting ECG shows sinus rhythm at 78 bpm.",
	}
	for i, s := range para {
		p.Text(54, 120+float64(i)*13, s)
	}
	items := []string{"1. Exercise stress test", "2. Lipid panel and HbA1c", "3. Review of current medication"}
	for i, s := range items {
		p.Text(66, 180+float64(i)*16, s)
	}
	left := []string{"Current medication:", "lisinopril 10 mg daily,", "atorvastatin 20 mg nightly."}
	right := []string{"Allergies:", "penicillin (rash),", "no known food allergies."}
	for i := range left {
		p.Text(54, 260+float64(i)*13, left[i])
		p.Text(320, 260+float64(i)*13, right[i])
	}
	p.SetFont("Helvetica", "", 8)
	p.Text(54, 770, "Page 1 of 1")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		return nil, fmt.Errorf("docreader: sample %s: %w", SampleBornDigital, err)
	}
	return b.Bytes(), nil
}

// scannedLines are the scanned sample's text.
var scannedLines = []string{
	"PROGRESS NOTE",
	"",
	"Patient: Alex Example (synthetic)",
	"Visit date: 2026-03-02",
	"",
	"Assessment: type 2 diabetes mellitus without complications.",
	"Hypertension, well controlled on current medication.",
	"",
	"Plan: continue metformin 500 mg twice daily.",
	"Recheck HbA1c in three months.",
}

// scannedPDF is a one-page PDF holding only an image of a typed note
// (no text layer), as a scanner writes it.
func scannedPDF() ([]byte, error) {
	img, err := renderLines(scannedLines, 1275, 1650, 34, 150)
	if err != nil {
		return nil, err
	}
	var png8 bytes.Buffer
	if err := png.Encode(&png8, img); err != nil {
		return nil, err
	}
	p := newPDF()
	p.AddPage()
	p.RegisterImageOptionsReader("scan", fpdf.ImageOptions{ImageType: "PNG"}, &png8)
	p.ImageOptions("scan", 0, 0, 612, 792, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		return nil, fmt.Errorf("docreader: sample %s: %w", SampleScanned, err)
	}
	return b.Bytes(), nil
}

// renderLines draws lines of text in Go Regular at px pixels, black on
// white, from a left margin of left pixels: a scan without a scanner.
func renderLines(lines []string, w, h int, px float64, left int) (*image.Gray, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, err
	}
	defer face.Close()
	img := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
	y := left
	for _, l := range lines {
		y += int(px * 1.8)
		if l == "" { // a paragraph break
			continue
		}
		d.Dot = fixed.P(left, y)
		d.DrawString(l)
	}
	return img, nil
}
