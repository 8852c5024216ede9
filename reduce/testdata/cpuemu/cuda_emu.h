// Minimal CPU emulation of the CUDA features reduce.cu uses: one std::thread
// per CUDA thread, blocks run one after another, __syncthreads via
// std::barrier (exited threads drop out), warp shuffles via per-warp slots.
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>
#include <cstdio>
#include <cstdlib>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__

struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct uint2 { unsigned x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
inline float2 make_float2(float a, float b) { return float2{a, b}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }

inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

struct BlockSync {
  std::unique_ptr<std::barrier<>> bar;
  std::vector<std::unique_ptr<std::barrier<>>> warpBar;
  std::vector<uint64_t> slots;  // 32 per warp
};
inline BlockSync* g_block;

inline void __syncthreads() { g_block->bar->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { g_block->warpBar[threadIdx.x / 32]->arrive_and_wait(); }

template <class T>
inline T shfl_impl(T v, int srcLane, bool clampSelf) {
  unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint64_t* s = &g_block->slots[w * 32];
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  s[lane] = bits;
  g_block->warpBar[w]->arrive_and_wait();
  uint64_t got = (srcLane < 0 || srcLane >= 32) ? (clampSelf ? bits : bits) : s[srcLane];
  g_block->warpBar[w]->arrive_and_wait();
  T r;
  std::memcpy(&r, &got, sizeof(T));
  return r;
}
template <class T> inline T __shfl_down_sync(unsigned, T v, int d) {
  int src = (int)(threadIdx.x % 32) + d;
  return shfl_impl(v, src < 32 ? src : -1, true);
}
template <class T> inline T __shfl_sync(unsigned, T v, int src) { return shfl_impl(v, src, true); }

inline unsigned atomicAdd(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_add(v); }
inline unsigned atomicMin(unsigned* p, unsigned v) {
  std::atomic_ref<unsigned> a(*p);
  unsigned o = a.load();
  while (v < o && !a.compare_exchange_weak(o, v)) {}
  return o;
}
inline unsigned atomicMax(unsigned* p, unsigned v) {
  std::atomic_ref<unsigned> a(*p);
  unsigned o = a.load();
  while (v > o && !a.compare_exchange_weak(o, v)) {}
  return o;
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldg(const T* p) { return *p; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline float __int_as_float(int u) { float f; std::memcpy(&f, &u, 4); return f; }
using std::min;
using std::max;

// launch runs kernel(args...) over grid × block, blocks in `order`.
template <class... P, class... A>
void launch(void (*kernel)(P...), unsigned grid, unsigned block, A... args) {
  gridDim = dim3{grid, 1, 1};
  blockDim = dim3{block, 1, 1};
  std::vector<unsigned> order(grid);
  for (unsigned i = 0; i < grid; i++) order[i] = i;
  // a fixed shuffle so that "last block" is not always the highest index
  for (unsigned i = grid; i > 1; i--) std::swap(order[i - 1], order[(i * 2654435761u) % i]);
  for (unsigned b : order) {
    BlockSync bs;
    bs.bar = std::make_unique<std::barrier<>>(block);
    for (unsigned w = 0; w < (block + 31) / 32; w++) bs.warpBar.push_back(std::make_unique<std::barrier<>>(32));
    bs.slots.assign(block, 0);
    g_block = &bs;
    std::vector<std::thread> th;
    th.reserve(block);
    for (unsigned t = 0; t < block; t++) {
      th.emplace_back([&, t, b] {
        threadIdx = dim3{t, 0, 0};
        blockIdx = dim3{b, 0, 0};
        kernel(args...);
        bs.bar->arrive_and_drop();
        bs.warpBar[t / 32]->arrive_and_drop();
      });
    }
    for (auto& x : th) x.join();
  }
}
