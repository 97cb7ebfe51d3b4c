package vad

import "math"

// Params are Silero's segmenting parameters (get_speech_timestamps).
type Params struct {
	Threshold    float32 // speech starts at or above (default 0.5)
	NegThreshold float32 // and ends below (default Threshold-0.15)
	MinSpeechMS  int     // shorter speech is dropped (250)
	MinSilenceMS int     // silence this long ends speech (100)
	SpeechPadMS  int     // added around each span (30)
	// MaxSpeechS splits longer speech, at a silence of at least 98 ms when
	// there was one, else where the limit is reached (0: no limit).
	MaxSpeechS float64
	// QuietEndDB: when the segmenter is given the audio (PushWindow,
	// SpansAudio), a span's end moves back over up to QuietEndWindows
	// trailing windows whose RMS is this many dB below the span's loudest
	// window (default 40; negative: never). Silero's probability trails the
	// voice by one to three windows; in quiet rooms this puts the end where
	// the voice stops. In noise no window is that quiet and the end stays
	// Silero's. Where speech ends (and so when a sentence is final) is
	// still decided on the probabilities alone.
	QuietEndDB float64
}

// QuietEndWindows is the most a span's end moves back for quiet (96 ms).
const QuietEndWindows = 3

func (p Params) withDefaults() Params {
	if p.Threshold == 0 {
		p.Threshold = 0.5
	}
	if p.NegThreshold == 0 {
		p.NegThreshold = float32(math.Max(float64(p.Threshold)-0.15, 0.01))
	}
	if p.MinSpeechMS == 0 {
		p.MinSpeechMS = 250
	}
	if p.MinSilenceMS == 0 {
		p.MinSilenceMS = 100
	}
	if p.SpeechPadMS == 0 {
		p.SpeechPadMS = 30
	}
	if p.QuietEndDB == 0 {
		p.QuietEndDB = 40
	}
	return p
}

// Span is a stretch of speech in samples, End exclusive.
type Span struct{ Start, End int }

// Spans turns window probabilities (one per Window samples) into speech
// spans over audio of nSamples, with Silero's rules; it is Segmenter run
// over all of them.
func Spans(probs []float32, nSamples int, p Params) []Span {
	g := NewSegmenter(p)
	var out []Span
	for _, pr := range probs {
		out = append(out, g.Push(pr)...)
	}
	return append(out, g.Finish(nSamples)...)
}

// SpansAudio is Spans with the audio the probabilities were computed on
// (window k is pcm[k*Window:(k+1)*Window]), so that span ends move
// back over quiet trailing windows (Params.QuietEndDB).
func SpansAudio(probs []float32, pcm []float32, p Params) []Span {
	g := NewSegmenter(p)
	var out []Span
	for k, pr := range probs {
		out = append(out, g.PushWindow(pr, pcm[min(len(pcm), k*Window):min(len(pcm), (k+1)*Window)])...)
	}
	return append(out, g.Finish(len(pcm))...)
}

// Segmenter is Silero's get_speech_timestamps made incremental: it takes
// one window probability at a time and hands out each padded span as soon
// as its padding is known, so a live stream and a whole file cut the same
// audio at the same samples. A span's right padding depends on the next
// kept span, so it waits until no kept span can start within two pads of
// its end, or until the next one is certain to be kept (speech running for
// longer than the minimum with no silence pending): in speech, about
// MinSpeechMS.
type Segmenter struct {
	p                                     Params
	minSpeech, minSilence, pad, maxSpeech int
	minSilenceAtMax                       int
	i                                     int // windows seen

	triggered                 bool
	start                     int // raw start of the open span
	tempEnd, prevEnd, nextSta int
	first                     bool  // no span kept yet
	pending                   *Span // kept span waiting for its right padding
	shift                     int   // how far the open span's start moves left
	dropped                   int   // speech too short to keep

	// With audio (PushWindow): the RMS of the latest windows, the loudest
	// window of the open span, and the end the open span gets for quiet.
	quiet    float64 // amplitude ratio of QuietEndDB (0: never)
	rms      [QuietEndWindows + 1]float64
	heard    bool // the current window's RMS is known
	peak     float64
	quietEnd int
}

// NewSegmenter starts a segmenter.
func NewSegmenter(p Params) *Segmenter {
	p = p.withDefaults()
	g := &Segmenter{p: p, first: true}
	if p.QuietEndDB > 0 {
		g.quiet = math.Pow(10, -p.QuietEndDB/20)
	}
	g.minSpeech = sampleRate * p.MinSpeechMS / 1000
	g.minSilence = sampleRate * p.MinSilenceMS / 1000
	g.pad = sampleRate * p.SpeechPadMS / 1000
	g.minSilenceAtMax = sampleRate * 98 / 1000
	if p.MaxSpeechS > 0 {
		g.maxSpeech = int(sampleRate*p.MaxSpeechS) - Window - 2*g.pad
	}
	return g
}

// Open reports the padded start of the speech in progress, as it will be
// if this speech is kept.
func (g *Segmenter) Open() (start int, ok bool) {
	if !g.triggered {
		return 0, false
	}
	return g.padStart(), true
}

func (g *Segmenter) padStart() int {
	switch {
	case g.first:
		return max(0, g.start-g.pad)
	case g.pending != nil:
		return max(0, g.start-min(g.pad, (g.start-g.pending.End)/2))
	}
	return max(0, g.start-g.shift)
}

