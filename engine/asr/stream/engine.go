package stream

import (
	"context"
	"errors"
	"fmt"

	"boxd/engine/asr"
	"boxd/engine/asr/tokenizer"
	"boxd/engine/asr/vad"
)

// Engine is the box's recogniser: one Whisper model and one VAD shared by
// every session, with the box's decoding settings. The live socket and
// boxd transcribe both start their sessions here.
type Engine struct {
	Model *asr.Model
	VAD   *vad.Model
	// Defaults apply to every session; Language and Task come per session.
	Defaults Options
}

// Settings are the operator's knobs (configs asr.*).
type Settings struct {
	BeamSize      int       // finished sentences (1: greedy)
	PartialStepMS int       // new audio before a partial re-decode
	MaxSentenceS  float64   // longest sentence without a pause
	GPULayers     int       // -1 all, 0 CPU
	Threads       int       // CPU threads (0: all)
	Parallel      int       // transcriptions at once, steps batched (0: asr.DefaultSlots)
	Flash         asr.Flash // attention as ggml's flash attention: off, on or auto (on with a GPU)
}

// LoadError says which file failed to load.
type LoadError struct {
	VAD bool // the VAD file, else the Whisper model
	Err error
}

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Load opens the Whisper GGUF and the Silero VAD file; errors are
// *LoadError.
func Load(ctx context.Context, modelPath, vadPath string, s Settings) (*Engine, error) {
	if vadPath == "" {
		return nil, &LoadError{VAD: true, Err: errors.New("no VAD file: use ggml-silero-v6.2.0.bin")}
	}
	// The VAD first: loading a model through ollama's ggml backend resets
	// (cudaDeviceReset) every GPU that model does not use, and the VAD runs
	// on the CPU, so loaded after Whisper it would free Whisper's GPU
	// memory under it (seen on an H100: "invalid resource handle").
	v, err := vad.Load(vadPath)
	if err != nil {
		return nil, &LoadError{VAD: true, Err: err}
	}
	m, err := asr.Load(ctx, modelPath, asr.Options{GPULayers: s.GPULayers, Threads: s.Threads, Slots: s.Parallel, Flash: s.Flash})
	if err != nil {
		v.Close()
		return nil, &LoadError{Err: err}
	}
	return &Engine{Model: m, VAD: v, Defaults: s.options()}, nil
}

func (s Settings) options() Options {
	o := Options{
		StepS: float64(s.PartialStepMS) / 1000,
		VAD:   vad.Params{MaxSpeechS: s.MaxSentenceS},
		Final: asr.DecodeOptions{BeamSize: s.BeamSize},
	}
	return o
}

// Close frees the model and the VAD.
func (e *Engine) Close() {
	e.Model.Close()
	e.VAD.Close()
}

// Options returns the session options for a spoken language as a client
// sends it ("auto", "en", "pt-BR", ...) and a task; auto-detection picks
// among the contract's languages. A bad language is an error that says
// which are accepted.
func (e *Engine) Options(lang, task string) (Options, error) {
	code, err := tokenizer.NormalizeLanguage(lang)
	if err != nil {
		return Options{}, err
	}
	if task != "" && task != asr.TaskTranscribe && task != asr.TaskTranslate {
		return Options{}, fmt.Errorf("stream: task %q: use transcribe or translate", task)
	}
	if !e.Model.Tokenizer().Multilingual {
		if code != "" && code != "en" {
			return Options{}, fmt.Errorf("stream: this box's speech model (%s) is English-only: use lang en or auto", e.Model.Name())
		}
		if task == asr.TaskTranslate {
			return Options{}, fmt.Errorf("stream: this box's speech model (%s) is English-only and cannot translate", e.Model.Name())
		}
	}
	o := e.Defaults
	o.Language, o.Task = code, task
	if code == "" {
		o.DetectAmong = tokenizer.SpokenLanguages
	}
	return o, nil
}

// Session starts a session with options from Options.
func (e *Engine) Session(o Options) *Session { return NewSession(e.Model, e.VAD, o) }
