// Package asrtest makes test audio: speech synthesised with espeak-ng
// (resampled to 16 kHz mono with sox), silence and noise.
package asrtest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"boxd/engine/asr/frontend"
)

// Speak synthesises text (espeak-ng, American English by default) as 16
// kHz mono samples. Under CI=true a missing espeak-ng or sox fails the
// test; elsewhere it skips.
func Speak(tb testing.TB, text string, voice ...string) []float32 {
	tb.Helper()
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				tb.Fatalf("%s is missing (make deps installs it)", tool)
			}
			tb.Skipf("%s is missing; run make deps", tool)
		}
	}
	v := "en-us"
	if len(voice) > 0 {
		v = voice[0]
	}
	dir := tb.TempDir()
	raw, out := filepath.Join(dir, "raw.wav"), filepath.Join(dir, "out.wav")
	if b, err := exec.Command("espeak-ng", "-v", v, "-s", "150", "-w", raw, text).CombinedOutput(); err != nil {
		tb.Fatalf("espeak-ng: %v: %s", err, b)
	}
	if b, err := exec.Command("sox", raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out).CombinedOutput(); err != nil {
		tb.Fatalf("sox: %v: %s", err, b)
	}
	pcm, err := frontend.ReadWAV(out)
	if err != nil {
		tb.Fatal(err)
	}
	return pcm
}

// Silence is seconds of zeros.
func Silence(seconds float64) []float32 { return make([]float32, int(seconds*frontend.SampleRate)) }

// Noise is white Gaussian noise at an RMS level in dBFS.
func Noise(seconds, dbfs float64, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	sigma := math.Pow(10, dbfs/20)
	out := make([]float32, int(seconds*frontend.SampleRate))
	for i := range out {
		out[i] = float32(r.NormFloat64() * sigma)
	}
	return out
}

// Voiced returns the first and last sample whose magnitude reaches
// 1% of full scale (where a synthesised clip's speech starts and ends).
func Voiced(pcm []float32) (first, last int) {
	first, last = -1, -1
	for i, s := range pcm {
		if math.Abs(float64(s)) >= 0.01 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return
}

// WriteWAV writes samples as a 16-bit PCM WAV file at rate Hz, mono.
func WriteWAV(tb testing.TB, path string, pcm []float32, rate int) {
	tb.Helper()
	data := make([]byte, 44+2*len(pcm))
	copy(data, "RIFF")
	binary.LittleEndian.PutUint32(data[4:], uint32(36+2*len(pcm)))
	copy(data[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(data[16:], 16)
	binary.LittleEndian.PutUint16(data[20:], 1) // PCM
	binary.LittleEndian.PutUint16(data[22:], 1) // mono
	binary.LittleEndian.PutUint32(data[24:], uint32(rate))
	binary.LittleEndian.PutUint32(data[28:], uint32(2*rate))
	binary.LittleEndian.PutUint16(data[32:], 2)
	binary.LittleEndian.PutUint16(data[34:], 16)
	copy(data[36:], "data")
	binary.LittleEndian.PutUint32(data[40:], uint32(2*len(pcm)))
	for i, v := range pcm {
		s := int16(max(-32768, min(32767, math.Round(float64(v)*32768))))
		binary.LittleEndian.PutUint16(data[44+2*i:], uint16(s))
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}