// Pending reports whether a finished span waits for its padding.
func (g *Segmenter) Pending() bool { return g.pending != nil }

// Dropped counts the speech too short to keep.
func (g *Segmenter) Dropped() int { return g.dropped }

// Keep is the earliest sample a span handed out later can include: audio
// before it is no longer needed.
func (g *Segmenter) Keep() int {
	k := g.i*Window - g.pad
	if g.triggered {
		k = min(k, g.start-g.pad)
	}
	if g.pending != nil {
		k = min(k, g.pending.Start)
	}
	return max(0, k)
}

// Samples is how many samples the segmenter has seen.
func (g *Segmenter) Samples() int { return g.i * Window }

// Push adds the probability of the next window and returns the spans it
// completes. Without the audio, ends are exactly Silero's.
func (g *Segmenter) Push(prob float32) []Span {
	g.heard = false
	return g.push(prob)
}

// PushWindow is Push with the window's audio (Window samples, fewer at
// the end of the audio), so that span ends move back over quiet trailing
// windows (Params.QuietEndDB).
func (g *Segmenter) PushWindow(prob float32, w []float32) []Span {
	var e float64
	for _, x := range w {
		e += float64(x) * float64(x)
	}
	copy(g.rms[1:], g.rms[:QuietEndWindows])
	g.rms[0] = math.Sqrt(e / Window)
	g.heard = true
	return g.push(prob)
}

// trimmedEnd is raw end e (the start of the current window, where the
// probability fell) moved back over the quiet windows before it, never to
// or before the span's start window.
func (g *Segmenter) trimmedEnd(e int) int {
	if !g.heard || g.quiet == 0 {
		return e
	}
	limit := g.peak * g.quiet
	for k := 1; k <= QuietEndWindows && e-Window > g.start && g.rms[k] < limit; k++ {
		e -= Window
	}
	return e
}

func (g *Segmenter) push(prob float32) []Span {
	var out []Span
	g.step(prob, &out)
	if g.pending != nil {
		switch {
		case !g.triggered && g.i*Window >= g.pending.End+2*g.pad:
			out = append(out, g.release(-1, -1))
		case g.triggered && g.tempEnd == 0 && (g.i-1)*Window-g.start > g.minSpeech:
			out = append(out, g.release(g.start, -1))
		}
	}
	return out
}

func (g *Segmenter) step(prob float32, out *[]Span) {
	cur := g.i * Window
	g.i++
	p := g.p
	if prob >= p.Threshold && g.tempEnd != 0 {
		g.tempEnd = 0
		if g.nextSta < g.prevEnd {
			g.nextSta = cur
		}
	}
	if prob >= p.Threshold && !g.triggered {
		g.open(cur)
		g.peak = g.rms[0]
		return
	}
	if g.triggered && g.heard {
		g.peak = max(g.peak, g.rms[0])
	}
	if g.triggered && g.maxSpeech > 0 && cur-g.start > g.maxSpeech {
		if g.prevEnd != 0 {
			g.close(g.prevEnd, out)
			if g.nextSta < g.prevEnd {
				g.triggered = false
			} else {
				g.open(g.nextSta)
			}
			g.prevEnd, g.nextSta, g.tempEnd = 0, 0, 0
		} else {
			g.close(cur, out)
			g.prevEnd, g.nextSta, g.tempEnd = 0, 0, 0
			g.triggered = false
			return
		}
	}
	if prob < p.NegThreshold && g.triggered {
		if g.tempEnd == 0 {
			g.tempEnd = cur
			g.quietEnd = g.trimmedEnd(cur)
		}
		if cur-g.tempEnd > g.minSilenceAtMax {
			g.prevEnd = g.tempEnd
		}
		if cur-g.tempEnd < g.minSilence {
			return
		}
		if g.tempEnd-g.start > g.minSpeech {
			g.close(g.quietEnd, out)
		} else {
			g.dropped++
		}
		g.prevEnd, g.nextSta, g.tempEnd = 0, 0, 0
		g.triggered = false
	}
}

// Finish ends the audio at nSamples: an open span longer than the minimum
// ends there, and the last span gets its padding.
func (g *Segmenter) Finish(nSamples int) []Span {
	var out []Span
	if g.triggered {
		if nSamples-g.start > g.minSpeech {
			g.close(nSamples, &out)
		} else {
			g.dropped++
		}
	}
	g.triggered = false
	if g.pending != nil {
		out = append(out, g.release(-1, nSamples))
	}
	return out
}

func (g *Segmenter) open(s int) {
	g.triggered, g.start, g.shift = true, s, g.pad
}

// close keeps the open span, ending at raw sample e: the pending span is
// padded toward it, and it waits for its own padding.
func (g *Segmenter) close(e int, out *[]Span) {
	if g.pending != nil {
		*out = append(*out, g.release(g.start, -1))
	}
	start := g.padStart()
	g.first = false
	g.pending = &Span{Start: start, End: e}
}

// release pads and hands out the pending span: toward the next kept span's
// raw start next, or (next < 0) by pad, clamped to n when n >= 0. The next
// span's start moves left by the same rule.
func (g *Segmenter) release(next, n int) Span {
	s := *g.pending
	g.pending = nil
	if next >= 0 && next-s.End < 2*g.pad {
		gap := next - s.End
		s.End += gap / 2
		g.shift = gap / 2
	} else {
		s.End += g.pad
		if n >= 0 {
			s.End = min(n, s.End)
		}
		g.shift = g.pad
	}
	return s
}
