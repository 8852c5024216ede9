//go:build cgo && linux

package cuda

import (
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels"
)

// Context is an opened device: its primary context, the kernel module loaded
// from the embedded image, and the bookkeeping of allocations. Its methods
// may be called from any goroutine; each makes the context current on the
// calling thread inside the same driver call.
type Context struct {
	ctx    cContext
	dev    cDevice
	info   DeviceInfo
	closed atomic.Bool

	modOnce  sync.Once
	mod      cModule
	modImage unsafe.Pointer // C copy of the image, freed with the module
	modErr   error

	fnMu sync.Mutex
	fns  map[string]cFunction

	// Launches are queued and submitted together (launchBatch in
	// driver.go): by Flush, by any call that must see their work (copies,
	// memsets, events, Synchronize, freeing memory) and when the queue is
	// full.
	argMu   sync.Mutex
	batch   *launchBatch     // guarded by argMu; nil once closed
	pending [batchCap]queued // what batch holds, for errors

	memMu       sync.Mutex
	sizes       map[DevPtr]uint64
	current     uint64
	peak        uint64
	cache       []memBlock // freed blocks kept for reuse (memcache.go)
	cachedBytes uint64
	cacheLimit  uint64

	debug   atomic.Bool
	pdl     bool // LaunchDependent launches programmatically (see there)
	timesMu sync.Mutex
	times   map[string]*KernelTime

	stageMu  sync.Mutex
	stage    unsafe.Pointer // pinned staging buffers of large device-to-host copies (staging.go)
	stageBad bool           // pinned memory could not be had: copy directly

	pinMu  sync.Mutex
	pinned []*Pinned // blocks given back to PutPinned (pinned.go)
	evMu   sync.Mutex
	events []*Event // sync events given back to PutEvent
}

// Event is a CUDA event on the default stream, for timing.
type Event struct {
	c    *Context
	ev   cEvent
	sync bool // NewSyncEvent's: no timing
}

// Devices lists every GPU the driver sees. A device the kernel image cannot
// run on is listed with Usable false and Problem saying why. The error wraps
// ErrNoDriver or ErrNoDevice when there is nothing to list.
func Devices() ([]DeviceInfo, error) {
	n, err := deviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		info, _, err := deviceInfo(i)
		if err != nil {
			info.Problem = err
		} else {
			info.Problem = imageProblem(info)
		}
		info.Usable = info.Problem == nil
		out = append(out, info)
	}
	return out, nil
}

// minMajor is the oldest compute capability the kernel image targets.
const minMajor = 7

// imageProblem says why the embedded image cannot run on a device, as far
// as can be told without loading it.
func imageProblem(info DeviceInfo) error {
	if len(kernels.Image) == 0 {
		return fmt.Errorf("%w: the embedded kernel image is empty (run make kernels)", ErrNoKernelImage)
	}
	if info.Major < minMajor {
		return fmt.Errorf("%w: compute capability %d.%d is below %d.0, the oldest the image targets",
			ErrNoKernelImage, info.Major, info.Minor, minMajor)
	}
	return nil
}

// Open retains the primary context of device ordinal and loads the kernel
// image. The error wraps ErrNoDriver, ErrNoDevice or ErrNoKernelImage with
// the reason. Debugging starts on when $KDBUILD_CUDA_DEBUG is 1.
func Open(ordinal int) (*Context, error) {
	n, err := deviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver found no CUDA device", ErrNoDevice)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("%w: device %d requested, the driver found %d", ErrNoDevice, ordinal, n)
	}
	info, dev, err := deviceInfo(ordinal)
	if err != nil {
		return nil, reason(ErrNoDevice, err)
	}
	if p := imageProblem(info); p != nil {
		return nil, fmt.Errorf("device %d (%s): %w", ordinal, info.Name, p)
	}
	env := ReadEnv()
	if f, ok := map[string]uint32{"spin": 1, "yield": 2, "block": 4}[env.Sched]; ok {
		// Refused once the primary context is active (another Context of
		// the device): it keeps the flags it has.
		setPrimaryFlags(dev, f)
	}
	ctx, r := retainPrimary(dev)
	if r != 0 {
		return nil, reason(ErrNoDevice, driverError("cuDevicePrimaryCtxRetain", "", r))
	}
	info.Usable = true
	c := &Context{ctx: ctx, dev: dev, info: info, fns: map[string]cFunction{}, sizes: map[DevPtr]uint64{},
		times: map[string]*KernelTime{}, batch: newLaunchBatch(graphMin(env.Graphs)), cacheLimit: info.TotalMem / 4}
	if env.Debug == "1" {
		c.debug.Store(true)
	}
	c.pdl = info.Major >= 9 && env.PDL != "0" && pdlAvailable()
	if err := c.module(); err != nil {
		c.batch.free(ctx)
		releasePrimary(dev)
		return nil, fmt.Errorf("device %d (%s): %w", ordinal, info.Name, err)
	}
	return c, nil
}

