package whisperbin_test

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"

	"boxd/engine/models/whisperbin"
)

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// FuzzRead: the whisper.cpp model reader (`boxd models convert`) never
// panics, allocates in proportion to the bytes it is given (a tensor
// header cannot claim gigabytes the file does not hold), and what it
// reads writes back byte for byte.
func FuzzRead(f *testing.F) {
	m := &whisperbin.Model{
		HParams:    whisperbin.HParams{NVocab: 3, NAudioCtx: 2, NAudioState: 4, NAudioHead: 1, NAudioLayer: 1, NTextCtx: 2, NTextState: 4, NTextHead: 1, NTextLayer: 1, NMels: 2, FType: 1},
		FilterMels: 2, FilterFFT: 3, Filters: []float32{0, 0.5, 1, 1, 0.5, 0},
		Vocab: [][]byte{[]byte("a"), []byte(" the"), {0xff}},
		Tensors: []whisperbin.Tensor{
			{Name: "encoder.conv1.bias", Type: 0, Dims: []int32{2}, Data: make([]byte, 8)},
			{Name: "decoder.token_embedding.weight", Type: 1, Dims: []int32{4, 3}, Data: make([]byte, 24)},
		},
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add(good[:60])
	f.Add([]byte("lmgg"))
	f.Add(append([]byte("lmgg"), make([]byte, 44)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got *whisperbin.Model
		var err error
		n := allocated(func() { got, err = whisperbin.Read(bytes.NewReader(data)) })
		// The reader's 1 MiB buffer, a filter bank of up to 4 MiB (checked
		// against a fixed limit) and a first chunk of the vocabulary, then
		// memory in proportion to the input.
		if limit := uint64(64*len(data) + 8<<20); n > limit {
			t.Fatalf("%d bytes of input allocated %d bytes (limit %d)", len(data), n, limit)
		}
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := got.Write(&out); err != nil {
			t.Fatalf("a model read from %d bytes does not write: %v", len(data), err)
		}
		again, err := whisperbin.Read(bytes.NewReader(out.Bytes()))
		if err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
