package neural

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"boxd/engine/diarize"
)

// twoSpeakers: 60 s, A and B alternating, overlapped 14–16 s and
// 52–52.5 s, a silence 22–23 s.
var twoSpeakers = []refTurn{
	{0.5, 8, 0}, {8, 16, 1}, {14, 22, 0}, {23, 30, 1}, {30, 38, 0},
	{38, 45, 1}, {45, 52.5, 0}, {52, 60, 1},
}

// threeSpeakers: 90 s, A, B and C, overlapped 33–34.5 s.
var threeSpeakers = []refTurn{
	{0, 9, 0}, {9, 18, 1}, {18, 27, 2}, {27, 34.5, 0}, {33, 41, 1},
	{42, 50, 2}, {50, 58, 0}, {58, 66, 2}, {66, 74, 1}, {74, 82, 0},
	{82, 90, 2},
}

func run(t *testing.T, cfg Config, pcm []float32, o diarize.Options) (diarize.Result, *fakeSeg, *fakeEmb) {
	t.Helper()
	seg, emb := &fakeSeg{}, newFakeEmb(1, 0.04)
	res, err := New(seg, emb, fakeFbank, cfg).Diarize(context.Background(), pcm, o)
	if err != nil {
		t.Fatalf("Diarize: %v", err)
	}
	checkResult(t, res, float64(len(pcm))/diarize.SampleRate)
	return res, seg, emb
}

// checkResult checks the Result's invariants: turns sorted by start,
// within the audio, speakers numbered in order of first appearance.
func checkResult(t *testing.T, res diarize.Result, dur float64) {
	t.Helper()
	next := 0
	for i, tr := range res.Turns {
		if !(0 <= tr.Start && tr.Start < tr.End && tr.End <= dur) {
			t.Errorf("turn %d %+v is outside [0, %g] or empty", i, tr, dur)
		}
		if i > 0 && tr.Start < res.Turns[i-1].Start {
			t.Errorf("turn %d starts before turn %d", i, i-1)
		}
		switch {
		case tr.Speaker == next:
			next++
		case tr.Speaker > next || tr.Speaker < 0:
			t.Errorf("turn %d: speaker %d before speaker %d appeared", i, tr.Speaker, next)
		}
	}
	if res.Speakers != next {
		t.Errorf("Speakers = %d, turns name %d", res.Speakers, next)
	}
}

func TestTwoSpeakersWithOverlap(t *testing.T) {
	pcm := synth(60, twoSpeakers)
	res, _, emb := run(t, Config{}, pcm, diarize.DefaultOptions)
	if res.Speakers != 2 {
		t.Fatalf("Speakers = %d, want 2; turns %+v", res.Speakers, res.Turns)
	}
	der := frameDER(twoSpeakers, res, 60)
	t.Logf("DER %.4f", der)
	if der > 0.03 {
		t.Errorf("DER = %.4f, want ≤ 0.03; turns %+v", der, res.Turns)
	}
	for _, at := range []float64{14.2, 15, 15.8} {
		if got := speakersAt(res, at); len(got) != 2 {
			t.Errorf("speakers at %gs = %v, want both (overlap)", at, got)
		}
	}
	for _, at := range []float64{5, 10, 20, 35} {
		if got := speakersAt(res, at); len(got) != 1 {
			t.Errorf("speakers at %gs = %v, want one", at, got)
		}
	}
	if got := speakersAt(res, 22.5); len(got) != 0 {
		t.Errorf("speakers at 22.5s = %v, want none (silence)", got)
	}
	// exclude_overlap: both speakers talk alone long enough in every
	// window around the overlap, so masks leave overlapped frames out
	// (up to a frame or two where the 17 ms and 10 ms grids disagree).
	if emb.maxOverlapInMask > 3 {
		t.Errorf("a mask held %d overlapped fbank frames; want them left out", emb.maxOverlapInMask)
	}
}

