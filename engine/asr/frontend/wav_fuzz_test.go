package frontend

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"testing"
)

// wavFile builds a RIFF/WAVE file: a fmt chunk (format, channels, rate,
// bits), extra chunks, then a data chunk of data.
func wavFile(format, channels uint16, rate uint32, bits uint16, extra [][2]string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(0)) // the RIFF size is not read
	b.WriteString("WAVE")
	for _, c := range extra {
		b.WriteString(c[0])
		_ = binary.Write(&b, binary.LittleEndian, uint32(len(c[1])))
		b.WriteString(c[1])
		if len(c[1])%2 == 1 {
			b.WriteByte(0)
		}
	}
	b.WriteString("fmt ")
	_ = binary.Write(&b, binary.LittleEndian, uint32(16))
	_ = binary.Write(&b, binary.LittleEndian, format)
	_ = binary.Write(&b, binary.LittleEndian, channels)
	_ = binary.Write(&b, binary.LittleEndian, rate)
	_ = binary.Write(&b, binary.LittleEndian, rate*uint32(channels)*uint32(bits)/8)
	_ = binary.Write(&b, binary.LittleEndian, channels*bits/8)
	_ = binary.Write(&b, binary.LittleEndian, bits)
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// FuzzDecodeWAV: the WAV reader (boxd transcribe's files) and the live
// socket's PCM16 frames never panic, take memory in proportion to the
// bytes given (a header cannot claim a large allocation), and give
// samples in -1..1, at most one per two bytes.
func FuzzDecodeWAV(f *testing.F) {
	pcm := []byte{0, 0, 0xff, 0x7f, 0, 0x80, 1, 0}
	f.Add(wavFile(1, 1, SampleRate, 16, nil, pcm))
	f.Add(wavFile(1, 2, SampleRate, 16, nil, pcm))
	f.Add(wavFile(0xFFFE, 1, SampleRate, 16, [][2]string{{"LIST", "INFOx"}}, pcm))
	f.Add(wavFile(1, 1, 44100, 16, nil, pcm))
	f.Add(wavFile(3, 1, SampleRate, 32, nil, pcm))
	f.Add(wavFile(1, 1, SampleRate, 16, nil, pcm[:3]))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEdata\x04\x00\x00\x00abcd"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \xff\xff\x00\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEjunk\xff\xff\xff\xffdata"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var out []float32
		var err error
		n := allocated(func() { out, err = DecodeWAV(bytes.NewReader(data)) })
		// A fmt chunk of up to 64 KiB is read whole; the rest grows with
		// the input.
		if limit := uint64(16*len(data) + 256<<10); n > limit {
			t.Fatalf("%d bytes of input allocated %d bytes (limit %d)", len(data), n, limit)
		}
		if err != nil {
			if out != nil {
				t.Fatalf("samples with error %v", err)
			}
		} else {
			if len(out) > len(data)/2 {
				t.Fatalf("%d samples from %d bytes", len(out), len(data))
			}
			inRange(t, out)
		}
		frame, err := PCM16(data)
		switch {
		case len(data)%2 != 0:
			if err == nil {
				t.Fatalf("PCM16 took an odd %d bytes", len(data))
			}
		case err != nil:
			t.Fatalf("PCM16 refused %d bytes: %v", len(data), err)
		case len(frame) != len(data)/2:
			t.Fatalf("PCM16 gave %d samples from %d bytes", len(frame), len(data))
		default:
			inRange(t, frame)
			for i, s := range frame {
				if want := int16(binary.LittleEndian.Uint16(data[2*i:])); s != float32(want)/32768 {
					t.Fatalf("sample %d is %v, want %v", i, s, float32(want)/32768)
				}
			}
		}
	})
}

func inRange(t *testing.T, x []float32) {
	t.Helper()
	for i, s := range x {
		if math.IsNaN(float64(s)) || s < -1 || s >= 1 {
			t.Fatalf("sample %d is %v, outside -1..1", i, s)
		}
	}
}
