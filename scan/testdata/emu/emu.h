// CPU emulation of the CUDA subset used by kernels/scan.cu, compact.cu and
// sort.cu: every CUDA thread of a block is a fiber (ucontext) on one OS
// thread; blocks run one after another in a scrambled blockIdx order, or in
// index order inside an InOrder scope (kernels that take their tile numbers
// from blockIdx.x and look back at lower tiles rely on the hardware starting
// blocks in index order: one block at a time in another order, they would
// wait forever); __syncthreads/__syncwarp and the warp collectives are
// barriers at which fibers yield.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <ucontext.h>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }

inline dim3 threadIdx, blockIdx, blockDim, gridDim;

struct Fiber {
	ucontext_t ctx;
	char *stack = nullptr;
	unsigned tid;
	bool done = false;
	unsigned long long waiting = 0; // barrier generation it waits past (0: runnable)
	int wait_kind = -1;             // -1 none, 0 block barrier, 1+w warp w barrier
};

struct Sched {
	ucontext_t main;
	std::vector<Fiber> f;
	Fiber *cur = nullptr;
	// Barriers: block (index 0) and one per warp (1 + w).
	std::vector<unsigned> arrived;
	std::vector<unsigned long long> gen;
	std::vector<uint64_t> slot;
	std::function<void()> body;
};
inline Sched *g_s;

inline void yield_to_main() { swapcontext(&g_s->cur->ctx, &g_s->main); }

// barrier k with `members` live participants.
inline unsigned live_members(int k) {
	unsigned c = 0;
	for (auto &fb : g_s->f)
		if (!fb.done && (k == 0 || fb.tid / 32 == (unsigned)(k - 1))) c++;
	return c;
}
inline void barrier(int k) {
	Sched &s = *g_s;
	unsigned long long my = s.gen[k];
	if (++s.arrived[k] == live_members(k)) {
		s.arrived[k] = 0;
		s.gen[k]++;
		return;
	}
	while (s.gen[k] == my) yield_to_main();
}
inline void __syncthreads() { barrier(0); }
inline void __syncwarp(unsigned = 0xffffffffu) { barrier(1 + threadIdx.x / 32); }

template <class F> inline uint64_t exchange(uint64_t v, F f) {
	unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
	uint64_t *s = &g_s->slot[w * 32];
	s[lane] = v;
	barrier(1 + w);
	uint64_t r = f(s, lane);
	barrier(1 + w);
	return r;
}
template <class T> inline uint64_t tobits(T v) { uint64_t b = 0; std::memcpy(&b, &v, sizeof(T)); return b; }
template <class T> inline T frombits(uint64_t b) { T v; std::memcpy(&v, &b, sizeof(T)); return v; }

template <class T> inline T __shfl_sync(unsigned, T v, int src) {
	return frombits<T>(exchange(tobits(v), [&](uint64_t *s, unsigned) { return s[src & 31]; }));
}
template <class T> inline T __shfl_up_sync(unsigned, T v, int d) {
	return frombits<T>(exchange(tobits(v), [&](uint64_t *s, unsigned l) { return (int)l - d >= 0 ? s[l - d] : s[l]; }));
}
template <class T> inline T __shfl_down_sync(unsigned, T v, int d) {
	return frombits<T>(exchange(tobits(v), [&](uint64_t *s, unsigned l) { return l + d < 32 ? s[l + d] : s[l]; }));
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int m) {
	return frombits<T>(exchange(tobits(v), [&](uint64_t *s, unsigned l) { return s[(l ^ m) & 31]; }));
}
inline unsigned __ballot_sync(unsigned, bool p) {
	return (unsigned)exchange(p ? 1 : 0, [](uint64_t *s, unsigned) {
		unsigned m = 0;
		for (int i = 0; i < 32; i++) m |= (s[i] ? 1u : 0u) << i;
		return (uint64_t)m;
	});
}
inline unsigned __match_any_sync(unsigned, unsigned v) {
	return (unsigned)exchange(v, [](uint64_t *s, unsigned l) {
		unsigned m = 0;
		for (int i = 0; i < 32; i++) m |= (s[i] == s[l] ? 1u : 0u) << i;
		return (uint64_t)m;
	});
}
inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p = o + v; return o; }
inline unsigned atomicMax(unsigned *p, unsigned v) { unsigned o = *p; if (v > o) *p = v; return o; }
inline unsigned atomicOr(unsigned *p, unsigned v) { unsigned o = *p; *p = o | v; return o; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
using std::max;
using std::min;

inline int g_launches = 0;
constexpr size_t kStack = 128 * 1024;

inline void fiber_entry() {
	g_s->body();
	g_s->cur->done = true;
	// Leaving may complete barriers others wait at.
	for (int k = 0; k < (int)g_s->gen.size(); k++)
		if (g_s->arrived[k] > 0 && g_s->arrived[k] == live_members(k)) {
			g_s->arrived[k] = 0;
			g_s->gen[k]++;
		}
	swapcontext(&g_s->cur->ctx, &g_s->main);
}

// InOrder: while one with on = true lives, launch runs blocks in index order.
inline bool g_in_order = false;
struct InOrder {
	explicit InOrder(bool on) : was(g_in_order) { g_in_order = on; }
	~InOrder() { g_in_order = was; }
	bool was;
};

template <class... P, class... A> void launch(void (*kernel)(P...), unsigned grid, unsigned block, A... args) {
	g_launches++;
	gridDim = dim3{grid, 1, 1};
	blockDim = dim3{block, 1, 1};
	std::vector<unsigned> order(grid);
	for (unsigned i = 0; i < grid; i++) order[i] = i;
	if (!g_in_order)
		for (unsigned i = grid; i > 1; i--) std::swap(order[i - 1], order[(i * 2654435761u) % i]);
	for (unsigned b : order) {
		Sched s;
		g_s = &s;
		s.f.resize(block);
		s.arrived.assign(1 + block / 32, 0);
		s.gen.assign(1 + block / 32, 0);
		s.slot.assign(block, 0);
		s.body = [&] { kernel(((P)args)...); };
		blockIdx = dim3{b, 0, 0};
		for (unsigned t = 0; t < block; t++) {
			Fiber &fb = s.f[t];
			fb.tid = t;
			static std::vector<char *> pool;
			while (pool.size() <= t) pool.push_back(new char[kStack]);
			fb.stack = pool[t];
			getcontext(&fb.ctx);
			fb.ctx.uc_stack.ss_sp = fb.stack;
			fb.ctx.uc_stack.ss_size = kStack;
			fb.ctx.uc_link = nullptr;
			makecontext(&fb.ctx, fiber_entry, 0);
		}
		// Round-robin until every fiber is done.
		for (bool any = true; any;) {
			any = false;
			for (auto &fb : s.f) {
				if (fb.done) continue;
				any = true;
				s.cur = &fb;
				threadIdx = dim3{fb.tid, 0, 0};
				swapcontext(&s.main, &fb.ctx);
			}
		}
	}
}

// Sleep and cache-hinted accesses: no-ops and plain accesses on the CPU.
inline void __nanosleep(unsigned) {}
template <class T> inline T __ldcs(const T *p) { return *p; }
template <class T> inline void __stcs(T *p, T v) { *p = v; }
