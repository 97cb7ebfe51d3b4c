package chart

import (
	"math"
	"regexp"
	"sort"
	"strconv"

	"boxd/engine/raster"
)

// What the chart readers share: this package's (survival, bar and line
// charts) and chart/forest's. Pixels are RGB triples as raster.Image
// holds them; axes are calibrated from Ticks as rule 3 says.

// Colored says whether a pixel is coloured: its channels differ by more
// than 60 (rule 1).
func Colored(p []byte) bool {
	hi := max(p[0], p[1], p[2])
	lo := min(p[0], p[1], p[2])
	return int(hi)-int(lo) > 60
}

// digitsRE finds a zero OCR read as a letter or "@" before a decimal
// point ("@.45", "O.62").
var digitsRE = regexp.MustCompile(`(^|[^A-Za-z0-9])[@OoQ](\.[0-9])`)

// MendZeros reads a zero OCR read as a letter or "@" before a decimal
// point as the zero it is ("@.45" is "0.45", "O.62" is "0.62").
func MendZeros(s string) string { return digitsRE.ReplaceAllString(s, "${1}0$2") }

// LongestRun is the longest run of true over [0, n), bridging gaps of
// up to 2: its start and end (exclusive).
func LongestRun(n int, on func(int) bool) (int, int) {
	ba, bb := 0, 0
	start, last := -1, -10
	for i := range n {
		if !on(i) {
			continue
		}
		if start < 0 || i-last > 3 {
			start = i
		}
		last = i
		if last+1-start > bb-ba {
			ba, bb = start, last+1
		}
	}
	return ba, bb
}

// Fit fits value = a + b × pixel to the ticks, dropping the worst label
// once when it is more than 2% of the range off; false when fewer than
// two distinct values remain or the pixels do not spread.
func Fit(ts []Tick) (Axis, bool) {
	for round := 0; round < 2; round++ {
		distinct := map[float64]bool{}
		for _, t := range ts {
			distinct[t.Value] = true
		}
		if len(distinct) < 2 {
			return Axis{}, false
		}
		var sx, sy, sxx, sxy float64
		n := float64(len(ts))
		for _, t := range ts {
			sx += t.Pixel
			sy += t.Value
			sxx += t.Pixel * t.Pixel
			sxy += t.Pixel * t.Value
		}
		den := n*sxx - sx*sx
		if den == 0 {
			return Axis{}, false
		}
		b := (n*sxy - sx*sy) / den
		a := (sy - b*sx) / n
		lo, hi := ts[0].Value, ts[0].Value
		worst, worstD := -1, 0.0
		for i, t := range ts {
			lo, hi = min(lo, t.Value), max(hi, t.Value)
			if d := math.Abs(a + b*t.Pixel - t.Value); d > worstD {
				worst, worstD = i, d
			}
		}
		if worstD > 0.02*(hi-lo) && round == 0 && len(ts) > 2 {
			ts = append(ts[:worst:worst], ts[worst+1:]...)
			continue
		}
		sorted := append([]Tick(nil), ts...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Pixel < sorted[j].Pixel })
		return Axis{Ticks: sorted, Offset: a, Scale: b, Min: lo, Max: hi, ResidualMax: round4(worstD)}, true
	}
	return Axis{}, false
}

// Marks are the middles of the runs where on holds over [0, n): tick
// marks along an axis.
func Marks(n int, on func(int) bool) []float64 {
	var out []float64
	start := -1
	for i := 0; i <= n; i++ {
		if i < n && on(i) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, float64(start+i-1)/2)
			start = -1
		}
	}
	return out
}

// NearestMark is the index of the mark nearest p, at most within away,
// or -1.
func NearestMark(ms []float64, p, within float64) int {
	best, bestD := -1, within
	for i, m := range ms {
		if d := math.Abs(m - p); d <= bestD {
			best, bestD = i, d
		}
	}
	return best
}

// TextLines groups words into lines (vertical overlap of half), each
// left to right, lines top to bottom.
func TextLines(ws []Word) [][]Word {
	s := append([]Word(nil), ws...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Box.Y0 < s[j].Box.Y0 })
	var out [][]Word
	var box raster.Box
	for _, w := range s {
		if n := len(out); n > 0 {
			ov := min(box.Y1, w.Box.Y1) - max(box.Y0, w.Box.Y0)
			if 2*ov >= min(box.Y1-box.Y0, w.Box.Y1-w.Box.Y0) {
				out[n-1] = append(out[n-1], w)
				box = box.Union(w.Box)
				continue
			}
		}
		out = append(out, []Word{w})
		box = w.Box
	}
	for _, l := range out {
		sort.SliceStable(l, func(i, j int) bool { return l[i].Box.X0 < l[j].Box.X0 })
	}
	return out
}

// Round rounds v to places decimal places.
func Round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// Sig3 rounds to three significant digits.
func Sig3(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// Ftoa writes v as flags quote a number: its shortest decimal form.
func Ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
