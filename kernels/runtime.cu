// runtime.cu: small kernels of the runtime itself, used by the tests of the
// launch path (one kernel per argument type) and by the copy benchmark.
// Every loop is grid-stride, so any grid covers any n.

namespace kd_runtime {

__device__ __forceinline__ unsigned long long first_index() {
	return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ unsigned long long stride() {
	return (unsigned long long)gridDim.x * blockDim.x;
}

template <typename T>
__device__ __forceinline__ void fill(T *dst, unsigned long long n, T v) {
	for (unsigned long long i = first_index(); i < n; i += stride()) dst[i] = v;
}

template <typename T>
__device__ __forceinline__ void add_scalar(T *dst, const T *src, unsigned long long n, T v) {
	for (unsigned long long i = first_index(); i < n; i += stride()) dst[i] = src[i] + v;
}

} // namespace kd_runtime

// fill_u32: dst[i] = v for i < n.
extern "C" __global__ void fill_u32(unsigned int *dst, unsigned int n, unsigned int v) {
	kd_runtime::fill(dst, n, v);
}

// fill_f32: dst[i] = v for i < n.
extern "C" __global__ void fill_f32(float *dst, unsigned int n, float v) {
	kd_runtime::fill(dst, n, v);
}

// iota_u32: dst[i] = start + i (mod 2^32) for i < n.
extern "C" __global__ void iota_u32(unsigned int *dst, unsigned int n, unsigned int start) {
	for (unsigned long long i = kd_runtime::first_index(); i < n; i += kd_runtime::stride())
		dst[i] = start + (unsigned int)i;
}

// copy_u32: dst[i] = src[i] for i < n (n counts 32-bit words, up to 2^64).
// When both addresses are 16-byte aligned the words move four at a time as
// uint4; the tail (n mod 4) and unaligned buffers go one word at a time.
extern "C" __global__ void copy_u32(unsigned int *dst, const unsigned int *src, unsigned long long n) {
	unsigned long long i = kd_runtime::first_index(), s = kd_runtime::stride();
	if ((((unsigned long long)dst | (unsigned long long)src) & 15) == 0) {
		unsigned long long n4 = n / 4;
		uint4 *d4 = reinterpret_cast<uint4 *>(dst);
		const uint4 *s4 = reinterpret_cast<const uint4 *>(src);
		for (unsigned long long j = i; j < n4; j += s) d4[j] = s4[j];
		for (unsigned long long j = n4 * 4 + i; j < n; j += s) dst[j] = src[j];
	} else {
		for (unsigned long long j = i; j < n; j += s) dst[j] = src[j];
	}
}

// add_scalar_<type>: dst[i] = src[i] + v for i < n, one kernel per scalar
// parameter type so that every launch argument type is exercised.
extern "C" __global__ void add_scalar_u32(unsigned int *dst, const unsigned int *src, unsigned int n, unsigned int v) {
	kd_runtime::add_scalar(dst, src, n, v);
}
extern "C" __global__ void add_scalar_i32(int *dst, const int *src, unsigned int n, int v) {
	kd_runtime::add_scalar(dst, src, n, v);
}
extern "C" __global__ void add_scalar_f32(float *dst, const float *src, unsigned int n, float v) {
	kd_runtime::add_scalar(dst, src, n, v);
}
extern "C" __global__ void add_scalar_u64(unsigned long long *dst, const unsigned long long *src, unsigned long long n, unsigned long long v) {
	kd_runtime::add_scalar(dst, src, n, v);
}
extern "C" __global__ void add_scalar_i64(long long *dst, const long long *src, unsigned long long n, long long v) {
	kd_runtime::add_scalar(dst, src, n, v);
}
extern "C" __global__ void add_scalar_f64(double *dst, const double *src, unsigned long long n, double v) {
	kd_runtime::add_scalar(dst, src, n, v);
}

// args_mixed_u64: writes the bits of each argument to out[0..6], to check that
// arguments of mixed sizes and alignments arrive in order.
extern "C" __global__ void args_mixed_u64(unsigned long long *out, unsigned int a, double b, int c, float d,
                                          unsigned long long e, long long f, const unsigned int *p) {
	if (blockIdx.x != 0 || threadIdx.x != 0) return;
	out[0] = a;
	out[1] = (unsigned long long)__double_as_longlong(b);
	out[2] = (unsigned long long)(long long)c;
	out[3] = __float_as_uint(d);
	out[4] = e;
	out[5] = (unsigned long long)f;
	out[6] = (unsigned long long)p;
}
