// Package speakers attributes a live transcript to speakers for pass 2
// (contract document 1, section 6): Align cuts Whisper's timed sentences
// at the diarizer's turn changes and numbers the lines; ByQuestions is the
// role map's fallback rule.
package speakers

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"boxd/engine/diarize"
)

// Alignment rule (decisions.md, "Pass 2: aligning sentences to speakers").
// Whisper's sentences carry their span (start, and the end of the speech
// the VAD cut them from), not word times. Within a sentence's span:
//
//  1. the span is cut at every turn boundary inside it; each piece goes to
//     the speaker active there (where turns overlap, the one of them with
//     the most speech in the sentence; where none is, the piece joins its
//     neighbour);
//  2. runs of one speaker shorter than minRunS are absorbed by the longer
//     neighbouring run (a backchannel or a boundary a few frames off does
//     not split a sentence);
//  3. a sentence left with several runs is split at the turn changes: its
//     words are divided between the runs in proportion to their duration
//     (at least one word each, at word boundaries), each cut moved to the
//     nearest sentence end (. ? !) within two words, else the nearest
//     clause end (, ; :); with fewer words than runs the shortest runs are
//     absorbed first;
//  4. a sentence no turn overlaps goes to the speaker of the nearest turn
//     (within maxGapS; otherwise no speaker).
//
// Lines are numbered n from 1 in order; speakers are renamed S01, S02, …
// in order of their first line.
const (
	minRunS = 0.6
	maxGapS = 3.0
)

// turnRun is one speaker's stretch within a sentence.
type turnRun struct {
	speaker    int
	start, end float64
}

// Span is one sentence of the live transcript: its text and its speech's
// start and end in seconds (End 0: not known).
type Span struct {
	Start, End float64
	Text       string
}

// Line is one numbered line of the speaker-attributed transcript: N from
// 1, Speaker S01, S02, … ("" where no turn is near), End nil where the
// sentence's end was not known.
type Line struct {
	N       int
	Speaker string
	Start   float64
	End     *float64
	Text    string
}

// Align turns the live sentences and the diarizer's turns into numbered,
// speaker-attributed lines.
func Align(sentences []Span, turns []diarize.Turn) []Line {
	var lines []Line
	for k, s := range sentences {
		a, b := s.Start, s.End
		known := b > a
		if !known {
			b = estimateEnd(sentences, k)
		}
		runs := sentenceRuns(a, b, turns)
		parts := splitWords(s.Text, runs)
		for i, p := range parts {
			l := Line{Start: round3(p.run.start), Text: p.text}
			if p.run.speaker >= 0 {
				l.Speaker = speakerLabel(p.run.speaker)
			}
			if known || i < len(parts)-1 {
				e := round3(p.run.end)
				l.End = &e
			}
			lines = append(lines, l)
		}
	}
	// Number lines and rename speakers by first line.
	names := map[string]string{}
	for i := range lines {
		lines[i].N = i + 1
		if sp := lines[i].Speaker; sp != "" {
			name, ok := names[sp]
			if !ok {
				name = speakerLabel(len(names))
				names[sp] = name
			}
			lines[i].Speaker = name
		}
	}
	if lines == nil {
		lines = []Line{}
	}
	return lines
}

// speakerLabel is S01 for speaker 0.
func speakerLabel(i int) string { return fmt.Sprintf("S%02d", i+1) }

// estimateEnd is where a sentence without a known end stops: the next
// sentence's start, or about 0.35 s a word.
func estimateEnd(sentences []Span, k int) float64 {
	s := sentences[k]
	guess := s.Start + 0.35*float64(max(1, len(strings.Fields(s.Text))))
	if k+1 < len(sentences) && sentences[k+1].Start > s.Start {
		return math.Min(guess, sentences[k+1].Start)
	}
	return guess
}

