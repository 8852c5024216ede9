// driver.h: the few CUDA driver types and calls kdbuild uses, written by
// hand so that no CUDA header is needed to build. The library is opened with
// dlopen and every call is resolved once, by its versioned symbol name.
#pragma once

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;

// CUDA_KERNEL_NODE_PARAMS (the first version, which the unversioned
// symbols below take).
typedef struct {
	CUfunction func;
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	void **kernelParams;
	void **extra;
} KD_KERNEL_NODE_PARAMS;

// cuLaunchKernelEx's launch attribute and configuration (CUDA 12.0 on:
// CUlaunchAttribute, CUlaunchConfig), for programmatic dependent launches.
typedef struct {
	int id; // CUlaunchAttributeID
	char pad[4];
	union {
		char raw[64];
		int programmaticStreamSerializationAllowed;
	} value;
} KD_LAUNCH_ATTRIBUTE;

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	KD_LAUNCH_ATTRIBUTE *attrs;
	unsigned int numAttrs;
} KD_LAUNCH_CONFIG;

// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
#define KD_LAUNCH_ATTR_PROGRAMMATIC_SERIALIZATION 6

// X(field/symbol name, return type, parameter list)
#define KD_DRIVER_CALLS(X) \
	X(cuInit, (unsigned int flags)) \
	X(cuDriverGetVersion, (int *version)) \
	X(cuDeviceGetCount, (int *count)) \
	X(cuDeviceGet, (CUdevice *dev, int ordinal)) \
	X(cuDeviceGetName, (char *name, int len, CUdevice dev)) \
	X(cuDeviceGetAttribute, (int *value, int attrib, CUdevice dev)) \
	X(cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev)) \
	X(cuDevicePrimaryCtxRetain, (CUcontext *ctx, CUdevice dev)) \
	X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev)) \
	X(cuCtxSetCurrent, (CUcontext ctx)) \
	X(cuCtxSynchronize, (void)) \
	X(cuModuleLoadData, (CUmodule *mod, const void *image)) \
	X(cuModuleUnload, (CUmodule mod)) \
	X(cuModuleGetFunction, (CUfunction *fn, CUmodule mod, const char *name)) \
	X(cuLaunchKernel, (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int sharedBytes, \
		CUstream stream, void **params, void **extra)) \
	X(cuFuncSetAttribute, (CUfunction f, int attrib, int value)) \
	X(cuMemGetInfo_v2, (size_t *free, size_t *total)) \
	X(cuMemAlloc_v2, (CUdeviceptr *p, size_t bytes)) \
	X(cuMemFree_v2, (CUdeviceptr p)) \
	X(cuMemHostAlloc, (void **p, size_t bytes, unsigned int flags)) \
	X(cuMemFreeHost, (void *p)) \
	X(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes)) \
	X(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t bytes, CUstream stream)) \
	X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)) \
	X(cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemsetD8_v2, (CUdeviceptr dst, unsigned char v, size_t n)) \
	X(cuMemsetD32_v2, (CUdeviceptr dst, unsigned int v, size_t n)) \
	X(cuEventCreate, (CUevent *ev, unsigned int flags)) \
	X(cuEventRecord, (CUevent ev, CUstream stream)) \
	X(cuEventSynchronize, (CUevent ev)) \
	X(cuEventElapsedTime, (float *ms, CUevent start, CUevent end)) \
	X(cuEventDestroy_v2, (CUevent ev)) \
	X(cuGetErrorName, (CUresult r, const char **s)) \
	X(cuGetErrorString, (CUresult r, const char **s))

// Optional calls: the launch graphs of kd_launch_batch. When one is missing
// the batches are launched one kernel at a time.
#define KD_GRAPH_CALLS(X) \
	X(cuGraphCreate, (CUgraph *g, unsigned int flags)) \
	X(cuGraphAddKernelNode, (CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps, \
		const KD_KERNEL_NODE_PARAMS *p)) \
	X(cuGraphInstantiateWithFlags, (CUgraphExec *exec, CUgraph g, unsigned long long flags)) \
	X(cuGraphExecKernelNodeSetParams, (CUgraphExec exec, CUgraphNode node, const KD_KERNEL_NODE_PARAMS *p)) \
	X(cuGraphLaunch, (CUgraphExec exec, CUstream stream)) \
	X(cuGraphExecDestroy, (CUgraphExec exec)) \
	X(cuGraphDestroy, (CUgraph g))

// Optional, each on its own: programmatic dependent launches (kd_launch_one;
// without it every launch is an ordinary one), pinned memory's device
// addresses (Pinned.Dev; without it 0) and the primary context's
// scheduling flags (SchedEnv; without it the driver's default).
#define KD_PDL_CALLS(X) \
	X(cuLaunchKernelEx, (const KD_LAUNCH_CONFIG *config, CUfunction f, void **params, void **extra)) \
	X(cuMemHostGetDevicePointer_v2, (CUdeviceptr *dp, void *p, unsigned int flags)) \
	X(cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags))

// Device attributes read by Devices (values of CUdevice_attribute).
enum {
	KD_ATTR_MAX_SHARED_PER_BLOCK = 8,
	KD_ATTR_CLOCK_RATE = 13,
	KD_ATTR_SM_COUNT = 16,
	KD_ATTR_MEM_CLOCK_RATE = 36,
	KD_ATTR_MEM_BUS_WIDTH = 37,
	KD_ATTR_L2_CACHE_SIZE = 38,
	KD_ATTR_CC_MAJOR = 75,
	KD_ATTR_CC_MINOR = 76,
	KD_ATTR_MAX_SHARED_PER_BLOCK_OPTIN = 97,
};

// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
#define KD_FUNC_ATTR_MAX_DYNAMIC_SHARED 8

#define KD_MAX_ARGS 32

// The most launches a batch holds (see launchBatch), and the fewest that
// are launched as a graph.
#define KD_MAX_BATCH 64
#define KD_GRAPH_MIN 8