func TestSteps(t *testing.T) {
	pcm := synth(60, twoSpeakers)
	for _, step := range []float64{1, 2.5, 5, 10} {
		res, seg, _ := run(t, Config{Step: step}, pcm, diarize.DefaultOptions)
		if res.Speakers != 2 {
			t.Errorf("step %g: Speakers = %d, want 2", step, res.Speakers)
		}
		if der := frameDER(twoSpeakers, res, 60); der > 0.03 {
			t.Errorf("step %g: DER = %.4f, want ≤ 0.03", step, der)
		}
		if want := len(windowStarts(len(pcm), int(step*diarize.SampleRate+0.5))); seg.windows != want {
			t.Errorf("step %g: %d windows segmented, want %d", step, seg.windows, want)
		}
	}
}

func TestThreeSpeakers(t *testing.T) {
	pcm := synth(90, threeSpeakers)
	res, _, _ := run(t, Config{}, pcm, diarize.DefaultOptions)
	if res.Speakers != 3 {
		t.Fatalf("Speakers = %d, want 3; turns %+v", res.Speakers, res.Turns)
	}
	der := frameDER(threeSpeakers, res, 90)
	t.Logf("DER %.4f", der)
	if der > 0.03 {
		t.Errorf("DER = %.4f, want ≤ 0.03", der)
	}
	if got := speakersAt(res, 33.7); len(got) != 2 {
		t.Errorf("speakers at 33.7s = %v, want two (overlap)", got)
	}
}

func TestBounds(t *testing.T) {
	pcm := synth(90, threeSpeakers)
	for _, c := range []struct {
		o    diarize.Options
		want int
	}{
		{diarize.Options{MinSpeakers: 1, MaxSpeakers: 2}, 2},
		{diarize.Options{MinSpeakers: 1, MaxSpeakers: 1}, 1},
		{diarize.Options{MinSpeakers: 3, MaxSpeakers: 3}, 3},
	} {
		res, _, _ := run(t, Config{}, pcm, c.o)
		if res.Speakers != c.want {
			t.Errorf("%+v: Speakers = %d, want %d", c.o, res.Speakers, c.want)
		}
		// no more simultaneous speakers than allowed
		for at := 0.05; at < 90; at += 0.1 {
			if n := len(speakersAt(res, at)); n > c.o.MaxSpeakers {
				t.Fatalf("%+v: %d speakers at %gs", c.o, n, at)
			}
		}
	}
	// a threshold that merges everything, bounded from below
	res, _, _ := run(t, Config{Threshold: 2.5}, pcm, diarize.Options{MinSpeakers: 3, MaxSpeakers: 4})
	if res.Speakers != 3 {
		t.Errorf("threshold 2.5, min 3: Speakers = %d, want 3", res.Speakers)
	}
	res, _, _ = run(t, Config{Threshold: 2.5}, pcm, diarize.DefaultOptions)
	if res.Speakers != 1 {
		t.Errorf("threshold 2.5: Speakers = %d, want 1", res.Speakers)
	}
}

func TestShortAudio(t *testing.T) {
	ref := []refTurn{{0.3, 1.8, 0}, {2.1, 3.7, 1}}
	pcm := synth(4, ref)
	res, seg, _ := run(t, Config{}, pcm, diarize.DefaultOptions)
	if seg.calls != 1 || seg.windows != 1 || seg.badLen != 0 {
		t.Errorf("segmenter: %d calls, %d windows, %d of the wrong length; want one padded window", seg.calls, seg.windows, seg.badLen)
	}
	if res.Speakers != 2 {
		t.Fatalf("Speakers = %d, want 2; turns %+v", res.Speakers, res.Turns)
	}
	if der := frameDER(ref, res, 4); der > 0.05 {
		t.Errorf("DER = %.4f, want ≤ 0.05; turns %+v", der, res.Turns)
	}
	// a few samples, one speaker
	res, _, _ = run(t, Config{}, synth(0.5, []refTurn{{0, 0.5, 2}}), diarize.DefaultOptions)
	if res.Speakers != 1 || len(res.Turns) != 1 || res.Turns[0].End > 0.5 {
		t.Errorf("0.5 s of one speaker: %+v", res)
	}
}