// sentenceRuns applies steps 1, 2 and 4 of the rule to the span [a, b]:
// the runs of speakers within it (speaker -1: none found).
func sentenceRuns(a, b float64, turns []diarize.Turn) []turnRun {
	// Speech of each speaker within the span.
	within := map[int]float64{}
	cuts := []float64{a, b}
	for _, t := range turns {
		if o := math.Min(b, t.End) - math.Max(a, t.Start); o > 0 {
			within[t.Speaker] += o
			for _, x := range []float64{t.Start, t.End} {
				if x > a && x < b {
					cuts = append(cuts, x)
				}
			}
		}
	}
	if len(within) == 0 {
		return []turnRun{{speaker: nearestSpeaker(a, b, turns), start: a, end: b}}
	}
	sort.Float64s(cuts)
	var runs []turnRun
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		if hi-lo <= 1e-9 {
			continue
		}
		mid := (lo + hi) / 2
		best, bestS := -1, -1.0
		for _, t := range turns {
			if t.Start <= mid && mid < t.End && (within[t.Speaker] > bestS || (within[t.Speaker] == bestS && t.Speaker < best)) {
				best, bestS = t.Speaker, within[t.Speaker]
			}
		}
		if n := len(runs); n > 0 && (runs[n-1].speaker == best || best < 0) {
			runs[n-1].end = hi
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].speaker < 0 {
			runs[n-1].speaker, runs[n-1].end = best, hi
			continue
		}
		runs = append(runs, turnRun{speaker: best, start: lo, end: hi})
	}
	return absorbShort(runs, minRunS)
}

// absorbShort merges runs shorter than minS into their longer neighbour,
// shortest first, until every run is long enough or one is left.
func absorbShort(runs []turnRun, minS float64) []turnRun {
	for len(runs) > 1 {
		k := -1
		for i, r := range runs {
			if d := r.end - r.start; d < minS && (k < 0 || d < runs[k].end-runs[k].start) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		runs = absorb(runs, k)
	}
	return runs
}

// absorb merges run k into its longer neighbour.
func absorb(runs []turnRun, k int) []turnRun {
	into := k - 1
	if k == 0 || (k+1 < len(runs) && runs[k+1].end-runs[k+1].start > runs[k-1].end-runs[k-1].start) {
		into = k + 1
	}
	if into < k {
		runs[into].end = runs[k].end
	} else {
		runs[into].start = runs[k].start
	}
	runs = append(runs[:k], runs[k+1:]...)
	// Neighbours of one speaker become one run.
	for i := 0; i+1 < len(runs); {
		if runs[i].speaker == runs[i+1].speaker {
			runs[i].end = runs[i+1].end
			runs = append(runs[:i+1], runs[i+2:]...)
			continue
		}
		i++
	}
	return runs
}

// nearestSpeaker is the speaker of the turn nearest the span, -1 when
// none is within maxGapS.
func nearestSpeaker(a, b float64, turns []diarize.Turn) int {
	best, bestD := -1, maxGapS
	for _, t := range turns {
		d := math.Max(t.Start-b, a-t.End)
		if d <= bestD {
			best, bestD = t.Speaker, d
		}
	}
	return best
}

// part is one line cut from a sentence.
type part struct {
	run  turnRun
	text string
}

// splitWords divides text's words between runs in proportion to their
// durations (step 3 of the rule).
func splitWords(text string, runs []turnRun) []part {
	words := strings.Fields(text)
	for len(runs) > 1 && len(runs) > len(words) {
		k := 0
		for i, r := range runs {
			if r.end-r.start < runs[k].end-runs[k].start {
				k = i
			}
		}
		runs = absorb(runs, k)
	}
	if len(runs) == 1 {
		return []part{{run: runs[0], text: strings.TrimSpace(text)}}
	}
	total := runs[len(runs)-1].end - runs[0].start
	parts := make([]part, len(runs))
	from := 0
	for i, r := range runs {
		to := len(words)
		if i < len(runs)-1 {
			lo, hi := from+1, len(words)-(len(runs)-1-i) // at least one word here and one for each run after
			to = int(math.Round(float64(len(words)) * (r.end - runs[0].start) / total))
			to = snap(words, min(max(to, lo), hi), lo, hi)
		}
		parts[i] = part{run: r, text: strings.Join(words[from:to], " ")}
		from = to
	}
	return parts
}

// snapWords is how far a cut moves to meet punctuation.
const snapWords = 2

// snap moves the cut before word k (within lo..hi) to the nearest word
// boundary within snapWords that ends a sentence (. ? !), else a clause
// (, ; :), else leaves it: Whisper punctuates, and a turn change falls far
// more often at a sentence's end than inside it.
func snap(words []string, k, lo, hi int) int {
	for _, marks := range []string{".?!", ",;:"} {
		for d := 0; d <= snapWords; d++ {
			for _, c := range []int{k - d, k + d} {
				if c >= lo && c <= hi && c > 0 && strings.ContainsAny(words[c-1][len(words[c-1])-1:], marks) {
					return c
				}
			}
		}
	}
	return k
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
