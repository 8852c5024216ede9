// fakecuda.c: a stand-in for libcuda.so.1 that runs the kernels of
// runtime.cu on the host, so that the Go side of package cuda (symbol
// resolution, contexts, argument marshalling, copies, errors) can be tested
// on a machine without a GPU. "Device" pointers are host addresses. Built
// by the tests with: gcc -shared -fPIC -o libcuda.so.1 fakecuda.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int ctx_token, module_token;
static void *current;

#define ARG(i, T) (*(T *)params[i])

typedef CUresult (*kernel_fn)(void **params);

static CUresult k_fill_u32(void **params) {
	unsigned *d = (unsigned *)ARG(0, CUdeviceptr);
	for (unsigned i = 0; i < ARG(1, unsigned); i++) d[i] = ARG(2, unsigned);
	return 0;
}
static CUresult k_fill_f32(void **params) {
	float *d = (float *)ARG(0, CUdeviceptr);
	for (unsigned i = 0; i < ARG(1, unsigned); i++) d[i] = ARG(2, float);
	return 0;
}
static CUresult k_iota_u32(void **params) {
	unsigned *d = (unsigned *)ARG(0, CUdeviceptr);
	for (unsigned i = 0; i < ARG(1, unsigned); i++) d[i] = ARG(2, unsigned) + i;
	return 0;
}
static CUresult k_copy_u32(void **params) {
	memmove((void *)ARG(0, CUdeviceptr), (void *)ARG(1, CUdeviceptr), ARG(2, unsigned long long) * 4);
	return 0;
}
#define ADD(name, T, N) \
	static CUresult k_##name(void **params) { \
		T *d = (T *)ARG(0, CUdeviceptr); const T *s = (const T *)ARG(1, CUdeviceptr); \
		for (N i = 0; i < ARG(2, N); i++) d[i] = s[i] + ARG(3, T); \
		return 0; \
	}
ADD(add_scalar_u32, unsigned, unsigned)
ADD(add_scalar_i32, int, unsigned)
ADD(add_scalar_f32, float, unsigned)
ADD(add_scalar_u64, unsigned long long, unsigned long long)
ADD(add_scalar_i64, long long, unsigned long long)
ADD(add_scalar_f64, double, unsigned long long)
static CUresult k_args_mixed_u64(void **params) {
	unsigned long long *o = (unsigned long long *)ARG(0, CUdeviceptr);
	double b = ARG(2, double);
	float d = ARG(4, float);
	o[0] = ARG(1, unsigned);
	memcpy(&o[1], &b, 8);
	o[2] = (unsigned long long)(long long)ARG(3, int);
	o[3] = 0;
	memcpy(&o[3], &d, 4);
	o[4] = ARG(5, unsigned long long);
	o[5] = (unsigned long long)ARG(6, long long);
	o[6] = ARG(7, CUdeviceptr);
	return 0;
}

static struct { const char *name; kernel_fn fn; } kernels[] = {
	{"fill_u32", k_fill_u32}, {"fill_f32", k_fill_f32}, {"iota_u32", k_iota_u32}, {"copy_u32", k_copy_u32},
	{"add_scalar_u32", k_add_scalar_u32}, {"add_scalar_i32", k_add_scalar_i32}, {"add_scalar_f32", k_add_scalar_f32},
	{"add_scalar_u64", k_add_scalar_u64}, {"add_scalar_i64", k_add_scalar_i64}, {"add_scalar_f64", k_add_scalar_f64},
	{"args_mixed_u64", k_args_mixed_u64},
};

#define TOTAL_MEM (1ull << 34)
static unsigned long long allocated;

CUresult cuInit(unsigned f) { return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int o) { if (o != 0) return 101; *d = 0; return 0; }
CUresult cuDeviceGetName(char *s, int len, int d) { strncpy(s, "kdbuild fake GPU", len); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
	switch (a) {
	case 8: *v = 48 << 10; break;
	case 97: *v = 227 << 10; break;
	case 16: *v = 4; break;
	case 38: *v = 1 << 20; break;
	case 75: *v = 9; break;
	case 76: *v = 0; break;
	default: *v = 1;
	}
	return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int d) { *b = TOTAL_MEM; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = &ctx_token; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
CUresult cuCtxSetCurrent(void *c) { if (c != &ctx_token) return 201; current = c; return 0; }
CUresult cuCtxSynchronize(void) { return current == &ctx_token ? 0 : 201; }
CUresult cuModuleLoadData(void **m, const void *img) {
	const unsigned char *p = img;
	if (!(p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba)) return 200;
	*m = &module_token;
	return 0;
}
CUresult cuModuleUnload(void *m) { return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
		if (strcmp(kernels[i].name, name) == 0) { *f = &kernels[i]; return 0; }
	return 500;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shared, void *stream, void **params, void **extra) {
	if (current != &ctx_token) return 201;
	if ((unsigned long long)bx * by * bz > 1024 || gx == 0 || bx == 0 || shared > 232448) return 1;
	return ((kernel_fn *)((char *)f + sizeof(const char *)))[0](params);
}
CUresult cuFuncSetAttribute(void *f, int a, int v) { return 0; }
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) { *free = TOTAL_MEM - allocated; *total = TOTAL_MEM; return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	if (n > TOTAL_MEM - allocated) return 2;
	void *m = malloc(n + 16);
	if (!m) return 2;
	*(size_t *)m = n;
	allocated += n;
	*p = (CUdeviceptr)((char *)m + 16);
	return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
	void *m = (char *)p - 16;
	allocated -= *(size_t *)m;
	free(m);
	return 0;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f) { *p = malloc(n); return *p ? 0 : 2; }
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memmove((void *)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memmove(d, (void *)s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) { memmove(d, (void *)s, n); return 0; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) { memmove((void *)d, s, n); return 0; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { memmove((void *)d, (void *)s, n); return 0; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { memset((void *)d, v, n); return 0; }
#ifndef FAKE_OMIT_MEMSET32 // built with -DFAKE_OMIT_MEMSET32 to test a missing symbol
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
	for (size_t i = 0; i < n; i++) ((unsigned *)d)[i] = v;
	return 0;
}
#endif
CUresult cuEventCreate(void **e, unsigned f) { *e = calloc(1, sizeof(double)); return 0; }
CUresult cuEventRecord(void *e, void *s) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	*(double *)e = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
	return 0;
}
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { *ms = (float)(*(double *)b - *(double *)a); return 0; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { *s = "FAKE_NAME"; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = r == 2 ? "out of memory" : "fake driver error"; return 0; }