// module loads the embedded image once; later calls return the same result.
func (c *Context) module() error {
	c.modOnce.Do(func() {
		image := kernels.Image
		if path := ReadEnv().Image; path != "" {
			b, err := os.ReadFile(path)
			if err != nil {
				c.modErr = fmt.Errorf("cuda: %s: %w", ImageEnv, err)
				return
			}
			image = b
		}
		m, img, r := moduleLoad(c.ctx, image)
		if r != 0 {
			e := driverError("cuModuleLoadData", "", r)
			if r.Is(ErrNoKernelImage) {
				c.modErr = reason(ErrNoKernelImage, e)
			} else {
				c.modErr = e
			}
			return
		}
		c.mod, c.modImage = m, img
	})
	return c.modErr
}

// Info describes the device.
func (c *Context) Info() DeviceInfo { return c.info }

// Close unloads the module and releases the primary context. Device memory
// still allocated is the owners' to free before; calls after Close return
// ErrClosed. Close is idempotent.
func (c *Context) Close() error {
	if c == nil || c.closed.Swap(true) {
		return nil
	}
	err := c.flush()
	if e := c.trimCache(0); e != nil && err == nil {
		err = e
	}
	// The launch graphs hold the module's kernels: freed before it.
	c.argMu.Lock()
	c.batch.free(c.ctx)
	c.batch = nil
	c.argMu.Unlock()
	if c.mod != nil {
		if r := moduleUnload(c.ctx, c.mod, c.modImage); r != 0 && err == nil {
			err = driverError("cuModuleUnload", "", r)
		}
	}
	if r := c.freePinned(); r != 0 && err == nil {
		err = driverError("cuMemFreeHost", "", r)
	}
	if r := c.freeEvents(); r != 0 && err == nil {
		err = driverError("cuEventDestroy", "", r)
	}
	if r := c.freeStaging(); r != 0 && err == nil {
		err = driverError("cuMemFreeHost", "", r)
	}
	if r := releasePrimary(c.dev); r != 0 && err == nil {
		err = driverError("cuDevicePrimaryCtxRelease", "", r)
	}
	return err
}

func (c *Context) check() error {
	if c.closed.Load() {
		return ErrClosed
	}
	return nil
}

// ready is check, then the queued launches submitted: the calls that must
// come after them on the stream (copies, memsets, events, Synchronize)
// start with it.
func (c *Context) ready() error {
	if err := c.check(); err != nil {
		return err
	}
	return c.flush()
}

// Synchronize waits for all work queued on the device. Errors of earlier
// asynchronous launches come back here.
func (c *Context) Synchronize() error {
	if err := c.ready(); err != nil {
		return err
	}
	return driverError("cuCtxSynchronize", "", ctxSync(c.ctx))
}

// MemInfo returns the device memory free and in total.
func (c *Context) MemInfo() (free, total uint64, err error) {
	if err := c.check(); err != nil {
		return 0, 0, err
	}
	f, t, r := memInfo(c.ctx)
	return f, t, driverError("cuMemGetInfo", "", r)
}

