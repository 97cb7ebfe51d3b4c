package frontend

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadWAV reads a 16 kHz PCM16 WAV file (mono, or stereo mixed down) as
// samples in -1..1.
func ReadWAV(path string) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("asr: %w", err)
	}
	defer f.Close()
	return DecodeWAV(f)
}

// DecodeWAV reads a RIFF/WAVE stream; see ReadWAV.
func DecodeWAV(r io.Reader) ([]float32, error) {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("asr: wav: %w", err)
	}
	if string(head[0:4]) != "RIFF" || string(head[8:12]) != "WAVE" {
		return nil, errors.New("asr: not a WAV file (RIFF/WAVE)")
	}
	var channels, bits uint16
	var rate uint32
	fmtSeen := false
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return nil, errors.New("asr: wav: no data chunk")
		}
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			if size < 16 || size > 1<<16 {
				return nil, errors.New("asr: wav: bad fmt chunk")
			}
			b := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("asr: wav: %w", err)
			}
			format := binary.LittleEndian.Uint16(b[0:2])
			channels = binary.LittleEndian.Uint16(b[2:4])
			rate = binary.LittleEndian.Uint32(b[4:8])
			bits = binary.LittleEndian.Uint16(b[14:16])
			if format != 1 && format != 0xFFFE {
				return nil, fmt.Errorf("asr: wav: format %d is not PCM", format)
			}
			fmtSeen = true
		case "data":
			if !fmtSeen {
				return nil, errors.New("asr: wav: data before fmt")
			}
			if bits != 16 || rate != SampleRate || (channels != 1 && channels != 2) {
				return nil, fmt.Errorf("asr: wav is %d Hz, %d-bit, %d channels; boxd reads 16000 Hz 16-bit mono (convert with: sox in.wav -r 16000 -c 1 -b 16 out.wav)", rate, bits, channels)
			}
			data, err := io.ReadAll(io.LimitReader(r, int64(size)))
			if err != nil {
				return nil, fmt.Errorf("asr: wav: %w", err)
			}
			frame := int(channels) * 2
			out := make([]float32, len(data)/frame)
			for i := range out {
				var s float32
				for c := range int(channels) {
					s += float32(int16(binary.LittleEndian.Uint16(data[i*frame+2*c:]))) / 32768
				}
				out[i] = s / float32(channels)
			}
			return out, nil
		default:
			// In 64 bits: a chunk of 0xFFFFFFFF bytes plus its pad byte
			// wrapped to 0 in 32, and the rest of the file was misread.
			if _, err := io.CopyN(io.Discard, r, int64(size)+int64(size%2)); err != nil {
				return nil, fmt.Errorf("asr: wav: %w", err)
			}
		}
	}
}

// PCM16 converts little-endian PCM16 bytes (the live socket's frames) to
// samples in -1..1; an odd trailing byte is an error.
func PCM16(b []byte) ([]float32, error) {
	if len(b)%2 != 0 {
		return nil, fmt.Errorf("asr: %d bytes is not whole 16-bit samples", len(b))
	}
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
	}
	return out, nil
}
