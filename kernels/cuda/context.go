//go:build cgo && linux

package cuda

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
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