// Alloc allocates bytes of device memory (uninitialised), reusing a cached
// block of that size when there is one (memcache.go). A request the device
// cannot satisfy, even with the cache released, returns an error wrapping
// ErrOutOfMemory that says how much was asked and how much is free.
// Alloc(0) returns 0.
func (c *Context) Alloc(bytes uint64) (DevPtr, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	if bytes == 0 {
		return 0, nil
	}
	c.memMu.Lock()
	p := c.takeCached(bytes)
	c.memMu.Unlock()
	var r Result
	if p == 0 {
		p, r = memAlloc(c.ctx, bytes)
		if r == resultOutOfMemory && c.CachedBytes() > 0 {
			if err := c.FreeCache(); err != nil {
				return 0, err
			}
			p, r = memAlloc(c.ctx, bytes)
		}
	}
	if r != 0 {
		e := driverError("cuMemAlloc", "", r)
		if r == resultOutOfMemory {
			free, total, _ := memInfo(c.ctx)
			return 0, fmt.Errorf("cuda: allocating %d bytes (%s) with %s free of %s: %w",
				bytes, human(bytes), human(free), human(total), unprefixed{e})
		}
		return 0, fmt.Errorf("cuda: allocating %d bytes: %w", bytes, unprefixed{e})
	}
	c.memMu.Lock()
	c.sizes[p] = bytes
	c.current += bytes
	if c.current > c.peak {
		c.peak = c.current
	}
	c.memMu.Unlock()
	return p, nil
}

// FreePtr releases memory from Alloc: into the cache (memcache.go) while
// it has room, else to the driver. Freeing 0 does nothing.
func (c *Context) FreePtr(p DevPtr) error {
	if p == 0 {
		return nil
	}
	if err := c.check(); err != nil {
		return err
	}
	c.memMu.Lock()
	bytes, ok := c.sizes[p]
	kept := ok && c.keep(p, bytes)
	c.memMu.Unlock()
	if !kept {
		// Queued launches may use p: they go first.
		if err := c.flush(); err != nil {
			return err
		}
		if r := memFree(c.ctx, p); r != 0 {
			return driverError("cuMemFree", "", r)
		}
	}
	c.memMu.Lock()
	c.current -= bytes
	delete(c.sizes, p)
	c.memMu.Unlock()
	return nil
}

// AllocatedBytes returns the bytes allocated through this context and not
// yet freed.
func (c *Context) AllocatedBytes() uint64 {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	return c.current
}

// PeakBytes returns the most bytes allocated at once since Open or the last
// ResetPeak.
func (c *Context) PeakBytes() uint64 {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	return c.peak
}

// ResetPeak sets the peak to the bytes allocated now.
func (c *Context) ResetPeak() {
	c.memMu.Lock()
	c.peak = c.current
	c.memMu.Unlock()
}

// HostAlloc allocates page-locked host memory of n bytes for fast copies; it
// must be released with HostFree (never by the garbage collector).
func (c *Context) HostAlloc(bytes uint64) (unsafe.Pointer, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	p, r := hostAlloc(c.ctx, bytes)
	if r != 0 {
		return nil, fmt.Errorf("cuda: allocating %d bytes of pinned host memory: %w", bytes, unprefixed{driverError("cuMemHostAlloc", "", r)})
	}
	return p, nil
}

// HostFree releases memory from HostAlloc; nil does nothing.
func (c *Context) HostFree(p unsafe.Pointer) error {
	if p == nil {
		return nil
	}
	if err := c.check(); err != nil {
		return err
	}
	return driverError("cuMemFreeHost", "", hostFree(c.ctx, p))
}

func (c *Context) htod(dst DevPtr, src unsafe.Pointer, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	if n >= stageMin {
		if ok, err := c.htodStaged(dst, src, n); ok {
			return err
		}
	}
	return driverError("cuMemcpyHtoD", "", memcpyHtoD(c.ctx, dst, src, n))
}

func (c *Context) dtoh(dst unsafe.Pointer, src DevPtr, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	if n >= stageMin {
		if ok, err := c.dtohStaged(dst, src, n); ok {
			return err
		}
	}
	return driverError("cuMemcpyDtoH", "", memcpyDtoH(c.ctx, dst, src, n))
}

