// Package launch launches the image's kernels with typed arguments. For
// every extern "C" __global__ kernel, kernels/gen writes (kernels_gen.go)
// an argument struct whose fields are named like the kernel's parameters
// and typed like them (device pointers as cuda.DevPtr; unsigned int as
// uint32, int as int32, unsigned long long as uint64, float as float32, …)
// and a Kernel value, so that a missing, extra or mistyped argument fails
// to compile:
//
//	err := launch.ScanCopyU32.Launch(ctx, grid, block, 0, launch.ScanCopyU32Args{Dst: d, Src: s, N: uint64(n)})
//
// Kernels whose parameters have the same names and Go types share one
// struct type (the later kernels' Args are aliases of the first's), so a
// kernel picked at run time from such a family is found with Named and
// still takes typed arguments. Underneath, a launch is cuda.Context.Launch
// by name; the generator refuses a kernel of more parameters than a
// launch passes (KD_MAX_ARGS). Package launch needs no cgo.
package launch

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// Args is implemented by the generated argument structs: args lists the
// fields in the kernel's parameter order.
type Args interface{ args() []any }

// Kernel is a kernel of the image whose arguments are A.
type Kernel[A Args] struct{ name string }

// Name is the kernel's name in the image.
func (k Kernel[A]) Name() string { return k.name }

// Launch enqueues the kernel with grid × block threads and sharedBytes of
// dynamic shared memory (cuda.Context.Launch).
func (k Kernel[A]) Launch(c *cuda.Context, grid, block cuda.Dim3, sharedBytes uint32, a A) error {
	return c.Launch(k.name, grid, block, sharedBytes, a.args()...)
}

// LaunchDependent enqueues the kernel as a programmatic dependent launch
// where the device has them (cuda.Context.LaunchDependent).
func (k Kernel[A]) LaunchDependent(c *cuda.Context, grid, block cuda.Dim3, sharedBytes uint32, a A) error {
	return c.LaunchDependent(k.name, grid, block, sharedBytes, a.args()...)
}

// SetMaxDynamicShared lets the kernel use up to bytes of dynamic shared
// memory (cuda.Context.SetMaxDynamicShared).
func (k Kernel[A]) SetMaxDynamicShared(c *cuda.Context, bytes int) error {
	return c.SetMaxDynamicShared(k.name, bytes)
}

// Named returns the kernel called name, whose arguments must be A: for a
// kernel chosen at run time among kernels of one argument struct (a
// family such as scan_{inclusive,exclusive}_…_u32). An unknown name, or a
// kernel of other arguments, is an error.
func Named[A Args](name string) (Kernel[A], error) {
	k, ok := byName[name]
	if !ok {
		return Kernel[A]{}, fmt.Errorf("launch: no kernel %q in the image", name)
	}
	typed, ok := k.(Kernel[A])
	if !ok {
		var a A
		return Kernel[A]{}, fmt.Errorf("launch: kernel %q does not take %T", name, a)
	}
	return typed, nil
}
