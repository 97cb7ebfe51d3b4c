package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func randomTensor(r *rand.Rand, shape ...int) Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	t := Tensor{Shape: shape, Data: make([]float32, n)}
	for i := range t.Data {
		t.Data[i] = float32(r.NormFloat64())
	}
	return t
}

func equal(t *testing.T, got, want map[string]Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tensors, want %d", len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Fatalf("tensor %s missing", k)
		}
		if !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) || len(g.Shape) != len(w.Shape) {
			t.Fatalf("tensor %s: got %v %v, want %v %v", k, g.Shape, g.Data, w.Shape, w.Data)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sd := map[string]Tensor{
		"sincnet.wav_norm1d.weight":           randomTensor(r, 1),
		"sincnet.conv1d.0.filterbank.low_hz_": randomTensor(r, 40, 1),
		"lstm.weight_ih_l0_reverse":           randomTensor(r, 512, 60),
		"resnet.layer1.0.conv1.weight":        randomTensor(r, 2, 3, 3, 3),
		"five.dims":                           randomTensor(r, 2, 1, 3, 1, 2),
		"resnet.bn1.num_batches_tracked":      randomTensor(r),
		"empty":                               randomTensor(r, 0, 5),
	}
	for i := range 1500 { // more than one SETITEMS batch, memo indices past 255 unused
		sd["many."+string(rune('a'+i%26))+strings.Repeat("x", i/26)] = randomTensor(r, 2)
	}
	path := filepath.Join(t.TempDir(), "pytorch_model.bin")
	if err := Write(path, sd); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, sd)

	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
		off, err := f.DataOffset()
		if err != nil || off%64 != 0 || f.Method != zip.Store {
			t.Errorf("%s: data at %d (%v), method %d: want stored and 64-byte aligned", f.Name, off, err, f.Method)
		}
	}
	for _, n := range []string{"archive/data.pkl", "archive/version", "archive/byteorder", "archive/data/0", "archive/data/1506"} {
		if !names[n] {
			t.Errorf("record %s missing", n)
		}
	}
	if zr.File[0].Name != "archive/data.pkl" || zr.File[len(zr.File)-1].Name != "archive/version" {
		t.Errorf("records in the wrong order: first %s, last %s", zr.File[0].Name, zr.File[len(zr.File)-1].Name)
	}
}

func TestEmptyStateDict(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.bin")
	if err := Write(path, nil); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want an empty state dict", got, err)
	}
}

func TestWriteRejectsBadShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.bin")
	for _, tt := range []Tensor{{Shape: []int{2, 3}, Data: make([]float32, 5)}, {Shape: []int{-1}, Data: nil}} {
		if err := Write(path, map[string]Tensor{"w": tt}); err == nil || !strings.Contains(err.Error(), "tensor w") {
			t.Errorf("Write(%v) = %v, want an error naming the tensor", tt.Shape, err)
		}
	}
}

// zipOf builds a checkpoint archive from its records, names relative to prefix.
func zipOf(t testing.TB, prefix string, records map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range records {
			if !yield(k) {
				return
			}
		}
	}) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: prefix + "/" + name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(records[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// view is a tensor entry of a hand-built pickle.
type view struct {
	class, key          string
	numel, offset       int
	size, stride        []int
	parameter, fromType bool
}

// pickleViews pickles {"state_dict": OrderedDict(views)} with the views'
// own storages, offsets and strides, storage classes memoised as Python does.
func pickleViews(names []string, views []view) []byte {
	p := &pickler{memo: map[string]int{}}
	p.op(0x80, 2, '}', '(')
	p.str("state_dict")
	p.orderedDict()
	p.op('(')
	for i, v := range views {
		p.str(names[i])
		if v.parameter {
			p.global("torch._utils", "_rebuild_parameter")
		}
		if v.fromType {
			p.global("torch._tensor", "_rebuild_from_type_v2")
			p.op('(')
		}
		p.global("torch._utils", "_rebuild_tensor_v2")
		if v.fromType {
			p.global("torch", "Tensor")
		}
		p.op('(', '(')
		p.str("storage")
		p.global("torch", v.class)
		p.str(v.key, "cpu")
		p.int(v.numel)
		p.op('t', 'Q')
		p.int(v.offset)
		p.ints(v.size)
		p.ints(v.stride)
		p.op(0x89)
		p.orderedDict()
		p.op('t')
		if v.fromType {
			p.op('}', 't', 'R')
		} else {
			p.op('R')
		}
		if v.parameter {
			p.op(0x89)
			p.orderedDict()
			p.op(0x87, 'R')
		}
	}
	p.op('u', 'u', '.')
	return p.b.Bytes()
}

func le[T any](vals ...T) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, vals)
	return b.Bytes()
}

