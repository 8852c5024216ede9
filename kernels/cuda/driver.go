//go:build cgo && linux

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver.h"

// The driver's call table, filled once by kd_open.
#define KD_FIELD(name, params) CUresult (*name) params;
static struct { KD_DRIVER_CALLS(KD_FIELD) } kd;
static struct { KD_GRAPH_CALLS(KD_FIELD) } kdg; // all set, or all NULL
static struct { KD_PDL_CALLS(KD_FIELD) } kdp; // each set, or NULL
#undef KD_FIELD

// kd_open opens libcuda.so.1 and resolves every call. It returns 0, or 1 when
// dlopen failed, or 2 when a symbol is missing; err then holds the reason.
static int kd_open(char *err, size_t errlen) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "dlopen libcuda.so.1: %s", e ? e : "unknown error");
		return 1;
	}
	void *sym;
#define KD_RESOLVE(name, params) \
	sym = dlsym(lib, #name); \
	if (sym == NULL) { \
		const char *e = dlerror(); \
		snprintf(err, errlen, "dlsym %s: %s", #name, e ? e : "not found"); \
		memset(&kd, 0, sizeof kd); \
		dlclose(lib); \
		return 2; \
	} \
	memcpy(&kd.name, &sym, sizeof sym);
	KD_DRIVER_CALLS(KD_RESOLVE)
#undef KD_RESOLVE
	int graphs = 1;
#define KD_RESOLVE_OPT(name, params) \
	sym = dlsym(lib, #name); \
	if (sym == NULL) graphs = 0; \
	memcpy(&kdg.name, &sym, sizeof sym);
	KD_GRAPH_CALLS(KD_RESOLVE_OPT)
#undef KD_RESOLVE_OPT
	if (!graphs) memset(&kdg, 0, sizeof kdg);
#define KD_RESOLVE_EACH(name, params) \
	sym = dlsym(lib, #name); \
	memcpy(&kdp.name, &sym, sizeof sym);
	KD_PDL_CALLS(KD_RESOLVE_EACH)
#undef KD_RESOLVE_EACH
	return 0;
}

// Every call that touches a context makes it current on the calling thread
// first, inside the same cgo call, so goroutines may migrate between threads.
#define KD_WITH(ctx, call) do { CUresult r_ = kd.cuCtxSetCurrent(ctx); if (r_ != 0) return r_; return call; } while (0)

static CUresult kd_init(void) { return kd.cuInit(0); }
static CUresult kd_driver_version(int *v) { return kd.cuDriverGetVersion(v); }
static CUresult kd_device_count(int *n) { return kd.cuDeviceGetCount(n); }
static CUresult kd_device_get(CUdevice *d, int ordinal) { return kd.cuDeviceGet(d, ordinal); }
static CUresult kd_device_name(char *name, int len, CUdevice d) { return kd.cuDeviceGetName(name, len, d); }
static CUresult kd_device_attr(int *v, int attr, CUdevice d) { return kd.cuDeviceGetAttribute(v, attr, d); }
static CUresult kd_device_mem(size_t *bytes, CUdevice d) { return kd.cuDeviceTotalMem_v2(bytes, d); }
static CUresult kd_retain(CUcontext *ctx, CUdevice d) { return kd.cuDevicePrimaryCtxRetain(ctx, d); }
static CUresult kd_release(CUdevice d) { return kd.cuDevicePrimaryCtxRelease_v2(d); }
static CUresult kd_set_flags(CUdevice d, unsigned int flags) {
	return kdp.cuDevicePrimaryCtxSetFlags_v2 != NULL ? kdp.cuDevicePrimaryCtxSetFlags_v2(d, flags) : 801; // CUDA_ERROR_NOT_SUPPORTED
}
static CUresult kd_sync(CUcontext ctx) { KD_WITH(ctx, kd.cuCtxSynchronize()); }
static CUresult kd_mem_info(CUcontext ctx, size_t *free, size_t *total) { KD_WITH(ctx, kd.cuMemGetInfo_v2(free, total)); }
static CUresult kd_module_load(CUcontext ctx, CUmodule *m, const void *image) { KD_WITH(ctx, kd.cuModuleLoadData(m, image)); }
static CUresult kd_module_unload(CUcontext ctx, CUmodule m) { KD_WITH(ctx, kd.cuModuleUnload(m)); }
static CUresult kd_function(CUcontext ctx, CUfunction *f, CUmodule m, const char *name) { KD_WITH(ctx, kd.cuModuleGetFunction(f, m, name)); }
static CUresult kd_func_attr(CUcontext ctx, CUfunction f, int attr, int v) { KD_WITH(ctx, kd.cuFuncSetAttribute(f, attr, v)); }
static CUresult kd_alloc(CUcontext ctx, CUdeviceptr *p, size_t n) { KD_WITH(ctx, kd.cuMemAlloc_v2(p, n)); }
static CUresult kd_free(CUcontext ctx, CUdeviceptr p) { KD_WITH(ctx, kd.cuMemFree_v2(p)); }
// Pinned host memory is mapped into the device's address space
// (CU_MEMHOSTALLOC_DEVICEMAP), so that kernels may write into it (Pinned.Dev).
static CUresult kd_host_alloc(CUcontext ctx, void **p, size_t n) { KD_WITH(ctx, kd.cuMemHostAlloc(p, n, 0x02)); }
static CUresult kd_host_dev_ptr(CUcontext ctx, CUdeviceptr *dp, void *p) {
	if (kdp.cuMemHostGetDevicePointer_v2 == NULL) return 801; // CUDA_ERROR_NOT_SUPPORTED
	KD_WITH(ctx, kdp.cuMemHostGetDevicePointer_v2(dp, p, 0));
}
static CUresult kd_host_free(CUcontext ctx, void *p) { KD_WITH(ctx, kd.cuMemFreeHost(p)); }
static CUresult kd_htod(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n) { KD_WITH(ctx, kd.cuMemcpyHtoD_v2(dst, src, n)); }
static CUresult kd_dtoh(CUcontext ctx, void *dst, CUdeviceptr src, size_t n) { KD_WITH(ctx, kd.cuMemcpyDtoH_v2(dst, src, n)); }
static CUresult kd_dtoh_async(CUcontext ctx, void *dst, CUdeviceptr src, size_t n) { KD_WITH(ctx, kd.cuMemcpyDtoHAsync_v2(dst, src, n, NULL)); }
static CUresult kd_htod_async(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n) { KD_WITH(ctx, kd.cuMemcpyHtoDAsync_v2(dst, src, n, NULL)); }
static CUresult kd_dtod(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n) { KD_WITH(ctx, kd.cuMemcpyDtoD_v2(dst, src, n)); }
static CUresult kd_memset8(CUcontext ctx, CUdeviceptr dst, unsigned char v, size_t n) { KD_WITH(ctx, kd.cuMemsetD8_v2(dst, v, n)); }
static CUresult kd_memset32(CUcontext ctx, CUdeviceptr dst, unsigned int v, size_t n) { KD_WITH(ctx, kd.cuMemsetD32_v2(dst, v, n)); }
static CUresult kd_event_create(CUcontext ctx, CUevent *e, unsigned int flags) { KD_WITH(ctx, kd.cuEventCreate(e, flags)); }
static CUresult kd_event_record(CUcontext ctx, CUevent e) { KD_WITH(ctx, kd.cuEventRecord(e, NULL)); }
static CUresult kd_event_sync(CUcontext ctx, CUevent e) { KD_WITH(ctx, kd.cuEventSynchronize(e)); }
static CUresult kd_event_elapsed(CUcontext ctx, float *ms, CUevent a, CUevent b) { KD_WITH(ctx, kd.cuEventElapsedTime(ms, a, b)); }
static CUresult kd_event_destroy(CUcontext ctx, CUevent e) { KD_WITH(ctx, kd.cuEventDestroy_v2(e)); }

// A queued launch: the kernel, its grid, block and dynamic shared memory,
// and its argument values (each in a 64-bit slot, low bytes first: the
// driver reads each parameter's declared size from its slot, which on a
// little-endian host is the value itself).
typedef struct {
	CUfunction f;
	unsigned int gx, gy, gz, bx, by, bz, shared;
	int nargs;
	int pdl; // a programmatic dependent launch (see Context.LaunchDependent)
	unsigned long long vals[KD_MAX_ARGS];
} kd_launch_rec;

// kd_launch_one launches l on the default stream; when l->pdl, with
// programmatic stream serialization allowed (cuLaunchKernelEx), so that it
// may start before the kernel before it ends.
static CUresult kd_launch_one(const kd_launch_rec *l) {
	void *params[KD_MAX_ARGS];
	for (int k = 0; k < l->nargs && k < KD_MAX_ARGS; k++) params[k] = (void *)&l->vals[k];
	if (l->pdl && kdp.cuLaunchKernelEx != NULL) {
		KD_LAUNCH_ATTRIBUTE attr;
		memset(&attr, 0, sizeof attr);
		attr.id = KD_LAUNCH_ATTR_PROGRAMMATIC_SERIALIZATION;
		attr.value.programmaticStreamSerializationAllowed = 1;
		KD_LAUNCH_CONFIG cfg = {l->gx, l->gy, l->gz, l->bx, l->by, l->bz, l->shared, NULL, &attr, 1};
		return kdp.cuLaunchKernelEx(&cfg, l->f, l->nargs > 0 ? params : NULL, NULL);
	}
	return kd.cuLaunchKernel(l->f, l->gx, l->gy, l->gz, l->bx, l->by, l->bz, l->shared, NULL,
		l->nargs > 0 ? params : NULL, NULL);
}

static int kd_pdl_available(void) { return kdp.cuLaunchKernelEx != NULL; }

// kd_node_params fills p for l; params must outlive the call that reads p.
static void kd_node_params(const kd_launch_rec *l, void **params, KD_KERNEL_NODE_PARAMS *p) {
	for (int k = 0; k < l->nargs && k < KD_MAX_ARGS; k++) params[k] = (void *)&l->vals[k];
	p->func = l->f;
	p->gridDimX = l->gx; p->gridDimY = l->gy; p->gridDimZ = l->gz;
	p->blockDimX = l->bx; p->blockDimY = l->by; p->blockDimZ = l->bz;
	p->sharedMemBytes = l->shared;
	p->kernelParams = l->nargs > 0 ? params : NULL;
	p->extra = NULL;
}

// A launch graph: n kernel nodes in a chain, instantiated once and then
// given each batch's kernels, shapes and arguments (a node may change its
// kernel), so that a batch of n launches costs one graph launch. On the
// device machine 16 launches took 70-75 µs one by one and 43-46 µs as a
// graph with every node's parameters set anew (most of it the
// cuGraphExecKernelNodeSetParams calls): so a node keeps the launch it
// was last given (recs) and is set only when the batch's differs.
typedef struct {
	CUgraph g;
	CUgraphExec exec;
	int n;
	CUgraphNode nodes[KD_MAX_BATCH];
	kd_launch_rec recs[KD_MAX_BATCH];
} kd_graph;

// KD_GRAPH_SLOTS graphs per batch length: work that alternates between
// two sets of buffers (a kd-tree level reads one and writes the other, the
// next level the other way round) repeats every second batch, so each of
// two graphs sees the same launches again and is launched as it is.
#define KD_GRAPH_SLOTS 2

// The graphs of a context, by batch length (kd_graphs_free frees them), and
// how often each length was seen: a length gets its graph the second time,
// so that one-off batches do not pay an instantiation (about 125 µs for 16
// nodes), and its second graph when a batch of that length fits neither
// graph as it is.
typedef struct {
	kd_graph *byLen[KD_MAX_BATCH + 1][KD_GRAPH_SLOTS];
	unsigned char seen[KD_MAX_BATCH + 1];
	int min; // the shortest batch launched as a graph
} kd_graphs;

static void kd_graph_free(kd_graph *gr) {
	if (gr == NULL) return;
	if (gr->exec) kdg.cuGraphExecDestroy(gr->exec);
	if (gr->g) kdg.cuGraphDestroy(gr->g);
	free(gr);
}

static void kd_graphs_free(CUcontext ctx, kd_graphs *gs) {
	if (gs == NULL) return;
	if (kd.cuCtxSetCurrent(ctx) == 0)
		for (int i = 0; i <= KD_MAX_BATCH; i++)
			for (int k = 0; k < KD_GRAPH_SLOTS; k++) kd_graph_free(gs->byLen[i][k]);
	free(gs);
}

// kd_rec_same reports whether two launches are the same kernel, shape and
// arguments.
static int kd_rec_same(const kd_launch_rec *a, const kd_launch_rec *b) {
	if (a->f != b->f || a->gx != b->gx || a->gy != b->gy || a->gz != b->gz || a->bx != b->bx || a->by != b->by ||
	    a->bz != b->bz || a->shared != b->shared || a->nargs != b->nargs)
		return 0;
	for (int k = 0; k < a->nargs && k < KD_MAX_ARGS; k++)
		if (a->vals[k] != b->vals[k]) return 0;
	return 1;
}

// kd_graph_make builds and instantiates the chain graph of recs[0..n-1];
// NULL when the driver refuses any step.
static kd_graph *kd_graph_make(const kd_launch_rec *recs, int n) {
	kd_graph *gr = calloc(1, sizeof *gr);
	if (gr == NULL) return NULL;
	gr->n = n;
	if (kdg.cuGraphCreate(&gr->g, 0) != 0) { kd_graph_free(gr); return NULL; }
	for (int i = 0; i < n; i++) {
		void *params[KD_MAX_ARGS];
		KD_KERNEL_NODE_PARAMS p;
		kd_node_params(&recs[i], params, &p);
		if (kdg.cuGraphAddKernelNode(&gr->nodes[i], gr->g, i > 0 ? &gr->nodes[i - 1] : NULL, i > 0 ? 1 : 0, &p) != 0) {
			kd_graph_free(gr);
			return NULL;
		}
		gr->recs[i] = recs[i];
	}
	if (kdg.cuGraphInstantiateWithFlags(&gr->exec, gr->g, 0) != 0) {
		gr->exec = NULL;
		kd_graph_free(gr);
		return NULL;
	}
	return gr;
}

// kd_launch_graph launches recs[0..n-1] as a length-n graph of gs: the one
// whose nodes differ from them least, their parameters set where they
// differ (a graph is made the second time a length comes, a second one
// when neither fits as it is); 0 when it did, else nonzero and nothing was
// launched (the caller launches one by one, which also names a failing
// launch).
static int kd_launch_graph(kd_graphs *gs, const kd_launch_rec *recs, int n) {
	if (gs == NULL || kdg.cuGraphLaunch == NULL || n < gs->min || n > KD_MAX_BATCH) return 1;
	for (int i = 0; i < n; i++)
		if (recs[i].pdl) return 1; // the graphs' chains have no programmatic edges
	kd_graph **slots = gs->byLen[n];
	int best = -1, bestDiff = n + 1, empty = -1;
	for (int k = 0; k < KD_GRAPH_SLOTS; k++) {
		if (slots[k] == NULL) {
			if (empty < 0) empty = k;
			continue;
		}
		int diff = 0;
		for (int i = 0; i < n; i++) diff += !kd_rec_same(&slots[k]->recs[i], &recs[i]);
		if (diff < bestDiff) {
			best = k;
			bestDiff = diff;
		}
	}
	kd_graph *gr = NULL;
	if (best < 0 || (bestDiff > 0 && empty >= 0)) {
		if (best < 0 && gs->seen[n] < 1) {
			gs->seen[n]++;
			return 1;
		}
		if ((gr = kd_graph_make(recs, n)) == NULL) return 1;
		slots[empty] = gr;
	} else {
		gr = slots[best];
		for (int i = 0; i < n; i++) {
			if (kd_rec_same(&gr->recs[i], &recs[i])) continue;
			void *params[KD_MAX_ARGS];
			KD_KERNEL_NODE_PARAMS p;
			kd_node_params(&recs[i], params, &p);
			if (kdg.cuGraphExecKernelNodeSetParams(gr->exec, gr->nodes[i], &p) != 0) {
				// A shape or kernel the graph cannot take: drop it.
				kd_graph_free(gr);
				slots[best] = NULL;
				return 1;
			}
			gr->recs[i] = recs[i];
		}
	}
	return kdg.cuGraphLaunch(gr->exec, NULL) != 0;
}

// kd_launch_batch launches recs[0..n-1] in order on the default stream, in
// one call from Go (on the device machine a cgo call costs about as much
// as a launch): as one graph launch when gs has or makes a graph of that
// length, else one by one. On a failure it stops and sets *failed to the
// failing index.
static CUresult kd_launch_batch(CUcontext ctx, kd_graphs *gs, const kd_launch_rec *recs, int n, int *failed) {
	*failed = 0;
	CUresult r = kd.cuCtxSetCurrent(ctx);
	if (r != 0) return r;
	if (kd_launch_graph(gs, recs, n) == 0) return 0;
	for (int i = 0; i < n; i++) {
		r = kd_launch_one(&recs[i]);
		if (r != 0) {
			*failed = i;
			return r;
		}
	}
	return 0;
}

static kd_graphs *kd_graphs_new(int min) {
	kd_graphs *gs = calloc(1, sizeof(kd_graphs));
	if (gs != NULL) gs->min = min < 2 ? KD_GRAPH_MIN : min;
	return gs;
}
static int kd_graphs_available(void) { return kdg.cuGraphLaunch != NULL; }

static const char *kd_error_name(CUresult r) {
	const char *s = NULL;
	if (kd.cuGetErrorName == NULL || kd.cuGetErrorName(r, &s) != 0) return NULL;
	return s;
}
static const char *kd_error_string(CUresult r) {
	const char *s = NULL;
	if (kd.cuGetErrorString == NULL || kd.cuGetErrorString(r, &s) != 0) return NULL;
	return s;
}
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
