package docreader

import (
	"fmt"
	"strings"
	"testing"

	"boxd/pipelines/docreader/samples"

	"github.com/go-pdf/fpdf"
)

// The table fixtures: pages drawn here with fpdf at test time, each
// table with its ground truth (its cells, with spans, and its region),
// across the classes an outside benchmark found hard: a ruled header and
// total around unruled body rows, tables with no rules at all (under a
// "Table N" caption or not), stream tables with wide spacing, two
// tables on one page, a table right under a heading, a header over
// columns without rules; a few fully ruled tables, which must stay
// exact; and pages with no table at all (prose in two columns, a
// bulleted list, a form), so that precision counts. After a held-out
// report: two tables without rules or captions stacked 12, 18 and 24
// points apart, narrow tables of two or three columns without caption,
// a stream table whose header rule runs past its columns, a paragraph
// just above a table; and more pages with no table (printed "Key:
// value" lines, a table of contents without leaders, numbered
// references).

// fxCell is one ground-truth cell: its first row and column, spans and
// text.
type fxCell struct {
	r, c, rs, cs int
	text         string
}

// fxTable is a table to draw: at (x, y) points, its columns' widths
// (right-aligned where right says), header cells (rows 0 to hr-1, with
// spans), body rows, an optional total row, its rules, row pitch and
// font size; a caption drawn above it; a blank row every gapEvery body
// rows (a stream table with wide spacing).
type fxTable struct {
	x, y     float64
	widths   []float64
	right    []bool
	head     []fxCell
	hr       int
	body     [][]string
	total    []string
	rules    string // fxNone, fxBands, fxBooktabs, fxLattice, fxHeadRule
	rowH     float64
	size     float64
	caption  string
	gapEvery int
}

const (
	fxNone     = "none"     // no rules at all
	fxBands    = "bands"    // top, under the header, over the total, bottom
	fxBooktabs = "booktabs" // top, under the header, bottom
	fxLattice  = "lattice"  // every cell's border
	fxHeadRule = "headrule" // one rule, under the header, 6 points past the columns
)

// fxText is a line of text on a page (a heading, prose, a list item).
type fxText struct {
	x, y, size float64
	bold       bool
	text       string
}

// fxPage is one fixture page: its texts and its tables.
type fxPage struct {
	name   string
	texts  []fxText
	tables []fxTable
}

// fxTruth is a table's ground truth: its cells and its region in points
// (the rules' extent and its text's nominal extent; the scorer narrows
// it to the glyphs the text layer puts there, and joins the rules).
type fxTruth struct {
	cells []fxCell
	box   [4]float64 // x0, y0, x1, y1 in points: the text's nominal extent
	rules [4]float64 // the rules' extent in points (all zero: no rules)
	ruled bool
}

