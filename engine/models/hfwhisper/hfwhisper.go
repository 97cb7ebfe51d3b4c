// Package hfwhisper reads a Hugging Face openai/whisper-* checkpoint
// directory (config.json, model.safetensors or sharded
// model-*.safetensors with model.safetensors.index.json, and the
// tokenizer files) into the in-memory whisper.cpp model of package
// whisperbin: whisper.cpp's tensor names, types and ggml dimension order,
// its eleven hyper-parameters, the vocabulary as raw bytes and the slaney
// mel filter bank (Hugging Face ships no filters; they are computed).
// convert.WhisperGGUF then writes the GGUF.
package hfwhisper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"boxd/engine/asr/melbank"
	"boxd/engine/models/whisperbin"
)

// File names of a checkpoint directory.
const (
	ConfigFile      = "config.json"
	SafetensorsFile = "model.safetensors"
	IndexFile       = "model.safetensors.index.json"
	VocabFile       = "vocab.json"
	AddedTokensFile = "added_tokens.json"
	TokenizerFile   = "tokenizer.json"
)

// Options say how to convert.
type Options struct {
	// F16 picks whisper.cpp's ftype 1: matrices, the token embedding and
	// the conv weights F16; 1-D tensors, conv biases and positional
	// embeddings F32. False writes every tensor F32 (ftype 0).
	F16 bool
}

// IsCheckpoint reports whether path is a Hugging Face Whisper checkpoint:
// a directory holding config.json and model.safetensors or
// model.safetensors.index.json, or the path of one of those two files in
// such a directory.
func IsCheckpoint(path string) bool {
	dir, ok := checkpointDir(path)
	if !ok {
		return false
	}
	if !isFile(filepath.Join(dir, ConfigFile)) {
		return false
	}
	return isFile(filepath.Join(dir, SafetensorsFile)) || isFile(filepath.Join(dir, IndexFile))
}

// checkpointDir is the directory of a checkpoint path (the directory
// itself, or the directory of its model.safetensors / index file).
func checkpointDir(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return path, true
	}
	switch filepath.Base(path) {
	case SafetensorsFile, IndexFile:
		return filepath.Dir(path), true
	}
	return "", false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Read converts the checkpoint in dir (or the directory of dir when it
// names model.safetensors or its index) to a whisper.cpp model.
func Read(dir string, o Options) (*whisperbin.Model, error) {
	d, ok := checkpointDir(dir)
	if !ok {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("hfwhisper: %w", err)
		}
		return nil, fmt.Errorf("hfwhisper: %s is neither a checkpoint directory nor its %s", dir, SafetensorsFile)
	}
	dir = d
	cfg, err := readConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	h := cfg.hparams(o)
	vocab, err := readVocab(dir, int(h.NVocab))
	if err != nil {
		return nil, err
	}
	src, err := openSource(dir)
	if err != nil {
		return nil, err
	}
	defer src.close()
	tensors, err := convertTensors(src, cfg, o)
	if err != nil {
		return nil, err
	}
	filters := melbank.Slaney(int(h.NMels))
	return &whisperbin.Model{
		HParams:    h,
		FilterMels: h.NMels,
		FilterFFT:  int32(len(filters) / int(h.NMels)),
		Filters:    filters,
		Vocab:      vocab,
		Tensors:    tensors,
	}, nil
}

// config is what the converter reads from config.json.
type config struct {
	NVocab, AudioCtx, DModel, AudioHead, AudioLayer int64
	TextCtx, TextHead, TextLayer, NMels             int64
}

func (c *config) hparams(o Options) whisperbin.HParams {
	ftype := int32(0)
	if o.F16 {
		ftype = 1
	}
	return whisperbin.HParams{
		NVocab:      int32(c.NVocab),
		NAudioCtx:   int32(c.AudioCtx),
		NAudioState: int32(c.DModel),
		NAudioHead:  int32(c.AudioHead),
		NAudioLayer: int32(c.AudioLayer),
		NTextCtx:    int32(c.TextCtx),
		NTextState:  int32(c.DModel),
		NTextHead:   int32(c.TextHead),
		NTextLayer:  int32(c.TextLayer),
		NMels:       int32(c.NMels),
		FType:       ftype,
	}
}

