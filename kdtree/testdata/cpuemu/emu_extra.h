// Additions to reduce/testdata/cpuemu/cuda_emu.h for kernels/kdtree.cu: the
// dynamic shared memory of kdtree_bin_u32, shfl up/xor, double rounding.
#pragma once
#include <cmath>
#include <cfloat>
inline unsigned int g_dyn_shared[6 * 1024];
template <class T> inline T __shfl_up_sync(unsigned, T v, int d) {
  int src = (int)(threadIdx.x % 32) - d;
  return shfl_impl(v, src >= 0 ? src : -1, true);
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int m) {
  return shfl_impl(v, (int)(threadIdx.x % 32) ^ m, true);
}
inline float __double2float_rn(double x) { return (float)x; }
