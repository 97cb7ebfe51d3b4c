// Package ggmlcpu sets the thread count of the ggml CPU backend inside an
// ollama ml.Backend between graphs. The pinned module (ollama v0.17.4)
// fixes it when the backend opens; ggml itself reads it at every graph
// (ggml_backend_cpu_set_n_threads), and the speech engine wants one thread
// for a decoder step of one sequence (many small operations, where a
// second thread costs more in meeting between them than it gives) and
// every thread for batched steps and the encoder.
//
// It reaches the backend's ggml handles through the module's unexported
// field schedBackends by reflection: a pinned module's layout, checked at
// run time. Where the field is not what is expected, Threads returns nil
// and the backend keeps its thread count.
package ggmlcpu

// #include <stdbool.h>
// extern bool ggml_backend_is_cpu(void *backend);
// extern void ggml_backend_cpu_set_n_threads(void *backend, int n_threads);
import "C"

import (
	"reflect"
	"unsafe"

	// The ggml library these declarations link against.
	_ "github.com/ollama/ollama/ml/backend/ggml"
)

// Threads returns a function that sets the thread count of b's ggml CPU
// backends, or nil when b holds none it can reach.
func Threads(b any) func(n int) {
	v := reflect.ValueOf(b)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("schedBackends")
	if !f.IsValid() || f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.Pointer || !f.CanAddr() {
		return nil
	}
	f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	var cpus []unsafe.Pointer
	for i := range f.Len() {
		p := f.Index(i).UnsafePointer()
		if p != nil && bool(C.ggml_backend_is_cpu(p)) {
			cpus = append(cpus, p)
		}
	}
	if len(cpus) == 0 {
		return nil
	}
	return func(n int) {
		for _, p := range cpus {
			C.ggml_backend_cpu_set_n_threads(p, C.int(max(1, n)))
		}
	}
}
