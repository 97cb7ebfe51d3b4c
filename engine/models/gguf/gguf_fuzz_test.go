package gguf_test

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"

	"boxd/engine/models/gguf"
)

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// FuzzRead: the GGUF header reader (model files, `boxd models inspect`)
// never panics, is deterministic, allocates in proportion to the bytes
// it is given (a header cannot claim a string or an array of gigabytes
// it does not hold), and places the data after the header, aligned.
func FuzzRead(f *testing.F) {
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("general.alignment", uint32(64))
	w.Set("llama.block_count", uint32(2))
	w.Set("x.f32", float32(0.5))
	w.Set("x.u64", uint64(1<<40))
	w.Set("x.i64", int64(-3))
	w.Set("x.f64", 2.5)
	w.Set("x.bool", true)
	w.Set("tokenizer.ggml.tokens", []string{"a", "b", "<|im_end|>"})
	w.Set("tokenizer.ggml.token_type", []int32{1, 1, 3})
	w.Set("tokenizer.ggml.scores", []float32{0, -1, -2})
	if err := w.AddFloats("a", gguf.F32, []uint64{3, 2}, []float32{1, 2, 3, 4, 5, 6}); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := w.Write(&buf); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Add([]byte("GGUF\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("GGML"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var file *gguf.File
		var err error
		n := allocated(func() { file, err = gguf.Read(bytes.NewReader(data)) })
		// The reader's 64 KiB buffer and a string array's first 1 MiB
		// of headers, then memory in proportion to the input (a Go
		// string or interface per value, slices grown as they fill).
		if limit := uint64(256*len(data) + 4<<20); n > limit {
			t.Fatalf("%d bytes of input allocated %d bytes (limit %d)", len(data), n, limit)
		}
		again, err2 := gguf.Read(bytes.NewReader(data))
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(file, again) {
			t.Fatal("Read is not deterministic")
		}
		if err != nil {
			return
		}
		if file.Alignment == 0 || file.Alignment&(file.Alignment-1) != 0 || file.DataOffset%file.Alignment != 0 {
			t.Fatalf("alignment %d, data offset %d", file.Alignment, file.DataOffset)
		}
		if file.DataOffset < 24 || file.DataOffset > uint64(len(data))+file.Alignment {
			t.Fatalf("data offset %d for a %d-byte header", file.DataOffset, len(data))
		}
		for _, ti := range file.Tensors {
			if len(ti.Dims) == 0 || len(ti.Dims) > 4 {
				t.Fatalf("tensor %q has %d dimensions", ti.Name, len(ti.Dims))
			}
			_, _ = gguf.ByteSize(ti.Type, ti.Elements())
		}
		_ = file.SortedKeys()
	})
}
