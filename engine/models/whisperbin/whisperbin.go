// Package whisperbin reads and writes whisper.cpp's model files (ggml
// ".bin": magic "lmgg", eleven hyper-parameters, the mel filter bank, the
// vocabulary as byte strings, then tensors) so boxd can convert them to GGUF
// and write random-weight test models that whisper.cpp itself can load.
package whisperbin

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"boxd/internal/atomicfile"
)

// Magic is the file's first four bytes read as a little-endian uint32
// ("lmgg" on disk).
const Magic = 0x67676d6c

// HParams are whisper.cpp's hyper-parameters, in file order.
type HParams struct {
	NVocab      int32
	NAudioCtx   int32
	NAudioState int32
	NAudioHead  int32
	NAudioLayer int32
	NTextCtx    int32
	NTextState  int32
	NTextHead   int32
	NTextLayer  int32
	NMels       int32
	FType       int32
}

// Tensor is one tensor record. Dims are ggml's order (Dims[0] fastest).
type Tensor struct {
	Name string
	Type int32 // ggml type: 0 F32, 1 F16, quantised types above
	Dims []int32
	Data []byte
}

// Elements is the number of elements.
func (t Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= int64(d)
	}
	return n
}

// Model is a whole file.
type Model struct {
	HParams HParams
	// Filters is the mel filter bank: FilterMels rows of FilterFFT values.
	FilterMels int32
	FilterFFT  int32
	Filters    []float32
	// Vocab is the tokens the file lists, as raw bytes (whisper.cpp names
	// the special tokens past the end itself).
	Vocab   [][]byte
	Tensors []Tensor
}

// TypeSize is (elements per block, bytes per block) of the ggml types a
// whisper.cpp file may hold.
func TypeSize(t int32) (int64, int64, error) {
	switch t {
	case 0:
		return 1, 4, nil // F32
	case 1:
		return 1, 2, nil // F16
	case 2:
		return 32, 18, nil // Q4_0
	case 3:
		return 32, 20, nil // Q4_1
	case 6:
		return 32, 22, nil // Q5_0
	case 7:
		return 32, 24, nil // Q5_1
	case 8:
		return 32, 34, nil // Q8_0
	}
	return 0, 0, fmt.Errorf("whisperbin: tensor type %d is not supported", t)
}

// Limits against hostile files.
const (
	maxVocab  = 1 << 20
	maxName   = 1 << 10
	maxDims   = 4
	maxTensor = 8 << 30
)

