//go:build cgo && linux

package cuda

import (
	"fmt"
	"math"
	"sort"
	"time"
)

func (c *Context) function(name string) (cFunction, error) {
	c.fnMu.Lock()
	defer c.fnMu.Unlock()
	if f, ok := c.fns[name]; ok {
		return f, nil
	}
	if err := c.module(); err != nil {
		return nil, err
	}
	f, r := moduleFunction(c.ctx, c.mod, name)
	if r != 0 {
		e := driverError("cuModuleGetFunction", name, r)
		if r == 500 { // CUDA_ERROR_NOT_FOUND
			return nil, fmt.Errorf("%w (is the image stale? run make kernels)", e)
		}
		return nil, e
	}
	c.fns[name] = f
	return f, nil
}

// SetMaxDynamicShared lets kernel launch with up to bytes of dynamic shared
// memory (needed above 48 KiB; at most Info().MaxSharedPerBlockOptin).
func (c *Context) SetMaxDynamicShared(kernel string, bytes int) error {
	if err := c.check(); err != nil {
		return err
	}
	f, err := c.function(kernel)
	if err != nil {
		return err
	}
	return driverError("cuFuncSetAttribute", kernel, funcSetMaxDynamicShared(c.ctx, f, bytes))
}

// Launch enqueues kernel on the default stream with grid × block threads
// and sharedBytes of dynamic shared memory. Each argument is passed by value
// as the kernel parameter of the matching C type: DevPtr (or anything with a
// Ptr() DevPtr method, such as *Buffer[T]) as a pointer, uint32 as unsigned
// int, int32 as int, uint64 as unsigned long long, int64 as long long,
// float32 as float, float64 as double. Go int and uint are refused: their
// size is not the C int's.
//
// Launches are queued on the host and handed to the driver together, in
// order, by Flush, by every call that must see their work (copies, memsets,
// events, Synchronize, freeing device memory) and when batchCap are queued:
// on the device machine a launch cost 4.0-4.5 µs from a C loop and
// 7.6-9.3 µs from Go with one cgo call each. A batch of 8 or more launches
// whose length was seen before runs as a launch graph (a chain of kernel
// nodes instantiated once per length, its nodes given each batch's kernels
// and arguments): 16 launches cost 43-46 µs that way against 70-75 µs one
// by one there. KDBUILD_CUDA_GRAPHS=0 (GraphsEnv) turns the graphs off; a
// number from 2 to 64 there sets the shortest batch run as a graph.
//
// Launch refuses a bad kernel name, argument or block shape at once; a
// launch the driver refuses is reported, naming the kernel, by the call
// that submitted it. Errors of the kernel's execution come back from a
// later call (Synchronize, a copy to the host) unless debugging is on, when
// Launch submits, synchronises and names the kernel that failed.
func (c *Context) Launch(kernel string, grid, block Dim3, sharedBytes uint32, args ...any) error {
	return c.launch(kernel, grid, block, sharedBytes, false, args...)
}

// LaunchDependent is Launch for a kernel that may start before the kernel
// queued before it ends: on sm_90 and later (with a driver of CUDA 12.0 or
// later, and PDLEnv not 0) it is a programmatic dependent launch, whose
// blocks the device may schedule as soon as every block of the kernel
// before has started, which hides the launch's latency (about 2 µs
// between two small kernels on an H200). The kernel must therefore wait
// for the kernel before it, at its start, before it reads anything that
// kernel writes: kd_pdl_enter in kernels/scan.cuh, which also lets the
// kernel after it start early. Elsewhere it is an ordinary launch, and
// kd_pdl_enter does nothing. Batches holding one are never run as launch
// graphs.
func (c *Context) LaunchDependent(kernel string, grid, block Dim3, sharedBytes uint32, args ...any) error {
	return c.launch(kernel, grid, block, sharedBytes, c.pdl, args...)
}

