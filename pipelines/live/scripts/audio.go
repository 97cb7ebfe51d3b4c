package scripts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"boxd/internal/atomicfile"
)

// SampleRate is the rate of the audio Audio returns: 16 kHz mono PCM16
// little-endian, what live sessions take.
const SampleRate = 16000

// Silences Audio puts around the lines, in seconds.
const (
	leadSilence = 0.4
	pause       = 0.7 // between lines
	tailSilence = 1.2 // lets speech recognition close the last sentence
)

// cacheFormat names the layout of the cache files; changing how audio is
// made changes it, so old caches regenerate.
const cacheFormat = "boxd-demo-audio/1"

// LineTiming is where one line lies in a script's audio, in seconds from
// its start. N counts lines from 1.
type LineTiming struct {
	N       int     `json:"n"`
	Speaker int     `json:"speaker"`
	Role    string  `json:"role"`
	Text    string  `json:"text"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
}

// Errors of Audio.
var (
	ErrUnknownScript = errors.New("scripts: unknown script")
	// ErrNoSynthesizer: espeak-ng is not installed and no audio is cached.
	ErrNoSynthesizer = errors.New("scripts: espeak-ng is not installed and the script's audio is not cached; install espeak-ng (apt install espeak-ng)")
)

// CacheDir is where audio is cached under a state directory.
func CacheDir(stateDir string) string { return filepath.Join(stateDir, "demo-audio") }

// espeakBinary is the synthesiser run; tests point it elsewhere.
var espeakBinary = "espeak-ng"

// espeakVersion returns the synthesiser's version line, part of the cache
// key (a new espeak-ng may speak differently). Tests replace it.
var espeakVersion = func(ctx context.Context) (string, error) {
	path, err := exec.LookPath(espeakBinary)
	if err != nil {
		return "", err
	}
	versionMu.Lock()
	defer versionMu.Unlock()
	if v, ok := versions[path]; ok {
		return v, nil
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", path, err)
	}
	v := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	versions[path] = v
	return v, nil
}

var (
	versionMu sync.Mutex
	versions  = map[string]string{}
)

func espeakAvailable() bool {
	_, err := exec.LookPath(espeakBinary)
	return err == nil
}

// Audio returns a script's speech as 16 kHz mono PCM16 and where each line
// lies in it. The audio is synthesised with espeak-ng at first use and
// cached in cacheDir as <id>.pcm and <id>.json, keyed by a hash of the
// script's text and voices and the espeak-ng version, so an edit or a new
// espeak-ng regenerates it. Without espeak-ng a cache made for the same
// text and voices is used as it is.
func Audio(ctx context.Context, cacheDir, id string) ([]byte, []LineTiming, error) {
	s, ok := Lookup(id)
	if !ok {
		return nil, nil, fmt.Errorf("%w %q", ErrUnknownScript, id)
	}
	return audioFor(ctx, cacheDir, &s)
}

// cacheMeta is <id>.json.
type cacheMeta struct {
	Format     string       `json:"format"`
	ID         string       `json:"id"`
	Key        string       `json:"key"`         // script hash and espeak-ng version
	ScriptHash string       `json:"script_hash"` // text, voices, silences
	Espeak     string       `json:"espeak"`
	SampleRate int          `json:"sample_rate"`
	Samples    int          `json:"samples"`
	DurationS  float64      `json:"duration_s"`
	PCMSHA256  string       `json:"pcm_sha256"`
	Lines      []LineTiming `json:"lines"`
}

// one synthesis per script at a time (concurrent first replays wait for
// the first to finish and then read its cache).
var (
	locksMu sync.Mutex
	locks   = map[string]*sync.Mutex{}
)

func lockFor(dir, id string) func() {
	locksMu.Lock()
	k := dir + "\x00" + id
	m := locks[k]
	if m == nil {
		m = &sync.Mutex{}
		locks[k] = m
	}
	locksMu.Unlock()
	m.Lock()
	return m.Unlock
}

func audioFor(ctx context.Context, cacheDir string, s *Script) ([]byte, []LineTiming, error) {
	unlock := lockFor(cacheDir, s.ID)
	defer unlock()
	sh := scriptHash(s)
	meta, cached := readCache(cacheDir, s)
	ver, verr := espeakVersion(ctx)
	if verr != nil {
		if !cached {
			return nil, nil, fmt.Errorf("%w (%v)", ErrNoSynthesizer, verr)
		}
		return loadPCM(cacheDir, meta)
	}
	key := cacheKey(sh, ver)
	if cached && meta.Key == key {
		if pcm, lines, err := loadPCM(cacheDir, meta); err == nil {
			return pcm, lines, nil
		}
	}
	pcm, lines, err := synthesize(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(pcm)
	meta = &cacheMeta{Format: cacheFormat, ID: s.ID, Key: key, ScriptHash: sh, Espeak: ver, SampleRate: SampleRate,
		Samples: len(pcm) / 2, DurationS: float64(len(pcm)/2) / SampleRate, PCMSHA256: hex.EncodeToString(sum[:]), Lines: lines}
	if err := writeCache(cacheDir, meta, pcm); err != nil {
		return nil, nil, err
	}
	return pcm, lines, nil
}

// scriptHash covers everything but the synthesiser's version that shapes
// the audio.
func scriptHash(s *Script) string {
	b, _ := json.Marshal(struct {
		Format            string
		Rate              int
		Lead, Pause, Tail float64
		Speakers          [2]Speaker
		Lines             []Line
	}{cacheFormat, SampleRate, leadSilence, pause, tailSilence, s.Speakers, s.Lines})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func cacheKey(scriptHash, espeak string) string {
	sum := sha256.Sum256([]byte(scriptHash + "\n" + espeak))
	return hex.EncodeToString(sum[:])
}

// readCache reads <id>.json when it was made for this script's text and
// voices and its PCM file has the length it records.
func readCache(dir string, s *Script) (*cacheMeta, bool) {
	if dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, s.ID+".json"))
	if err != nil {
		return nil, false
	}
	var m cacheMeta
	if json.Unmarshal(b, &m) != nil || m.Format != cacheFormat || m.ID != s.ID || m.ScriptHash != scriptHash(s) || m.SampleRate != SampleRate {
		return nil, false
	}
	fi, err := os.Stat(filepath.Join(dir, s.ID+".pcm"))
	if err != nil || fi.Size() != int64(m.Samples)*2 {
		return nil, false
	}
	return &m, true
}

func loadPCM(dir string, m *cacheMeta) ([]byte, []LineTiming, error) {
	pcm, err := os.ReadFile(filepath.Join(dir, m.ID+".pcm"))
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(pcm)
	if hex.EncodeToString(sum[:]) != m.PCMSHA256 {
		return nil, nil, fmt.Errorf("scripts: cached audio of %s does not match its checksum", m.ID)
	}
	return pcm, m.Lines, nil
}

// writeCache writes the PCM and then the JSON that vouches for it, each
// through a temporary file renamed into place.
func writeCache(dir string, m *cacheMeta, pcm []byte) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("scripts: cache directory: %w", err)
	}
	meta, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, m.ID+".pcm"), pcm); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, m.ID+".json"), append(meta, '\n'))
}

func writeAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("scripts: writing %s: %w", path, err)
	}
	return nil
}

// synthesize speaks every line in its speaker's voice, trims the
// synthesiser's own silence, and joins the lines with pauses.
func synthesize(ctx context.Context, s *Script) ([]byte, []LineTiming, error) {
	samples := make([]int16, int(leadSilence*SampleRate))
	lines := make([]LineTiming, len(s.Lines))
	for i, l := range s.Lines {
		sp := s.Speakers[l.Speaker]
		speech, err := speak(ctx, l.Text, sp.Voice, sp.Speed)
		if err != nil {
			return nil, nil, fmt.Errorf("scripts: %s line %d: %w", s.ID, i+1, err)
		}
		if i > 0 {
			samples = append(samples, make([]int16, int(pause*SampleRate))...)
		}
		start := len(samples)
		samples = append(samples, speech...)
		lines[i] = LineTiming{N: i + 1, Speaker: l.Speaker, Role: sp.Role, Text: l.Text,
			Start: ms(start), End: ms(len(samples))}
	}
	samples = append(samples, make([]int16, int(tailSilence*SampleRate))...)
	pcm := make([]byte, 2*len(samples))
	for i, v := range samples {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
	}
	return pcm, lines, nil
}

// ms is a sample offset in seconds, rounded to the millisecond.
func ms(samples int) float64 { return math.Round(float64(samples)*1000/SampleRate) / 1000 }

// speak runs espeak-ng on text and returns 16 kHz samples with the
// leading and trailing silence trimmed.
func speak(ctx context.Context, text, voice string, speed int) ([]int16, error) {
	cmd := exec.CommandContext(ctx, espeakBinary, "--stdout", "-b", "1", "-v", voice, "-s", fmt.Sprint(speed))
	cmd.Stdin = strings.NewReader(text)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("espeak-ng -v %s: %w: %s", voice, err, strings.TrimSpace(stderr.String()))
	}
	in, rate, err := parseWAV(out)
	if err != nil {
		return nil, fmt.Errorf("espeak-ng -v %s: %w", voice, err)
	}
	in = trim(in, rate)
	return resample(in, rate, SampleRate), nil
}

// parseWAV reads 16-bit mono PCM WAV. espeak-ng writing to a pipe cannot
// fill in the data length, so the data runs to the end of the input.
func parseWAV(b []byte) ([]int16, int, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, 0, errors.New("output is not a WAV file")
	}
	rate, haveFmt := 0, false
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return nil, 0, errors.New("short fmt chunk")
			}
			format, ch, bits := binary.LittleEndian.Uint16(body), binary.LittleEndian.Uint16(body[2:]), binary.LittleEndian.Uint16(body[14:])
			rate = int(binary.LittleEndian.Uint32(body[4:]))
			if format != 1 || ch != 1 || bits != 16 || rate <= 0 {
				return nil, 0, fmt.Errorf("WAV is format %d, %d channels, %d-bit; want 16-bit mono PCM", format, ch, bits)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, 0, errors.New("WAV data before its fmt chunk")
			}
			if size > len(body) || size < 0 {
				size = len(body)
			}
			size &^= 1
			out := make([]int16, size/2)
			for i := range out {
				out[i] = int16(binary.LittleEndian.Uint16(body[2*i:]))
			}
			return out, rate, nil
		}
		p += 8 + size + size&1
	}
	return nil, 0, errors.New("WAV has no data chunk")
}

// trim drops silence (below about -40 dBFS) at both ends, keeping 20 ms.
func trim(x []int16, rate int) []int16 {
	const threshold = 300
	first, last := -1, -1
	for i, v := range x {
		if v > threshold || v < -threshold {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return x
	}
	margin := rate / 50
	return x[max(0, first-margin):min(len(x), last+1+margin)]
}

// resample converts between rates with a windowed-sinc low-pass filter
// (Hann window), precomputed for each phase of the rational ratio.
func resample(in []int16, from, to int) []int16 {
	if from == to {
		return append([]int16(nil), in...)
	}
	g := gcd(from, to)
	up, down := to/g, from/g // out index j sits at input position j*down/up
	fc := 0.92 * min(1.0, float64(to)/float64(from))
	half := int(math.Ceil(8 / fc))
	taps := 2 * half
	table := make([][]float64, up)
	for ph := range up {
		frac := float64(ph) / float64(up)
		w := make([]float64, taps)
		var sum float64
		for k := range taps {
			x := float64(k-half+1) - frac // input offset from the output position
			v := fc * sinc(fc*x) * 0.5 * (1 + math.Cos(math.Pi*x/float64(half)))
			if math.Abs(x) >= float64(half) {
				v = 0
			}
			w[k] = v
			sum += v
		}
		for k := range w {
			w[k] /= sum
		}
		table[ph] = w
	}
	n := len(in) * up / down
	out := make([]int16, n)
	for j := range n {
		pos := j * down
		base, ph := pos/up, pos%up
		w := table[ph]
		var acc float64
		for k := range taps {
			i := base + k - half + 1
			if i >= 0 && i < len(in) {
				acc += w[k] * float64(in[i])
			}
		}
		out[j] = int16(max(-32768, min(32767, math.Round(acc))))
	}
	return out
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
