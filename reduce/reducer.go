package reduce

import (
	"fmt"
	"sync"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// Reducer holds the device scratch the reductions of one executor need
// (partial results, the global work array of Reduce0/Reduce1, the
// last-block-done counters and a result slot), so that repeated reductions
// allocate nothing: scratch grows to the largest input seen and is reused.
//
// The package-level functions (Min, Max, SegmentedMin, ...) use one Reducer
// per executor, created on first use and kept until Release. A Reducer
// serialises its calls with a mutex; all its kernels go to the default
// stream, in order, so asynchronous calls (the segmented ones) may reuse the
// scratch without waiting. On the Go executor a Reducer holds nothing.
type Reducer struct {
	ex  exec.Executor
	ctx *cuda.Context
	sms int

	mu      sync.Mutex
	part    [2]*exec.Buf[float32] // ping-pong partial results of multi-pass designs
	work    *exec.Buf[uint32]     // Reduce0/Reduce1 in-place work array; long-segment list
	counter *exec.Buf[uint32]     // last-block-done counters, zero between launches
	result  *exec.Buf[float32]    // device result slots
	dirty   bool                  // a launch or read-back failed: reset the counters before the next launch
	host    []float32             // host copy of the result slots (its own allocation: cgo may not see Go pointers next to it)
}

// Counter slots: one per one-pass kernel family. The one-pass kernels (r7,
// Bounds) reset their counter in the block that finishes last; should a
// launch or a later read-back fail, the Reducer is marked dirty and every
// counter is set to 0 by a memset before its next launch. The segmented
// kernels' two counters are set to 0 by a memset before every call.
const (
	ctrMin = iota
	ctrMax
	ctrMinMax
	ctrBounds
	ctrSegCount // long-segment count of the segmented kernels
	ctrSegDone  // their finished-block count (must follow ctrSegCount)
	ctrSegTiles // tile count of the AoS box kernels (must follow ctrSegDone)
	numCounters
)

// NewReducer returns a Reducer for ex. It allocates nothing until needed.
func NewReducer(ex exec.Executor) *Reducer {
	r := &Reducer{ex: ex, ctx: ex.CUDA(), host: make([]float32, 8)}
	if r.ctx != nil {
		r.sms = r.ctx.Info().SMs
	}
	if r.sms <= 0 {
		r.sms = 132
	}
	return r
}

// Free releases the scratch. The Reducer stays usable (it allocates again).
func (r *Reducer) Free() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.freeLocked()
}

func (r *Reducer) freeLocked() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(r.part[0].Free())
	keep(r.part[1].Free())
	keep(r.work.Free())
	keep(r.counter.Free())
	keep(r.result.Free())
	r.part = [2]*exec.Buf[float32]{}
	r.work, r.counter, r.result = nil, nil, nil
	return first
}

// ensureF32 makes *b hold at least n elements (reallocating, contents lost).
func ensureF32(ex exec.Executor, b **exec.Buf[float32], n int) error {
	if *b != nil && (*b).Len() >= n {
		return nil
	}
	if err := retire(ex, *b); err != nil {
		return err
	}
	*b = nil
	nb, err := exec.Alloc[float32](ex, grow(n))
	if err != nil {
		return fmt.Errorf("reduce: scratch of %d floats: %w", n, err)
	}
	*b = nb
	return nil
}

func ensureU32(ex exec.Executor, b **exec.Buf[uint32], n int) error {
	if *b != nil && (*b).Len() >= n {
		return nil
	}
	if err := retire(ex, *b); err != nil {
		return err
	}
	*b = nil
	nb, err := exec.Alloc[uint32](ex, grow(n))
	if err != nil {
		return fmt.Errorf("reduce: scratch of %d words: %w", n, err)
	}
	*b = nb
	return nil
}

// retire frees a scratch buffer that queued kernels may still use: it waits
// for the device first (growth is rare, so the wait is too).
func retire[T float32 | uint32](ex exec.Executor, b *exec.Buf[T]) error {
	if b == nil {
		return nil
	}
	if ctx := ex.CUDA(); ctx != nil && b.OnDevice() {
		if err := ctx.Synchronize(); err != nil {
			return err
		}
	}
	return b.Free()
}

// grow rounds a scratch request up so that slowly growing inputs do not
// reallocate every time.
func grow(n int) int {
	g := 1024
	for g < n {
		g += g / 2
	}
	return g
}

// fixed allocates the counters and the result slot once.
func (r *Reducer) fixed() error {
	if r.counter == nil {
		c, err := exec.Alloc[uint32](r.ex, numCounters)
		if err != nil {
			return fmt.Errorf("reduce: counters: %w", err)
		}
		if err := c.Dev().Memset32(0); err != nil {
			c.Free()
			return fmt.Errorf("reduce: counters: %w", err)
		}
		r.counter = c
	} else if r.dirty {
		if err := r.counter.Dev().Memset32(0); err != nil {
			return fmt.Errorf("reduce: resetting the counters: %w", err)
		}
	}
	r.dirty = false
	if r.result == nil {
		b, err := exec.Alloc[float32](r.ex, len(r.host))
		if err != nil {
			return fmt.Errorf("reduce: result slot: %w", err)
		}
		r.result = b
	}
	return nil
}

// launchTyped enqueues k with a (no dynamic shared memory); a failure
// marks the counters for a reset. r.mu must be held.
func launchTyped[A launch.Args](r *Reducer, k launch.Kernel[A], grid, block cuda.Dim3, a A) error {
	err := k.Launch(r.ctx, grid, block, 0, a)
	if err != nil {
		r.dirty = true
	}
	return err
}

// launch enqueues kernel by name with untyped arguments, for the
// reduction designs whose kernels differ in an unnamed parameter
// (launchTyped otherwise).
func (r *Reducer) launch(kernel string, grid, block cuda.Dim3, args ...any) error {
	err := r.ctx.Launch(kernel, grid, block, 0, args...)
	if err != nil {
		r.dirty = true
	}
	return err
}

var (
	cacheMu sync.Mutex
	cache   = map[*cuda.Context]*Reducer{}
)

// reducerFor returns the shared Reducer of ex (a fresh empty one for the Go
// executor, which needs no scratch).
func reducerFor(ex exec.Executor) *Reducer {
	ctx := ex.CUDA()
	if ctx == nil {
		return &Reducer{ex: ex}
	}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	r := cache[ctx]
	if r == nil {
		r = NewReducer(ex)
		cache[ctx] = r
	}
	return r
}

// Release frees the scratch the package-level functions keep for ex. Call
// it before closing a CUDA executor; later calls allocate again.
func Release(ex exec.Executor) error {
	ctx := ex.CUDA()
	if ctx == nil {
		return nil
	}
	cacheMu.Lock()
	r := cache[ctx]
	delete(cache, ctx)
	cacheMu.Unlock()
	if r == nil {
		return nil
	}
	return r.Free()
}
