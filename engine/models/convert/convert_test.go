package convert_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"boxd/engine/models/convert"
	"boxd/engine/models/gguf"
	"boxd/engine/models/testmodels"
	"boxd/engine/models/whisperbin"
)

// Converting a whisper.cpp file to GGUF keeps every tensor bit-exact, with
// the same name, type and shape, and carries the hyper-parameters, filters
// and vocabulary.
func TestWhisperBinToGGUFIsBitExact(t *testing.T) {
	for _, name := range []string{testmodels.WhisperBin, testmodels.WhisperF16Bin} {
		bin := testmodels.Generated(t, name)
		out := filepath.Join(t.TempDir(), "w.gguf")
		if err := convert.WhisperBinFile(bin, out, ""); err != nil {
			t.Fatal(err)
		}
		src, err := whisperbin.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		f, err := gguf.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Tensors) != len(src.Tensors) || len(src.Tensors) != 167 {
			t.Fatalf("%s: %d tensors in GGUF, %d in the source", name, len(f.Tensors), len(src.Tensors))
		}
		for _, st := range src.Tensors {
			ti, ok := f.Tensor(st.Name)
			if !ok {
				t.Fatalf("%s lost %s", name, st.Name)
			}
			if int32(ti.Type) != st.Type || len(ti.Dims) != len(st.Dims) {
				t.Fatalf("%s: %s type/dims changed", name, st.Name)
			}
			for i := range st.Dims {
				if ti.Dims[i] != uint64(st.Dims[i]) {
					t.Fatalf("%s: %s dims %v vs %v", name, st.Name, ti.Dims, st.Dims)
				}
			}
			data, err := f.TensorData(out, ti)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, st.Data) {
				t.Fatalf("%s: %s bytes differ", name, st.Name)
			}
		}
		h := src.HParams
		for key, want := range map[string]uint64{convert.KeyVocabSize: uint64(h.NVocab), convert.KeyAudioState: 384, convert.KeyTextLayer: 4, convert.KeyMels: 80, convert.KeyTextCtx: 448} {
			if got, ok := f.Uint(key); !ok || got != want {
				t.Errorf("%s: %s = %d, want %d", name, key, got, want)
			}
		}
		if len(f.Floats(convert.KeyMelFilters)) != 80*201 || len(f.Strings(convert.KeyTokens)) != 50257 || f.String("general.architecture") != "whisper" {
			t.Errorf("%s: filters, tokens or architecture missing", name)
		}
		if f.Strings(convert.KeyTokens)[220] != " " {
			t.Errorf("token 220 = %q", f.Strings(convert.KeyTokens)[220])
		}
	}
}

func TestVocabularyOnlyFileIsRefused(t *testing.T) {
	if err := convert.WhisperBinFile(testmodels.Shared(t, "whisper-vocab-tiny.bin"), filepath.Join(t.TempDir(), "x.gguf"), ""); err == nil {
		t.Error("a file without tensors converted")
	}
}
