// A libcuda.so.1 stand-in for the GPU tests of package reduce: the fake
// driver of package cuda (kernels/cuda/testdata/fakecuda.c, built with its
// cuLaunchKernel and cuModuleGetFunction renamed) plus the reduce kernels run
// by cuda_emu.h. Launches run synchronously on the host. See README.md.
#include "cuda_emu.h"
#include "reduce.cu"

#include <cstring>
#include <utility>

typedef int CUresult;

extern "C" CUresult base_cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                        unsigned bz, unsigned shared, void* stream, void** params, void** extra);
extern "C" CUresult base_cuModuleGetFunction(void** f, void* m, const char* name);

namespace {

typedef void (*Launcher)(unsigned grid, unsigned block, void** params);

template <class... P, size_t... I>
void unpack(void (*k)(P...), unsigned g, unsigned b, void** params, std::index_sequence<I...>) {
  launch(k, g, b, (*reinterpret_cast<P*>(params[I]))...);
}

template <class... P>
constexpr size_t arity(void (*)(P...)) { return sizeof...(P); }

#define ENTRY(k) {#k, [](unsigned g, unsigned b, void** p) { unpack(k, g, b, p, std::make_index_sequence<arity(k)>{}); }}
#define OPS(op)                                                                                          \
  ENTRY(reduce_##op##_r0_f32), ENTRY(reduce_##op##_r1_f32), ENTRY(reduce_##op##_r2_f32),                  \
      ENTRY(reduce_##op##_r3_f32), ENTRY(reduce_##op##_r4_f32), ENTRY(reduce_##op##_r5_f32),              \
      ENTRY(reduce_##op##_r4final_f32), ENTRY(reduce_##op##_r5final_f32),                                \
      ENTRY(reduce_##op##_r6_f32), ENTRY(reduce_##op##_r7_f32), ENTRY(reduce_segwarp_##op##_f32),         \
      ENTRY(reduce_segbig_##op##_f32), ENTRY(reduce_##op##_r0_t128_f32), ENTRY(reduce_##op##_r0_t512_f32),   \
      ENTRY(reduce_##op##_r4_t64_f32), ENTRY(reduce_##op##_r4_t128_f32), ENTRY(reduce_##op##_r4_t512_f32),  \
      ENTRY(reduce_##op##_r5_t128_f32)

struct Kernel {
  const char* name;
  Launcher fn;
};
Kernel table[] = {OPS(min), OPS(max), OPS(minmax), ENTRY(reduce_segwarp_box_f32), ENTRY(reduce_segbig_box_f32),
                  ENTRY(reduce_segwarp_boxaos_f32), ENTRY(reduce_segbig_boxaos_f32),
                  ENTRY(reduce_box_r0_f32), ENTRY(reduce_box_r1_f32), ENTRY(reduce_box_r2_f32), ENTRY(reduce_box_r3_f32),
                  ENTRY(reduce_box_r4_f32), ENTRY(reduce_box_r5_f32), ENTRY(reduce_box_r6_f32), ENTRY(reduce_box_r7_f32),
                  ENTRY(reduce_bounds_f32)};

}  // namespace

extern "C" CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
  for (auto& k : table)
    if (std::strcmp(k.name, name) == 0) {
      *f = &k;
      return 0;
    }
  return base_cuModuleGetFunction(f, m, name);
}

extern "C" CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  Kernel* k = static_cast<Kernel*>(f);
  if (k >= table && k < table + sizeof table / sizeof table[0]) {
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || bx > 1024 || gx == 0) return 1;
    k->fn(gx, bx, params);
    return 0;
  }
  return base_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
