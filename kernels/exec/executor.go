package exec

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// EnvVar names the environment variable that selects the executor for tests
// and benchmarks: auto, cpu or gpu (default auto).
const EnvVar = cuda.DeviceEnv

// Executor runs data-parallel steps. Exactly one of the two forms holds:
// CUDA() returns a context (device buffers, kernel launches), or it returns
// nil and the work runs in Go over host slices with Workers() goroutines.
type Executor interface {
	// Name is "cpu" for the Go executor and the GPU's name otherwise.
	Name() string
	// CUDA returns the device context, or nil for the Go executor.
	CUDA() *cuda.Context
	// Workers is the number of goroutines the Go executor uses (1 on a GPU).
	Workers() int
	// Close releases the executor's resources.
	Close() error
}

type goExec struct{ workers int }

// Go returns the Go executor with the given number of worker goroutines
// (GOMAXPROCS when workers <= 0).
func Go(workers int) Executor {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &goExec{workers: workers}
}

func (g *goExec) Name() string        { return "cpu" }
func (g *goExec) CUDA() *cuda.Context { return nil }
func (g *goExec) Workers() int        { return g.workers }
func (g *goExec) Close() error        { return nil }

type cudaExec struct{ ctx *cuda.Context }

func (c *cudaExec) Name() string        { return c.ctx.Info().Name }
func (c *cudaExec) CUDA() *cuda.Context { return c.ctx }
func (c *cudaExec) Workers() int        { return 1 }
func (c *cudaExec) Close() error        { return c.ctx.Close() }

// GPU opens the CUDA executor on device 0. The error wraps cuda.ErrNoDriver,
// cuda.ErrNoDevice or cuda.ErrNoKernelImage with the reason.
func GPU() (Executor, error) {
	ctx, err := cuda.Open(0)
	if err != nil {
		return nil, err
	}
	return &cudaExec{ctx: ctx}, nil
}

// Open selects an executor by mode: "cpu" (Go), "gpu" (CUDA or an error) or
// "auto"/"" (CUDA when a device works, else Go). With auto, fallback is the
// reason the GPU was not used (nil when it was), for the caller to report once.
func Open(mode string) (ex Executor, fallback error, err error) {
	switch strings.ToLower(mode) {
	case "cpu", "go":
		return Go(0), nil, nil
	case "gpu", "cuda":
		ex, err := GPU()
		if err != nil {
			return nil, nil, fmt.Errorf("no usable GPU: %w", err)
		}
		return ex, nil, nil
	case "auto", "":
		ex, err := GPU()
		if err != nil {
			return Go(0), err, nil
		}
		return ex, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown device %q (want auto, cpu or gpu)", mode)
}

var (
	envOnce sync.Once
	envEx   Executor
	envErr  error
)

// FromEnv returns the executor chosen by $KDBUILD_DEVICE, opened once per
// process and shared. Tests use it; the error is non-nil only for a bad value
// or for gpu without a device.
func FromEnv() (Executor, error) {
	envOnce.Do(func() {
		envEx, _, envErr = Open(cuda.ReadEnv().Device)
	})
	return envEx, envErr
}

// TestGPU returns the CUDA executor for tests that need one, or a reason to
// skip: tests call t.Skip(reason) when ex is nil. It opens the device once
// per process (never in init).
func TestGPU() (ex Executor, skipReason string) {
	gpuOnce.Do(func() { gpuEx, gpuErr = GPU() })
	if gpuErr != nil {
		return nil, "no usable GPU: " + gpuErr.Error()
	}
	return gpuEx, ""
}

var (
	gpuOnce sync.Once
	gpuEx   Executor
	gpuErr  error
)

// IsNoGPU reports whether err says that no GPU could be used (as opposed to
// a failure on a working GPU).
func IsNoGPU(err error) bool {
	return errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) || errors.Is(err, cuda.ErrNoKernelImage)
}

// ErrOutOfMemory is what a device allocation that does not fit wraps
// (errors.Is), so that callers that split work to fit need not import the
// driver package.
var ErrOutOfMemory = cuda.ErrOutOfMemory
