//go:build cgo && linux

package cuda

/*
#cgo LDFLAGS: -ldl
#include "driver_calls.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// Cgo reports whether this build has the driver binding (cgo on Linux).
// Without it every call returns ErrNoDriver.
const Cgo = true

// maxArgs is the most kernel arguments Launch accepts.
const maxArgs = C.KD_MAX_ARGS

var (
	loadOnce sync.Once
	loadErr  error // why the driver could not be opened or initialised
)

// load opens the driver library, resolves its calls and runs cuInit, once
// per process. The error wraps ErrNoDriver or ErrNoDevice with the reason.
func load() error {
	loadOnce.Do(func() {
		var buf [512]C.char
		switch C.kd_open(&buf[0], C.size_t(len(buf))) {
		case 0:
		default:
			loadErr = fmt.Errorf("%w: %s", ErrNoDriver, C.GoString(&buf[0]))
			return
		}
		if r := Result(C.kd_init()); r != 0 {
			e := driverError("cuInit", "", r)
			if r == resultNoDevice {
				loadErr = reason(ErrNoDevice, e)
			} else {
				loadErr = reason(ErrNoDriver, e)
			}
		}
	})
	return loadErr
}

// driverError builds the error for a failed driver call, with the driver's
// own description of the status when the library can give one.
func driverError(op, kernel string, r Result) error {
	if r == 0 {
		return nil
	}
	e := &Error{Op: op, Kernel: kernel, Code: r}
	if s := C.kd_error_string(C.CUresult(r)); s != nil {
		e.Detail = C.GoString(s)
	}
	return e
}

// driverName is the driver's name for r, or "" when it has none.
func driverName(r Result) string {
	if s := C.kd_error_name(C.CUresult(r)); s != nil {
		return C.GoString(s)
	}
	return ""
}

// DriverVersion returns the driver's CUDA version as major*1000+minor*10
// (12040 for 12.4).
func DriverVersion() (int, error) {
	if err := load(); err != nil && !errors.Is(err, ErrNoDevice) {
		return 0, err
	}
	var v C.int
	if r := Result(C.kd_driver_version(&v)); r != 0 {
		return 0, driverError("cuDriverGetVersion", "", r)
	}
	return int(v), nil
}

// deviceCount returns how many devices the driver sees.
func deviceCount() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var n C.int
	if r := Result(C.kd_device_count(&n)); r != 0 {
		return 0, reason(ErrNoDevice, driverError("cuDeviceGetCount", "", r))
	}
	return int(n), nil
}

// deviceInfo reads the attributes of one device.
func deviceInfo(ordinal int) (DeviceInfo, C.CUdevice, error) {
	info := DeviceInfo{Ordinal: ordinal}
	var dev C.CUdevice
	if r := Result(C.kd_device_get(&dev, C.int(ordinal))); r != 0 {
		return info, dev, driverError(fmt.Sprintf("cuDeviceGet(%d)", ordinal), "", r)
	}
	var name [256]C.char
	if r := Result(C.kd_device_name(&name[0], C.int(len(name)), dev)); r != 0 {
		return info, dev, driverError("cuDeviceGetName", "", r)
	}
	info.Name = C.GoString(&name[0])
	var mem C.size_t
	if r := Result(C.kd_device_mem(&mem, dev)); r != 0 {
		return info, dev, driverError("cuDeviceTotalMem", "", r)
	}
	info.TotalMem = uint64(mem)
	attrs := []struct {
		attr C.int
		dst  *int
	}{
		{C.KD_ATTR_SM_COUNT, &info.SMs},
		{C.KD_ATTR_CC_MAJOR, &info.Major},
		{C.KD_ATTR_CC_MINOR, &info.Minor},
		{C.KD_ATTR_L2_CACHE_SIZE, &info.L2Bytes},
		{C.KD_ATTR_MAX_SHARED_PER_BLOCK, &info.MaxSharedPerBlock},
		{C.KD_ATTR_MAX_SHARED_PER_BLOCK_OPTIN, &info.MaxSharedPerBlockOptin},
		{C.KD_ATTR_CLOCK_RATE, &info.ClockKHz},
		{C.KD_ATTR_MEM_CLOCK_RATE, &info.MemClockKHz},
		{C.KD_ATTR_MEM_BUS_WIDTH, &info.MemBusWidth},
	}
	for _, a := range attrs {
		var v C.int
		if r := Result(C.kd_device_attr(&v, a.attr, dev)); r != 0 {
			return info, dev, driverError(fmt.Sprintf("cuDeviceGetAttribute(%d)", int(a.attr)), "", r)
		}
		*a.dst = int(v)
	}
	return info, dev, nil
}

// The thin Go side of each context call; each returns the driver status.

type cContext = C.CUcontext
type cModule = C.CUmodule
type cFunction = C.CUfunction
type cEvent = C.CUevent
type cDevice = C.CUdevice

func retainPrimary(dev cDevice) (cContext, Result) {
	var ctx C.CUcontext
	r := Result(C.kd_retain(&ctx, dev))
	return ctx, r
}
func releasePrimary(dev cDevice) Result { return Result(C.kd_release(dev)) }

// setPrimaryFlags sets the primary context's flags (before it is
// retained); 801 (not supported) when the driver lacks the call.
func setPrimaryFlags(dev cDevice, flags uint32) Result {
	return Result(C.kd_set_flags(dev, C.uint(flags)))
}

func ctxSync(ctx cContext) Result { return Result(C.kd_sync(ctx)) }
func memInfo(ctx cContext) (free, total uint64, r Result) {
	var f, t C.size_t
	r = Result(C.kd_mem_info(ctx, &f, &t))
	return uint64(f), uint64(t), r
}

// moduleLoad copies the image into C memory and loads it. The copy is kept
// until moduleUnload (the driver may read the image after loading, with lazy
// loading) and returned for it.
func moduleLoad(ctx cContext, image []byte) (cModule, unsafe.Pointer, Result) {
	var m C.CUmodule
	if len(image) == 0 {
		return m, nil, resultInvalidImage
	}
	p := C.CBytes(image)
	r := Result(C.kd_module_load(ctx, &m, p))
	if r != 0 {
		C.free(p)
		return m, nil, r
	}
	return m, p, r
}

// moduleUnload unloads m and frees its image copy.
func moduleUnload(ctx cContext, m cModule, image unsafe.Pointer) Result {
	r := Result(C.kd_module_unload(ctx, m))
	C.free(image)
	return r
}
func moduleFunction(ctx cContext, m cModule, name string) (cFunction, Result) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	r := Result(C.kd_function(ctx, &f, m, cs))
	return f, r
}
func funcSetMaxDynamicShared(ctx cContext, f cFunction, bytes int) Result {
	return Result(C.kd_func_attr(ctx, f, C.KD_FUNC_ATTR_MAX_DYNAMIC_SHARED, C.int(bytes)))
}
func memAlloc(ctx cContext, n uint64) (DevPtr, Result) {
	var p C.CUdeviceptr
	r := Result(C.kd_alloc(ctx, &p, C.size_t(n)))
	return DevPtr(p), r
}
func memFree(ctx cContext, p DevPtr) Result { return Result(C.kd_free(ctx, C.CUdeviceptr(p))) }
func hostAlloc(ctx cContext, n uint64) (unsafe.Pointer, Result) {
	var p unsafe.Pointer
	r := Result(C.kd_host_alloc(ctx, &p, C.size_t(n)))
	return p, r
}
func hostFree(ctx cContext, p unsafe.Pointer) Result { return Result(C.kd_host_free(ctx, p)) }

// hostDevPtr is the device address of pinned host memory p (hostAlloc's).
func hostDevPtr(ctx cContext, p unsafe.Pointer) (DevPtr, Result) {
	var d C.CUdeviceptr
	r := Result(C.kd_host_dev_ptr(ctx, &d, p))
	return DevPtr(d), r
}
func memcpyHtoD(ctx cContext, dst DevPtr, src unsafe.Pointer, n uint64) Result {
	return Result(C.kd_htod(ctx, C.CUdeviceptr(dst), src, C.size_t(n)))
}
func memcpyDtoH(ctx cContext, dst unsafe.Pointer, src DevPtr, n uint64) Result {
	return Result(C.kd_dtoh(ctx, dst, C.CUdeviceptr(src), C.size_t(n)))
}
func memcpyHtoDAsync(ctx cContext, dst DevPtr, src unsafe.Pointer, n uint64) Result {
	return Result(C.kd_htod_async(ctx, C.CUdeviceptr(dst), src, C.size_t(n)))
}

func memcpyDtoHAsync(ctx cContext, dst unsafe.Pointer, src DevPtr, n uint64) Result {
	return Result(C.kd_dtoh_async(ctx, dst, C.CUdeviceptr(src), C.size_t(n)))
}
func memcpyDtoD(ctx cContext, dst, src DevPtr, n uint64) Result {
	return Result(C.kd_dtod(ctx, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
}
func memsetD8(ctx cContext, dst DevPtr, v byte, n uint64) Result {
	return Result(C.kd_memset8(ctx, C.CUdeviceptr(dst), C.uchar(v), C.size_t(n)))
}
func memsetD32(ctx cContext, dst DevPtr, v uint32, n uint64) Result {
	return Result(C.kd_memset32(ctx, C.CUdeviceptr(dst), C.uint(v), C.size_t(n)))
}
func eventCreate(ctx cContext, flags uint32) (cEvent, Result) {
	var e C.CUevent
	r := Result(C.kd_event_create(ctx, &e, C.uint(flags)))
	return e, r
}
func eventRecord(ctx cContext, e cEvent) Result  { return Result(C.kd_event_record(ctx, e)) }
func eventSync(ctx cContext, e cEvent) Result    { return Result(C.kd_event_sync(ctx, e)) }
func eventDestroy(ctx cContext, e cEvent) Result { return Result(C.kd_event_destroy(ctx, e)) }
func eventElapsed(ctx cContext, a, b cEvent) (float32, Result) {
	var ms C.float
	r := Result(C.kd_event_elapsed(ctx, &ms, a, b))
	return float32(ms), r
}

// launchBatch is a queue of launches in C memory, submitted by one cgo
// call (launchBatch.submit). Not safe for concurrent use.
type launchBatch struct {
	recs   *[batchCap]C.kd_launch_rec
	n      int
	graphs *C.kd_graphs // the launch graphs by batch length (nil: none)
}

// pdlAvailable reports whether the driver has cuLaunchKernelEx (CUDA 12.0
// on), which programmatic dependent launches need.
func pdlAvailable() bool { return C.kd_pdl_available() != 0 }

// batchCap is the most launches a batch holds.
const batchCap = C.KD_MAX_BATCH

// newLaunchBatch makes an empty batch; with graphs (graphMin > 0),
// repeated batch lengths of graphMin launches or more (below 2: the
// default, KD_GRAPH_MIN) are launched as graphs (kd_launch_graph).
func newLaunchBatch(graphMin int) *launchBatch {
	b := &launchBatch{recs: (*[batchCap]C.kd_launch_rec)(C.calloc(batchCap, C.size_t(unsafe.Sizeof(C.kd_launch_rec{}))))}
	if graphMin > 0 && C.kd_graphs_available() != 0 {
		b.graphs = C.kd_graphs_new(C.int(graphMin))
	}
	return b
}

// free releases the batch and its graphs (ctx is the context they were
// made in).
func (b *launchBatch) free(ctx cContext) {
	C.kd_graphs_free(ctx, b.graphs)
	C.free(unsafe.Pointer(b.recs))
	b.recs, b.n, b.graphs = nil, 0, nil
}

// full reports whether the batch can take no more launches.
func (b *launchBatch) full() bool { return b.n == batchCap }

// add queues a launch whose argument values are set with setArg, in the
// same order, before the next add or submit.
func (b *launchBatch) add(f cFunction, grid, block Dim3, shared uint32, nargs int, pdl bool) {
	l := &b.recs[b.n]
	l.f = f
	l.pdl = 0
	if pdl {
		l.pdl = 1
	}
	l.gx, l.gy, l.gz = C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z)
	l.bx, l.by, l.bz = C.uint(block.X), C.uint(block.Y), C.uint(block.Z)
	l.shared, l.nargs = C.uint(shared), C.int(nargs)
	b.n++
}

// setArg sets argument i of the launch queued last.
func (b *launchBatch) setArg(i int, v uint64) { b.recs[b.n-1].vals[i] = C.ulonglong(v) }

// drop forgets the launch queued last (its arguments were refused).
func (b *launchBatch) drop() { b.n-- }

// submit launches the queued launches in order and empties the batch. On
// a failure the launches from the failing one on are dropped; failed is
// its index.
func (b *launchBatch) submit(ctx cContext) (failed int, r Result) {
	if b.n == 0 {
		return 0, 0
	}
	var f C.int
	r = Result(C.kd_launch_batch(ctx, b.graphs, &b.recs[0], C.int(b.n), &f))
	b.n = 0
	return int(f), r
}
