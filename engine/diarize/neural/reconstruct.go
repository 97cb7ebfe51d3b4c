package neural

import (
	"math"
	"slices"

	"boxd/engine/diarize"
)

// reconstruct turns the windows' local activity and their speakers'
// clusters into global activity: binary[f*k+j] is 1 when cluster j speaks
// in global frame f, over frames frames.
//
// Per frame, the speaker count is the number of active local speakers
// averaged over the windows that cover the frame, rounded half to even as
// numpy's rint, capped at maxSpeakers. Each window adds, for each cluster,
// the activity of its local speakers in that cluster (their maximum when
// two share it) onto the frame grid (overlap-add, not averaged: the sum
// ranks clusters by how many windows heard them). The count most active
// clusters of each frame are kept, ties to the lower cluster, and only
// clusters some window heard there.
func reconstruct(wins []window, clusters [][LocalSpeakers]int, k, maxSpeakers int) (binary []uint8, frames int) {
	for _, w := range wins {
		frames = max(frames, w.startFrame+FramesPerWindow)
	}
	sum := make([]float32, frames)
	cover := make([]float32, frames)
	activation := make([]float32, frames*k)
	for c, w := range wins {
		for f := range FramesPerWindow {
			g := w.startFrame + f
			row := w.act[f*LocalSpeakers : (f+1)*LocalSpeakers]
			sum[g] += float32(int(row[0]) + int(row[1]) + int(row[2]))
			cover[g]++
			var seen [LocalSpeakers]bool // clusters already added this frame, by speaker
			for s, a := range row {
				j := clusters[c][s]
				if a == 0 || j == noCluster || seen[s] {
					continue
				}
				// the other local speakers in the same cluster count once
				for t := s + 1; t < LocalSpeakers; t++ {
					if clusters[c][t] == j {
						seen[t] = true
					}
				}
				activation[g*k+j]++
			}
		}
	}
	binary = make([]uint8, frames*k)
	order := make([]int, k)
	for g := range frames {
		if cover[g] == 0 {
			continue
		}
		count := int(math.RoundToEven(float64(sum[g] / cover[g])))
		count = min(count, maxSpeakers, k)
		if count == 0 {
			continue
		}
		act := activation[g*k : (g+1)*k]
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case act[a] > act[b]:
				return -1
			case act[a] < act[b]:
				return 1
			}
			return 0
		})
		for _, j := range order[:count] {
			if act[j] > 0 {
				binary[g*k+j] = 1
			}
		}
	}
	return binary, frames
}

// frameMiddle is the time of the middle of global frame f in seconds.
func frameMiddle(f int) float64 { return float64(f)*FrameStep + FrameDuration/2 }

// toTurns binarises each cluster's frames into turns as pyannote's
// Binarize does: a turn starts at the middle of its first active frame
// and ends at the middle of the first inactive one (or of the last frame).
// A speaker's gaps shorter than minOff are filled, then turns shorter than
// minOn dropped, and turns clipped to [0, duration]. Speakers are cluster
// indices; turns come grouped by speaker.
func toTurns(binary []uint8, frames, k int, duration, minOn, minOff float64) []diarize.Turn {
	var turns []diarize.Turn
	for j := range k {
		var mine []diarize.Turn
		start, on := 0.0, false
		for f := range frames {
			a := binary[f*k+j] == 1
			switch {
			case a && !on:
				start, on = frameMiddle(f), true
			case !a && on:
				mine = append(mine, diarize.Turn{Start: start, End: frameMiddle(f), Speaker: j})
				on = false
			}
		}
		if on {
			mine = append(mine, diarize.Turn{Start: start, End: frameMiddle(frames - 1), Speaker: j})
		}
		// fill short gaps
		var merged []diarize.Turn
		for _, t := range mine {
			if n := len(merged); n > 0 && t.Start-merged[n-1].End < minOff {
				merged[n-1].End = max(merged[n-1].End, t.End)
				continue
			}
			merged = append(merged, t)
		}
		for _, t := range merged {
			if t.End-t.Start < minOn {
				continue
			}
			t.Start = max(t.Start, 0)
			t.End = min(t.End, duration)
			if t.End > t.Start {
				turns = append(turns, t)
			}
		}
	}
	return turns
}

// renumber sorts turns by start and numbers their speakers from 0 in
// order of first appearance.
func renumber(turns []diarize.Turn) diarize.Result {
	slices.SortStableFunc(turns, func(a, b diarize.Turn) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return a.Speaker - b.Speaker
	})
	ids := map[int]int{}
	for i, t := range turns {
		id, ok := ids[t.Speaker]
		if !ok {
			id = len(ids)
			ids[t.Speaker] = id
		}
		turns[i].Speaker = id
	}
	if turns == nil {
		turns = []diarize.Turn{}
	}
	return diarize.Result{Turns: turns, Speakers: len(ids)}
}
