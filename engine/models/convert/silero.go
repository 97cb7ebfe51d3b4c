package convert

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"boxd/engine/models/gguf"
)

// Silero VAD GGUF keys (architecture "silero-vad").
const (
	ArchSilero       = "silero-vad"
	KeySileroWindow  = "silero-vad.window"
	KeySileroContext = "silero-vad.context"
	KeySileroVersion = "silero-vad.version"
	KeySileroBlocks  = "silero-vad.block_count"
)

// SileroTensor is one tensor of whisper.cpp's Silero VAD file.
type SileroTensor struct {
	Name string
	Type int32 // 0 F32, 1 F16
	Dims []int32
	Data []byte
}

// Silero is whisper.cpp's Silero VAD file (ggml-silero-*.bin).
type Silero struct {
	ModelType           string
	Major, Minor, Patch int32
	Window, Context     int32
	Encoder             [4][3]int32 // in, out, kernel per layer
	LSTMIn, LSTMHidden  int32
	FinalIn, FinalOut   int32
	Tensors             []SileroTensor
}

// ReadSilero parses a whisper.cpp Silero VAD file.
func ReadSilero(r io.Reader) (*Silero, error) {
	br := bufio.NewReader(r)
	le := binary.LittleEndian
	get := func(v any) error { return binary.Read(br, le, v) }
	var magic uint32
	if err := get(&magic); err != nil || magic != 0x67676d6c {
		return nil, errors.New("convert: not a whisper.cpp VAD file (magic)")
	}
	var n int32
	if err := get(&n); err != nil || n <= 0 || n > 64 {
		return nil, errors.New("convert: VAD model type")
	}
	typ := make([]byte, n)
	if _, err := io.ReadFull(br, typ); err != nil {
		return nil, fmt.Errorf("convert: VAD: %w", err)
	}
	s := &Silero{ModelType: string(typ)}
	if s.ModelType != "silero-16k" {
		return nil, fmt.Errorf("convert: VAD model type %q; boxd reads silero-16k", s.ModelType)
	}
	var h [5]int32
	if err := get(&h); err != nil {
		return nil, fmt.Errorf("convert: VAD header: %w", err)
	}
	s.Major, s.Minor, s.Patch, s.Window, s.Context = h[0], h[1], h[2], h[3], h[4]
	var layers int32
	if err := get(&layers); err != nil || layers != 4 {
		return nil, fmt.Errorf("convert: VAD with %d encoder layers; want 4", layers)
	}
	if err := get(&s.Encoder); err != nil {
		return nil, fmt.Errorf("convert: VAD header: %w", err)
	}
	var tail [4]int32
	if err := get(&tail); err != nil {
		return nil, fmt.Errorf("convert: VAD header: %w", err)
	}
	s.LSTMIn, s.LSTMHidden, s.FinalIn, s.FinalOut = tail[0], tail[1], tail[2], tail[3]
	for {
		var head [2]int32
		if err := get(&head); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("convert: VAD tensor: %w", err)
		}
		nd, nl := head[0], head[1]
		var t SileroTensor
		if err := get(&t.Type); err != nil {
			return nil, fmt.Errorf("convert: VAD tensor: %w", err)
		}
		if nd < 0 || nd > 4 || nl <= 0 || nl > 256 || (t.Type != 0 && t.Type != 1) {
			return nil, fmt.Errorf("convert: VAD tensor with %d dims, name of %d, type %d", nd, nl, t.Type)
		}
		t.Dims = make([]int32, nd)
		if err := get(t.Dims); err != nil {
			return nil, fmt.Errorf("convert: VAD tensor: %w", err)
		}
		name := make([]byte, nl)
		if _, err := io.ReadFull(br, name); err != nil {
			return nil, fmt.Errorf("convert: VAD tensor: %w", err)
		}
		t.Name = string(name)
		elems := int64(1)
		for _, d := range t.Dims {
			elems *= int64(d)
		}
		size := elems * 4
		if t.Type == 1 {
			size = elems * 2
		}
		if elems <= 0 || size > 16<<20 {
			return nil, fmt.Errorf("convert: VAD tensor %s of %d elements", t.Name, elems)
		}
		t.Data = make([]byte, size)
		if _, err := io.ReadFull(br, t.Data); err != nil {
			return nil, fmt.Errorf("convert: VAD %s: %w", t.Name, err)
		}
		s.Tensors = append(s.Tensors, t)
	}
	if len(s.Tensors) != 15 {
		return nil, fmt.Errorf("convert: VAD file has %d tensors; Silero v6 has 15", len(s.Tensors))
	}
	return s, nil
}

// Floats widens a tensor to float32.
func (t SileroTensor) Floats() []float32 {
	n := len(t.Data) / 4
	if t.Type == 1 {
		n = len(t.Data) / 2
	}
	out := make([]float32, n)
	for i := range out {
		if t.Type == 1 {
			out[i] = gguf.HalfToFloat(binary.LittleEndian.Uint16(t.Data[2*i:]))
		} else {
			out[i] = float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
	}
	return out
}

// SileroGGUF builds a GGUF of the VAD model with every tensor widened to
// F32 (exact: F16 values are representable), so ggml runs it in F32. The
// scalar final bias becomes [1].
func SileroGGUF(s *Silero) (*gguf.Writer, error) {
	w := gguf.NewWriter()
	w.Set("general.architecture", ArchSilero)
	w.Set("general.name", fmt.Sprintf("silero-vad-v%d.%d.%d", s.Major, s.Minor, s.Patch))
	w.Set(KeySileroBlocks, uint32(4))
	w.Set(KeySileroWindow, uint32(s.Window))
	w.Set(KeySileroContext, uint32(s.Context))
	w.Set(KeySileroVersion, fmt.Sprintf("%d.%d.%d", s.Major, s.Minor, s.Patch))
	for _, t := range s.Tensors {
		dims := make([]uint64, 0, len(t.Dims))
		for _, d := range t.Dims {
			dims = append(dims, uint64(d))
		}
		if len(dims) == 0 {
			dims = []uint64{1}
		}
		if err := w.AddFloats(t.Name, gguf.F32, dims, t.Floats()); err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
	}
	return w, nil
}

// SileroFile converts a whisper.cpp Silero VAD file to GGUF.
func SileroFile(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	defer f.Close()
	s, err := ReadSilero(f)
	if err != nil {
		return err
	}
	w, err := SileroGGUF(s)
	if err != nil {
		return err
	}
	return w.WriteFile(out)
}

func float32frombits(b uint32) float32 { return math.Float32frombits(b) }
