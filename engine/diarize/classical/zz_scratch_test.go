package classical

import (
	"math"
	"boxd/engine/diarize"
	"fmt"
	"os"
	"boxd/engine/asr/frontend"
	"boxd/engine/diarize/score"
	"boxd/pipelines/live/scripts"
	"slices"
	"testing"
)

func TestZZVoicePitch(t *testing.T) {
	for _, v := range []string{"en-us+m3", "en-gb+f4", "en-us+f3", "en-us", "en-gb", "en-us+m1", "en-us+m2", "en-us+m4", "en-us+m5", "en-us+m6", "en-us+m7", "en-us+m8", "en-gb+m1", "en-gb+m2", "en-us+f1", "en-us+f2", "en-us+f5", "en-gb+f1", "en-gb+f2", "en-gb+f5", "en-us+Annie", "en-us+Andrea", "en-us+linda", "en-us+steph", "en-us+grandma", "en-us+Alicia", "en-us+belinda"} {
		x := speak(t, v, 150, "My lower back has been hurting for about two weeks now.")
		p, n := pitchOf(t, x)
		slices.Sort(p)
		if len(p) == 0 {
			t.Logf("%s: none", v)
			continue
		}
		t.Logf("%-16s %.2fs median %.0f Hz  p10 %.0f p90 %.0f voiced %d/%d", v, float64(len(x))/16000, p[len(p)/2], p[len(p)/10], p[len(p)*9/10], len(p), n)
	}
}

func TestZZPitchOnly(t *testing.T) {
	for _, v := range []string{"en-us+m2 -p 30", "en-us+m2 -p 70", "en+m6 -p 20", "en+m6 -p 60", "en-us -p 25", "en-us -p 75"} {
		x := speak(t, v, 150, "My lower back has been hurting for about two weeks now.")
		p, n := pitchOf(t, x)
		slices.Sort(p)
		t.Logf("%-16s %.2fs median %.0f Hz  p10 %.0f p90 %.0f voiced %d/%d", v, float64(len(x))/16000, p[len(p)/2], p[len(p)/10], p[len(p)*9/10], len(p), n)
	}
}

func TestZZSweep(t *testing.T) {
	for _, sc := range []float64{0, 0.2, 0.3} {
		for _, w := range []float64{0, 0.4, 0.6, 0.8, 1.0} {
			if w == 0 && sc > 0 {
				continue
			}
			pitchWeight, pitchScale = w, sc
			var line string
			var sum float64
			for _, id := range scripts.IDs() {
				pcm, ref := demoAudio(t, id)
				res, s := diarizeAndScore(t, id, pcm, ref)
				line += fmt.Sprintf(" %.1f/%d", s.DER, res.Speakers)
			}
			line += " |"
			for _, d := range dialogues {
				pcm, ref := d.render(t)
				res, s := diarizeAndScore(t, d.name, pcm, ref)
				line += fmt.Sprintf(" %.0f/%d", s.DER, res.Speakers)
				sum += s.DER
			}
			pcm, err := frontend.ReadWAV("/work/shared/data/pyannote-sample/sample.wav")
			if err != nil {
				t.Fatal(err)
			}
			f, _ := os.Open("/work/shared/data/pyannote-sample/sample.rttm")
			ref, _ := score.ReadRTTM(f)
			f.Close()
			res, s := diarizeAndScore(t, ref[0].File, pcm, ref)
			t.Logf("w %.1f sc %.2f | %s | mean %.1f | pyannote %.2f/%d", w, sc, line, sum/float64(len(dialogues)), s.DER, res.Speakers)
		}
	}
}

func TestZZDebug(t *testing.T) {
	pitchWeight, pitchScale = 1, 0
	for _, d := range dialogues {
		if d.name != os.Getenv("ZZCASE") {
			continue
		}
		pcm, ref := d.render(t)
		fe := newFrontEnd()
		f, _ := fe.compute(t.Context(), pcm)
		speech := detectSpeech(f)
		_, level := levels(f)
		newPitchTracker(fe).track(t.Context(), pcm, f, speech, level)
		segs := splitChanges(f, speech)
		emb := embed(f, segs)
		labels := label(segs, emb, diarize.DefaultOptions)
		pm, ps := pitchStats(f, segs)
		t.Logf("pitch median %.0f Hz scale %.3f", math.Exp(pm), ps)
		for i, s := range segs {
			mid := (float64(s.start) + float64(s.end)) / 200
			who := "?"
			for _, r := range ref {
				if mid >= r.Start && mid < r.End {
					who = r.Speaker
				}
			}
			lf := logF0(f, s, nil)
			t.Logf("%5.2f-%5.2f %s label %d pitch %.2f voiced %d norm %.2f", float64(s.start)/100, float64(s.end)/100, who, labels[i], emb[i][len(emb[i])-1], len(lf), math.Sqrt(cosine(emb[i], emb[i])*0+dot(emb[i])))
		}
		for i := range segs {
			row := ""
			for j := range segs {
				row += fmt.Sprintf(" %.2f", 1-cosine(emb[i], emb[j]))
			}
			t.Log(row)
		}
	}
}

func dot(a []float32) float64 {
	var s float64
	for _, v := range a {
		s += float64(v) * float64(v)
	}
	return s
}

func TestZZHist(t *testing.T) {
	for _, v := range []string{"en-us+f3", "en-us+f1", "en-us+f2"} {
		x := speak(t, v, 165, "The delivery was supposed to arrive on Tuesday. I can see it left the warehouse on Monday night.")
		fe := newFrontEnd()
		f, _ := fe.compute(t.Context(), x)
		_, level := levels(f)
		newPitchTracker(fe).track(t.Context(), x, f, []span{{0, f.n}}, level)
		line := ""
		for i, p := range f.f0 {
			if i%2 == 0 {
				line += fmt.Sprintf(" %.0f", p)
			}
		}
		t.Logf("%s: %s", v, line)
	}
}

func TestZZOctave(t *testing.T) {
	voices := []string{"en-us+f3", "en-us+f1", "en-us+f2", "en-us+m3", "en-us+m1", "en-us+Annie", "en+f5", "en-us+m8", "en-us -p 75", "en-us -p 25"}
	var xs [][]float32
	for _, v := range voices {
		xs = append(xs, speak(t, v, 165, "The delivery was supposed to arrive on Tuesday. I can see it left the warehouse on Monday night."))
	}
	for _, oc := range []float64{0.01, 0.03, 0.05, 0.1, 0.15, 0.2} {
		octaveCost = oc
		line := ""
		for _, x := range xs {
			fe := newFrontEnd()
			f, _ := fe.compute(t.Context(), x)
			_, level := levels(f)
			newPitchTracker(fe).track(t.Context(), x, f, []span{{0, f.n}}, level)
			var bad, n int
			for i, p := range f.f0 {
				if p == 0 {
					continue
				}
				var nb []float64
				for j := max(0, i-6); j < min(f.n, i+7); j++ {
					if f.f0[j] > 0 {
						nb = append(nb, float64(f.f0[j]))
					}
				}
				m := median(nb)
				n++
				if float64(p) < 0.75*m || float64(p) > 1.33*m {
					bad++
				}
			}
			line += fmt.Sprintf(" %4.1f%%/%d", 100*float64(bad)/float64(n), n)
		}
		t.Logf("oc %.2f: %s", oc, line)
	}
}
