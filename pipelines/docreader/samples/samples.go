// Package samples generates the document reader's sample documents and
// the documents its tests read: deterministic PDFs (no third-party
// documents), a born-digital letter with a ruled table, a scanned note,
// and the table drawer the tests use.
package samples

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
	BornDigital = "born-digital"
	Scanned     = "scanned-chart"
)

// IDs lists the samples.
var IDs = []string{BornDigital, Scanned}

var (
	samplesOnce sync.Once
	samples     map[string][]byte
	samplesErr  error
)

// Get returns a sample PDF's bytes (nil for an unknown id).
func Get(id string) ([]byte, error) {
	samplesOnce.Do(func() {
		samples = map[string][]byte{}
		if b, err := bornDigitalPDF(); err != nil {
			samplesErr = err
		} else {
			samples[BornDigital] = b
		}
		if b, err := scannedPDF(); err != nil {
			samplesErr = err
		} else {
			samples[Scanned] = b
		}
	})
	if samplesErr != nil {
		return nil, samplesErr
	}
	return samples[id], nil
}

var sampleTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func NewPDF() *fpdf.Fpdf {
	p := fpdf.New("P", "pt", "Letter", "")
	p.SetCreationDate(sampleTime)
	p.SetModificationDate(sampleTime)
	p.SetCatalogSort(true)
	p.SetProducer("boxd docreader samples", false)
	p.SetAutoPageBreak(false, 0)
	return p
}

// bornDigitalPDF is a one-page referral letter: a running header, a
// title, a paragraph, a list, two columns, a ruled table of lipid
// results with spanning header cells, and a footer, all in the text
// layer (Helvetica).
func bornDigitalPDF() ([]byte, error) {
	p := NewPDF()
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
	p.SetFont("Helvetica", "B", 10)
	p.Text(54, 330, "Table 1. Lipid panel, 2026-02-20")
	if err := DrawTable(p, 54, 340, LabWidths, 20, LabCells, RulesLattice, 2, nil); err != nil {
		return nil, fmt.Errorf("docreader: sample %s: %w", BornDigital, err)
	}
	p.SetFont("Helvetica", "", 8)
	p.Text(54, 770, "Page 1 of 1")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		return nil, fmt.Errorf("docreader: sample %s: %w", BornDigital, err)
	}
	return b.Bytes(), nil
}

// ScannedLines are the scanned sample's text.
var ScannedLines = []string{
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
	img, err := RenderLines(ScannedLines, 1275, 1650, 34, 150)
	if err != nil {
		return nil, err
	}
	var png8 bytes.Buffer
	if err := png.Encode(&png8, img); err != nil {
		return nil, err
	}
	p := NewPDF()
	p.AddPage()
	p.RegisterImageOptionsReader("scan", fpdf.ImageOptions{ImageType: "PNG"}, &png8)
	p.ImageOptions("scan", 0, 0, 612, 792, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		return nil, fmt.Errorf("docreader: sample %s: %w", Scanned, err)
	}
	return b.Bytes(), nil
}