func (c *Context) dtod(dst, src DevPtr, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	return driverError("cuMemcpyDtoD", "", memcpyDtoD(c.ctx, dst, src, n))
}

func (c *Context) memsetD8(dst DevPtr, v byte, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	return driverError("cuMemsetD8", "", memsetD8(c.ctx, dst, v, n))
}

func (c *Context) memsetD32(dst DevPtr, v uint32, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	return driverError("cuMemsetD32", "", memsetD32(c.ctx, dst, v, n))
}

// CopyDtoD copies bytes device to device on the default stream.
func (c *Context) CopyDtoD(dst, src DevPtr, bytes uint64) error {
	if bytes == 0 {
		return nil
	}
	return c.dtod(dst, src, bytes)
}

// NewEvent creates an event for timing work on the default stream.
func (c *Context) NewEvent() (*Event, error) { return c.newEvent(0) }

// NewSyncEvent creates an event only to wait for (Synchronize): one that
// records no time, which the driver records and waits for at less cost.
// Elapsed refuses it.
func (c *Context) NewSyncEvent() (*Event, error) { return c.newEvent(2) } // CU_EVENT_DISABLE_TIMING

func (c *Context) newEvent(flags uint32) (*Event, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	e, r := eventCreate(c.ctx, flags)
	if r != 0 {
		return nil, driverError("cuEventCreate", "", r)
	}
	return &Event{c: c, ev: e, sync: flags == 2}, nil
}

// SyncEvent is NewSyncEvent reusing an event that PutEvent gave back when
// there is one: creating and destroying an event are driver calls of a
// few microseconds each on the device machine, and a build uses the same
// few again and again. Its last record may already have happened: record
// it before waiting for it.
func (c *Context) SyncEvent() (*Event, error) {
	c.evMu.Lock()
	if n := len(c.events); n > 0 {
		e := c.events[n-1]
		c.events = c.events[:n-1]
		c.evMu.Unlock()
		return e, nil
	}
	c.evMu.Unlock()
	return c.NewSyncEvent()
}

// PutEvent gives e back: a sync event is kept for SyncEvent (destroyed by
// Close), any other destroyed. e must not be used afterwards.
func (c *Context) PutEvent(e *Event) error {
	if e == nil || e.ev == nil {
		return nil
	}
	if !e.sync || c.closed.Load() {
		return e.Destroy()
	}
	c.evMu.Lock()
	c.events = append(c.events, e)
	c.evMu.Unlock()
	return nil
}

// freeEvents destroys the events PutEvent kept (Close).
func (c *Context) freeEvents() Result {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	var first Result
	for _, e := range c.events {
		if r := eventDestroy(c.ctx, e.ev); r != 0 && first == 0 {
			first = r
		}
		e.ev = nil
	}
	c.events = nil
	return first
}

// Record enqueues the event on the default stream.
func (e *Event) Record() error {
	if err := e.c.ready(); err != nil {
		return err
	}
	return driverError("cuEventRecord", "", eventRecord(e.c.ctx, e.ev))
}

// Synchronize waits until the event has happened. It submits nothing: the
// launches before the event were submitted when it was recorded, and
// those queued since (by another goroutine, say) stay queued.
func (e *Event) Synchronize() error {
	if err := e.c.check(); err != nil {
		return err
	}
	return driverError("cuEventSynchronize", "", eventSync(e.c.ctx, e.ev))
}

// Destroy releases the event; it is idempotent.
func (e *Event) Destroy() error {
	if e == nil || e.ev == nil || e.c.closed.Load() {
		return nil
	}
	r := eventDestroy(e.c.ctx, e.ev)
	e.ev = nil
	return driverError("cuEventDestroy", "", r)
}

// Elapsed returns the milliseconds between two recorded events.
func Elapsed(start, end *Event) (float32, error) {
	if err := start.c.check(); err != nil {
		return 0, err
	}
	ms, r := eventElapsed(start.c.ctx, start.ev, end.ev)
	return ms, driverError("cuEventElapsedTime", "", r)
}

// function returns the named kernel of the image, resolved once and cached.
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
