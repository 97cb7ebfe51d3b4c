package classical

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
)

// speak synthesises text with espeak-ng in voice at speed (words per
// minute) and returns 16 kHz samples with the silence at both ends
// trimmed to 20 ms. It skips the test when espeak-ng is missing.
func speak(tb testing.TB, voice string, speed int, text string) []float32 {
	tb.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		tb.Skipf("espeak-ng: %v", err)
	}
	cmd := exec.CommandContext(context.Background(), "espeak-ng", "--stdout", "-v", voice, "-s", fmt.Sprint(speed))
	cmd.Stdin = strings.NewReader(text)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("espeak-ng -v %s: %v: %s", voice, err, stderr.String())
	}
	x, rate, err := readWAV(out)
	if err != nil {
		tb.Fatalf("espeak-ng -v %s: %v", voice, err)
	}
	first, last := -1, -1
	for i, v := range x {
		if math.Abs(v) > 0.01 { // -40 dBFS
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		tb.Fatalf("espeak-ng -v %s %q: silence", voice, text)
	}
	margin := rate / 50
	return resampleTo16k(x[max(0, first-margin):min(len(x), last+1+margin)], rate)
}

// readWAV reads 16-bit mono PCM WAV; the data runs to the end of b (a
// pipe leaves its length unset).
func readWAV(b []byte) ([]float64, int, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, 0, errors.New("not a WAV file")
	}
	rate := 0
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		switch id {
		case "fmt ":
			if len(body) < 16 || binary.LittleEndian.Uint16(body) != 1 || binary.LittleEndian.Uint16(body[2:]) != 1 || binary.LittleEndian.Uint16(body[14:]) != 16 {
				return nil, 0, errors.New("not 16-bit mono PCM")
			}
			rate = int(binary.LittleEndian.Uint32(body[4:]))
		case "data":
			if rate <= 0 {
				return nil, 0, errors.New("data before fmt")
			}
			if size <= 0 || size > len(body) {
				size = len(body)
			}
			x := make([]float64, size/2)
			for i := range x {
				x[i] = float64(int16(binary.LittleEndian.Uint16(body[2*i:]))) / 32768
			}
			return x, rate, nil
		}
		p += 8 + size + size&1
	}
	return nil, 0, errors.New("no data chunk")
}

// resampleTo16k resamples x from rate to 16 kHz with a Hann-windowed sinc
// low-pass at 0.45 of the lower rate, its taps tabulated per phase.
func resampleTo16k(x []float64, rate int) []float32 {
	const taps = 16 // each side
	g := gcd(rate, sampleRate)
	phases := sampleRate / g
	table := make([][2 * taps]float64, phases)
	cut := 0.9 * float64(min(rate, sampleRate)) / 2 / float64(rate) // cycles per input sample
	for ph := range table {
		frac := float64(ph*g) / sampleRate
		for j := range 2 * taps {
			d := frac - float64(j-taps+1)
			h := 2 * cut
			if d != 0 {
				h = math.Sin(2*math.Pi*cut*d) / (math.Pi * d)
			}
			table[ph][j] = h * (0.5 + 0.5*math.Cos(math.Pi*d/taps))
		}
	}
	out := make([]float32, int(int64(len(x))*sampleRate/int64(rate)))
	for i := range out {
		num := int64(i) * int64(rate)
		c, ph := int(num/sampleRate), int(num%sampleRate)/g
		var s float64
		for j, h := range table[ph] {
			if k := c + j - taps + 1; k >= 0 && k < len(x) {
				s += x[k] * h
			}
		}
		out[i] = float32(s)
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
