package hfwhisper

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzSafetensorsHeader: the safetensors header reader (`boxd models
// convert` of a downloaded checkpoint) never panics; a header it accepts
// is a JSON object without a key twice, and a layout it accepts tiles
// the data buffer exactly with tensors whose sizes match their shapes.
func FuzzSafetensorsHeader(f *testing.F) {
	for _, s := range []struct {
		hdr string
		buf int64
	}{
		{`{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"F16","shape":[4],"data_offsets":[24,32]}}`, 32},
		{`{"a":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}}`, 2},
		{`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, 16},
		{`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,16]}}`, 16},
		{`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`, 4},
		{`{"a":{"dtype":"X","shape":[1],"data_offsets":[0,4]}} x`, 4},
		{`[]`, 0},
		{`{"__metadata__":{"a":1}}`, 0},
	} {
		f.Add([]byte(s.hdr), s.buf)
	}
	f.Fuzz(func(t *testing.T, hdr []byte, bufLen int64) {
		es, err := parseHeader(hdr, "fuzz.safetensors")
		if err != nil {
			return
		}
		if !json.Valid(hdr) {
			t.Fatalf("accepted a header that is not JSON: %q", hdr)
		}
		names := map[string]bool{}
		for _, e := range es {
			if names[e.name] {
				t.Fatalf("tensor %q listed twice", e.name)
			}
			names[e.name] = true
		}
		if checkLayout(es, bufLen, "fuzz.safetensors") != nil {
			return
		}
		sorted := slices.Clone(es)
		slices.SortFunc(sorted, func(a, b *entry) int {
			if a.begin < b.begin {
				return -1
			}
			if a.begin > b.begin {
				return 1
			}
			return 0
		})
		pos := int64(0)
		for _, e := range sorted {
			n := dtypeSize[e.dtype]
			for _, d := range e.shape {
				n *= d
			}
			if e.begin != pos || e.end-e.begin != n || n < 0 {
				t.Fatalf("tensor %s: [%d %d] at %d, %d bytes for its shape", e.name, e.begin, e.end, pos, n)
			}
			pos = e.end
		}
		if pos != bufLen {
			t.Fatalf("layout covers %d of %d bytes", pos, bufLen)
		}
	})
}