func TestViewsAndDtypes(t *testing.T) {
	names := []string{"transposed", "offset", "scalar", "half", "bf16", "double", "long", "param", "subclass", "expanded"}
	views := []view{
		{class: "FloatStorage", key: "0", numel: 6, size: []int{3, 2}, stride: []int{1, 3}},
		{class: "FloatStorage", key: "0", numel: 6, offset: 1, size: []int{2}, stride: []int{2}},
		{class: "FloatStorage", key: "0", numel: 6, offset: 5, size: []int{}, stride: []int{}},
		{class: "HalfStorage", key: "1", numel: 4, size: []int{2, 2}, stride: []int{2, 1}},
		{class: "BFloat16Storage", key: "2", numel: 2, size: []int{2}, stride: []int{1}},
		{class: "DoubleStorage", key: "3", numel: 2, offset: 1, size: []int{1}, stride: []int{1}},
		{class: "LongStorage", key: "4", numel: 1, size: []int{}, stride: []int{}},
		{class: "FloatStorage", key: "0", numel: 6, size: []int{2, 3}, stride: []int{3, 1}, parameter: true},
		{class: "FloatStorage", key: "0", numel: 6, size: []int{6}, stride: []int{1}, fromType: true},
		{class: "FloatStorage", key: "0", numel: 6, offset: 4, size: []int{2, 3}, stride: []int{0, 1}[:2:2]},
	}
	views[9].stride = []int{1, 0} // each of elements 4, 5 repeated
	data := map[string][]byte{
		"data.pkl": pickleViews(names, views),
		"data/0":   le[float32](0, 1, 2, 3, 4, 5),
		"data/1":   le[uint16](0x3c00, 0xc000, 0x3800, 0x0001),
		"data/2":   le[uint16](0x3f80, 0xc040),
		"data/3":   le(1.5, -0.25),
		"data/4":   le[int64](12345),
		"version":  []byte("3\n"),
	}
	got, err := ReadFrom(bytes.NewReader(zipOf(t, "pytorch_model", data)), int64(len(zipOf(t, "pytorch_model", data))))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, map[string]Tensor{
		"transposed": {Shape: []int{3, 2}, Data: []float32{0, 3, 1, 4, 2, 5}},
		"offset":     {Shape: []int{2}, Data: []float32{1, 3}},
		"scalar":     {Shape: []int{}, Data: []float32{5}},
		"half":       {Shape: []int{2, 2}, Data: []float32{1, -2, 0.5, 1.0 / (1 << 24)}},
		"bf16":       {Shape: []int{2}, Data: []float32{1, -3}},
		"double":     {Shape: []int{1}, Data: []float32{-0.25}},
		"long":       {Shape: []int{}, Data: []float32{12345}},
		"param":      {Shape: []int{2, 3}, Data: []float32{0, 1, 2, 3, 4, 5}},
		"subclass":   {Shape: []int{6}, Data: []float32{0, 1, 2, 3, 4, 5}},
		"expanded":   {Shape: []int{2, 3}, Data: []float32{4, 4, 4, 5, 5, 5}},
	})
}

func TestHalfToFloat(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: 1.0 / (1 << 24),
		0x8000: float32(math.Copysign(0, -1)), 0x7c00: float32(math.Inf(1)), 0x0400: 1.0 / (1 << 14), 0x83ff: -1023.0 / (1 << 24)} {
		if got := halfToFloat(h); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsNaN(float64(halfToFloat(0x7e00))) {
		t.Error("0x7e00 is not NaN")
	}
}