// minVocab is the smallest vocabulary whisper.cpp's special-token layout
// fits (English-only models); multilingual ones have 51865 or more.
const minVocab = 51864

func readConfig(path string) (*config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("hfwhisper: %s is missing: copy it from the openai/whisper-* repository", ConfigFile)
		}
		return nil, fmt.Errorf("hfwhisper: %w", err)
	}
	var j struct {
		ModelType          *string `json:"model_type"`
		VocabSize          *int64  `json:"vocab_size"`
		MaxSourcePositions *int64  `json:"max_source_positions"`
		DModel             *int64  `json:"d_model"`
		EncoderHeads       *int64  `json:"encoder_attention_heads"`
		EncoderLayers      *int64  `json:"encoder_layers"`
		MaxTargetPositions *int64  `json:"max_target_positions"`
		DecoderHeads       *int64  `json:"decoder_attention_heads"`
		DecoderLayers      *int64  `json:"decoder_layers"`
		NumMelBins         *int64  `json:"num_mel_bins"`
		EncoderFFNDim      *int64  `json:"encoder_ffn_dim"`
		DecoderFFNDim      *int64  `json:"decoder_ffn_dim"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("hfwhisper: %s: %w", ConfigFile, err)
	}
	if j.ModelType != nil && *j.ModelType != "whisper" {
		return nil, fmt.Errorf("hfwhisper: %s: model_type is %q; only whisper checkpoints can be converted", ConfigFile, *j.ModelType)
	}
	var c config
	for _, f := range []struct {
		key      string
		v        *int64
		dst      *int64
		min, max int64
	}{
		{"vocab_size", j.VocabSize, &c.NVocab, minVocab, 1 << 22},
		{"max_source_positions", j.MaxSourcePositions, &c.AudioCtx, 1, 1 << 20},
		{"d_model", j.DModel, &c.DModel, 2, 1 << 16},
		{"encoder_attention_heads", j.EncoderHeads, &c.AudioHead, 1, 1 << 12},
		{"encoder_layers", j.EncoderLayers, &c.AudioLayer, 1, 1 << 10},
		{"max_target_positions", j.MaxTargetPositions, &c.TextCtx, 1, 1 << 20},
		{"decoder_attention_heads", j.DecoderHeads, &c.TextHead, 1, 1 << 12},
		{"decoder_layers", j.DecoderLayers, &c.TextLayer, 1, 1 << 10},
		{"num_mel_bins", j.NumMelBins, &c.NMels, 1, 1 << 12},
	} {
		if f.v == nil {
			return nil, fmt.Errorf("hfwhisper: %s: %s is missing; is this a Whisper config?", ConfigFile, f.key)
		}
		if *f.v < f.min || *f.v > f.max {
			if f.key == "vocab_size" {
				return nil, fmt.Errorf("hfwhisper: %s: vocab_size %d is outside %d..%d; whisper.cpp's special tokens need at least %d (English-only) or 51865 (multilingual)", ConfigFile, *f.v, f.min, f.max, minVocab)
			}
			return nil, fmt.Errorf("hfwhisper: %s: %s %d is outside %d..%d", ConfigFile, f.key, *f.v, f.min, f.max)
		}
		*f.dst = *f.v
	}
	for _, f := range []struct {
		key   string
		heads int64
	}{{"encoder_attention_heads", c.AudioHead}, {"decoder_attention_heads", c.TextHead}} {
		if c.DModel%f.heads != 0 {
			return nil, fmt.Errorf("hfwhisper: %s: d_model %d is not a multiple of %s %d", ConfigFile, c.DModel, f.key, f.heads)
		}
	}
	for _, f := range []struct {
		key string
		v   *int64
	}{{"encoder_ffn_dim", j.EncoderFFNDim}, {"decoder_ffn_dim", j.DecoderFFNDim}} {
		if f.v != nil && *f.v != 4*c.DModel {
			return nil, fmt.Errorf("hfwhisper: %s: %s %d is not 4*d_model (%d); whisper.cpp models need 4*d_model", ConfigFile, f.key, *f.v, 4*c.DModel)
		}
	}
	return &c, nil
}
