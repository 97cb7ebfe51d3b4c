package whisperbin_test

import (
	"bytes"
	"crypto/sha256"
	"os"
	"testing"

	"boxd/engine/models/testmodels"
	"boxd/engine/models/whisperbin"
)

func TestReadTheRealHeaders(t *testing.T) {
	for _, c := range []struct {
		file   string
		nVocab int32
		last   string
	}{{"whisper-vocab-tiny.bin", 51865, ""}, {"whisper-vocab-tiny.en.bin", 51864, "<|endoftext|>"}} {
		m, err := whisperbin.ReadFile(testmodels.Shared(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		h := m.HParams
		if h.NVocab != c.nVocab || h.NAudioCtx != 1500 || h.NAudioState != 384 || h.NAudioHead != 6 || h.NAudioLayer != 4 ||
			h.NTextCtx != 448 || h.NTextState != 384 || h.NTextHead != 6 || h.NTextLayer != 4 || h.NMels != 80 {
			t.Errorf("%s: hparams %+v", c.file, h)
		}
		if m.FilterMels != 80 || m.FilterFFT != 201 || len(m.Vocab) != 50257 || len(m.Tensors) != 0 {
			t.Errorf("%s: filters %dx%d vocab %d tensors %d", c.file, m.FilterMels, m.FilterFFT, len(m.Vocab), len(m.Tensors))
		}
		if string(m.Vocab[0]) != "!" || string(m.Vocab[50256]) != c.last {
			t.Errorf("%s: vocab ends %q", c.file, m.Vocab[50256])
		}
		// Writing it back gives the same bytes.
		var buf bytes.Buffer
		if err := m.Write(&buf); err != nil {
			t.Fatal(err)
		}
		orig, _ := os.ReadFile(testmodels.Shared(t, c.file))
		if sha256.Sum256(orig) != sha256.Sum256(buf.Bytes()) {
			t.Errorf("%s: write is not byte-identical", c.file)
		}
	}
}

func TestRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("lmgg"), []byte("GGUF0000"), append([]byte("lmgg"), make([]byte, 44)...)} {
		if _, err := whisperbin.Read(bytes.NewReader(b)); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
}