// lightningPickle is a checkpoint dict shaped like pyannote's: the state
// dict (with _metadata set by BUILD) among hyper-parameters that pickle
// classes the reader cannot know, some of them in protocol 4 opcodes.
func lightningPickle() []byte {
	p := &pickler{memo: map[string]int{}}
	p.op(0x80, 2, '}', 'q', 0, '(')
	p.str("epoch")
	p.int(41)
	p.str("global_step")
	p.int(1 << 40)
	p.str("pytorch-lightning_version", "2.1.0", "state_dict")
	p.orderedDict()
	p.op('q', 1, '(')
	p.str("classifier.weight")
	p.global("torch._utils", "_rebuild_tensor_v2")
	p.op('(', '(')
	p.str("storage")
	p.global("torch", "FloatStorage")
	p.str("0", "cpu")
	p.int(4)
	p.op('t', 'q', 2, 'Q', 'K', 0, 'K', 2, 'K', 2, 0x86, 'K', 2, 'K', 1, 0x86, 0x89)
	p.orderedDict()
	p.op('t', 'R')
	p.str("classifier.bias")
	p.global("torch._utils", "_rebuild_tensor_v2")
	p.op('(', 'h', 2, 'Q', 'K', 1, 'K', 3, 0x85, 'K', 1, 0x85, 0x88) // the same persistent id via BINGET
	p.orderedDict()
	p.op('t', 'R', 'u', '}', '(')
	p.str("_metadata")
	p.orderedDict()
	p.op('u', 'b') // BUILD state {'_metadata': OrderedDict()} on the OrderedDict
	p.str("hyper_parameters")
	p.op('}', '(')
	p.str("specifications")
	p.global("pyannote.audio.core.task", "Specifications")
	p.op(')', 0x81, '}', '(')
	p.str("problem")
	p.global("pyannote.audio.core.task", "Problem")
	p.op('K', 1, 0x85, 'R')
	p.str("duration")
	p.op('G')
	p.b.Write(binary.BigEndian.AppendUint64(nil, math.Float64bits(10)))
	p.str("classes")
	p.op(']', '(')
	p.str("speaker#1", "speaker#2")
	p.op('e', 'u', 'b')
	p.str("attrs")
	p.global("lightning.fabric.utilities.data", "AttributeDict")
	p.op(')', 'R', '(')
	p.str("sample_rate")
	p.int(16000)
	p.op('u')
	// protocol 4: STACK_GLOBAL, SHORT_BINUNICODE, MEMOIZE, FRAME, NEWOBJ_EX, sets, bytes
	p.op(0x95)
	p.b.Write(make([]byte, 8))
	p.op(0x8c, 5)
	p.b.WriteString("proto")
	p.op('(', 0x8c, 8)
	p.b.WriteString("numpy.fx")
	p.op(0x94, 0x8c, 5)
	p.b.WriteString("dtype")
	p.op(0x94, 0x93, 0x94, ')', '}', 0x92, 0x8f, '(', 'K', 1, 0x90, 'C', 2, 'h', 'i', 0x86, 0x8a, 2, 0xff, 0x7f, 0x8b, 9, 0, 0, 0)
	p.b.Write(make([]byte, 9))
	p.op('t', 'u')
	p.str("pyannote.audio")
	p.op('}', '(')
	p.str("versions")
	p.op('}', '(')
	p.str("torch")
	p.global("torch.torch_version", "TorchVersion")
	p.str("2.1.0")
	p.op(0x85, 0x81, 'N', 'b', 'u', 'u', 'u', '.')
	return p.b.Bytes()
}

func TestLightningCheckpoint(t *testing.T) {
	b := zipOf(t, "archive", map[string][]byte{
		"data.pkl":  lightningPickle(),
		"data/0":    le[float32](1, 2, 3, 4),
		"byteorder": []byte("little"),
		"version":   []byte("3\n"),
	})
	got, err := ReadFrom(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, map[string]Tensor{
		"classifier.weight": {Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}},
		"classifier.bias":   {Shape: []int{3}, Data: []float32{2, 3, 4}},
	})
}

func TestBigEndian(t *testing.T) {
	var be bytes.Buffer
	binary.Write(&be, binary.BigEndian, []float32{1.5, -2})
	b := zipOf(t, "archive", map[string][]byte{
		"data.pkl":  pickleViews([]string{"w"}, []view{{class: "FloatStorage", key: "0", numel: 2, size: []int{2}, stride: []int{1}}}),
		"data/0":    be.Bytes(),
		"byteorder": []byte("big"),
	})
	got, err := ReadFrom(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, map[string]Tensor{"w": {Shape: []int{2}, Data: []float32{1.5, -2}}})
}

