package samples

import (
	"image/png"
	"math"
	"os"
	"testing"
)

// TestKMTruth: the curve, median and numbers at risk of a small arm
// worked by hand.
func TestKMTruth(t *testing.T) {
	a := Arm{Times: []float64{1, 2, 2, 3, 4, 5}, Events: []bool{true, true, false, true, false, true}}
	km := a.KM()
	// n=6: t=1 S=5/6; t=2 (1 event of 5) S=5/6*4/5=2/3; t=3 (1 of 3) S=4/9; t=5 (1 of 1) S=0.
	want := []KMStep{{0, 1}, {1, 5.0 / 6}, {2, 2.0 / 3}, {3, 4.0 / 9}, {5, 0}}
	if len(km) != len(want) {
		t.Fatalf("%v", km)
	}
	for i := range want {
		if km[i].T != want[i].T || math.Abs(km[i].S-want[i].S) > 1e-12 {
			t.Errorf("step %d: %+v, want %+v", i, km[i], want[i])
		}
	}
	if a.Median() != 3 || a.AtRisk(2) != 5 || a.AtRisk(4.5) != 1 {
		t.Errorf("median %v, at risk %d %d", a.Median(), a.AtRisk(2), a.AtRisk(4.5))
	}
	if p := os.Getenv("BOXD_KM_PNG"); p != "" {
		img, err := DrawKM(KMChart{Arms: []Arm{SimArm("Arm A", 120, 14, 24, 1, ArmColors[0]), SimArm("Arm B", 120, 8, 24, 2, ArmColors[1])},
			MaxT: 24, Ticks: []float64{0, 6, 12, 18, 24}, HR: "HR 0.62 (95% CI 0.45-0.85)"})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Create(p)
		png.Encode(f, img)
		f.Close()
	}
}
