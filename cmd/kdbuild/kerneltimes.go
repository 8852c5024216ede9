package main

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// writeKernelTimes prints, on stderr, the time spent in every kernel when
// the CUDA context runs in debug mode (KDBUILD_CUDA_DEBUG=1: a
// synchronisation after every launch). It prints nothing otherwise.
func writeKernelTimes(e *env, ex exec.Executor) {
	ctx := ex.CUDA()
	if ctx == nil || !ctx.Debug() {
		return
	}
	times := ctx.KernelTimes()
	if len(times) == 0 {
		return
	}
	fmt.Fprintf(e.stderr, "kernel times (KDBUILD_CUDA_DEBUG=1, synchronised after every launch):\n")
	fmt.Fprintf(e.stderr, "  %-40s %9s %12s %12s\n", "kernel", "launches", "total ms", "ms/launch")
	for _, kt := range times {
		fmt.Fprintf(e.stderr, "  %-40s %9d %12.3f %12.4f\n", kt.Kernel, kt.Launches, kt.TotalMs, kt.TotalMs/float64(max(kt.Launches, 1)))
	}
}
