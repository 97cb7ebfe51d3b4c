package llm

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"log/slog"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"

	// The llama package compiles llama.cpp and ggml into the binary; boxd
	// calls its C API directly through the headers `make headers` copies.
	ollamallama "github.com/ollama/ollama/llama"
)

var backendOnce sync.Once

// initBackend loads the ggml backends (CPU built in, GPU libraries from
// OLLAMA_LIBRARY_PATH) and routes llama.cpp's log into slog.
func initBackend() {
	backendOnce.Do(func() {
		ollamallama.BackendInit()
		C.boxd_log_install()
	})
}

var (
	logMu    sync.Mutex
	logLine  strings.Builder
	logLevel = C.GGML_LOG_LEVEL_INFO
)

// boxdLlamaLog receives llama.cpp and ggml log fragments and emits whole
// lines through slog. llama.cpp's own chatter is Debug; warnings and errors
// keep their level. These lines describe models and devices, never requests.
//
//export boxdLlamaLog
func boxdLlamaLog(level C.int, text *C.char) {
	logMu.Lock()
	defer logMu.Unlock()
	if level != C.GGML_LOG_LEVEL_CONT {
		logLevel = int(level)
	}
	logLine.WriteString(C.GoString(text))
	s := logLine.String()
	if !strings.HasSuffix(s, "\n") {
		return
	}
	logLine.Reset()
	var lvl slog.Level
	switch {
	case logLevel == C.GGML_LOG_LEVEL_ERROR:
		lvl = slog.LevelError
	case logLevel == C.GGML_LOG_LEVEL_WARN && !benign(s):
		lvl = slog.LevelWarn
	default:
		lvl = slog.LevelDebug
	}
	ctx := context.Background()
	if slog.Default().Enabled(ctx, lvl) {
		slog.Default().Log(ctx, lvl, strings.TrimSpace(s), "component", "llama.cpp")
	}
}

// benign are llama.cpp warnings that describe boxd's deliberate choices
// (a context shorter than the model's) or common tokenizer metadata, not
// problems; they go to debug.
func benign(line string) bool {
	for _, s := range []string{"the full capacity of the model will not be utilized", "special_eos_id is not in special_eog_ids", "bad special token:"} {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// loadState is what the progress callback sees during a model load.
type loadState struct {
	ctx      context.Context
	progress func(float32)
}

//export boxdLoadProgress
func boxdLoadProgress(progress C.float, user unsafe.Pointer) C.bool {
	st := (*cgo.Handle)(user).Value().(*loadState)
	if st.progress != nil {
		st.progress(float32(progress))
	}
	// Returning false makes llama.cpp abort the load.
	return C.bool(st.ctx.Err() == nil)
}