// draw draws the table and returns its truth.
func (tb fxTable) draw(p *fpdf.Fpdf) fxTruth {
	colX := []float64{tb.x}
	for _, w := range tb.widths {
		colX = append(colX, colX[len(colX)-1]+w)
	}
	x1 := colX[len(colX)-1]
	// Row tops: header rows, body rows (with blank rows between groups),
	// the total.
	var tops []float64
	y := tb.y
	for range tb.hr {
		tops = append(tops, y)
		y += tb.rowH
	}
	for i := range tb.body {
		if tb.gapEvery > 0 && i > 0 && i%tb.gapEvery == 0 {
			y += tb.rowH
		}
		tops = append(tops, y)
		y += tb.rowH
	}
	if tb.total != nil {
		tops = append(tops, y)
		y += tb.rowH
	}
	bottom := y
	p.SetLineWidth(0.6)
	p.SetDrawColor(0, 0, 0)
	var tr fxTruth
	line := func(y float64) {
		p.Line(tb.x, y, x1, y)
		if !tr.ruled {
			tr.rules = [4]float64{tb.x, y, x1, y}
		}
		tr.ruled = true
		tr.rules = [4]float64{min(tr.rules[0], tb.x), min(tr.rules[1], y), max(tr.rules[2], x1), max(tr.rules[3], y)}
	}
	switch tb.rules {
	case fxBands:
		line(tb.y)
		line(tb.y + float64(tb.hr)*tb.rowH)
		if tb.total != nil {
			line(bottom - tb.rowH)
		}
		line(bottom)
	case fxBooktabs:
		line(tb.y)
		line(tb.y + float64(tb.hr)*tb.rowH)
		line(bottom)
	case fxLattice:
		for _, t := range tops {
			line(t)
		}
		line(bottom)
		for _, x := range colX {
			p.Line(x, tb.y, x, bottom)
		}
	case fxHeadRule:
		// Past the columns on both sides, as a stream table's header
		// rule often is: the table's box must hold it.
		p.Line(tb.x-6, tb.y+float64(tb.hr)*tb.rowH, x1+6, tb.y+float64(tb.hr)*tb.rowH)
		tr.ruled = true
		tr.rules = [4]float64{tb.x - 6, tb.y + float64(tb.hr)*tb.rowH, x1 + 6, tb.y + float64(tb.hr)*tb.rowH}
	}
	text := func(s string, c, cs int, top float64, bold bool) {
		if s == "" {
			return
		}
		style := ""
		if bold {
			style = "B"
		}
		p.SetFont("Helvetica", style, tb.size)
		w := p.GetStringWidth(s)
		x := colX[c] + 4
		switch {
		case cs > 1:
			x = (colX[c]+colX[c+cs])/2 - w/2
		case tb.right[c]:
			x = colX[c+1] - 4 - w
		}
		p.Text(x, top+tb.rowH/2+0.35*tb.size, s)
	}
	for _, h := range tb.head {
		text(h.text, h.c, h.cs, tops[h.r], true)
		tr.cells = append(tr.cells, h)
	}
	r := tb.hr
	for i, row := range tb.body {
		for c, s := range row {
			text(s, c, 1, tops[tb.hr+i], false)
			if s != "" {
				tr.cells = append(tr.cells, fxCell{r, c, 1, 1, s})
			}
		}
		r++
	}
	if tb.total != nil {
		for c, s := range tb.total {
			text(s, c, 1, tops[len(tops)-1], true)
			if s != "" {
				tr.cells = append(tr.cells, fxCell{r, c, 1, 1, s})
			}
		}
	}
	if tb.caption != "" {
		p.SetFont("Helvetica", "B", tb.size+1)
		p.Text(tb.x, tb.y-6, tb.caption)
	}
	tr.box = [4]float64{tb.x, tb.y, x1, bottom}
	return tr
}

// pdf draws the page; and its tables' truths.
func (fp fxPage) pdf(t *testing.T) ([]byte, []fxTruth) {
	t.Helper()
	p := samples.NewPDF()
	p.AddPage()
	for _, tx := range fp.texts {
		style := ""
		if tx.bold {
			style = "B"
		}
		p.SetFont("Helvetica", style, tx.size)
		p.Text(tx.x, tx.y, tx.text)
	}
	var truths []fxTruth
	for _, tb := range fp.tables {
		truths = append(truths, tb.draw(p))
	}
	return pdfBytes(t, p), truths
}

// fxRand is a small deterministic generator for the fixtures' figures.
type fxRand uint64

func (r *fxRand) next(n int) int {
	*r = *r*6364136223846793005 + 1442695040888963407
	return int(uint64(*r>>33) % uint64(n))
}

var fxLabels = []string{"Agriculture", "Mining and quarrying", "Manufacturing", "Electricity supply", "Construction",
	"Wholesale trade", "Retail trade", "Transport", "Accommodation", "Information services", "Finance",
	"Real estate", "Public administration", "Education", "Health care", "Arts and recreation", "Other services",
	"Northern region", "Southern region", "Eastern region", "Western region", "Capital district", "Islands",
	"Households", "Non-profit bodies", "Central government", "Local authorities", "Exports", "Imports"}

// fxBody is n rows: a label, then cols-1 figures in the given format
// ("n": integers with thousands commas; "p": one decimal; "m": mixed).
func fxBody(seed uint64, n, cols int, kind string) [][]string {
	r := fxRand(seed)
	var out [][]string
	for i := range n {
		row := []string{fxLabels[(int(seed)+i*3)%len(fxLabels)]}
		for c := 1; c < cols; c++ {
			k := kind
			if kind == "m" {
				k = []string{"n", "p"}[c%2]
			}
			switch k {
			case "n":
				v := 100 + r.next(98000)
				row = append(row, commas(v))
			default:
				row = append(row, fmt.Sprintf("%d.%d", r.next(90)+1, r.next(10)))
			}
		}
		out = append(out, row)
	}
	return out
}

