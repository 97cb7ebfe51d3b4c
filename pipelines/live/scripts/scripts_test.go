package scripts

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// needEspeak skips without espeak-ng, except under CI=true where it fails.
func needEspeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("espeak-ng is missing (make deps installs it)")
		}
		t.Skip("espeak-ng is missing; run make deps")
	}
}

func TestCatalogMatchesTheContract(t *testing.T) {
	want := []string{"clinical-back-pain", "clinical-diabetes-followup", "sales-discovery-logistics", "sales-renewal-security",
		"field-roof-inspection", "field-electrical-panel", "translate-es-en-repair", "translate-en-es-tour"}
	if got := IDs(); !slices.Equal(got, want) {
		t.Fatalf("ids %v", got)
	}
	for _, s := range All() {
		if !strings.HasPrefix(s.ID, s.Vertical+"-") {
			t.Errorf("%s: vertical %s", s.ID, s.Vertical)
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !slices.Equal(keys, []string{"duration_s", "has_audio", "id", "lang", "target", "title", "vertical"}) {
			t.Errorf("%s: fields %v", s.ID, keys)
		}
		if s.DurationS < 60 || s.DurationS > 130 {
			t.Errorf("%s: estimated %.1f s", s.ID, s.DurationS)
		}
		if s.Speakers[0].Voice == s.Speakers[1].Voice || s.Speakers[0].Role == s.Speakers[1].Role {
			t.Errorf("%s: speakers %+v", s.ID, s.Speakers)
		}
		var by [2]int
		for _, l := range s.Lines {
			by[l.Speaker]++
		}
		if by[0] < 3 || by[1] < 3 {
			t.Errorf("%s: lines per speaker %v", s.ID, by)
		}
		got, ok := Lookup(s.ID)
		if !ok || !reflect.DeepEqual(got, s) {
			t.Errorf("Lookup(%s) = %+v", s.ID, got)
		}
	}
	tr := map[string][2]any{"translate-es-en-repair": {"es", "en"}, "translate-en-es-tour": {"en", "es"}, "clinical-back-pain": {"en", nil}}
	for id, lt := range tr {
		s, _ := Lookup(id)
		raw, _ := json.Marshal(s)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if m["lang"] != lt[0] || m["target"] != lt[1] {
			t.Errorf("%s: lang %v target %v", id, m["lang"], m["target"])
		}
	}
	if _, ok := Lookup("clinical-nope"); ok {
		t.Error("unknown id found")
	}
}

// TestScriptsHaveMaterialForEveryLane checks that each dialogue says what
// its vertical's lanes look for.
func TestScriptsHaveMaterialForEveryLane(t *testing.T) {
	need := map[string][]string{
		// complaint, history, exam, meds with doses, plan, diagnoses
		"clinical": {"milligrams", "blood pressure", "exam", "refer", "weeks|months", "allerg|neuropathy", "sciatica|diabetes"},
		// objections, budget, timeline, CRM facts, next steps
		"sales": {"budget", "thousand dollars", "percent", "director", "March|October", "Thursday|Tuesday", "send", "worr"},
		// checklist, issues with severity, measurements with specs, passes, codes
		"field": {"minor issue", "major issue", "critical|major", "spec", "within spec", "out of spec", "pass", "code", "measure", "Overall condition"},
		// names and terms
		"translate": {"My name is|Soy", "euros", "Taller|Museum"},
	}
	for _, s := range All() {
		text := strings.ToLower(s.Text())
		for _, alts := range need[s.Vertical] {
			found := false
			for _, w := range strings.Split(alts, "|") {
				found = found || strings.Contains(text, strings.ToLower(w))
			}
			if !found {
				t.Errorf("%s says none of %q", s.ID, alts)
			}
		}
	}
}

func samplesOf(pcm []byte) []int16 {
	out := make([]int16, len(pcm)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(pcm[2*i:]))
	}
	return out
}

func rms(x []int16) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

