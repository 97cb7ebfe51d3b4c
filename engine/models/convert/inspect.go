package convert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"boxd/engine/models/gguf"
)

// Format is a model file's format as Sniff sees it.
type Format int

// Formats Sniff recognises.
const (
	FormatUnknown    Format = iota
	FormatGGUF              // GGUF (any architecture)
	FormatWhisperBin        // whisper.cpp ggml-*.bin model
	FormatSileroBin         // whisper.cpp ggml-silero-*.bin VAD
	FormatTorchZip          // a zip: PyTorch's torch.save format (pytorch_model.bin)
)

func (f Format) String() string {
	switch f {
	case FormatGGUF:
		return "GGUF"
	case FormatWhisperBin:
		return "whisper.cpp model"
	case FormatSileroBin:
		return "whisper.cpp Silero VAD"
	case FormatTorchZip:
		return "PyTorch checkpoint"
	}
	return "unknown"
}

// Sniff reads the first bytes of path. whisper.cpp's model and VAD files
// share the "ggml" magic; a VAD file continues with the length of its
// model-type string, a model with its vocabulary size (tens of thousands).
func Sniff(path string) (Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return FormatUnknown, fmt.Errorf("convert: %w", err)
	}
	defer f.Close()
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return FormatUnknown, nil
	}
	switch {
	case string(head[:4]) == "GGUF":
		return FormatGGUF, nil
	case binary.LittleEndian.Uint32(head[:4]) == 0x67676d6c:
		if n := int32(binary.LittleEndian.Uint32(head[4:])); n > 0 && n <= 64 {
			return FormatSileroBin, nil
		}
		return FormatWhisperBin, nil
	case string(head[:4]) == "PK\x03\x04":
		return FormatTorchZip, nil
	}
	return FormatUnknown, nil
}

// Info describes a Whisper or Silero VAD GGUF.
type Info struct {
	Path         string       `json:"path"`
	Architecture string       `json:"architecture"`
	Name         string       `json:"name,omitempty"`
	Parameters   uint64       `json:"parameters"`
	Tensors      int          `json:"tensors"`
	Types        string       `json:"types"`
	SizeBytes    uint64       `json:"size_bytes"`
	Whisper      *WhisperInfo `json:"whisper,omitempty"`
	Silero       *SileroInfo  `json:"silero_vad,omitempty"`
	WeightsRoot  string       `json:"weights_root,omitempty"`
}

// WhisperInfo holds a Whisper model's dimensions.
type WhisperInfo struct {
	Size         string `json:"size"` // tiny, base, ..., large-v3-turbo, or custom
	Multilingual bool   `json:"multilingual"`
	Languages    int    `json:"languages"`
	Vocab        int    `json:"vocab"`
	Mels         int    `json:"mels"`
	AudioCtx     int    `json:"audio_context"`
	TextCtx      int    `json:"text_context"`
	Width        int    `json:"width"`
	AudioLayers  int    `json:"audio_layers"`
	TextLayers   int    `json:"text_layers"`
	AudioHeads   int    `json:"audio_heads"`
	TextHeads    int    `json:"text_heads"`
	Tokens       int    `json:"tokens"`
}

// SileroInfo holds a Silero VAD's framing.
type SileroInfo struct {
	Version string `json:"version"`
	Window  int    `json:"window"`
	Context int    `json:"context"`
}

// ErrNotSpeech is returned by Describe for a GGUF of another architecture.
var ErrNotSpeech = errors.New("convert: not a Whisper or Silero VAD GGUF")

// Describe reads a Whisper or Silero VAD GGUF's metadata.
func Describe(path string) (*Info, error) {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	arch := f.String("general.architecture")
	if arch != ArchWhisper && arch != ArchSilero {
		return nil, fmt.Errorf("%w (architecture %q)", ErrNotSpeech, arch)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	info := &Info{Path: path, Architecture: arch, Name: f.String("general.name"), Tensors: len(f.Tensors), SizeBytes: uint64(st.Size())}
	types := map[gguf.Type]uint64{}
	for _, t := range f.Tensors {
		info.Parameters += t.Elements()
		types[t.Type] += t.Elements()
	}
	info.Types = typeSummary(types)
	u := func(key string) int {
		v, _ := f.Uint(key)
		return int(v)
	}
	switch arch {
	case ArchWhisper:
		w := &WhisperInfo{
			Vocab: u(KeyVocabSize), Mels: u(KeyMels), AudioCtx: u(KeyAudioCtx), TextCtx: u(KeyTextCtx), Width: u(KeyAudioState),
			AudioLayers: u(KeyAudioLayer), TextLayers: u(KeyTextLayer), AudioHeads: u(KeyAudioHead), TextHeads: u(KeyTextHead),
			Tokens: len(f.Strings(KeyTokens)),
		}
		w.Multilingual = w.Vocab >= 51865
		if w.Multilingual {
			w.Languages = w.Vocab - 51765 - 1
		}
		w.Size = WhisperSize(w)
		info.Whisper = w
	case ArchSilero:
		info.Silero = &SileroInfo{Version: f.String(KeySileroVersion), Window: u(KeySileroWindow), Context: u(KeySileroContext)}
	}
	return info, nil
}

// WhisperSize names the released size the dimensions match.
func WhisperSize(w *WhisperInfo) string {
	sizes := []struct {
		name         string
		width, audio int
	}{{"tiny", 384, 4}, {"base", 512, 6}, {"small", 768, 12}, {"medium", 1024, 24}, {"large", 1280, 32}}
	for _, s := range sizes {
		if w.Width != s.width || w.AudioLayers != s.audio {
			continue
		}
		name := s.name
		switch {
		case s.name == "large" && w.Vocab == 51866 && w.TextLayers == 4:
			name = "large-v3-turbo"
		case s.name == "large" && w.Vocab == 51866:
			name = "large-v3"
		case w.TextLayers != s.audio:
			return "custom"
		}
		if !w.Multilingual {
			name += ".en"
		}
		return name
	}
	return "custom"
}

func typeSummary(types map[gguf.Type]uint64) string {
	var total uint64
	for _, n := range types {
		total += n
	}
	s := ""
	for _, t := range []gguf.Type{gguf.F32, gguf.F16, gguf.Q8_0} {
		if n, ok := types[t]; ok {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s %.0f%%", t, 100*float64(n)/float64(max(1, total)))
			delete(types, t)
		}
	}
	rest := make([]gguf.Type, 0, len(types))
	for t := range types {
		rest = append(rest, t)
	}
	slices.Sort(rest)
	for _, t := range rest {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s %.0f%%", t, 100*float64(types[t])/float64(max(1, total)))
	}
	return s
}
