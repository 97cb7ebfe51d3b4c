// Package convert turns model files from other formats into the GGUF files
// boxd loads: whisper.cpp ".bin" models (and, through package hfwhisper,
// Hugging Face checkpoints) into GGUF Whisper models with the
// hyper-parameters, mel filters and tokenizer inside, and whisper.cpp's
// Silero VAD files into GGUF. It must not import hfwhisper (which imports
// asr, which imports convert).
package convert

import (
	"fmt"
	"path/filepath"
	"strings"

	"boxd/engine/models/gguf"
	"boxd/engine/models/whisperbin"
)

// Whisper GGUF metadata keys (architecture "whisper"). Tensors keep
// whisper.cpp's names, types and shapes.
const (
	KeyAudioCtx    = "whisper.audio.context_length"
	KeyAudioState  = "whisper.audio.embedding_length"
	KeyAudioHead   = "whisper.audio.head_count"
	KeyAudioLayer  = "whisper.audio.block_count"
	KeyTextCtx     = "whisper.text.context_length"
	KeyTextState   = "whisper.text.embedding_length"
	KeyTextHead    = "whisper.text.head_count"
	KeyTextLayer   = "whisper.text.block_count"
	KeyVocabSize   = "whisper.vocab_size"
	KeyMels        = "whisper.mel.count"
	KeyMelFFT      = "whisper.mel.fft_bins"
	KeyMelFilters  = "whisper.mel.filters"
	KeyFType       = "whisper.ftype"
	KeyBlockCount  = "whisper.block_count"
	KeyTokens      = "tokenizer.ggml.tokens"
	KeyTokenizer   = "tokenizer.ggml.model"
	ArchWhisper    = "whisper"
	TokenizerWhisp = "whisper"
)

// WhisperGGUF builds the GGUF of a whisper.cpp model. Tensor bytes are
// copied unchanged.
func WhisperGGUF(m *whisperbin.Model, name string) (*gguf.Writer, error) {
	h := m.HParams
	if int(m.FilterMels) != int(h.NMels) {
		return nil, fmt.Errorf("convert: the filter bank has %d bins, the model %d", m.FilterMels, h.NMels)
	}
	w := gguf.NewWriter()
	w.Set("general.architecture", ArchWhisper)
	w.Set("general.name", name)
	w.Set("general.file_type", uint32(h.FType%1000))
	// The ggml loader files a tensor under the layer of the first number in
	// its name, so encoder.conv2.* lands in "layer" 2: the block count must
	// cover that even for one-layer models.
	w.Set(KeyBlockCount, uint32(max(h.NAudioLayer, h.NTextLayer, 3)))
	w.Set(KeyVocabSize, uint32(h.NVocab))
	w.Set(KeyAudioCtx, uint32(h.NAudioCtx))
	w.Set(KeyAudioState, uint32(h.NAudioState))
	w.Set(KeyAudioHead, uint32(h.NAudioHead))
	w.Set(KeyAudioLayer, uint32(h.NAudioLayer))
	w.Set(KeyTextCtx, uint32(h.NTextCtx))
	w.Set(KeyTextState, uint32(h.NTextState))
	w.Set(KeyTextHead, uint32(h.NTextHead))
	w.Set(KeyTextLayer, uint32(h.NTextLayer))
	w.Set(KeyMels, uint32(h.NMels))
	w.Set(KeyMelFFT, uint32(m.FilterFFT))
	w.Set(KeyMelFilters, m.Filters)
	w.Set(KeyFType, h.FType)
	w.Set(KeyTokenizer, TokenizerWhisp)
	toks := make([]string, len(m.Vocab))
	for i, t := range m.Vocab {
		toks[i] = string(t)
	}
	w.Set(KeyTokens, toks)
	for _, t := range m.Tensors {
		dims := make([]uint64, len(t.Dims))
		for i, d := range t.Dims {
			dims[i] = uint64(d)
		}
		if err := w.AddTensor(t.Name, gguf.Type(t.Type), dims, t.Data); err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
	}
	return w, nil
}

// WhisperBinFile converts a whisper.cpp file to a GGUF file; name ("":
// whisper-<file name>) becomes general.name.
func WhisperBinFile(in, out, name string) error {
	m, err := whisperbin.ReadFile(in)
	if err != nil {
		return err
	}
	if len(m.Tensors) == 0 {
		return fmt.Errorf("convert: %s has no tensors (a vocabulary-only file cannot run)", in)
	}
	if name == "" {
		name = "whisper-" + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(in), "ggml-"), ".bin")
	}
	w, err := WhisperGGUF(m, name)
	if err != nil {
		return err
	}
	return w.WriteFile(out)
}
