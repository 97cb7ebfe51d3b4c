package vad_test

import (
	"math"
	"os"
	"testing"

	"boxd/engine/asr/asrtest"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/vad"
	"boxd/engine/models/convert"
	"boxd/engine/models/testmodels"
)

func loadVAD(t *testing.T) *vad.Model {
	t.Helper()
	v, err := vad.Load(testmodels.Shared(t, "ggml-silero-v6.2.0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// refVAD is Silero's forward pass in float64, written for tests.
type refVAD struct {
	t   map[string][]float64
	h   [128]float64
	c   [128]float64
	ctx [64]float64
}

func newRefVAD(t *testing.T) *refVAD {
	f, err := os.Open(testmodels.Shared(t, "ggml-silero-v6.2.0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := convert.ReadSilero(f)
	if err != nil {
		t.Fatal(err)
	}
	r := &refVAD{t: map[string][]float64{}}
	for _, tn := range s.Tensors {
		fl := tn.Floats()
		v := make([]float64, len(fl))
		for i, x := range fl {
			v[i] = float64(x)
		}
		r.t[tn.Name] = v
	}
	return r
}

func (r *refVAD) prob(win []float32) float64 {
	x := make([]float64, 0, 640)
	x = append(x, r.ctx[:]...)
	for _, s := range win {
		x = append(x, float64(s))
	}
	n := len(x)
	for i := 1; i <= 64; i++ {
		x = append(x, x[n-1-i])
	}
	basis := r.t["_model.stft.forward_basis_buffer"]
	mag := make([][]float64, 129) // [channel][time]
	for c := range 129 {
		mag[c] = make([]float64, 4)
		for t := range 4 {
			var re, im float64
			for k := range 256 {
				re += basis[c*256+k] * x[128*t+k]
				im += basis[(129+c)*256+k] * x[128*t+k]
			}
			mag[c][t] = math.Sqrt(re*re + im*im)
		}
	}
	in := mag
	strides := []int{1, 2, 2, 1}
	for l, s := range strides {
		w := r.t["_model.encoder."+string(rune('0'+l))+".reparam_conv.weight"]
		b := r.t["_model.encoder."+string(rune('0'+l))+".reparam_conv.bias"]
		cin, cout := len(in), len(b)
		T := len(in[0])
		outT := (T+2-3)/s + 1
		out := make([][]float64, cout)
		for oc := range cout {
			out[oc] = make([]float64, outT)
			for t := range outT {
				v := b[oc]
				for ic := range cin {
					for k := range 3 {
						src := t*s + k - 1
						if src >= 0 && src < T {
							v += w[(oc*cin+ic)*3+k] * in[ic][src]
						}
					}
				}
				out[oc][t] = math.Max(v, 0)
			}
		}
		in = out
	}
	feat := make([]float64, 128)
	for i := range feat {
		feat[i] = in[i][0]
	}
	wih, whh := r.t["_model.decoder.rnn.weight_ih"], r.t["_model.decoder.rnn.weight_hh"]
	bih, bhh := r.t["_model.decoder.rnn.bias_ih"], r.t["_model.decoder.rnn.bias_hh"]
	gates := make([]float64, 512)
	for row := range 512 {
		g := bih[row] + bhh[row]
		for c := range 128 {
			g += wih[row*128+c]*feat[c] + whh[row*128+c]*r.h[c]
		}
		gates[row] = g
	}
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	wf, bf := r.t["_model.decoder.decoder.2.weight"], r.t["_model.decoder.decoder.2.bias"]
	logit := bf[0]
	for j := range 128 {
		i, f, g, o := sig(gates[j]), sig(gates[128+j]), math.Tanh(gates[256+j]), sig(gates[384+j])
		r.c[j] = f*r.c[j] + i*g
		r.h[j] = o * math.Tanh(r.c[j])
		logit += wf[j] * math.Max(r.h[j], 0)
	}
	for i := range 64 {
		r.ctx[i] = float64(win[512-64+i])
	}
	return sig(logit)
}

func TestVADMatchesTheFloat64Reference(t *testing.T) {
	v := loadVAD(t)
	pcm, err := frontend.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	probs, err := v.Probs(pcm)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 344 {
		t.Fatalf("%d windows, want 344", len(probs))
	}
	ref := newRefVAD(t)
	var maxDiff float64
	win := make([]float32, 512)
	for i := range probs {
		clear(win)
		copy(win, pcm[i*512:min(len(pcm), i*512+512)])
		maxDiff = math.Max(maxDiff, math.Abs(float64(probs[i])-ref.prob(win)))
	}
	t.Logf("max |ggml - float64| over 344 windows = %.2e", maxDiff)
	if maxDiff > 1e-4 {
		t.Errorf("VAD probabilities differ from the reference by %.2e (tolerance 1e-4)", maxDiff)
	}
}

func near(a, b int) bool { return math.Abs(float64(a-b)) <= 1600 } // 100 ms

func TestVADFindsJFKSpeech(t *testing.T) {
	v := loadVAD(t)
	pcm, _ := frontend.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	probs, err := v.Probs(pcm)
	if err != nil {
		t.Fatal(err)
	}
	// The regions Silero v6.2 finds in jfk.wav (its own scheme, default
	// parameters), in samples: "And so my fellow Americans", "ask not what
	// your country can do for you", "ask what you can do", "for your country".
	want := []vad.Span{{5152, 36320}, {52256, 71136}, {86048, 122848}, {130592, 169952}}
	// From the probabilities alone (Silero's scheme) and as the box cuts,
	// with the audio (the room noise of the recording is never 40 dB below
	// the voice, so no end moves).
	for name, spans := range map[string][]vad.Span{
		"probabilities": vad.Spans(probs, len(pcm), vad.Params{}),
		"with audio":    vad.SpansAudio(probs, pcm, vad.Params{}),
	} {
		if len(spans) != len(want) {
			t.Fatalf("%s: spans %v, want %v", name, spans, want)
		}
		for i := range want {
			if !near(spans[i].Start, want[i].Start) || !near(spans[i].End, want[i].End) {
				t.Errorf("%s: span %d = %v, want %v within 100 ms", name, i, spans[i], want[i])
			}
		}
	}
}

func TestVADFindsSynthesisedSentences(t *testing.T) {
	v := loadVAD(t)
	sentences := []string{
		"The patient reports lower back pain since Monday.",
		"Blood pressure is one hundred twenty eight over eighty two.",
		"We will follow up in two weeks.",
	}
	gaps := []float64{1.0, 1.2, 1.5, 1.0}
	audio := asrtest.Silence(gaps[0])
	var truth []vad.Span
	for i, s := range sentences {
		clip := asrtest.Speak(t, s)
		first, last := asrtest.Voiced(clip)
		truth = append(truth, vad.Span{Start: len(audio) + first, End: len(audio) + last})
		audio = append(audio, clip...)
		audio = append(audio, asrtest.Silence(gaps[i+1])...)
	}
	probs, err := v.Probs(audio)
	if err != nil {
		t.Fatal(err)
	}
	// As the box segments: with the audio, so ends move back over the
	// quiet windows Silero's probability trails the voice by. The padding
	// is cut to 1 ms to measure the boundaries themselves.
	spans := vad.SpansAudio(probs, audio, vad.Params{SpeechPadMS: 1})
	if len(spans) != len(truth) {
		t.Fatalf("found %d spans %v, want %d %v", len(spans), spans, len(truth), truth)
	}
	for i := range truth {
		// Both boundaries within 100 ms of where the voice starts and
		// stops (the first and last sample at 1% of full scale).
		late := spans[i].End - truth[i].End
		t.Logf("sentence %d: start %+d ms, end %+d ms from the truth", i, (spans[i].Start-truth[i].Start)/16, late/16)
		if !near(spans[i].Start, truth[i].Start) || !near(spans[i].End, truth[i].End) {
			t.Errorf("sentence %d: span %v, truth %v (both within 100 ms)", i, spans[i], truth[i])
		}
	}
}

func TestVADIgnoresSilenceAndNoise(t *testing.T) {
	v := loadVAD(t)
	for name, audio := range map[string][]float32{
		"silence":           asrtest.Silence(5),
		"noise at -40 dBFS": asrtest.Noise(5, -40, 1),
	} {
		probs, err := v.Probs(audio)
		if err != nil {
			t.Fatal(err)
		}
		if spans := vad.SpansAudio(probs, audio, vad.Params{}); len(spans) != 0 {
			t.Errorf("%s: found speech %v", name, spans)
		}
	}
}