func TestNoSpeech(t *testing.T) {
	for _, pcm := range [][]float32{nil, {}, make([]float32, 30*diarize.SampleRate)} {
		seg, emb := &fakeSeg{}, newFakeEmb(1, 0.04)
		res, err := New(seg, emb, fakeFbank, Config{}).Diarize(context.Background(), pcm, diarize.DefaultOptions)
		if err != nil {
			t.Fatalf("%d samples: %v", len(pcm), err)
		}
		if res.Speakers != 0 || res.Turns == nil || len(res.Turns) != 0 {
			t.Errorf("%d samples: %+v, want no turns (non-nil) and no speakers", len(pcm), res)
		}
		if emb.calls != 0 {
			t.Errorf("%d samples: %d embedder calls, want none", len(pcm), emb.calls)
		}
		if len(pcm) == 0 && seg.calls != 0 {
			t.Errorf("empty audio: %d segmenter calls", seg.calls)
		}
	}
}

func TestBatching(t *testing.T) {
	pcm := synth(61, twoSpeakers)
	res, seg, _ := run(t, Config{Batch: 4, Step: 2.5}, pcm, diarize.DefaultOptions)
	// windows at 0, 2.5, ..., 50 s fit (21), one more at 52.5 s padded
	if seg.windows != 22 || seg.calls != 6 || seg.maxBatch != 4 || seg.badLen != 0 {
		t.Errorf("segmenter saw %d windows in %d calls, at most %d a call, %d of the wrong length; want 22 in 6, 4, 0",
			seg.windows, seg.calls, seg.maxBatch, seg.badLen)
	}
	if res.Speakers != 2 {
		t.Errorf("Speakers = %d, want 2", res.Speakers)
	}
}

func TestWindowStarts(t *testing.T) {
	for _, c := range []struct {
		n, step int
		want    []int
	}{
		{1, 40000, []int{0}},
		{160000, 40000, []int{0}},
		{160001, 40000, []int{0, 40000}},
		{200000, 40000, []int{0, 40000}},
		{200001, 40000, []int{0, 40000, 80000}},
		{400000, 160000, []int{0, 160000, 320000}},
	} {
		if got := windowStarts(c.n, c.step); !slices.Equal(got, c.want) {
			t.Errorf("windowStarts(%d, %d) = %v, want %v", c.n, c.step, got, c.want)
		}
	}
	pcm := make([]float32, 170000)
	pcm[169999] = 1
	w := windowAt(pcm, 10000)
	if len(w) != WindowSamples || w[159999] != 1 || cap(w) != WindowSamples {
		t.Errorf("windowAt fitting: len %d cap %d", len(w), cap(w))
	}
	w = windowAt(pcm, 40000)
	if len(w) != WindowSamples || w[129999] != 1 || w[130000] != 0 {
		t.Errorf("windowAt padded: len %d", len(w))
	}
}

func TestDecodePowerset(t *testing.T) {
	lp := make([]float32, FramesPerWindow*PowersetClasses)
	for f := range FramesPerWindow {
		lp[f*PowersetClasses+f%PowersetClasses] = 1
	}
	act, err := decodePowerset(lp)
	if err != nil {
		t.Fatal(err)
	}
	want := [PowersetClasses][LocalSpeakers]uint8{
		{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1},
	}
	for f := range PowersetClasses {
		if got := [3]uint8(act[f*3 : f*3+3]); got != want[f] {
			t.Errorf("class %d → %v, want %v", f, got, want[f])
		}
	}
	if _, err := decodePowerset(lp[:10]); err == nil {
		t.Error("short output: no error")
	}
}

func TestCancel(t *testing.T) {
	pcm := synth(60, twoSpeakers)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	seg := &fakeSeg{}
	if _, err := New(seg, newFakeEmb(1, 0.04), fakeFbank, Config{}).Diarize(ctx, pcm, diarize.DefaultOptions); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err = %v, want context.Canceled", err)
	}
	if seg.calls != 0 {
		t.Errorf("cancelled before: %d segmenter calls", seg.calls)
	}

	// cancelled during the first batch: no second batch, no embedding
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	seg = &fakeSeg{onCall: func(int) { cancel() }}
	emb := newFakeEmb(1, 0.04)
	if _, err := New(seg, emb, fakeFbank, Config{Batch: 4}).Diarize(ctx, pcm, diarize.DefaultOptions); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during: err = %v, want context.Canceled", err)
	}
	if seg.calls != 1 || emb.calls != 0 {
		t.Errorf("cancelled during: %d segmenter and %d embedder calls, want 1 and 0", seg.calls, emb.calls)
	}
}

