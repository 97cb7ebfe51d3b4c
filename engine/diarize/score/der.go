package score

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
)

// epsilon is md-eval's: UEM regions no longer than it are dropped.
const epsilon = 1e-8

// derStats are md-eval's speaker times for one file or for all.
type derStats struct{ scored, miss, fa, conf float64 }

// scores gives the times and dscore's DER from them: 100·errors/scored;
// 0 when nothing is scored nor wrong, 100 when nothing is scored but
// something is wrong.
func (a derStats) scores(jer float64) Scores {
	s := Scores{JER: jer, Scored: a.scored, Miss: a.miss, FalseAlarm: a.fa, Confusion: a.conf}
	switch errs := a.miss + a.fa + a.conf; {
	case a.scored > 0:
		s.DER = 100 * errs / a.scored
	case errs > 0:
		s.DER = 100
	}
	return s
}

// ms rounds x to the millisecond as dscore does writing the RTTM and UEM
// files it gives md-eval.
func ms(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	return v
}

// mdTurns gives each speaker's turns as md-eval reads them back from
// dscore's RTTM: onset and duration to the millisecond, end = onset +
// duration. Speakers come in name order.
func mdTurns(by map[string][]span) [][]span {
	names := slices.Sorted(maps.Keys(by))
	out := make([][]span, len(names))
	for i, name := range names {
		for _, t := range by[name] {
			on := ms(t[0])
			out[i] = append(out[i], span{on, on + ms(t[1]-t[0])})
		}
	}
	return out
}

// derFile scores one file as md-eval's score_speaker_diarization does:
// speakers are mapped on the whole UEM, then the scored regions (UEM less
// collars, less reference overlap with -1) are cut at every boundary and
// each piece counted.
func derFile(refBy, sysBy map[string][]span, uem []span, o Options) derStats {
	ref, sys := mdTurns(refBy), mdTurns(sysBy)
	var eval, zones []span
	for _, r := range uem {
		if lo, hi := ms(r[0]), ms(r[1]); hi > lo+epsilon {
			eval = append(eval, span{lo, hi})
		}
	}
	eval = merge(eval, true)
	for _, t := range slices.Concat(ref...) {
		if o.Collar > 0 {
			zones = append(zones, span{t[0] - o.Collar, t[0] + o.Collar}, span{t[1] - o.Collar, t[1] + o.Collar})
		}
	}
	scored := subtract(eval, merge(zones, true))
	if o.IgnoreOverlaps {
		scored = subtract(scored, covered(slices.Concat(ref...), 2))
	}

	// Sweep every boundary, counting for each ref speaker, each sys
	// speaker, the UEM and the scored regions whether it is on.
	nr, ns := len(ref), len(sys)
	groups := slices.Concat(ref, sys, [][]span{eval, scored})
	type event struct {
		t          float64
		who, delta int
	}
	var evs []event
	for who, g := range groups {
		for _, x := range g {
			if x[1] > x[0] {
				evs = append(evs, event{x[0], who, 1}, event{x[1], who, -1})
			}
		}
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	count := make([]int, len(groups))
	cost := make([][]float64, nr) // minus the time each pair shares in the UEM
	for r := range cost {
		cost[r] = make([]float64, ns)
	}
	type piece struct {
		dur      float64
		ref, sys []int
	}
	var pieces []piece
	for i := 0; i < len(evs); {
		t := evs[i].t
		for ; i < len(evs) && evs[i].t == t; i++ {
			count[evs[i].who] += evs[i].delta
		}
		if i == len(evs) || count[nr+ns] <= 0 {
			continue // scored lies within the UEM
		}
		p := piece{dur: evs[i].t - t}
		for who := range nr + ns {
			if count[who] > 0 && who < nr {
				p.ref = append(p.ref, who)
			} else if count[who] > 0 {
				p.sys = append(p.sys, who-nr)
			}
		}
		for _, r := range p.ref {
			for _, s := range p.sys {
				cost[r][s] -= p.dur
			}
		}
		if count[nr+ns+1] > 0 {
			pieces = append(pieces, p)
		}
	}

	mapped := assign(cost)
	var st derStats
	for _, p := range pieces {
		nref, nsys := len(p.ref), len(p.sys)
		st.scored += p.dur * float64(nref)
		st.miss += p.dur * float64(max(nref-nsys, 0))
		st.fa += p.dur * float64(max(nsys-nref, 0))
		nmap := 0
		for _, r := range p.ref {
			if mapped[r] >= 0 && slices.Contains(p.sys, mapped[r]) {
				nmap++
			}
		}
		st.conf += p.dur * float64(min(nref, nsys)-nmap)
	}
	return st
}