// Read parses a whole file.
func Read(r io.Reader) (*Model, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	le := binary.LittleEndian
	get := func(v any) error { return binary.Read(br, le, v) }
	var magic uint32
	if err := get(&magic); err != nil {
		return nil, fmt.Errorf("whisperbin: %w", err)
	}
	if magic != Magic {
		return nil, fmt.Errorf("whisperbin: not a whisper.cpp model (magic %#x)", magic)
	}
	m := &Model{}
	if err := get(&m.HParams); err != nil {
		return nil, fmt.Errorf("whisperbin: hyper-parameters: %w", err)
	}
	h := m.HParams
	if h.NVocab <= 0 || h.NMels <= 0 || h.NAudioState <= 0 || h.NTextState <= 0 || h.NAudioLayer <= 0 || h.NTextLayer <= 0 {
		return nil, fmt.Errorf("whisperbin: implausible hyper-parameters %+v", h)
	}
	if err := get(&m.FilterMels); err != nil {
		return nil, fmt.Errorf("whisperbin: filters: %w", err)
	}
	if err := get(&m.FilterFFT); err != nil {
		return nil, fmt.Errorf("whisperbin: filters: %w", err)
	}
	if m.FilterMels <= 0 || m.FilterFFT <= 0 || int64(m.FilterMels)*int64(m.FilterFFT) > 1<<20 {
		return nil, fmt.Errorf("whisperbin: filter bank %d x %d", m.FilterMels, m.FilterFFT)
	}
	m.Filters = make([]float32, m.FilterMels*m.FilterFFT)
	if err := get(m.Filters); err != nil {
		return nil, fmt.Errorf("whisperbin: filters: %w", err)
	}
	var nVocab int32
	if err := get(&nVocab); err != nil {
		return nil, fmt.Errorf("whisperbin: vocabulary: %w", err)
	}
	if nVocab < 0 || nVocab > maxVocab {
		return nil, fmt.Errorf("whisperbin: vocabulary of %d", nVocab)
	}
	m.Vocab = make([][]byte, 0, min(nVocab, readChunk/8))
	for i := range int(nVocab) {
		var n uint32
		if err := get(&n); err != nil {
			return nil, fmt.Errorf("whisperbin: token %d: %w", i, err)
		}
		if n > 1<<16 {
			return nil, fmt.Errorf("whisperbin: token %d is %d bytes", i, n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("whisperbin: token %d: %w", i, err)
		}
		m.Vocab = append(m.Vocab, b)
	}
	for {
		var head [3]int32 // n_dims, name length, type
		if err := get(&head); err != nil {
			if errors.Is(err, io.EOF) {
				return m, nil
			}
			return nil, fmt.Errorf("whisperbin: tensor %d: %w", len(m.Tensors), err)
		}
		nd, nl, typ := head[0], head[1], head[2]
		if nd <= 0 || nd > maxDims || nl <= 0 || nl > maxName {
			return nil, fmt.Errorf("whisperbin: tensor %d: %d dimensions, name of %d bytes", len(m.Tensors), nd, nl)
		}
		t := Tensor{Type: typ, Dims: make([]int32, nd)}
		if err := get(t.Dims); err != nil {
			return nil, fmt.Errorf("whisperbin: tensor %d: %w", len(m.Tensors), err)
		}
		name := make([]byte, nl)
		if _, err := io.ReadFull(br, name); err != nil {
			return nil, fmt.Errorf("whisperbin: tensor %d: %w", len(m.Tensors), err)
		}
		t.Name = string(name)
		per, size, err := TypeSize(typ)
		if err != nil {
			return nil, fmt.Errorf("whisperbin: %s: %w", t.Name, err)
		}
		n := t.Elements()
		if n <= 0 || n%per != 0 || n/per*size > maxTensor {
			return nil, fmt.Errorf("whisperbin: %s: %d elements of type %d", t.Name, n, typ)
		}
		if t.Data, err = readBytes(br, n/per*size); err != nil {
			return nil, fmt.Errorf("whisperbin: %s: data: %w", t.Name, err)
		}
		m.Tensors = append(m.Tensors, t)
	}
}

// readChunk is the most bytes read into memory before more arrive: a
// size a header claims is not allocated until the file holds it, so a
// 200-byte file cannot cost 8 GiB.
const readChunk = 1 << 16

// readBytes reads n bytes, growing the buffer as they arrive.
func readBytes(r io.Reader, n int64) ([]byte, error) {
	b := make([]byte, 0, min(n, readChunk))
	for int64(len(b)) < n {
		k := int(min(n-int64(len(b)), readChunk))
		b = slices.Grow(b, k)
		if _, err := io.ReadFull(r, b[len(b):len(b)+k]); err != nil {
			return nil, err
		}
		b = b[:len(b)+k]
	}
	return b, nil
}

// ReadFile parses the file at path.
func ReadFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("whisperbin: %w", err)
	}
	defer f.Close()
	return Read(f)
}

// Write writes the model in whisper.cpp's format.
func (m *Model) Write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	le := binary.LittleEndian
	var err error
	put := func(v any) {
		if err == nil {
			err = binary.Write(bw, le, v)
		}
	}
	put(uint32(Magic))
	put(m.HParams)
	put(m.FilterMels)
	put(m.FilterFFT)
	put(m.Filters)
	put(int32(len(m.Vocab)))
	for _, tok := range m.Vocab {
		put(uint32(len(tok)))
		put(tok)
	}
	for _, t := range m.Tensors {
		put([3]int32{int32(len(t.Dims)), int32(len(t.Name)), t.Type})
		put(t.Dims)
		put([]byte(t.Name))
		put(t.Data)
	}
	if err != nil {
		return fmt.Errorf("whisperbin: write: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("whisperbin: write: %w", err)
	}
	return nil
}

// WriteFile writes the model to path through a temporary file.
func (m *Model) WriteFile(path string) error {
	var werr error // m.Write's own error, returned as it is
	err := atomicfile.WriteFunc(path, 0o644, func(f io.Writer) error {
		werr = m.Write(f)
		return werr
	})
	if err != nil && werr == nil {
		err = fmt.Errorf("whisperbin: %w", err)
	}
	return err
}