func TestBadInputs(t *testing.T) {
	one := func(v view) []byte { return pickleViews([]string{"w"}, []view{v}) }
	ok := view{class: "FloatStorage", key: "0", numel: 4, size: []int{4}, stride: []int{1}}
	with := func(f func(v *view)) []byte { v := ok; f(&v); return one(v) }
	legacy := []byte{0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'}
	notDict := (&pickler{}).b.Bytes()
	notDict = append(notDict, 0x80, 2, 'K', 7, '.')
	for _, tt := range []struct {
		name string
		file []byte
		want string
	}{
		{"not a zip", []byte("hello, not a checkpoint"), "not a PyTorch zip checkpoint"},
		{"legacy", legacy, "legacy (pre-1.6)"},
		{"no data.pkl", zipOf(t, "archive", map[string][]byte{"version": []byte("3\n")}), "no <name>/data.pkl"},
		{"truncated storage", zipOf(t, "archive", map[string][]byte{"data.pkl": one(ok), "data/0": le[float32](1, 2, 3)}), "tensor w: storage 0 truncated"},
		{"missing storage", zipOf(t, "archive", map[string][]byte{"data.pkl": one(ok)}), "tensor w: storage 0 missing"},
		{"wrong dtype", zipOf(t, "archive", map[string][]byte{"data.pkl": with(func(v *view) { v.class = "ComplexFloatStorage" }), "data/0": make([]byte, 32)}), "storage type torch.ComplexFloatStorage unsupported"},
		{"view past storage", zipOf(t, "archive", map[string][]byte{"data.pkl": with(func(v *view) { v.offset = 1 }), "data/0": make([]byte, 16)}), "view reaches element 4"},
		{"more elements than storage", zipOf(t, "archive", map[string][]byte{"data.pkl": with(func(v *view) { v.size, v.stride = []int{5}, []int{0} }), "data/0": make([]byte, 16)}), "5 elements exceed storage"},
		{"top not a dict", zipOf(t, "archive", map[string][]byte{"data.pkl": notDict}), "top object is a int64"},
		{"truncated pickle", zipOf(t, "archive", map[string][]byte{"data.pkl": one(ok)[:40]}), "data.pkl: pickle"},
		{"bad byteorder", zipOf(t, "archive", map[string][]byte{"data.pkl": one(ok), "data/0": make([]byte, 16), "byteorder": []byte("middle")}), "byteorder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFrom(bytes.NewReader(tt.file), int64(len(tt.file)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestReadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.bin")
	if err := os.WriteFile(path, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a PyTorch zip checkpoint") {
		t.Fatalf("got %v", err)
	}
	if _, err := ReadFrom(bytes.NewReader(nil), 3<<30); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("a 3 GiB file: got %v", err)
	}
}

func TestNotATensorInStateDict(t *testing.T) {
	p := &pickler{memo: map[string]int{}}
	p.op(0x80, 2, '}', '(')
	p.str("state_dict")
	p.op('}', '(')
	p.str("w")
	p.global("some.module", "Thing")
	p.op(')', 'R', 'u', 'u', '.')
	b := zipOf(t, "archive", map[string][]byte{"data.pkl": p.b.Bytes()})
	_, err := ReadFrom(bytes.NewReader(b), int64(len(b)))
	if err == nil || !strings.Contains(err.Error(), `"w" is an object of some.module.Thing`) {
		t.Fatalf("got %v", err)
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	r := rand.New(rand.NewPCG(3, 4))
	if err := write(&buf, map[string]Tensor{"a": randomTensor(r, 2, 3), "b": randomTensor(r)}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(zipOf(f, "archive", map[string][]byte{"data.pkl": lightningPickle(), "data/0": le[float32](1, 2, 3, 4)}))
	f.Add(zipOf(f, "archive", map[string][]byte{"data.pkl": pickleViews([]string{"t"},
		[]view{{class: "HalfStorage", key: "0", numel: 6, size: []int{3, 2}, stride: []int{1, 3}}}), "data/0": make([]byte, 12)}))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sd, err := ReadFrom(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for k, v := range sd {
			n := 1
			for _, d := range v.Shape {
				n *= d
			}
			if n != len(v.Data) {
				t.Fatalf("%s: shape %v, %d elements", k, v.Shape, len(v.Data))
			}
		}
	})
}

// FuzzUnpickle feeds the unpickler directly, which reaches more opcodes
// than mutating whole zip files does.
func FuzzUnpickle(f *testing.F) {
	f.Add(lightningPickle())
	f.Add(pickleViews([]string{"t"}, []view{{class: "FloatStorage", key: "0", numel: 6, size: []int{3, 2}, stride: []int{1, 3}, parameter: true}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		unpickle(b)
	})
}
