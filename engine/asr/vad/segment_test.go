package vad

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// silero is get_speech_timestamps from silero-vad's utils_vad.py (v5/v6),
// written out as a batch over all probabilities, the obvious way.
func silero(probs []float32, n int, p Params) []Span {
	p = p.withDefaults()
	minSpeech := sampleRate * p.MinSpeechMS / 1000
	minSilence := sampleRate * p.MinSilenceMS / 1000
	pad := sampleRate * p.SpeechPadMS / 1000
	maxSpeech := int(^uint(0) >> 1)
	if p.MaxSpeechS > 0 {
		maxSpeech = int(sampleRate*p.MaxSpeechS) - Window - 2*pad
	}
	minSilenceAtMax := sampleRate * 98 / 1000
	var speeches []Span
	triggered := false
	var cur Span
	have := false
	tempEnd, prevEnd, nextStart := 0, 0, 0
	for i, pr := range probs {
		s := Window * i
		if pr >= p.Threshold && tempEnd != 0 {
			tempEnd = 0
			if nextStart < prevEnd {
				nextStart = s
			}
		}
		if pr >= p.Threshold && !triggered {
			triggered = true
			cur, have = Span{Start: s}, true
			continue
		}
		if triggered && s-cur.Start > maxSpeech {
			if prevEnd != 0 {
				cur.End = prevEnd
				speeches = append(speeches, cur)
				have = false
				if nextStart < prevEnd {
					triggered = false
				} else {
					cur, have = Span{Start: nextStart}, true
				}
				prevEnd, nextStart, tempEnd = 0, 0, 0
			} else {
				cur.End = s
				speeches = append(speeches, cur)
				have = false
				prevEnd, nextStart, tempEnd = 0, 0, 0
				triggered = false
				continue
			}
		}
		if pr < p.NegThreshold && triggered {
			if tempEnd == 0 {
				tempEnd = s
			}
			if s-tempEnd > minSilenceAtMax {
				prevEnd = tempEnd
			}
			if s-tempEnd < minSilence {
				continue
			}
			cur.End = tempEnd
			if cur.End-cur.Start > minSpeech {
				speeches = append(speeches, cur)
			}
			have = false
			prevEnd, nextStart, tempEnd = 0, 0, 0
			triggered = false
		}
	}
	if have && n-cur.Start > minSpeech {
		cur.End = n
		speeches = append(speeches, cur)
	}
	for i := range speeches {
		if i == 0 {
			speeches[i].Start = max(0, speeches[i].Start-pad)
		}
		if i != len(speeches)-1 {
			silence := speeches[i+1].Start - speeches[i].End
			if silence < 2*pad {
				speeches[i].End += silence / 2
				speeches[i+1].Start = max(0, speeches[i+1].Start-silence/2)
			} else {
				speeches[i].End = min(n, speeches[i].End+pad)
				speeches[i+1].Start = max(0, speeches[i+1].Start-pad)
			}
		} else {
			speeches[i].End = min(n, speeches[i].End+pad)
		}
	}
	return speeches
}

// TestSegmenterIsSilero: the incremental segmenter cuts exactly where
// Silero's batch algorithm does, on random runs of speech and silence,
// including splits of long speech and gaps shorter than two pads.
func TestSegmenterIsSilero(t *testing.T) {
	params := []Params{
		{},
		{SpeechPadMS: 1},
		{MaxSpeechS: 3},
		{MaxSpeechS: 2, SpeechPadMS: 100, MinSilenceMS: 64},
		{Threshold: 0.6, MinSpeechMS: 64, MinSilenceMS: 32, SpeechPadMS: 50, MaxSpeechS: 1.5},
	}
	r := rand.New(rand.NewPCG(1, 2))
	total := 0
	for trial := range 400 {
		p := params[trial%len(params)]
		var probs []float32
		for len(probs) < 600 {
			run := 1 + r.IntN(40)
			level := r.Float32()
			for range run {
				probs = append(probs, min(1, max(0, level+0.2*(r.Float32()-0.5))))
			}
		}
		n := len(probs)*Window - r.IntN(Window)
		want := silero(probs, n, p)
		got := Spans(probs, n, p)
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("trial %d %+v:\n got  %v\n want %v", trial, p, got, want)
		}
		// With audio that is never quiet, ends are Silero's too.
		loud := make([]float32, n)
		for i := range loud {
			loud[i] = float32(0.05 + 0.5*r.Float64())
		}
		if got := SpansAudio(probs, loud, p); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("trial %d %+v with loud audio:\n got  %v\n want %v", trial, p, got, want)
		}
		total += len(want)
		// Open reports the start a span will have while it is open: every
		// span's start shows up, in order, among the starts Open reported.
		g := NewSegmenter(p)
		var opened []int
		for _, pr := range probs {
			g.Push(pr)
			if s, ok := g.Open(); ok && (len(opened) == 0 || opened[len(opened)-1] != s) {
				opened = append(opened, s)
			}
		}
		j := 0
		for _, s := range opened {
			if j < len(want) && want[j].Start == s {
				j++
			}
		}
		if j != len(want) {
			t.Fatalf("trial %d: open starts %v do not include span starts %v in order", trial, opened, want)
		}
	}
	if total < 1000 {
		t.Fatalf("only %d spans over all trials; the test is too easy", total)
	}
}

// TestSegmenterQuietEnds: given the audio, a span's end moves back over the
// quiet windows before the one where the probability fell, at most
// QuietEndWindows, and only when they are QuietEndDB below the span's
// loudest window; the start, and where speech is decided to end, do not
// change.
func TestSegmenterQuietEnds(t *testing.T) {
	const W = Window
	// Speech probability high in windows 10..39; the voice (amplitude 0.5)
	// in windows 10..voiceEnd-1, then a floor of the given level.
	run := func(voiceEnd int, floor float32, p Params) []Span {
		probs := make([]float32, 60)
		for k := 10; k < 40; k++ {
			probs[k] = 0.99
		}
		pcm := make([]float32, 60*W)
		for i := range pcm {
			pcm[i] = floor
			if k := i / W; k >= 10 && k < voiceEnd {
				pcm[i] = 0.5
			}
		}
		return SpansAudio(probs, pcm, p)
	}
	pad := sampleRate * 30 / 1000
	for _, tc := range []struct {
		name     string
		voiceEnd int
		floor    float32
		p        Params
		end      int // raw end window
	}{
		{"probability trails the voice by 3 windows", 37, 1e-4, Params{}, 37},
		{"by 1 window", 39, 1e-4, Params{}, 39},
		{"no lag", 40, 1e-4, Params{}, 40},
		{"by 6 windows: at most 3 are taken back", 34, 1e-4, Params{}, 37},
		{"floor 30 dB down: not quiet enough", 37, 0.5 * 0.0316, Params{}, 40},
		{"floor 45 dB down", 37, 0.5 * 0.0056, Params{}, 37},
		{"floor 45 dB down, QuietEndDB 50", 37, 0.5 * 0.0056, Params{QuietEndDB: 50}, 40},
		{"trimming off", 37, 1e-4, Params{QuietEndDB: -1}, 40},
	} {
		got := run(tc.voiceEnd, tc.floor, tc.p)
		want := []Span{{Start: 10*W - pad, End: tc.end*W + pad}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
	// Without the audio (Push), nothing moves.
	probs := make([]float32, 60)
	for k := 10; k < 40; k++ {
		probs[k] = 0.99
	}
	if got := Spans(probs, 60*W, Params{}); !reflect.DeepEqual(got, []Span{{10*W - pad, 40*W + pad}}) {
		t.Errorf("probabilities only: %v", got)
	}
}
