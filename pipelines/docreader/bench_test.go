package docreader

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"boxd/engine/mupdf"
	"boxd/pipelines/docreader/ocr"
)

// BenchmarkRead measures pages per second on this machine, each against
// a named peer in the same run (ratios above 1: boxd is faster):
//
//   - born-digital: Docling's normal_4pages.pdf (4 pages with a text
//     layer) read whole (raster at 144 DPI and its hash, text layer with
//     character boxes, layout), against poppler's `pdftotext
//     -bbox-layout` (text with word boxes, no raster) and against it with
//     `pdftoppm -r 144` (the same work: boxes and a raster of every page);
//   - scanned: the generated scanned-chart page read by OCR (raster,
//     Tesseract through its API, layout), against the `tesseract` CLI
//     (the same engine and model; each run loads the model) on the same
//     raster as a PNG.
//
// Each side runs BOXD_BENCH_DOC_REPS times (default 3).
func BenchmarkRead(b *testing.B) {
	reps := 3
	if v := os.Getenv("BOXD_BENCH_DOC_REPS"); v != "" {
		if n, err := time.ParseDuration(v + "s"); err == nil && n > 0 {
			reps = int(n.Seconds())
		}
	}
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		b.Skip("BOXD_TEST_DATA is not set; run through make bench")
	}
	b.Run("born-digital", func(b *testing.B) {
		path := filepath.Join(dir, "docling-tests/pdf/sources/normal_4pages.pdf")
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		rd := &reader{}
		ours := timeIt(b, reps, func() int {
			_, pages, err := rd.readFile(context.Background(), data, 100)
			if err != nil {
				b.Fatal(err)
			}
			return len(pages)
		})
		peer := peerRate(b, reps, 4, "pdftotext", "-bbox-layout", path, os.DevNull)
		report(b, ours, peer, "pdftotext")
		// The same work as boxd's: the text with boxes and a 144 DPI raster
		// of every page (poppler's pdftoppm writes them as PPM files).
		out := filepath.Join(b.TempDir(), "page")
		both := peerRate(b, reps, 4, "sh", "-c", `pdftotext -bbox-layout "$1" /dev/null && pdftoppm -r 144 "$1" "$2"`, "sh", path, out)
		if both > 0 {
			b.ReportMetric(both, "peer_raster_pages/s")
			b.ReportMetric(ours/both, "ratio_raster")
			b.Logf("boxd %.2f pages/s, pdftotext + pdftoppm -r 144 %.2f pages/s: %.2f×", ours, both, ours/both)
		}
	})
	b.Run("scanned", func(b *testing.B) {
		o, err := ocr.New()
		if err != nil {
			b.Skipf("no tesseract: %v", err)
		}
		defer o.Close()
		rd := &reader{ocr: o}
		data, err := Sample(SampleScanned)
		if err != nil {
			b.Fatal(err)
		}
		ours := timeIt(b, reps, func() int {
			_, pages, err := rd.readFile(context.Background(), data, 100)
			if err != nil {
				b.Fatal(err)
			}
			return len(pages)
		})
		doc, err := mupdf.Open(data, "application/pdf")
		if err != nil {
			b.Fatal(err)
		}
		_, img, err := doc.Page(context.Background(), 0, Scale, MaxPagePixels)
		doc.Close()
		if err != nil {
			b.Fatal(err)
		}
		var pngb bytes.Buffer
		if err := png.Encode(&pngb, img.ToImage()); err != nil {
			b.Fatal(err)
		}
		pngPath := filepath.Join(b.TempDir(), "page.png")
		if err := os.WriteFile(pngPath, pngb.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
		peer := peerRate(b, reps, 1, "tesseract", pngPath, "-", "-l", "eng", "tsv")
		report(b, ours, peer, "tesseract CLI")
	})
}

// timeIt runs f reps times and returns pages per second.
func timeIt(b *testing.B, reps int, f func() int) float64 {
	f() // warm: MuPDF's fonts, Tesseract's model
	pages := 0
	start := time.Now()
	for range reps {
		pages += f()
	}
	return float64(pages) / time.Since(start).Seconds()
}

// peerRate runs a command reps times over a document of pages pages and
// returns pages per second (0 when the command is missing).
func peerRate(b *testing.B, reps, pages int, name string, args ...string) float64 {
	if _, err := exec.LookPath(name); err != nil {
		b.Logf("%s not found (make deps installs it): no peer figure", name)
		return 0
	}
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	start := time.Now()
	for range reps {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	return float64(reps*pages) / time.Since(start).Seconds()
}

func report(b *testing.B, ours, peer float64, name string) {
	b.ReportMetric(ours, "pages/s")
	if peer > 0 {
		b.ReportMetric(peer, "peer_pages/s")
		b.ReportMetric(ours/peer, "ratio")
		b.Logf("boxd %.2f pages/s, %s %.2f pages/s: %.2f×", ours, name, peer, ours/peer)
	}
}