func TestErrors(t *testing.T) {
	pcm := synth(30, twoSpeakers)
	boom := errors.New("boom")
	cases := []struct {
		name string
		d    *Diarizer
		o    diarize.Options
		want string
	}{
		{"options", New(&fakeSeg{}, newFakeEmb(1, 0), fakeFbank, Config{}), diarize.Options{MinSpeakers: 0, MaxSpeakers: 2}, "min_speakers"},
		{"step", New(&fakeSeg{}, newFakeEmb(1, 0), fakeFbank, Config{Step: 11}), diarize.DefaultOptions, "step"},
		{"ratio", New(&fakeSeg{}, newFakeEmb(1, 0), fakeFbank, Config{MinActiveRatio: 2}), diarize.DefaultOptions, "min active ratio"},
		{"nil", New(nil, newFakeEmb(1, 0), fakeFbank, Config{}), diarize.DefaultOptions, "required"},
		{"segmenter", New(&fakeSeg{err: boom}, newFakeEmb(1, 0), fakeFbank, Config{}), diarize.DefaultOptions, "boom"},
		{"outputs", New(&fakeSeg{mangle: func(o [][]float32) [][]float32 { return o[1:] }}, newFakeEmb(1, 0), fakeFbank, Config{}), diarize.DefaultOptions, "outputs for"},
		{"frames", New(&fakeSeg{mangle: func(o [][]float32) [][]float32 { o[0] = o[0][:700]; return o }}, newFakeEmb(1, 0), fakeFbank, Config{}), diarize.DefaultOptions, "want 589 frames"},
		{"embedder", New(&fakeSeg{}, &fakeEmb{err: boom}, fakeFbank, Config{}), diarize.DefaultOptions, "boom"},
		{"fbank", New(&fakeSeg{}, newFakeEmb(1, 0), func([]float32) [][]float32 { return nil }, Config{}), diarize.DefaultOptions, "fbank"},
	}
	for _, c := range cases {
		_, err := c.d.Diarize(context.Background(), pcm, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one naming %q", c.name, err, c.want)
		}
		if c.want == "boom" && !errors.Is(err, boom) {
			t.Errorf("%s: %v does not wrap the cause", c.name, err)
		}
	}
}

func TestName(t *testing.T) {
	if got := New(nil, nil, nil, Config{}).Name(); got != DefaultName {
		t.Errorf("Name = %q, want %q", got, DefaultName)
	}
	if got := New(nil, nil, nil, Config{Name: "x"}).Name(); got != "x" {
		t.Errorf("Name = %q, want x", got)
	}
}

func TestMinDurations(t *testing.T) {
	// a 0.15 s pause of A and a 0.06 s blip of B
	ref := []refTurn{{0, 5, 0}, {5.15, 12, 0}, {12, 20, 1}, {8, 8.06, 1}}
	pcm := synth(20, ref)
	res, _, _ := run(t, Config{}, pcm, diarize.DefaultOptions)
	var a []diarize.Turn
	for _, tr := range res.Turns {
		if tr.Speaker == 0 {
			a = append(a, tr)
		}
		if tr.End-tr.Start < DefaultMinDurationOn {
			t.Errorf("turn %+v is shorter than %g s", tr, DefaultMinDurationOn)
		}
	}
	if len(a) != 1 {
		t.Errorf("speaker 0 turns %+v, want the pause filled (one turn)", a)
	}
	res, _, _ = run(t, Config{MinDurationOff: -1, MinDurationOn: -1}, pcm, diarize.DefaultOptions)
	a = a[:0]
	for _, tr := range res.Turns {
		if tr.Speaker == 0 {
			a = append(a, tr)
		}
	}
	if len(a) < 2 {
		t.Errorf("no filling: speaker 0 turns %+v, want the pause kept", a)
	}
}