func commas(v int) string {
	s := fmt.Sprint(v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fxHead is one header row of single cells.
func fxHead(r int, texts ...string) []fxCell {
	var out []fxCell
	for c, s := range texts {
		if s != "" {
			out = append(out, fxCell{r, c, 1, 1, s})
		}
	}
	return out
}

// fxCols: a first column w0 wide, then n columns w wide, right-aligned.
func fxCols(w0, w float64, n int) ([]float64, []bool) {
	ws, rs := []float64{w0}, []bool{false}
	for range n {
		ws = append(ws, w)
		rs = append(rs, true)
	}
	return ws, rs
}

func fxTotal(body [][]string) []string {
	out := []string{"Total"}
	for c := 1; c < len(body[0]); c++ {
		out = append(out, fmt.Sprintf("%d", 1000+7*c*len(body)))
	}
	return out
}

func prose(x, y, size float64, lines ...string) []fxText {
	var out []fxText
	for i, l := range lines {
		out = append(out, fxText{x: x, y: y + float64(i)*size*1.35, size: size, text: l})
	}
	return out
}

var fxProse = []string{
	"The figures below are drawn from the quarterly survey of establishments, weighted to the",
	"register of businesses. Estimates for the smaller industries carry wider margins of error and",
	"should be read together with the notes at the end of this release. Revisions since the last",
	"release are small and mostly due to late returns from the northern and eastern regions.",
}

// fxPages are the fixture pages.
func fxPages() []fxPage {
	var pages []fxPage
	mk := func(name string, texts []fxText, tables ...fxTable) {
		pages = append(pages, fxPage{name: name, texts: texts, tables: tables})
	}
	// Class 1: ruled header and total bands, body rows without rules.
	{
		w, r := fxCols(150, 80, 3)
		b := fxBody(1, 9, 4, "n")
		mk("bands-4col", prose(60, 80, 10, fxProse...),
			fxTable{x: 60, y: 160, widths: w, right: r, head: fxHead(0, "Industry", "2021", "2022", "2023"), hr: 1, body: b, total: fxTotal(b), rules: fxBands, rowH: 14, size: 9})
	}
	{
		w, r := fxCols(130, 62, 5)
		b := fxBody(2, 12, 6, "m")
		head := append([]fxCell{{0, 1, 1, 2, "Men"}, {0, 3, 1, 2, "Women"}}, fxHead(1, "Region", "Number", "Rate", "Number", "Rate", "All")...)
		mk("bands-spanhead", append(prose(60, 70, 10, fxProse[:2]...), fxText{x: 60, y: 120, size: 10, bold: true, text: "Table 4. Employment by region and sex"}),
			fxTable{x: 60, y: 135, widths: w, right: r, head: head, hr: 2, body: b, total: fxTotal(b), rules: fxBands, rowH: 13, size: 8.5})
	}
	{
		w, r := fxCols(170, 90, 2)
		b := fxBody(3, 6, 3, "p")
		w2, r2 := fxCols(120, 70, 4)
		b2 := fxBody(4, 7, 5, "n")
		mk("bands-two", nil,
			fxTable{x: 72, y: 90, widths: w, right: r, head: fxHead(0, "Item", "Share", "Change"), hr: 1, body: b, total: fxTotal(b), rules: fxBands, rowH: 14, size: 9, caption: "Table 1. Shares of output"},
			fxTable{x: 72, y: 330, widths: w2, right: r2, head: fxHead(0, "Sector", "Q1", "Q2", "Q3", "Q4"), hr: 1, body: b2, total: fxTotal(b2), rules: fxBands, rowH: 14, size: 9, caption: "Table 2. Output by quarter"})
	}
	{
		w, r := fxCols(160, 75, 4)
		b := fxBody(5, 14, 5, "n")
		mk("bands-long", []fxText{{x: 60, y: 60, size: 14, bold: true, text: "Annual survey results"}},
			fxTable{x: 60, y: 72, widths: w, right: r, head: fxHead(0, "Category", "Firms", "Staff", "Sales", "Costs"), hr: 1, body: b, total: fxTotal(b), rules: fxBands, rowH: 12.5, size: 8.5})
	}
	// Class 2: no rules at all, under a caption or not.
	{
		w, r := fxCols(150, 75, 3)
		b := fxBody(6, 8, 4, "n")
		mk("none-caption", prose(60, 80, 10, fxProse...),
			fxTable{x: 60, y: 170, widths: w, right: r, head: fxHead(0, "Industry", "2021", "2022", "2023"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9, caption: "Table 3. Persons employed, thousands"})
	}
	{
		w, r := fxCols(140, 70, 4)
		b := fxBody(7, 10, 5, "p")
		mk("none-plain", append(prose(60, 70, 10, fxProse[:3]...), prose(60, 400, 10, fxProse[1:]...)...),
			fxTable{x: 60, y: 140, widths: w, right: r, head: fxHead(0, "Region", "2019", "2020", "2021", "2022"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9})
	}
	{
		w, r := fxCols(200, 90, 1)
		b := fxBody(8, 7, 2, "n")
		mk("none-twocol", prose(60, 70, 10, fxProse...),
			fxTable{x: 60, y: 160, widths: w, right: r, head: fxHead(0, "Source of income", "Amount"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9, caption: "Table 5. Income of households"})
	}
	{
		w, r := fxCols(120, 60, 6)
		b := fxBody(9, 9, 7, "m")
		mk("none-wide", nil,
			fxTable{x: 40, y: 90, widths: w, right: r, head: fxHead(0, "Area", "A", "B", "C", "D", "E", "F"), hr: 1, body: b, rules: fxNone, rowH: 12, size: 8, caption: "Table 6. Indicators by area"})
	}
	{
		w, r := fxCols(150, 80, 3)
		b := fxBody(10, 6, 4, "p")
		mk("none-nohead", prose(60, 80, 10, fxProse[:2]...),
			fxTable{x: 60, y: 120, widths: w, right: r, hr: 0, body: b, rules: fxNone, rowH: 13, size: 9})
	}
	// Class 3: stream tables with wide spacing (blank rows between
	// groups, double-spaced rows), which must stay whole.
	{
		w, r := fxCols(150, 80, 3)
		b := fxBody(11, 12, 4, "n")
		mk("stream-groups", nil,
			fxTable{x: 60, y: 90, widths: w, right: r, head: fxHead(0, "Item", "Jan", "Feb", "Mar"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9, gapEvery: 3, caption: "Table 7. Monthly returns"})
	}
	{
		w, r := fxCols(140, 85, 3)
		b := fxBody(12, 8, 4, "p")
		mk("stream-double", prose(60, 60, 10, fxProse[:2]...),
			fxTable{x: 60, y: 110, widths: w, right: r, head: fxHead(0, "Group", "Low", "Mid", "High"), hr: 1, body: b, rules: fxNone, rowH: 24, size: 9})
	}
	{
		w, r := fxCols(130, 95, 4)
		b := fxBody(13, 10, 5, "n")
		mk("stream-booktabs-groups", nil,
			fxTable{x: 50, y: 80, widths: w, right: r, head: fxHead(0, "Body", "Staff", "Pay", "Hours", "Leave"), hr: 1, body: b, rules: fxBooktabs, rowH: 13, size: 9, gapEvery: 2})
	}
	{
		w, r := fxCols(160, 70, 3)
		b := fxBody(14, 15, 4, "n")
		mk("stream-tall", []fxText{{x: 60, y: 60, size: 12, bold: true, text: "Section 2. Results"}},
			fxTable{x: 60, y: 90, widths: w, right: r, head: fxHead(0, "Line", "Plan", "Actual", "Gap"), hr: 1, body: b, rules: fxNone, rowH: 16, size: 9, gapEvery: 5})
	}
	// Class 4: two tables on one page; a table under a heading; a header
	// over unruled columns.
	{
		w, r := fxCols(150, 80, 3)
		b := fxBody(15, 6, 4, "n")
		b2 := fxBody(16, 5, 4, "p")
		mk("two-none", prose(60, 360, 10, fxProse...),
			fxTable{x: 60, y: 90, widths: w, right: r, head: fxHead(0, "Fund", "Opening", "Paid", "Closing"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9, caption: "Table 8. Funds"},
			fxTable{x: 60, y: 480, widths: w, right: r, head: fxHead(0, "Rate", "Low", "Mid", "High"), hr: 1, body: b2, rules: fxNone, rowH: 13, size: 9, caption: "Table 9. Rates"})
	}
	{
		w, r := fxCols(150, 80, 3)
		b := fxBody(17, 5, 4, "n")
		b2 := fxBody(18, 5, 4, "n")
		mk("two-close", nil,
			fxTable{x: 60, y: 80, widths: w, right: r, head: fxHead(0, "Account", "2021", "2022", "2023"), hr: 1, body: b, total: fxTotal(b), rules: fxBands, rowH: 13, size: 9},
			fxTable{x: 60, y: 200, widths: w, right: r, head: fxHead(0, "Budget", "2021", "2022", "2023"), hr: 1, body: b2, total: fxTotal(b2), rules: fxBands, rowH: 13, size: 9})
	}
	{
		w, r := fxCols(150, 80, 3)
		b := fxBody(19, 5, 4, "p")
		b2 := fxBody(20, 6, 4, "p")
		mk("two-booktabs", nil,
			fxTable{x: 60, y: 80, widths: w, right: r, head: fxHead(0, "Crop", "North", "South", "West"), hr: 1, body: b, rules: fxBooktabs, rowH: 13, size: 9},
			fxTable{x: 60, y: 190, widths: w, right: r, head: fxHead(0, "Stock", "North", "South", "West"), hr: 1, body: b2, rules: fxBooktabs, rowH: 13, size: 9})
	}
	{
		w, r := fxCols(160, 80, 3)
		b := fxBody(21, 7, 4, "n")
		mk("heading-none", []fxText{{x: 60, y: 72, size: 13, bold: true, text: "Summary of receipts"}},
			fxTable{x: 60, y: 80, widths: w, right: r, head: fxHead(0, "Receipt", "Budget", "Outturn", "Difference"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9})
	}
	{
		w, r := fxCols(160, 80, 3)
		b := fxBody(22, 7, 4, "n")
		mk("heading-bands", []fxText{{x: 60, y: 72, size: 13, bold: true, text: "Summary of payments"}},
			fxTable{x: 60, y: 80, widths: w, right: r, head: fxHead(0, "Payment", "Budget", "Outturn", "Difference"), hr: 1, body: b, total: fxTotal(b), rules: fxBands, rowH: 13, size: 9})
	}
	{
		w, r := fxCols(130, 48, 4)
		b := fxBody(23, 8, 5, "p")
		head := append([]fxCell{{0, 1, 1, 2, "Employed"}, {0, 3, 1, 2, "Unemployed"}}, fxHead(1, "", "Men", "Women", "Men", "Women")...)
		mk("multihead-none", prose(60, 70, 10, fxProse[:2]...),
			fxTable{x: 60, y: 120, widths: w, right: r, head: head, hr: 2, body: b, rules: fxNone, rowH: 13, size: 9, caption: ""})
	}
	{
		w, r := fxCols(140, 44, 4)
		b := fxBody(24, 7, 5, "p")
		mk("multihead-close", nil,
			fxTable{x: 60, y: 90, widths: w, right: r, head: fxHead(0, "District", "Men", "Women", "Boys", "Girls"), hr: 1, body: b, rules: fxBooktabs, rowH: 13, size: 9})
	}
	{
		w, r := fxCols(130, 60, 4)
		b := fxBody(25, 6, 5, "n")
		head := append([]fxCell{{0, 1, 1, 2, "2022"}, {0, 3, 1, 2, "2023"}}, fxHead(1, "Service", "Cases", "Cost", "Cases", "Cost")...)
		mk("multihead-bands", nil,
			fxTable{x: 60, y: 90, widths: w, right: r, head: head, hr: 2, body: b, total: fxTotal(b), rules: fxBands, rowH: 13, size: 9, caption: "Table 10. Services"})
	}
	{
		// Text columns without rules (a schedule), under a caption.
		b := [][]string{{"12 March", "Town hall", "Budget consultation"}, {"19 March", "Library", "Transport plan"}, {"2 April", "Community centre", "Housing strategy"},
			{"16 April", "Town hall", "Annual accounts"}, {"30 April", "Sports hall", "Parks and open spaces"}, {"14 May", "Library", "Waste collection"}}
		mk("none-text", prose(60, 70, 10, fxProse[:2]...),
			fxTable{x: 60, y: 130, widths: []float64{90, 130, 170}, right: []bool{false, false, false}, head: fxHead(0, "Date", "Venue", "Topic"), hr: 1, body: b, rules: fxNone, rowH: 14, size: 9, caption: "Table 11. Public meetings"})
	}
	{
		w, r := fxCols(110, 70, 3)
		b := fxBody(29, 5, 4, "p")
		w2, r2 := fxCols(110, 70, 3)
		b2 := fxBody(30, 5, 4, "n")
		mk("two-side", nil,
			fxTable{x: 40, y: 100, widths: w, right: r, head: fxHead(0, "Item", "A", "B", "C"), hr: 1, body: b, total: fxTotal(b), rules: fxBands, rowH: 13, size: 8, caption: "Table 12. Left"},
			fxTable{x: 40, y: 260, widths: w2, right: r2, head: fxHead(0, "Item", "D", "E", "F"), hr: 1, body: b2, rules: fxNone, rowH: 13, size: 8, caption: "Table 13. Below"})
	}
	// Fully ruled tables: exact today, kept so.
	{
		w, r := fxCols(150, 80, 3)
		b := fxBody(26, 6, 4, "n")
		w2, r2 := fxCols(120, 90, 2)
		b2 := fxBody(27, 4, 3, "p")
		mk("lattice-two", prose(60, 60, 10, fxProse[:2]...),
			fxTable{x: 60, y: 100, widths: w, right: r, head: fxHead(0, "Name", "One", "Two", "Three"), hr: 1, body: b, rules: fxLattice, rowH: 16, size: 9},
			fxTable{x: 60, y: 300, widths: w2, right: r2, head: fxHead(0, "Key", "Value", "Limit"), hr: 1, body: b2, rules: fxLattice, rowH: 16, size: 9})
	}
	{
		w, r := fxCols(140, 70, 4)
		b := fxBody(28, 8, 5, "m")
		mk("lattice-total", nil,
			fxTable{x: 60, y: 100, widths: w, right: r, head: fxHead(0, "Unit", "A", "B", "C", "D"), hr: 1, body: b, total: fxTotal(b), rules: fxLattice, rowH: 15, size: 9})
	}
	// Class 5 (after the held-out report): two tables without rules or
	// captions stacked a small blank band apart (12, 18 and 24 points),
	// with other columns, or the same columns and a header of their own.
	for i, gapPt := range []float64{12, 18, 24} {
		w, r := fxCols(150, 80, 3)
		b := fxBody(40+uint64(i), 5, 4, "n")
		w2, r2 := fxCols(130, 110, 2)
		b2 := fxBody(43+uint64(i), 4, 3, "p")
		head2 := fxHead(0, "Unit", "Weight", "Yield")
		if i == 1 {
			// The same columns as the first table: only its header
			// parts it from the first.
			w2, r2 = w, r
			b2 = fxBody(43, 4, 4, "n")
			head2 = fxHead(0, "Office", "Staff", "Posts", "Leavers")
		}
		t1 := fxTable{x: 60, y: 150, widths: w, right: r, head: fxHead(0, "Ward", "Beds", "Patients", "Days"), hr: 1, body: b, rules: fxNone, rowH: 13 + float64(i), size: 9}
		t2 := fxTable{x: 60, y: t1.bottom() + gapPt, widths: w2, right: r2, head: head2, hr: 1, body: b2, rules: fxNone, rowH: 13 + float64(i), size: 9}
		mk(fmt.Sprintf("stack-%.0f", gapPt), append(prose(60, 80, 10, fxProse[:3]...), prose(60, t2.bottom()+30, 10, fxProse[1:]...)...), t1, t2)
	}
	// Class 6: narrow tables without rules or caption, two or three
	// columns, one or two of them figures, between paragraphs.
	{
		w, r := fxCols(130, 90, 2)
		b := fxBody(50, 6, 3, "n")
		mk("narrow-3col", append(prose(60, 80, 10, fxProse[:2]...), prose(60, 250, 10, fxProse[2:]...)...),
			fxTable{x: 60, y: 122, widths: w, right: r, head: fxHead(0, "Clinic", "Visits", "Referrals"), hr: 1, body: b, rules: fxNone, rowH: 14, size: 9})
	}
	{
		w, r := fxCols(170, 80, 1)
		b := fxBody(51, 7, 2, "p")
		mk("narrow-2col", append(prose(60, 80, 10, fxProse[1:3]...), prose(60, 270, 10, fxProse[:2]...)...),
			fxTable{x: 72, y: 125, widths: w, right: r, head: fxHead(0, "Service", "Rate %"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9})
	}
	{
		// A column of names between the labels and the figures.
		b := [][]string{{"Harbour Road", "J. Moreau", "1,204"}, {"Mill Lane", "A. Osei", "876"}, {"Castle Street", "P. Lindqvist", "2,315"},
			{"Station Yard", "M. Haddad", "498"}, {"Quarry Hill", "S. Brennan", "1,770"}}
		mk("narrow-text", prose(60, 80, 10, fxProse[2:]...),
			fxTable{x: 60, y: 130, widths: []float64{120, 110, 70}, right: []bool{false, false, true}, head: fxHead(0, "Depot", "Manager", "Vehicles"), hr: 1, body: b, rules: fxNone, rowH: 15, size: 9})
	}
	{
		// Years in order beside figures: the figures make it a table
		// (a column of numbers in order alone is a numbering).
		var b [][]string
		rnd := fxRand(52)
		for y := 2015; y <= 2022; y++ {
			b = append(b, []string{fmt.Sprint(y), commas(2000 + rnd.next(9000))})
		}
		mk("narrow-years", prose(60, 80, 10, fxProse[3:]...),
			fxTable{x: 60, y: 110, widths: []float64{70, 90}, right: []bool{false, true}, head: fxHead(0, "Year", "Admissions"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9})
	}
	// Class 7: a box that holds its rules (a stream table whose only
	// rule, under its header, runs past its columns), and a paragraph
	// just above a table without rules, which stays out of it.
	{
		w, r := fxCols(140, 100, 3)
		b := fxBody(53, 9, 4, "m")
		mk("stream-headrule", prose(60, 80, 10, fxProse[:2]...),
			fxTable{x: 66, y: 130, widths: w, right: r, head: fxHead(0, "Course", "Applied", "Admitted", "Rate"), hr: 1, body: b, rules: fxHeadRule, rowH: 15, size: 10, gapEvery: 3})
	}
	{
		// The paragraph's last line is short, and the descenders of the
		// line over it reach into its height.
		var texts []fxText
		for i, l := range []string{"Response times are reported for each service by quarter; readers comparing the yearly",
			"figures should allow for the change of counting rules during the spring, typically",
			"affecting small groups."} {
			texts = append(texts, fxText{x: 60, y: 80 + 13*float64(i), size: 10, text: l})
		}
		w, r := fxCols(150, 80, 3)
		b := fxBody(54, 6, 4, "n")
		mk("prose-above", append(texts, prose(60, 270, 10, fxProse[3:]...)...),
			fxTable{x: 72, y: 126, widths: w, right: r, head: fxHead(0, "Service", "Calls", "Visits", "Closed"), hr: 1, body: b, rules: fxNone, rowH: 13, size: 9})
	}
	// Distractors: no table on these pages.
	{
		var texts []fxText
		left := []string{"Economic activity rose in the", "second half of the year, led by", "construction and retail trade,", "while manufacturing output was", "flat. Employment grew by one", "per cent, and hours worked by", "slightly more than that."}
		rightCol := []string{"Prices rose more slowly than in", "the previous year. Energy costs", "fell in the autumn, and food", "prices eased towards the end of", "the period. Wages grew faster", "than prices for the first time", "in three years."}
		texts = append(texts, prose(60, 100, 10, left...)...)
		texts = append(texts, prose(320, 100, 10, rightCol...)...)
		mk("prose-columns", texts)
	}
	{
		var texts []fxText
		items := []string{"Returns are due within 30 days of the end of the quarter.", "Late returns are estimated from the previous quarter.", "Figures under 50 are suppressed to protect confidentiality.", "Totals may not add because of rounding.", "Regions follow the 2021 boundaries."}
		texts = append(texts, fxText{x: 60, y: 80, size: 12, bold: true, text: "Notes"})
		for i, it := range items {
			texts = append(texts, fxText{x: 66, y: 104 + float64(i)*16, size: 10, text: "-"}, fxText{x: 80, y: 104 + float64(i)*16, size: 10, text: it})
		}
		mk("bullets", texts)
	}
	{
		var texts []fxText
		labels := []string{"Name of business:", "Registration number:", "Address:", "Telephone:", "Contact person:", "Date of return:"}
		for i, l := range labels {
			texts = append(texts, fxText{x: 60, y: 100 + float64(i)*26, size: 10, text: l}, fxText{x: 200, y: 100 + float64(i)*26, size: 10, text: strings.Repeat("_", 40)})
		}
		mk("form", texts)
	}
	{
		// Printed "Key: value" lines: a form, not a table.
		var texts []fxText
		kv := [][2]string{{"Applicant:", "Daniel Okonkwo"}, {"Reference:", "AP-7731-K"}, {"Date of birth:", "04/09/1979"}, {"Telephone:", "0161 496 0358"},
			{"Account:", "40 17 22 91"}, {"Amount:", "312.40"}, {"Office:", "Leeds North"}}
		for i, p := range kv {
			texts = append(texts, fxText{x: 64, y: 110 + float64(i)*17, size: 10, bold: true, text: p[0]}, fxText{x: 190, y: 110 + float64(i)*17, size: 10, text: p[1]})
		}
		mk("keyvalue", texts)
	}
	{
		// A table of contents without dot leaders: titles, and page
		// numbers at the right margin.
		var texts []fxText
		toc := [][2]string{{"Foreword", "2"}, {"1 Scope", "5"}, {"2 Terms used", "6"}, {"3 Sampling", "11"}, {"3.1 Frames", "12"}, {"4 Estimation", "19"}, {"5 Quality", "26"}, {"Annex", "33"}}
		texts = append(texts, fxText{x: 60, y: 70, size: 15, bold: true, text: "Contents"})
		for i, e := range toc {
			texts = append(texts, fxText{x: 60, y: 104 + float64(i)*19, size: 11, text: e[0]}, fxText{x: 520, y: 104 + float64(i)*19, size: 11, text: e[1]})
		}
		mk("toc-nodots", texts)
	}
	{
		// Numbered references.
		var texts []fxText
		refs := []string{"Ahmed R, Booth L. Seasonal demand for home visits. Prim Care 2018; 12: 44-51.", "Carver T. Counting contacts in district nursing. Nurs Times 2020; 116: 30-2.",
			"Diaz P et al. Outcomes after early discharge. Age Ageing 2021; 50: 1120-8.", "Evans H. Rural access to clinics. Health Place 2019; 58: 102-9.",
			"Fischer G, Wu Y. Costing community services. York: CHE, 2022."}
		texts = append(texts, fxText{x: 60, y: 70, size: 13, bold: true, text: "References"})
		for i, r := range refs {
			texts = append(texts, fxText{x: 60, y: 96 + float64(i)*15, size: 9.5, text: fmt.Sprintf("%d.", i+1)}, fxText{x: 78, y: 96 + float64(i)*15, size: 9.5, text: r})
		}
		mk("references", texts)
	}
	return pages
}

// bottom is where the table's last row ends, in points.
func (tb fxTable) bottom() float64 {
	n := tb.hr + len(tb.body)
	if tb.total != nil {
		n++
	}
	if tb.gapEvery > 0 && len(tb.body) > 0 {
		n += (len(tb.body) - 1) / tb.gapEvery
	}
	return tb.y + float64(n)*tb.rowH
}
