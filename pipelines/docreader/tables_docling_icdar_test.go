package docreader

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/raster"
)

// TestTableDoclingICDAR scores the reader's tables on Docling's test
// PDFs (a set this project did not write; its groundtruth is Docling's
// own pipeline output) with the ICDAR 2013 measures of
// TestTableFixturesICDAR: every page of a document with a groundtruth
// table, each table's box and cells. Skipped without BOXD_TEST_DATA
// (required under CI, as TestDoclingGroundtruth).
func TestTableDoclingICDAR(t *testing.T) {
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BOXD_TEST_DATA is not set (the Makefile sets it)")
		}
		t.Skip("BOXD_TEST_DATA is not set; run through make")
	}
	base := filepath.Join(dir, "docling-tests", "pdf")
	srcs, _ := filepath.Glob(filepath.Join(base, "sources", "*.pdf"))
	rd := &reader{ocr: ocrForTest(t)} // one page of redp5110_sampled is a scan
	var all icdarScore
	docs := 0
	for _, src := range srcs {
		stem := strings.TrimSuffix(filepath.Base(src), ".pdf")
		raw, err := os.ReadFile(filepath.Join(base, "groundtruth", stem+".json"))
		if err != nil {
			continue
		}
		var gt doclingDoc
		if err := json.Unmarshal(raw, &gt); err != nil {
			t.Fatalf("%s: %v", stem, err)
		}
		byPage := map[int][]doclingItem{}
		for _, tb := range gt.Tables {
			if len(tb.Prov) > 0 {
				byPage[tb.Prov[0].PageNo] = append(byPage[tb.Prov[0].PageNo], tb)
			}
		}
		if len(byPage) == 0 {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		pages, err := readDocling(rd, src, data)
		if err != nil {
			t.Errorf("%s: %v", stem, err)
			continue
		}
		docs++
		for _, pg := range pages {
			var truth []icdarTable
			hPt := float64(pg.Height) / Scale
			for _, tb := range byPage[pg.Page] {
				b := tb.Prov[0].BBox
				box := raster.Box{X0: b.L * Scale, Y0: (hPt - b.T) * Scale, X1: b.R * Scale, Y1: (hPt - b.B) * Scale}
				if b.CoordOrigin == "TOPLEFT" {
					box = raster.Box{X0: b.L * Scale, Y0: b.T * Scale, X1: b.R * Scale, Y1: b.B * Scale}
				}
				it := icdarTable{box: box}
				for _, c := range tb.Data.TableCells {
					it.cells = append(it.cells, fxCell{c.StartRow, c.StartCol, c.EndRow - c.StartRow, c.EndCol - c.StartCol, c.Text})
				}
				truth = append(truth, it)
			}
			det := detectedTables(pg)
			if len(truth) == 0 && len(det) == 0 {
				continue
			}
			s := scorePage(stem, truth, det)
			t.Logf("%s p%d: %s", stem, pg.Page, s)
			all.add(s)
		}
	}
	if docs == 0 {
		t.Fatalf("no document with a groundtruth table under %s", base)
	}
	t.Logf("missed %v; split %v; impure %v", all.missed, all.split, all.overreached)
	t.Logf("all: %s", all)
	if all.gtTables-len(all.missed) < doclingICDARFoundFloor || all.f1() < doclingICDARF1Floor {
		t.Errorf("under the floors (%d tables found, relations F1 %.2f): %s", doclingICDARFoundFloor, doclingICDARF1Floor, all)
	}
}

// The floors of TestTableDoclingICDAR: tables holding some of a
// groundtruth table's words, and the relations' F1 (measured 9 of 9 and
// 0.874, precision 0.850, recall 0.899, when issue 35 landed). Docling's
// boxes come from its layout model and are wider than the text, so no
// detection contains one strictly: containment is reported, not held.
const (
	doclingICDARFoundFloor = 9
	doclingICDARF1Floor    = 0.87
)