func TestReconstruct(t *testing.T) {
	// three windows; w2 starts 100 frames later, so frames below 100 are
	// covered by two windows, frames from 100 to 588 by three
	wins := make([]window, 3)
	for i := range wins {
		wins[i].act = make([]uint8, FramesPerWindow*LocalSpeakers)
	}
	wins[2].startFrame = 100
	set := func(w, globalFrame int, speakers ...int) {
		f := globalFrame - wins[w].startFrame
		for _, s := range speakers {
			wins[w].act[f*LocalSpeakers+s] = 1
		}
	}
	// local speaker s is cluster s in w0 and w2; w1's are swapped
	clusters := [][LocalSpeakers]int{{0, 1, 2}, {1, 0, 2}, {0, 1, 2}}
	set(0, 10, 0, 1) // count (2+1)/2 = 1.5 → 2 (half to even): both
	set(1, 10, 0)
	set(0, 20, 0)     // count 0.5 → 0 (half to even)
	set(0, 200, 0, 1) // count 4/3 → 1: cluster 0 heard 3 times, 1 once
	set(1, 200, 1)
	set(2, 200, 0)
	set(0, 300, 0) // count 1/3 → 0
	set(0, 400, 1) // count 2/3 → 1: cluster 1
	set(2, 400, 1)
	set(0, 500, 0, 1) // count 2; cluster 0 heard 3 times, 2 twice, 1 once
	set(1, 500, 2, 1)
	set(2, 500, 0, 2)
	want := map[int][]int{10: {0, 1}, 20: nil, 200: {0}, 300: nil, 400: {1}, 500: {0, 2}}

	binary, frames := reconstruct(wins, clusters, 3, 4)
	if frames != 100+FramesPerWindow {
		t.Fatalf("frames = %d, want %d", frames, 100+FramesPerWindow)
	}
	on := func(b []uint8, g int) []int {
		var s []int
		for j := range 3 {
			if b[g*3+j] == 1 {
				s = append(s, j)
			}
		}
		return s
	}
	for g := range frames {
		if got := on(binary, g); !slices.Equal(got, want[g]) {
			t.Errorf("frame %d: clusters %v, want %v", g, got, want[g])
		}
	}
	// at most one speaker at a time
	binary, _ = reconstruct(wins, clusters, 3, 1)
	if got := on(binary, 500); !slices.Equal(got, []int{0}) {
		t.Errorf("max 1, frame 500: clusters %v, want [0]", got)
	}
}

func TestToTurns(t *testing.T) {
	const k = 2
	frames := 100
	binary := make([]uint8, frames*k)
	for g := 10; g < 20; g++ { // cluster 1
		binary[g*k+1] = 1
	}
	for g := 30; g < 100; g++ { // cluster 0, to the end
		binary[g*k] = 1
	}
	turns := toTurns(binary, frames, k, 1.5, 0, 0)
	want := []diarize.Turn{
		{Start: frameMiddle(30), End: 1.5, Speaker: 0}, // clipped to the audio
		{Start: frameMiddle(10), End: frameMiddle(20), Speaker: 1},
	}
	if !slices.Equal(turns, want) {
		t.Errorf("toTurns = %+v, want %+v", turns, want)
	}
	res := renumber(turns)
	if res.Speakers != 2 || res.Turns[0].Speaker != 0 || res.Turns[0].Start != frameMiddle(10) || res.Turns[1].Speaker != 1 {
		t.Errorf("renumber = %+v, want cluster 1 first as speaker 0", res)
	}
}

// BenchmarkFakes10Min runs the pipeline on 10 minutes of three speakers
// with the fake networks: the pipeline's own time and allocations (B/op
// bounds its memory; the fakes' outputs are in it too).
func BenchmarkFakes10Min(b *testing.B) {
	var ref []refTurn
	for i := range 60 {
		ref = append(ref, refTurn{float64(i) * 10, float64(i)*10 + 9.5, i % 3})
	}
	pcm := synth(600, ref)
	d := New(&fakeSeg{}, newFakeEmb(1, 0.04), fakeFbank, Config{})
	b.ReportAllocs()
	for b.Loop() {
		res, err := d.Diarize(context.Background(), pcm, diarize.DefaultOptions)
		if err != nil || res.Speakers != 3 {
			b.Fatalf("err %v, %d speakers", err, res.Speakers)
		}
	}
}
