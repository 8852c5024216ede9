// driver_calls.h: the C half of the driver binding, included once, by
// driver.go's cgo preamble: the call table resolved with dlopen and dlsym,
// and one small static wrapper per driver call the Go side makes (each sets
// the context first). The declarations of the calls are in driver.h.
#ifndef KD_DRIVER_CALLS_H
#define KD_DRIVER_CALLS_H

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

#endif // KD_DRIVER_CALLS_H
