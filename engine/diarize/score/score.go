// Package score rates a diarization against a reference: diarization error
// rate (DER) and Jaccard error rate (JER), computed as dscore
// (github.com/nryant/dscore at e02f949) computes them, DER through the
// md-eval-22.pl it calls. It also reads and writes RTTM and reads UEM
// files.
//
// Preparation, as dscore's score.py:
//   - Scored regions (UEM): Options.UEM when set; files not in it are not
//     scored. When nil, each file found in the reference or the system
//     output gets one region, from the earliest onset to the latest offset
//     over both (dscore's gen_uem). A file's overlapping regions are merged.
//   - Every turn is cut to its file's regions, then a speaker's turns that
//     overlap are merged.
//
// DER, as md-eval -c collar [-1] on the millisecond-rounded RTTM and UEM
// files dscore writes (onset and duration each rounded; end = onset +
// duration):
//   - Speakers are mapped one to one (Hungarian method) to maximise the
//     time a reference speaker and its system speaker both speak, measured
//     over the whole UEM, before collars or overlap exclusion.
//   - Scored time is the UEM less a no-score zone of ±Collar seconds
//     around every reference turn's start and end, and, with
//     IgnoreOverlaps, less every stretch in which two or more reference
//     turns are active.
//   - Scored time is cut at every turn boundary; a piece of d seconds with
//     nref reference and nsys system speakers adds d·nref to Scored,
//     d·max(nref−nsys, 0) to Miss, d·max(nsys−nref, 0) to FalseAlarm and
//     d·(min(nref, nsys) − mapped pairs both speaking) to Confusion.
//   - Files without reference turns (after cutting) are left out, as
//     md-eval leaves them out. DER = 100·(Miss+FalseAlarm+Confusion)/Scored
//     over all files; 0 when nothing is scored nor wrong, 100 when nothing
//     is scored but something is wrong.
//
// JER, as dscore's metrics.jer, ignores Collar and IgnoreOverlaps: turns
// become 10 ms frames within the UEM (dscore's turns_to_frames); each
// reference speaker r mapped (Hungarian method, least total error) to a
// system speaker s has error 1 − |r∩s|/|r∪s| in frames, an unmapped one 1.
// The overall JER is the mean in percent over all reference speakers of
// all files; 100 when there are system speakers but no reference speaker
// anywhere, or reference speakers but no system speaker anywhere; 0 when
// neither. Frames use the cut turns and UEM as they are, not rounded.
//
// Where dscore itself fails (md-eval dividing by a file's zero scored
// time, or a NaN Jaccard error for two speakers without frames) the rules
// above give the figure (such a pair's error is 1).
package score

import (
	"fmt"
	"math"
)

// Options say how to score.
type Options struct {
	// Collar is the no-score zone, in seconds either side of every
	// reference turn boundary, for DER (dscore's --collar, md-eval's -c).
	Collar float64
	// IgnoreOverlaps leaves reference overlapped speech out of DER
	// (dscore's --ignore_overlaps, md-eval's -1).
	IgnoreOverlaps bool
	// UEM holds the scored regions; nil derives them from the turns.
	UEM UEM
}

// Scores are DER and JER in percent and DER's times in seconds of
// speaker time (a second of two speakers counts twice).
type Scores struct {
	DER, JER                            float64
	Scored, Miss, FalseAlarm, Confusion float64
}

// Score rates sys against ref over all files together (dscore's OVERALL
// line).
func Score(ref, sys []Segment, o Options) (Scores, error) {
	files, err := prepare(ref, sys, o)
	if err != nil {
		return Scores{}, err
	}
	var all fileScore
	for _, f := range files {
		all.der.scored += f.der.scored
		all.der.miss += f.der.miss
		all.der.fa += f.der.fa
		all.der.conf += f.der.conf
		all.jers = append(all.jers, f.jers...)
		all.nref += f.nref
		all.nsys += f.nsys
	}
	return all.der.scores(jerOf(all.jers, all.nref, all.nsys)), nil
}

// ScoreFiles rates sys against ref file by file, for every scored file.
// A file without reference turns has DER 100 if it has system turns, else
// 0, and zero times, as dscore reports it.
func ScoreFiles(ref, sys []Segment, o Options) (map[string]Scores, error) {
	files, err := prepare(ref, sys, o)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Scores, len(files))
	for id, f := range files {
		s := f.der.scores(jerOf(f.jers, f.nref, f.nsys))
		if f.nref == 0 {
			s.DER = 0
			if f.nsys > 0 {
				s.DER = 100
			}
		}
		out[id] = s
	}
	return out, nil
}

// fileScore is one file's figures.
type fileScore struct {
	der        derStats
	jers       []float64
	nref, nsys int
}

// prepare checks the input, settles the UEM, cuts and merges the turns,
// and scores each file.
func prepare(ref, sys []Segment, o Options) (map[string]fileScore, error) {
	if !(o.Collar >= 0 && o.Collar <= math.MaxFloat64) {
		return nil, fmt.Errorf("score: collar %v must be a number from 0 on", o.Collar)
	}
	for i, s := range ref {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("score: reference segment %d: %w", i, err)
		}
	}
	for i, s := range sys {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("score: system segment %d: %w", i, err)
		}
	}
	uem := map[string][]span{}
	if o.UEM == nil {
		for _, s := range append(ref[:len(ref):len(ref)], sys...) {
			if r, ok := uem[s.File]; ok {
				uem[s.File] = []span{{min(r[0][0], s.Start), max(r[0][1], s.End)}}
			} else {
				uem[s.File] = []span{{s.Start, s.End}}
			}
		}
	} else {
		for id, rs := range o.UEM {
			for _, r := range rs {
				if err := checkRegion(r[0], r[1]); err != nil {
					return nil, fmt.Errorf("score: uem of file %s: %w", id, err)
				}
			}
			uem[id] = merge(rs, false)
		}
	}
	refBy, sysBy := cut(ref, uem), cut(sys, uem)
	files := make(map[string]fileScore, len(uem))
	for id, regions := range uem {
		var f fileScore
		f.jers, f.nref, f.nsys = jerFile(refBy[id], sysBy[id], regions)
		if f.nref > 0 {
			f.der = derFile(refBy[id], sysBy[id], regions, o)
		}
		files[id] = f
	}
	return files, nil
}

// cut trims segments to the UEM (dscore's trim_turns) and merges a
// speaker's overlapping turns (merge_turns): file -> speaker -> turns.
func cut(segs []Segment, uem map[string][]span) map[string]map[string][]span {
	by := map[string]map[string][]span{}
	for _, s := range segs {
		for _, r := range uem[s.File] {
			lo, hi := max(s.Start, r[0]), min(s.End, r[1])
			if hi <= lo {
				continue
			}
			if by[s.File] == nil {
				by[s.File] = map[string][]span{}
			}
			by[s.File][s.Speaker] = append(by[s.File][s.Speaker], span{lo, hi})
		}
	}
	for _, spk := range by {
		for name, turns := range spk {
			spk[name] = merge(turns, false)
		}
	}
	return by
}
