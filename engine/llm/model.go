// Package llm runs the box's text models in-process on llama.cpp (cgo,
// through the pinned github.com/ollama/ollama module): the chat engine
// (continuous batching over parallel sequences, sampling, grammars), the
// embedder and reranker, and reporting what a GGUF file holds with the real
// loader.
package llm

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"strings"
	"sync/atomic"
	"unsafe"

	"boxd/engine/models"

	"boxd/gpu"
)

// Options says how to load a model.
type Options struct {
	Path string
	// GPULayers is the number of layers offloaded to the GPU (0: CPU only).
	// Resolve "auto" (-1) with gpu.LayersFor before calling Open.
	GPULayers int
	// ContextLength is the context one request may use, prompt and answer
	// together; the engine allocates it for each parallel sequence.
	ContextLength int
	// Parallel is the number of sequences decoded together.
	Parallel int
	// Threads for CPU work; 0 picks the number of CPUs.
	Threads int
	// TuneThreads lets the engine or embedder decode with fewer than
	// Threads threads when fewer are measured faster (a busy machine:
	// package threadtune); off, Threads is used as given. On a GPU it does
	// nothing.
	TuneThreads bool
	// Progress, when set, receives load progress from 0 to 1.
	Progress func(float32)
	// Projector is the vision projector (an mmproj GGUF) beside the
	// model; empty: text only.
	Projector string
}

// Info describes a model file as llama.cpp loaded it.
type Info struct {
	Path          string `json:"path"`
	Architecture  string `json:"architecture"`
	Parameters    uint64 `json:"parameters"`
	ContextLength int    `json:"context_length"`
	Layers        int    `json:"layers"`
	EmbeddingSize int    `json:"embedding_size"`
	Quantisation  string `json:"quantisation"`
	ChatTemplate  string `json:"chat_template"`
	Name          string `json:"name,omitempty"`
	SizeBytes     uint64 `json:"size_bytes"`
	// WeightsRoot is set by Inspect only (hashing reads the whole file).
	WeightsRoot string `json:"weights_root,omitempty"`
}

// ErrCancelled is returned when the context ends while a model loads.
var ErrCancelled = errors.New("model load cancelled")

func modelParams(gpuLayers int) C.struct_llama_model_params {
	p := C.llama_model_default_params()
	p.n_gpu_layers = C.int32_t(gpuLayers)
	p.use_mmap = true
	return p
}

// freeContext frees a llama.cpp context unless GPU backends are loaded.
// llama.cpp's context destroys its backends before its scheduler, and the
// scheduler of the pinned ggml (an ollama patch) resets every backend as
// it is freed, so with a CUDA backend llama_free reads the freed backend
// and the process crashes (seen on an H100; ollama's own runner never
// frees a context, it exits). A context on a GPU box therefore stays until
// the process ends, when the driver takes its memory back: boxd opens its
// models once, at start.
func freeContext(lctx *C.struct_llama_context) {
	if len(gpu.GPUs()) > 0 {
		keptContexts.Add(1)
		return
	}
	C.llama_free(lctx)
}

// keptContexts counts the contexts freeContext left to the process exit.
var keptContexts atomic.Int64

// loadModel calls llama_model_load_from_file, cancellable through ctx.
func loadModel(ctx context.Context, path string, p C.struct_llama_model_params, progress func(float32)) (*C.struct_llama_model, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("model file: %w", err)
	}
	initBackend()
	h := cgo.NewHandle(&loadState{ctx: ctx, progress: progress})
	defer h.Delete()
	user := C.malloc(C.size_t(unsafe.Sizeof(h)))
	defer C.free(user)
	*(*cgo.Handle)(user) = h
	C.boxd_set_progress(&p, user)

	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	m := C.llama_model_load_from_file(cpath, p)
	if ctx.Err() != nil {
		if m != nil {
			C.llama_model_free(m)
		}
		return nil, fmt.Errorf("%w: %w", ErrCancelled, ctx.Err())
	}
	if m == nil {
		return nil, fmt.Errorf("llama.cpp could not load %s (not a GGUF model it supports; run with log.level debug for its reason)", path)
	}
	return m, nil
}

// Inspect reports what the file holds as ReadInfo does, plus its weights
// root (which reads every byte of the file).
func Inspect(ctx context.Context, path string) (Info, error) {
	info, err := ReadInfo(ctx, path)
	if err != nil {
		return Info{}, err
	}
	root, err := models.WeightsRootOf(path)
	if err != nil {
		return Info{}, fmt.Errorf("llm: inspect: %w", err)
	}
	info.WeightsRoot = root.Root
	return info, nil
}

// ReadInfo loads the file's metadata and tensor shapes with llama.cpp (no
// weights are read) and reports what it holds. WeightsRoot is left empty.
func ReadInfo(ctx context.Context, path string) (Info, error) {
	p := modelParams(0)
	p.no_alloc = true
	p.use_mmap = false // no_alloc requires it; nothing is read either way
	p.use_extra_bufts = false
	m, err := loadModel(ctx, path, p, nil)
	if err != nil {
		return Info{}, fmt.Errorf("llm: read info: %w", err)
	}
	defer C.llama_model_free(m)
	info, err := describe(m, path)
	if err != nil {
		return Info{}, fmt.Errorf("llm: read info: %w", err)
	}
	return info, nil
}

func describe(m *C.struct_llama_model, path string) (Info, error) {
	info := Info{
		Path:          path,
		Architecture:  metaString(m, "general.architecture"),
		Name:          metaString(m, "general.name"),
		Parameters:    uint64(C.llama_model_n_params(m)),
		ContextLength: int(C.llama_model_n_ctx_train(m)),
		Layers:        int(C.llama_model_n_layer(m)),
		EmbeddingSize: int(C.llama_model_n_embd(m)),
		Quantisation:  quantisation(m),
	}
	if tmpl := C.llama_model_chat_template(m, nil); tmpl != nil {
		info.ChatTemplate = string(models.DetectTemplate(C.GoString(tmpl)))
	} else {
		info.ChatTemplate = string(models.TemplateNone)
	}
	files, err := models.FilesOf(path)
	if err != nil {
		return Info{}, err
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return Info{}, fmt.Errorf("model file: %w", err)
		}
		info.SizeBytes += uint64(st.Size())
	}
	return info, nil
}

func metaString(m *C.struct_llama_model, key string) string {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	buf := make([]byte, 512)
	n := C.llama_model_meta_val_str(m, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if n < 0 {
		return ""
	}
	if int(n) >= len(buf) {
		buf = make([]byte, int(n)+1)
		n = C.llama_model_meta_val_str(m, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	}
	return string(buf[:n])
}

// quantisation is the file type as llama.cpp names it: the last part of
// llama_model_desc, "<arch> <size> <file type>".
func quantisation(m *C.struct_llama_model) string {
	buf := make([]byte, 256)
	n := C.llama_model_desc(m, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if n <= 0 {
		return "unknown"
	}
	desc := string(buf[:min(int(n), len(buf)-1)])
	parts := strings.SplitN(desc, " ", 3)
	if len(parts) < 3 {
		return desc
	}
	return parts[2]
}