// RenderLines draws lines of text in Go Regular at px pixels, black on
// white, from a left margin of left pixels: a scan without a scanner.
func RenderLines(lines []string, w, h int, px float64, left int) (*image.Gray, error) {
	face, err := goFace(px)
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

// Cell is one cell of a generated table: its first row and column,
// its spans, its text.
type Cell struct {
	R, C, RS, CS int
	Text         string
}

// LabCells is the lab-results table of the born-digital sample and the
// table tests: two header rows (Test and Reference spanning both,
// "Lipid panel (fasting)" over Result and Units), then four results.
var LabCells = []Cell{
	{0, 0, 2, 1, "Test"}, {0, 1, 1, 2, "Lipid panel (fasting)"}, {0, 3, 2, 1, "Reference"},
	{1, 1, 1, 1, "Result"}, {1, 2, 1, 1, "Units"},
	{2, 0, 1, 1, "Total cholesterol"}, {2, 1, 1, 1, "212"}, {2, 2, 1, 1, "mg/dL"}, {2, 3, 1, 1, "< 200"},
	{3, 0, 1, 1, "LDL cholesterol"}, {3, 1, 1, 1, "141"}, {3, 2, 1, 1, "mg/dL"}, {3, 3, 1, 1, "< 130"},
	{4, 0, 1, 1, "HDL cholesterol"}, {4, 1, 1, 1, "38"}, {4, 2, 1, 1, "mg/dL"}, {4, 3, 1, 1, "> 40"},
	{5, 0, 1, 1, "Triglycerides"}, {5, 1, 1, 1, "166"}, {5, 2, 1, 1, "mg/dL"}, {5, 3, 1, 1, "< 150"},
}

// LabWidths are the lab table's column widths in points.
var LabWidths = []float64{120, 64, 64, 90}

// Table rulings DrawTable draws.
const (
	RulesLattice  = "lattice"  // every cell's border
	RulesBooktabs = "booktabs" // top, under the header, bottom, and under spanning header cells
	RulesShaded   = "shaded"   // the header rows filled dark with white text, no lines in them; the body ruled
)

// DrawTable draws cells at (x, y), rows rowH points tall, in Helvetica
// 10 (the header rows bold): each cell's text 4 points from its left,
// centred on its rows. plant maps a cell's index to a text shown
// instead as an image, the cell's own text then written invisibly (text
// rendering mode 3): a text layer that disagrees with the pixels.
func DrawTable(p *fpdf.Fpdf, x, y float64, widths []float64, rowH float64, cells []Cell, rules string, headerRows int, plant map[int]string) error {
	colX := []float64{x}
	for _, w := range widths {
		colX = append(colX, colX[len(colX)-1]+w)
	}
	rows := 0
	for _, c := range cells {
		rows = max(rows, c.R+c.RS)
	}
	p.SetLineWidth(0.8)
	switch rules {
	case RulesLattice:
		for _, c := range cells {
			p.Rect(colX[c.C], y+float64(c.R)*rowH, colX[c.C+c.CS]-colX[c.C], float64(c.RS)*rowH, "D")
		}
	case RulesShaded:
		p.SetFillColor(40, 80, 140)
		p.Rect(x, y, colX[len(colX)-1]-x, float64(headerRows)*rowH, "F")
		for _, c := range cells {
			if c.R >= headerRows {
				p.Rect(colX[c.C], y+float64(c.R)*rowH, colX[c.C+c.CS]-colX[c.C], float64(c.RS)*rowH, "D")
			}
		}
	case RulesBooktabs:
		for _, ry := range []float64{y, y + float64(headerRows)*rowH, y + float64(rows)*rowH} {
			p.Line(x, ry, colX[len(colX)-1], ry)
		}
		for _, c := range cells {
			if c.CS > 1 && c.R+c.RS < headerRows {
				ry := y + float64(c.R+c.RS)*rowH
				p.Line(colX[c.C]+3, ry, colX[c.C+c.CS]-3, ry)
			}
		}
	}
	for i, c := range cells {
		style := ""
		if c.R < headerRows {
			style = "B"
		}
		p.SetFont("Helvetica", style, 10)
		if rules == RulesShaded && c.R < headerRows {
			p.SetTextColor(255, 255, 255)
		} else {
			p.SetTextColor(0, 0, 0)
		}
		tx, ty := colX[c.C]+4, y+(float64(c.R)+float64(c.RS)/2)*rowH+3.5
		show, planted := plant[i]
		if !planted {
			p.Text(tx, ty, c.Text)
			continue
		}
		p.SetTextRenderingMode(3)
		p.Text(tx, ty, c.Text)
		p.SetTextRenderingMode(0)
		img, w, err := textImage(show)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("plant%d", i)
		p.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(img))
		// The image is drawn at 40 pixels to 10 points, its baseline at
		// 40 pixels: on the text's baseline.
		p.ImageOptions(name, tx, ty-10, w/4, 12.5, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
	return p.Error()
}

// textImage draws s in Go Regular at 40 pixels, baseline at 40 pixels,
// on a white PNG 50 pixels tall; and its width in pixels.
func textImage(s string) ([]byte, float64, error) {
	face, err := goFace(40)
	if err != nil {
		return nil, 0, err
	}
	defer face.Close()
	w := font.MeasureString(face, s).Ceil() + 2
	img := image.NewGray(image.Rect(0, 0, w, 50))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face, Dot: fixed.P(1, 40)}
	d.DrawString(s)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, 0, err
	}
	return b.Bytes(), float64(w), nil
}

// goFace is Go Regular at px pixels (72 DPI: a point is a pixel).
func goFace(px float64) (font.Face, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingFull})
}