// TestAudioMatchesTimings synthesises all eight scripts: 60 to 120 s
// each, lines in order, speech inside each line's span and silence in the
// pauses, and a second call served from the cache.
func TestAudioMatchesTimings(t *testing.T) {
	needEspeak(t)
	dir := t.TempDir()
	for _, s := range All() {
		pcm, lines, err := Audio(context.Background(), dir, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		x := samplesOf(pcm)
		dur := float64(len(x)) / SampleRate
		if dur < 60 || dur > 120 || len(pcm)%2 != 0 {
			t.Errorf("%s: %.1f s", s.ID, dur)
		}
		if len(lines) != len(s.Lines) {
			t.Fatalf("%s: %d timings for %d lines", s.ID, len(lines), len(s.Lines))
		}
		last := lines[len(lines)-1].End
		if math.Abs(dur-last-tailSilence) > 0.002 || math.Abs(lines[0].Start-leadSilence) > 0.002 {
			t.Errorf("%s: audio %.3f s, first line at %.3f, last ends %.3f", s.ID, dur, lines[0].Start, last)
		}
		var speech float64
		prev := 0.0
		for i, l := range lines {
			if l.N != i+1 || l.Text != s.Lines[i].Text || l.Speaker != s.Lines[i].Speaker || l.Role != s.Speakers[l.Speaker].Role {
				t.Errorf("%s line %d: %+v", s.ID, i+1, l)
			}
			if l.Start < prev || l.End <= l.Start+0.3 {
				t.Errorf("%s line %d: %.3f-%.3f after %.3f", s.ID, i+1, l.Start, l.End, prev)
			}
			if i > 0 && math.Abs(l.Start-prev-pause) > 0.002 {
				t.Errorf("%s line %d: pause %.3f", s.ID, i+1, l.Start-prev)
			}
			speech += l.End - l.Start
			span := x[int(l.Start*SampleRate):int(l.End*SampleRate)]
			if rms(span) < 500 {
				t.Errorf("%s line %d: quiet (rms %.0f)", s.ID, i+1, rms(span))
			}
			if i > 0 {
				gap := x[int(prev*SampleRate)+10 : int(l.Start*SampleRate)-10]
				if rms(gap) != 0 {
					t.Errorf("%s line %d: pause not silent", s.ID, i+1)
				}
			}
			prev = l.End
		}
		if speech < 60 {
			t.Errorf("%s: %.1f s of speech", s.ID, speech)
		}
		again, lines2, err := Audio(context.Background(), dir, s.ID)
		if err != nil || string(again) != string(pcm) || !reflect.DeepEqual(lines, lines2) {
			t.Errorf("%s: second call differs (%v)", s.ID, err)
		}
	}
	for _, s := range Catalog(dir) {
		c, ok := readCache(dir, &s)
		if !ok || !s.HasAudio || s.DurationS != round1(c.DurationS) {
			t.Errorf("catalog %s: %.1f s, has_audio %v", s.ID, s.DurationS, s.HasAudio)
		}
	}
}

// pitch is the median fundamental frequency (Hz) of voiced 40 ms frames,
// by autocorrelation between 60 and 400 Hz.
func pitch(x []int16) float64 {
	const frame = 640
	var f0s []float64
	for p := 0; p+frame <= len(x); p += frame / 2 {
		w := x[p : p+frame]
		if rms(w) < 1500 {
			continue
		}
		var e0 float64
		for _, v := range w {
			e0 += float64(v) * float64(v)
		}
		best, bestLag := 0.0, 0
		for lag := SampleRate / 400; lag <= SampleRate/60; lag++ {
			var c float64
			for i := 0; i+lag < frame; i++ {
				c += float64(w[i]) * float64(w[i+lag])
			}
			if c > best {
				best, bestLag = c, lag
			}
		}
		if bestLag > 0 && best > 0.4*e0 {
			f0s = append(f0s, float64(SampleRate)/float64(bestLag))
		}
	}
	if len(f0s) == 0 {
		return 0
	}
	sort.Float64s(f0s)
	return f0s[len(f0s)/2]
}

// TestTwoVoicesDiffer speaks one sentence in both voices of each script
// language: different audio and clearly different pitch.
func TestTwoVoicesDiffer(t *testing.T) {
	needEspeak(t)
	for _, tc := range []struct {
		a, b Speaker
		text string
	}{
		{enMale, enFemale, "The pain shoots down the back of my left leg to the knee."},
		{esMale, esFemale, "La lavadora no desagua y hace un ruido fuerte."},
	} {
		x, err := speak(context.Background(), tc.text, tc.a.Voice, tc.a.Speed)
		if err != nil {
			t.Fatal(err)
		}
		y, err := speak(context.Background(), tc.text, tc.b.Voice, tc.b.Speed)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(x, y) {
			t.Fatalf("%s and %s give the same audio", tc.a.Voice, tc.b.Voice)
		}
		px, py := pitch(x), pitch(y)
		t.Logf("%s %.0f Hz, %s %.0f Hz", tc.a.Voice, px, tc.b.Voice, py)
		if px == 0 || py < 1.3*px {
			t.Errorf("%s pitch %.0f Hz, %s %.0f Hz: want the second clearly higher", tc.a.Voice, px, tc.b.Voice, py)
		}
	}
}

func tiny() *Script {
	return &Script{ID: "clinical-tiny", Vertical: "clinical", Lang: "en",
		Speakers: [2]Speaker{role(enFemale, "Doctor"), role(enMale, "Patient")},
		Lines:    []Line{{0, "How are you?"}, {1, "Much better, thanks."}}}
}

// same reports whether path is still the file st described (writeCache
// renames a new file into place).
func same(t *testing.T, path string, st os.FileInfo) bool {
	t.Helper()
	now, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(now, st)
}

func TestCacheIsReusedAndRegenerated(t *testing.T) {
	needEspeak(t)
	ctx := context.Background()
	dir := t.TempDir()
	s := tiny()
	pcm, lines, err := audioFor(ctx, dir, s)
	if err != nil {
		t.Fatal(err)
	}
	jsonPath, pcmPath := filepath.Join(dir, s.ID+".json"), filepath.Join(dir, s.ID+".pcm")
	st, err := os.Stat(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(pcmPath); fi == nil || fi.Size() != int64(len(pcm)) {
		t.Fatalf("pcm file %v", fi)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// Reused: same bytes, files untouched.
	pcm2, lines2, err := audioFor(ctx, dir, s)
	if err != nil || string(pcm2) != string(pcm) || !reflect.DeepEqual(lines, lines2) || !same(t, jsonPath, st) {
		t.Fatalf("second call was not served from the cache (%v)", err)
	}

	// An edited line regenerates.
	s.Lines[1].Text = "Much better, thank you, Doctor."
	_, lines3, err := audioFor(ctx, dir, s)
	if err != nil || same(t, jsonPath, st) || lines3[1].Text != s.Lines[1].Text || lines3[1].End <= lines[1].End {
		t.Fatalf("edit did not regenerate: %v %+v", err, lines3)
	}
	st, _ = os.Stat(jsonPath)

	// Another voice regenerates.
	s.Speakers[1].Voice = "en-us+m1"
	if _, _, err := audioFor(ctx, dir, s); err != nil || same(t, jsonPath, st) {
		t.Fatalf("voice change did not regenerate: %v", err)
	}
	st, _ = os.Stat(jsonPath)

	// Another espeak-ng version regenerates.
	orig := espeakVersion
	t.Cleanup(func() { espeakVersion = orig })
	espeakVersion = func(ctx context.Context) (string, error) { return "eSpeak NG text-to-speech: 9.99", nil }
	if _, _, err := audioFor(ctx, dir, s); err != nil || same(t, jsonPath, st) {
		t.Fatalf("version change did not regenerate: %v", err)
	}
	var meta cacheMeta
	b, _ := os.ReadFile(jsonPath)
	if json.Unmarshal(b, &meta) != nil || meta.Espeak != "eSpeak NG text-to-speech: 9.99" {
		t.Errorf("meta %s", b)
	}
	st, _ = os.Stat(jsonPath)

	// A damaged PCM file regenerates.
	raw, _ := os.ReadFile(pcmPath)
	raw[len(raw)/2] ^= 0x55
	if err := os.WriteFile(pcmPath, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, _, err := audioFor(ctx, dir, s); err != nil || same(t, jsonPath, st) {
		t.Fatalf("damaged pcm not regenerated: %v", err)
	}

	// Without espeak-ng the cache still serves its text; other text fails.
	espeakVersion = orig
	binary := espeakBinary
	t.Cleanup(func() { espeakBinary = binary })
	espeakBinary = filepath.Join(dir, "no-espeak-ng")
	if _, _, err := audioFor(ctx, dir, s); err != nil {
		t.Fatalf("cache without espeak-ng: %v", err)
	}
	if got := Catalog(t.TempDir()); got[0].HasAudio {
		t.Error("has_audio without espeak-ng or cache")
	}
	s.Lines[0].Text = "How are you today?"
	if _, _, err := audioFor(ctx, dir, s); !errors.Is(err, ErrNoSynthesizer) {
		t.Fatalf("edited text without espeak-ng: %v", err)
	}
	if _, _, err := Audio(ctx, dir, "nope"); !errors.Is(err, ErrUnknownScript) {
		t.Errorf("unknown id: %v", err)
	}
}

func TestResampleKeepsFrequency(t *testing.T) {
	const from, hz = 22050, 440.0
	in := make([]int16, from) // one second
	for i := range in {
		in[i] = int16(10000 * math.Sin(2*math.Pi*hz*float64(i)/from))
	}
	out := resample(in, from, SampleRate)
	if len(out) != SampleRate {
		t.Fatalf("%d samples", len(out))
	}
	mid := out[1000 : SampleRate-1000]
	crossings := 0
	for i := 1; i < len(mid); i++ {
		if (mid[i-1] < 0) != (mid[i] < 0) {
			crossings++
		}
	}
	got := float64(crossings) / 2 / (float64(len(mid)) / SampleRate)
	if math.Abs(got-hz) > 2 || math.Abs(rms(mid)-10000/math.Sqrt2) > 150 {
		t.Errorf("%.1f Hz, rms %.0f", got, rms(mid))
	}
}

func TestParseWAVPipeHeader(t *testing.T) {
	// espeak-ng on a pipe writes 0x7ffff000-ish sizes; data runs to EOF.
	h := []byte("RIFF\x24\xf0\xff\x7fWAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x22\x56\x00\x00\x44\xac\x00\x00\x02\x00\x10\x00data\x00\xf0\xff\x7f")
	b := append(h, 1, 0, 2, 0, 0xff, 0xff)
	x, rate, err := parseWAV(b)
	if err != nil || rate != 22050 || !slices.Equal(x, []int16{1, 2, -1}) {
		t.Fatalf("%v %d %v", x, rate, err)
	}
	if _, _, err := parseWAV([]byte("RIFF....WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00")); err == nil {
		t.Error("stereo or short input accepted")
	}
}