func (c *Context) launch(kernel string, grid, block Dim3, sharedBytes uint32, pdl bool, args ...any) error {
	if err := c.check(); err != nil {
		return err
	}
	if len(args) > maxArgs {
		return fmt.Errorf("cuda: launch %s: %d arguments, at most %d", kernel, len(args), maxArgs)
	}
	if t := uint64(block.X) * uint64(block.Y) * uint64(block.Z); t == 0 || t > maxBlockThreads ||
		grid.X == 0 || grid.Y == 0 || grid.Z == 0 {
		return fmt.Errorf("cuda: launch %s: grid %v of blocks %v (%d threads; a block holds 1 to %d)",
			kernel, grid, block, t, maxBlockThreads)
	}
	f, err := c.function(kernel)
	if err != nil {
		return err
	}
	debug := c.debug.Load()
	var t0 time.Time
	if debug {
		if err := c.flush(); err != nil {
			return err
		}
		if r := ctxSync(c.ctx); r != 0 {
			return fmt.Errorf("cuda: before launching %s, an earlier operation failed: %w", kernel, unprefixed{driverError("cuCtxSynchronize", "", r)})
		}
		t0 = time.Now()
	}
	c.argMu.Lock()
	if c.batch == nil { // closed meanwhile
		c.argMu.Unlock()
		return ErrClosed
	}
	c.batch.add(f, grid, block, sharedBytes, len(args), pdl)
	for i, a := range args {
		v, ok := argSlot(a)
		if !ok {
			c.batch.drop()
			c.argMu.Unlock()
			return fmt.Errorf("cuda: launch %s: argument %d has type %T (want DevPtr, uint32, int32, uint64, int64, float32 or float64)", kernel, i, a)
		}
		c.batch.setArg(i, v)
	}
	c.pending[c.batch.n-1] = queued{kernel: kernel, grid: grid, block: block, shared: sharedBytes}
	var ferr error
	if debug || c.batch.full() {
		ferr = c.flushLocked()
	}
	c.argMu.Unlock()
	if ferr != nil {
		return ferr
	}
	if debug {
		if r := ctxSync(c.ctx); r != 0 {
			return driverError("kernel execution", kernel, r)
		}
		c.addTime(kernel, time.Since(t0))
	}
	return nil
}

// maxBlockThreads is the most threads a block may have on every GPU the
// image targets.
const maxBlockThreads = 1024

// queued is what the error of a queued launch says about it.
type queued struct {
	kernel      string
	grid, block Dim3
	shared      uint32
}

// Flush hands the queued launches to the driver (see Launch) and returns
// the first launch error, naming its kernel. Code that queues work and then
// does host work before its next device call flushes first, so that the
// device starts meanwhile.
func (c *Context) Flush() error {
	if err := c.check(); err != nil {
		return err
	}
	return c.flush()
}

func (c *Context) flush() error {
	c.argMu.Lock()
	defer c.argMu.Unlock()
	return c.flushLocked()
}

// flushLocked submits the batch; the caller holds argMu.
func (c *Context) flushLocked() error {
	if c.batch == nil || c.batch.n == 0 {
		return nil
	}
	n := c.batch.n
	i, r := c.batch.submit(c.ctx)
	if r == 0 {
		return nil
	}
	q := c.pending[i]
	return fmt.Errorf("%w (grid %v, block %v, shared %d; queued launch %d of %d, the %d after it dropped)",
		driverError("cuLaunchKernel", q.kernel, r), q.grid, q.block, q.shared, i+1, n, n-i-1)
}

// ptrer is anything that knows its device address (Buffer[T], exec.Buf[T]).
type ptrer interface{ Ptr() DevPtr }

// argSlot puts one launch argument into a 64-bit slot, low bytes first.
func argSlot(a any) (uint64, bool) {
	switch v := a.(type) {
	case DevPtr:
		return uint64(v), true
	case uint32:
		return uint64(v), true
	case int32:
		return uint64(uint32(v)), true
	case uint64:
		return v, true
	case int64:
		return uint64(v), true
	case float32:
		return uint64(math.Float32bits(v)), true
	case float64:
		return math.Float64bits(v), true
	case ptrer:
		return uint64(v.Ptr()), true
	}
	return 0, false
}

// SetDebug turns debugging on or off: every launch is followed by a
// synchronisation, a failing kernel is named in the error, and time per
// kernel is accumulated (KernelTimes).
func (c *Context) SetDebug(on bool) { c.debug.Store(on) }

// Debug reports whether debugging is on.
func (c *Context) Debug() bool { return c.debug.Load() }

func (c *Context) addTime(kernel string, d time.Duration) {
	c.timesMu.Lock()
	kt := c.times[kernel]
	if kt == nil {
		kt = &KernelTime{Kernel: kernel}
		c.times[kernel] = kt
	}
	kt.Launches++
	kt.TotalMs += float64(d.Nanoseconds()) / 1e6
	c.timesMu.Unlock()
}

// KernelTimes returns the time accumulated per kernel while debugging was
// on, most expensive first.
func (c *Context) KernelTimes() []KernelTime {
	c.timesMu.Lock()
	out := make([]KernelTime, 0, len(c.times))
	for _, kt := range c.times {
		out = append(out, *kt)
	}
	c.timesMu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].TotalMs != out[j].TotalMs {
			return out[i].TotalMs > out[j].TotalMs
		}
		return out[i].Kernel < out[j].Kernel
	})
	return out
}

// ResetKernelTimes clears the accumulated kernel times.
func (c *Context) ResetKernelTimes() {
	c.timesMu.Lock()
	c.times = map[string]*KernelTime{}
	c.timesMu.Unlock()
}
