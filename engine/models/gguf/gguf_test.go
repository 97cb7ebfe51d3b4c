package gguf_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"boxd/engine/models/gguf"
	"boxd/engine/models/testmodels"
)

func TestRoundTrip(t *testing.T) {
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("llama.block_count", uint32(2))
	w.Set("llama.rope.freq_base", float32(10000))
	w.Set("tokenizer.ggml.tokens", []string{"a", "b", "<|im_end|>"})
	w.Set("tokenizer.ggml.token_type", []int32{1, 1, 3})
	w.Set("tokenizer.ggml.add_bos_token", false)
	w.Set("x.u64", uint64(1<<40))
	if err := w.AddFloats("a", gguf.F32, []uint64{3, 2}, []float32{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	if err := w.AddFloats("b", gguf.F16, []uint64{5}, []float32{1, -2, 0.5, 65504, 0}); err != nil {
		t.Fatal(err)
	}
	q := make([]float32, 64)
	for i := range q {
		q[i] = float32(i) - 32
	}
	if err := w.AddFloats("c", gguf.Q8_0, []uint64{64}, q); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := w.Write(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if f.String("general.architecture") != "llama" {
		t.Error("architecture")
	}
	if n, ok := f.Uint("llama.block_count"); !ok || n != 2 {
		t.Error("block_count")
	}
	if v, _ := f.Get("tokenizer.ggml.tokens"); !reflect.DeepEqual(v, []string{"a", "b", "<|im_end|>"}) {
		t.Errorf("tokens = %v", v)
	}
	if v, _ := f.Get("tokenizer.ggml.add_bos_token"); v != false {
		t.Error("bool")
	}
	if n, _ := f.Uint("x.u64"); n != 1<<40 {
		t.Error("u64")
	}
	a, _ := f.Tensor("a")
	data := buf.Bytes()[f.DataOffset+a.Offset:]
	if got := math.Float32frombits(binary.LittleEndian.Uint32(data[20:])); got != 6 || a.Elements() != 6 {
		t.Errorf("tensor a[5] = %v", got)
	}
	c, _ := f.Tensor("c")
	if c.Offset%32 != 0 || f.DataOffset%32 != 0 {
		t.Error("alignment")
	}
	cd := buf.Bytes()[f.DataOffset+c.Offset:]
	scale := gguf.HalfToFloat(binary.LittleEndian.Uint16(cd))
	if v := float32(int8(cd[2])) * scale; math.Abs(float64(v+32)) > 0.2 {
		t.Errorf("gguf.Q8_0 first value = %v", v)
	}
	if err := w.AddFloats("bad", gguf.Q8_0, []uint64{10}, make([]float32, 10)); err == nil {
		t.Error("gguf.Q8_0 with 10 values accepted")
	}
	if err := w.AddTensor("short", gguf.F32, []uint64{4}, make([]byte, 8)); err == nil {
		t.Error("short data accepted")
	}
}

func TestFloat16(t *testing.T) {
	cases := map[float32]uint16{1: 0x3c00, -2: 0xc000, 0.5: 0x3800, 65504: 0x7bff, 0: 0, 1e-8: 0, 0.1: 0x2e66,
		6.1035156e-05: 0x0400, 5.9604645e-08: 0x0001, 100000: 0x7c00, 0.33325195: 0x3555}
	for f, want := range cases {
		if got := gguf.Float16(f); got != want {
			t.Errorf("gguf.Float16(%v) = %#04x, want %#04x", f, got, want)
		}
	}
	for h := range uint32(0x7c00) { // every finite positive half round-trips
		if got := gguf.Float16(gguf.HalfToFloat(uint16(h))); got != uint16(h) {
			t.Fatalf("round trip %#04x -> %v -> %#04x", h, gguf.HalfToFloat(uint16(h)), got)
		}
	}
}

func TestReadsARealModel(t *testing.T) {
	f, err := gguf.ReadFile(testmodels.Shared(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if f.String("general.architecture") != "llama" || len(f.Tensors) != 48 {
		t.Errorf("arch %q tensors %d", f.String("general.architecture"), len(f.Tensors))
	}
	if n, _ := f.Uint("llama.block_count"); n != 5 {
		t.Errorf("blocks %d", n)
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || !reflect.DeepEqual(emb.Dims, []uint64{64, 512}) || emb.Type != gguf.F32 {
		t.Errorf("token_embd = %+v", emb)
	}
}

func TestRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("GGML"), []byte("GGUF\x03\x00\x00\x00"), append([]byte("GGUF\x03\x00\x00\x00"), bytes.Repeat([]byte{0xff}, 16)...)} {
		if _, err := gguf.Read(bytes.NewReader(b)); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
	if _, err := gguf.ReadFile(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("missing file accepted")
	}
}

// TestStreamedTensors: a streamed tensor lands at its aligned offset with
// exactly the bytes its function wrote, between tensors held in memory;
// a function that writes too few or too many bytes fails the write.
func TestStreamedTensors(t *testing.T) {
	block := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	q4 := block(2*144, 3) // two Q4_K blocks: 512 elements
	q6 := block(210, 5)   // one Q6_K block
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	if err := w.AddFloats("first", gguf.F32, []uint64{3}, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.AddStream("q4", gguf.Q4_K, []uint64{256, 2}, func(out io.Writer) error { _, err := out.Write(q4); return err }); err != nil {
		t.Fatal(err)
	}
	if err := w.AddStream("q6", gguf.Q6_K, []uint64{256}, func(out io.Writer) error {
		// in two pieces, as a generator writing chunks does
		if _, err := out.Write(q6[:100]); err != nil {
			return err
		}
		_, err := out.Write(q6[100:])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := w.DataSize(), uint64(12+len(q4)+len(q6)); got != want {
		t.Errorf("DataSize = %d, want %d", got, want)
	}
	var buf bytes.Buffer
	if err := w.Write(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		typ  gguf.Type
		want []byte
	}{{"q4", gguf.Q4_K, q4}, {"q6", gguf.Q6_K, q6}} {
		ti, ok := f.Tensor(c.name)
		if !ok || ti.Type != c.typ || ti.Offset%32 != 0 {
			t.Fatalf("%s: %+v (found %v)", c.name, ti, ok)
		}
		got := buf.Bytes()[f.DataOffset+ti.Offset:][:len(c.want)]
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: data differs", c.name)
		}
	}
	for _, n := range []int{143, 145} {
		bad := gguf.NewWriter()
		if err := bad.AddStream("x", gguf.Q4_K, []uint64{256}, func(out io.Writer) error { _, err := out.Write(make([]byte, n)); return err }); err != nil {
			t.Fatal(err)
		}
		if err := bad.Write(io.Discard); err == nil || !strings.Contains(err.Error(), "want 144") {
			t.Errorf("a stream of %d bytes for 144: err = %v", n, err)
		}
	}
	if err := w.AddStream("odd", gguf.Q4_K, []uint64{100}, nil); err == nil {
		t.Error("100 elements accepted as Q4_K (256 per block)")
	}
}
