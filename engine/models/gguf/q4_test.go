package gguf_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"boxd/engine/models/gguf"
)

// TestQ4_0 checks ggml's Q4_0 layout: 18 bytes a block of 32, an f16 scale
// d with the block's largest-magnitude value at -8·d, and every value
// within half a step of d·(q−8) (plus the scale's f16 rounding).
func TestQ4_0(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 0))
	v := make([]float32, 32*8)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	v[40] = 0 // a block may hold zeros
	for i := 64; i < 96; i++ {
		v[i] = 0 // an all-zero block: d = 0
	}
	out, err := gguf.Encode(gguf.Q4_0, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(v)/32*18 {
		t.Fatalf("%d bytes, want %d", len(out), len(v)/32*18)
	}
	for b := 0; b < len(v)/32; b++ {
		blk := out[b*18 : (b+1)*18]
		d := gguf.HalfToFloat(binary.LittleEndian.Uint16(blk))
		var amax float64
		for _, x := range v[b*32 : (b+1)*32] {
			amax = math.Max(amax, math.Abs(float64(x)))
		}
		if math.Abs(math.Abs(float64(d))*8-amax) > amax*1e-3 {
			t.Errorf("block %d: |d|·8 = %v, want the largest magnitude %v", b, math.Abs(float64(d))*8, amax)
		}
		for j := range 32 {
			q := blk[2+j%16] & 0xf
			if j >= 16 {
				q = blk[2+j%16] >> 4
			}
			got := float64(d) * float64(int(q)-8)
			if diff := math.Abs(got - float64(v[b*32+j])); diff > math.Abs(float64(d))/2+amax*1e-3 {
				t.Errorf("block %d value %d: %v decodes to %v (d %v)", b, j, v[b*32+j], got, d)
			}
		}
	}
	if _, err := gguf.Encode(gguf.Q4_0, make([]float32, 10)); err == nil {
		t.Error("Q4_0 of 10 values accepted")
	}
}
