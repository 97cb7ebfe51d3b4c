package gpu

import (
	"errors"
	"runtime"

	"golang.org/x/sys/cpu"
)

// CheckCPU reports whether this CPU runs the ggml kernels boxd is built
// with: on amd64 the build targets x86-64-v3 (AVX2, FMA, F16C), and an
// older CPU would stop with an illegal instruction.
func CheckCPU() error {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return errors.New("this CPU lacks AVX2/FMA: boxd is built for x86-64-v3 CPUs (Intel Haswell 2013 or AMD Zen 2017 and later)")
	}
	return nil
}
