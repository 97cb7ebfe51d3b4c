package score

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"boxd/engine/diarize"
)

// Segment is one RTTM SPEAKER line: Speaker talks in File from Start to
// End, in seconds from the file's start.
type Segment struct {
	File, Speaker string
	Start, End    float64
}

// UEM maps a file to the regions of it that are scored, [start, end) in
// seconds.
type UEM map[string][][2]float64

// eachLine calls fn with the fields of each line of r that is neither
// blank nor a comment (';' or '#', as md-eval skips), naming the line in
// fn's errors. Lines are at most 1 MiB.
func eachLine(r io.Reader, kind string, fn func(f []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0][0] == ';' || f[0][0] == '#' {
			continue
		}
		if err := fn(f); err != nil {
			return fmt.Errorf("score: %s line %d: %w", kind, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("score: reading %s: %w", kind, err)
	}
	return nil
}

func parseTimes(a, b string) (x, y float64, err error) {
	if x, err = strconv.ParseFloat(a, 64); err == nil {
		y, err = strconv.ParseFloat(b, 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("times %q, %q: not numbers", a, b)
	}
	return x, y, nil
}

// ReadRTTM reads the SPEAKER lines of an RTTM file (type, file, channel,
// onset, duration, <NA>, <NA>, speaker, ...); lines of other types, blank
// lines and comments are skipped. Onsets must be at least 0 and
// durations above 0, as dscore demands. Errors name the line.
func ReadRTTM(r io.Reader) ([]Segment, error) {
	var segs []Segment
	err := eachLine(r, "rttm", func(f []string) error {
		if !strings.EqualFold(f[0], "SPEAKER") {
			return nil
		}
		if len(f) < 8 {
			return fmt.Errorf("%d fields; a SPEAKER line needs at least 8 (the speaker is the 8th)", len(f))
		}
		on, dur, err := parseTimes(f[3], f[4])
		if err != nil {
			return err
		}
		if !(dur > 0) {
			return fmt.Errorf("duration %v is not above 0", dur)
		}
		s := Segment{File: f[1], Speaker: f[7], Start: on, End: on + dur}
		segs = append(segs, s)
		return s.check()
	})
	if err != nil {
		return nil, err
	}
	return segs, nil
}

func (s Segment) check() error {
	if s.File == "" || s.Speaker == "" {
		return fmt.Errorf("file %q, speaker %q: both must be named", s.File, s.Speaker)
	}
	if !(s.Start >= 0 && s.End > s.Start && s.End <= math.MaxFloat64) {
		return fmt.Errorf("file %s, speaker %s: %v to %v is not a stretch of time from 0 on", s.File, s.Speaker, s.Start, s.End)
	}
	return nil
}

// WriteRTTM writes segs as RTTM SPEAKER lines, channel 1, onset and
// duration to the millisecond as dscore writes them.
func WriteRTTM(w io.Writer, segs []Segment) error {
	bw := bufio.NewWriter(w)
	for i, s := range segs {
		err := s.check()
		if err == nil && strings.ContainsAny(s.File+s.Speaker, " \t\r\n\v\f") {
			err = fmt.Errorf("file %q or speaker %q holds white space", s.File, s.Speaker)
		}
		if err != nil {
			return fmt.Errorf("score: writing rttm: segment %d: %w", i, err)
		}
		fmt.Fprintf(bw, "SPEAKER %s 1 %.3f %.3f <NA> <NA> %s <NA> <NA>\n", s.File, s.Start, s.End-s.Start, s.Speaker)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("score: writing rttm: %w", err)
	}
	return nil
}

// ReadUEM reads a NIST UEM file: lines of file, channel, onset, offset;
// blank lines and comments are skipped. As dscore's load_uem does, a file
// name's extension is dropped ("a.wav" is file "a") and a file's
// overlapping regions are merged.
func ReadUEM(r io.Reader) (UEM, error) {
	u := UEM{}
	err := eachLine(r, "uem", func(f []string) error {
		if len(f) < 4 {
			return fmt.Errorf("%d fields; need file, channel, onset, offset", len(f))
		}
		on, off, err := parseTimes(f[2], f[3])
		if err != nil {
			return err
		}
		if err := checkRegion(on, off); err != nil {
			return err
		}
		id := stripExt(f[0])
		u[id] = append(u[id], [2]float64{on, off})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id, rs := range u {
		u[id] = merge(rs, false)
	}
	return u, nil
}

func checkRegion(on, off float64) error {
	if !(on >= 0 && off > on && off <= math.MaxFloat64) {
		return fmt.Errorf("region %v to %v is not a stretch of time from 0 on", on, off)
	}
	return nil
}

// stripExt drops an extension as Python's os.path.splitext does.
func stripExt(id string) string {
	i, base := strings.LastIndexByte(id, '.'), strings.LastIndexByte(id, '/')+1
	if i <= base || strings.Trim(id[base:i], ".") == "" {
		return id
	}
	return id[:i]
}

// FromResult turns a diarization of file into segments, speaker index 0
// named S01, 1 S02 and so on. Turns that do not end after they start are
// left out.
func FromResult(file string, r diarize.Result) []Segment {
	segs := make([]Segment, 0, len(r.Turns))
	for _, t := range r.Turns {
		if t.End > t.Start {
			segs = append(segs, Segment{File: file, Speaker: fmt.Sprintf("S%02d", t.Speaker+1), Start: t.Start, End: t.End})
		}
	}
	return segs
}
