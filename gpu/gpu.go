// Package gpu finds the accelerators ggml can use and decides how much of a
// model goes onto them. Discovery asks ggml's backend registry, the same one
// the inference code runs on, so the devices listed are exactly those a model
// can be offloaded to: the CPU always, and a CUDA GPU when the ggml CUDA
// backend library (make cuda) is in gpu.library_path.
package gpu

/*
#include "llamacpp/ggml-backend.h"
*/
import "C"

import (
	"fmt"
	"log/slog"
	"os"
	"sync"

	ggml "github.com/ollama/ollama/ml/backend/ggml/ggml/src"
)

// Kind is the type of a device.
type Kind string

// Device kinds, as ggml names them.
const (
	KindCPU   Kind = "cpu"
	KindGPU   Kind = "gpu"
	KindIGPU  Kind = "igpu"
	KindAccel Kind = "accel"
)

// Device is one compute device.
type Device struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Kind        Kind   `json:"kind"`
	FreeBytes   uint64 `json:"free_bytes"`
	TotalBytes  uint64 `json:"total_bytes"`
}

// IsGPU reports whether layers can be offloaded to d.
func (d Device) IsGPU() bool { return d.Kind == KindGPU || d.Kind == KindIGPU }

var initOnce sync.Once

// Init points ggml at the GPU backend libraries in libraryPath and loads
// them. It runs once per process; later calls do nothing. ggml only accepts
// directories whose path contains lib/ollama.
func Init(libraryPath string) {
	initOnce.Do(func() {
		if libraryPath != "" {
			if _, err := os.Stat(libraryPath); err == nil {
				os.Setenv("OLLAMA_LIBRARY_PATH", libraryPath)
			} else {
				slog.Debug("gpu: backend library directory absent; CPU only", "path", libraryPath)
				os.Setenv("OLLAMA_LIBRARY_PATH", os.DevNull)
			}
		}
		ggml.OnceLoad()
	})
}

// Devices lists the devices ggml has registered, CPU included. Init first.
func Devices() []Device {
	Init("")
	n := int(C.ggml_backend_dev_count())
	out := make([]Device, 0, n)
	for i := range n {
		dev := C.ggml_backend_dev_get(C.size_t(i))
		var free, total C.size_t
		C.ggml_backend_dev_memory(dev, &free, &total)
		d := Device{
			Index:       i,
			Name:        C.GoString(C.ggml_backend_dev_name(dev)),
			Description: C.GoString(C.ggml_backend_dev_description(dev)),
			FreeBytes:   uint64(free),
			TotalBytes:  uint64(total),
		}
		switch C.ggml_backend_dev_type(dev) {
		case C.GGML_BACKEND_DEVICE_TYPE_CPU:
			d.Kind = KindCPU
		case C.GGML_BACKEND_DEVICE_TYPE_GPU:
			d.Kind = KindGPU
		case C.GGML_BACKEND_DEVICE_TYPE_IGPU:
			d.Kind = KindIGPU
		default:
			d.Kind = KindAccel
		}
		out = append(out, d)
	}
	return out
}

// GPUs lists only the devices layers can be offloaded to.
func GPUs() []Device {
	var out []Device
	for _, d := range Devices() {
		if d.IsGPU() {
			out = append(out, d)
		}
	}
	return out
}

// LayersFor decides how many of a model's layers to offload. configured is
// gpu.layers: -1 means choose from free memory. modelBytes is the size of
// the weights, layers the number of transformer blocks, reserveBytes what
// the context (KV cache, compute buffers) needs on top. With no GPU the
// answer is 0.
func LayersFor(configured int, gpus []Device, modelBytes uint64, layers int, reserveBytes uint64) (int, string) {
	if configured >= 0 {
		if len(gpus) == 0 && configured > 0 {
			return 0, fmt.Sprintf("gpu.layers is %d but no GPU backend is loaded; running on the CPU", configured)
		}
		return configured, "configured"
	}
	if len(gpus) == 0 {
		return 0, "no GPU backend loaded"
	}
	var free uint64
	for _, d := range gpus {
		free += d.FreeBytes
	}
	// Keep 10% of free memory for fragmentation and other processes.
	usable := free - free/10
	if usable <= reserveBytes || layers <= 0 || modelBytes == 0 {
		return 0, fmt.Sprintf("GPU free memory %d MiB does not fit the context", free>>20)
	}
	usable -= reserveBytes
	if modelBytes <= usable {
		// Every block plus the output layer.
		return layers + 1, "whole model fits in GPU memory"
	}
	perLayer := modelBytes / uint64(layers)
	n := int(usable / perLayer)
	return n, fmt.Sprintf("%d of %d layers fit in %d MiB free", n, layers, free>>20)
}
