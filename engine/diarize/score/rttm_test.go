package score

import (
	"bytes"
	"strings"
	"testing"

	"boxd/engine/diarize"
)

func TestReadRTTM(t *testing.T) {
	in := `;; a comment
SPKR-INFO f 1 <NA> <NA> <NA> unknown A <NA> <NA>

SPEAKER f 1 0.500 1.250 <NA> <NA> A <NA> <NA>
LEXEME f 1 0.6 0.2 hello lex A <NA>
speaker f 1 2 1 <NA> <NA> B
`
	segs, err := ReadRTTM(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{{"f", "A", 0.5, 1.75}, {"f", "B", 2, 3}}
	if len(segs) != len(want) || segs[0] != want[0] || segs[1] != want[1] {
		t.Fatalf("ReadRTTM = %v, want %v", segs, want)
	}

	for in, msg := range map[string]string{
		"SPEAKER f 1 0 1 <NA> <NA>\n":               "line 1",
		"\nSPEAKER f 1 x 1 <NA> <NA> A\n":           "line 2: times",
		"SPEAKER f 1 -1 1 <NA> <NA> A\n":            "not a stretch",
		"SPEAKER f 1 0 0 <NA> <NA> A\n":             "not above 0",
		"SPEAKER f 1 0 NaN <NA> <NA> A\n":           "not above 0",
		"SPEAKER f 1 1e300 1e-300 <NA> <NA> A\n":    "not a stretch",
		"SPEAKER f 1 0 1 <NA> <NA> A\n" + long(2e6): "reading rttm",
	} {
		_, err := ReadRTTM(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ReadRTTM(%.40q) error %v, want one saying %q", in, err, msg)
		}
	}
}

func long(n int) string { return strings.Repeat("x", n) }

func TestWriteRTTM(t *testing.T) {
	segs := []Segment{{"f", "S01", 0.5, 1.75}, {"g", "S02", 2.0004, 3.1}}
	var b bytes.Buffer
	if err := WriteRTTM(&b, segs); err != nil {
		t.Fatal(err)
	}
	want := "SPEAKER f 1 0.500 1.250 <NA> <NA> S01 <NA> <NA>\nSPEAKER g 1 2.000 1.100 <NA> <NA> S02 <NA> <NA>\n"
	if b.String() != want {
		t.Fatalf("WriteRTTM wrote\n%s\nwant\n%s", b.String(), want)
	}
	back, err := ReadRTTM(&b)
	if err != nil || len(back) != 2 || back[0] != segs[0] {
		t.Fatalf("read back %v, %v", back, err)
	}
	for _, bad := range []Segment{{"f", "a b", 0, 1}, {"f", "A", 1, 1}, {"", "A", 0, 1}} {
		if err := WriteRTTM(&b, []Segment{bad}); err == nil {
			t.Errorf("WriteRTTM(%v): no error", bad)
		}
	}
}

func TestReadUEM(t *testing.T) {
	in := "; comment\nrec1.wav 1 5 10\nrec1.wav 1 0 6\nrec1 1 20 30\nrec2 1 1.5 2\n\n"
	u, err := ReadUEM(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 2 || len(u["rec1"]) != 2 || u["rec1"][0] != [2]float64{0, 10} || u["rec1"][1] != [2]float64{20, 30} || u["rec2"][0] != [2]float64{1.5, 2} {
		t.Fatalf("ReadUEM = %v", u)
	}
	for _, bad := range []string{"f 1 0\n", "f 1 2 1\n", "f 1 -1 1\n", "f 1 0 x\n"} {
		if _, err := ReadUEM(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ReadUEM(%q) error %v, want one naming line 1", bad, err)
		}
	}
	for in, want := range map[string]string{"a.wav": "a", "a.b.c": "a.b", ".hidden": ".hidden", "d.x/e": "d.x/e", "a": "a"} {
		if got := stripExt(in); got != want {
			t.Errorf("stripExt(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFromResult(t *testing.T) {
	r := diarize.Result{Speakers: 11, Turns: []diarize.Turn{
		{Start: 0, End: 1.5, Speaker: 0},
		{Start: 1, End: 1, Speaker: 1},
		{Start: 2, End: 3, Speaker: 10},
	}}
	got := FromResult("rec", r)
	want := []Segment{{"rec", "S01", 0, 1.5}, {"rec", "S11", 2, 3}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("FromResult = %v, want %v", got, want)
	}
	s, err := Score(want, got, Options{})
	if err != nil || s.DER != 0 {
		t.Fatalf("scoring a result against itself: %+v, %v", s, err)
	}
}

func FuzzReadRTTM(f *testing.F) {
	f.Add([]byte("SPEAKER f 1 0.5 1.25 <NA> <NA> A <NA> <NA>\nSPEAKER f 1 1 2 <NA> <NA> B <NA> <NA>\n"))
	f.Add([]byte(";c\nSPKR-INFO f 1 <NA> <NA> <NA> unknown A\nSPEAKER f 1 x 1 <NA> <NA> A\n"))
	f.Add([]byte("SPEAKER a 1 1e9 0.0001 <NA> <NA> S <NA>\nSPEAKER a 1 0 1e-9 <NA> <NA> S\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		segs, err := ReadRTTM(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i, s := range segs {
			if err := s.check(); err != nil {
				t.Fatalf("segment %d read without error is invalid: %v", i, err)
			}
		}
		var b bytes.Buffer
		if err := WriteRTTM(&b, segs); err != nil {
			t.Fatalf("WriteRTTM of read segments: %v", err)
		}
		if len(segs) > 64 {
			return
		}
		for _, s := range segs {
			if s.End > 1e6 {
				return
			}
		}
		sc, err := Score(segs, segs, Options{})
		if err != nil || sc.DER != 0 {
			t.Fatalf("Score of segments against themselves = %+v, %v; want DER 0", sc, err)
		}
	})
}
