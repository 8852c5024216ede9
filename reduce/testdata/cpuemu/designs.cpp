// Emulated run of the r0–r7 kernels against a key-order reference (see README.md).
#include "cuda_emu.h"
#include "reduce.cu"
#include <cmath>
#include <random>
#include <string>

static unsigned okey(float f) { unsigned u = __float_as_uint(f); return u ^ ((unsigned)((int)u >> 31) | 0x80000000u); }
static bool isnanb(float f) { return (__float_as_uint(f) & 0x7fffffffu) > 0x7f800000u; }
static float refMin(const float* s, size_t n) {
  unsigned k = 0xffffffffu;
  for (size_t i = 0; i < n; i++) if (!isnanb(s[i])) k = std::min(k, okey(s[i]));
  if (k == 0xffffffffu) return INFINITY;
  return __uint_as_float((k & 0x80000000u) ? (k ^ 0x80000000u) : ~k);
}
static float refMax(const float* s, size_t n) {
  unsigned k = 0;
  for (size_t i = 0; i < n; i++) if (!isnanb(s[i])) k = std::max(k, okey(s[i]));
  if (k == 0) return -INFINITY;
  return __uint_as_float((k & 0x80000000u) ? (k ^ 0x80000000u) : ~k);
}
static int fails = 0;
static void check(const char* what, float got, float want, long n) {
  if (__float_as_uint(got) != __float_as_uint(want)) {
    if (fails < 30) printf("FAIL %s n=%ld got %g (%08x) want %g (%08x)\n", what, n, got, __float_as_uint(got), want, __float_as_uint(want));
    fails++;
  }
}

typedef void (*KMulti)(const float*, const float*, float*, float*, unsigned*, unsigned);
typedef void (*K7)(const float*, float*, float*, unsigned*, float*, float*, unsigned);
static KMulti kmulti[3][7] = {
  {reduce_min_r0_f32, reduce_min_r1_f32, reduce_min_r2_f32, reduce_min_r3_f32, reduce_min_r4_f32, reduce_min_r5_f32, reduce_min_r6_f32},
  {reduce_max_r0_f32, reduce_max_r1_f32, reduce_max_r2_f32, reduce_max_r3_f32, reduce_max_r4_f32, reduce_max_r5_f32, reduce_max_r6_f32},
  {reduce_minmax_r0_f32, reduce_minmax_r1_f32, reduce_minmax_r2_f32, reduce_minmax_r3_f32, reduce_minmax_r4_f32, reduce_minmax_r5_f32, reduce_minmax_r6_f32}};
static K7 k7[3] = {reduce_min_r7_f32, reduce_max_r7_f32, reduce_minmax_r7_f32};
static const unsigned SMS = 2, BPSM = 8;
static unsigned counters[8];
static size_t g_finalPerThread = 32;  // package reduce's finalPerThread (argv[1] overrides)

static size_t cdiv(size_t a, size_t b) { return (a + b - 1) / b; }
static size_t rup(size_t a, size_t b) { return cdiv(a, b) * b; }

// port of Reducer.enqueue; op 0 min, 1 max, 2 minmax; returns lo, hi
static void run(int v, int op, const float* src, unsigned n, float* res /*2*/) {
  int lanes = op == 2 ? 2 : 1;
  float* dstLo = op == 1 ? &res[1] : &res[0];
  float* dstHi = op == 2 ? &res[1] : nullptr;
  if (v <= 5) {  // port of the levels: PerBlock inputs per block, a final one-block level
    size_t threads = v >= 4 ? 512 : 256, per = v >= 4 ? 1024 : 256;
    auto levelGrid = [&](size_t c) { return c <= g_finalPerThread * threads ? size_t(1) : cdiv(c, per); };
    size_t g1 = levelGrid(n), stride = rup(g1, 64);
    std::vector<float> part[2] = {std::vector<float>(lanes * stride), std::vector<float>(lanes * stride)};
    std::vector<unsigned> work(lanes * g1 * threads / 2);
    const float* inLo = n ? src : nullptr; const float* inHi = nullptr;
    size_t cnt = n;
    for (int level = 0;; level++) {
      size_t g = levelGrid(cnt);
      float *outLo, *outHi;
      if (g == 1) { outLo = dstLo; outHi = dstHi; }
      else { outLo = part[level % 2].data(); outHi = op == 2 ? outLo + stride : nullptr; }
      launch(kmulti[op][v], g, threads, inLo, inHi, outLo, outHi, (v <= 1 ? work.data() : nullptr), (unsigned)cnt);
      if (g == 1) return;
      inLo = outLo; inHi = outHi; cnt = g;
    }
  }
  size_t g = std::max<size_t>(1, std::min<size_t>(cdiv(n, 256 * 16), SMS * BPSM));
  size_t stride = rup(g, 64);
  std::vector<float> part(lanes * stride);
  float* pLo = part.data(); float* pHi = op == 2 ? pLo + stride : nullptr;
  const float* in = n ? src : nullptr;
  if (v == 6) {
    if (g == 1) { launch(kmulti[op][6], 1, 256, in, (const float*)nullptr, dstLo, dstHi, (unsigned*)nullptr, n); return; }
    launch(kmulti[op][6], g, 256, in, (const float*)nullptr, pLo, pHi, (unsigned*)nullptr, n);
    launch(kmulti[op][6], 1, 256, (const float*)pLo, (const float*)pHi, dstLo, dstHi, (unsigned*)nullptr, (unsigned)g);
    return;
  }
  launch(k7[op], g, 256, in, pLo, pHi, &counters[op], dstLo, dstHi, n);
  if (counters[op] != 0) { printf("FAIL counter not reset\n"); fails++; }
}

static std::vector<float> gen(std::mt19937& rng, size_t n, int kind) {
  static const float sp[] = {0.f, -0.f, INFINITY, -INFINITY, __uint_as_float(0x7fc00000), __uint_as_float(0xffc00001),
                             __uint_as_float(0x7fffffff), __uint_as_float(0xffffffff), __uint_as_float(1), __uint_as_float(0x80000001), 1.f, -1.f};
  std::vector<float> s(n);
  std::uniform_real_distribution<float> u(-1000, 1000);
  for (size_t i = 0; i < n; i++) {
    if (kind == 0) s[i] = u(rng);
    else if (kind == 1) s[i] = (rng() % 4 == 0) ? u(rng) : sp[rng() % 12];
    else if (kind == 2) s[i] = (rng() % 2) ? -0.f : 0.f;
    else s[i] = sp[4 + rng() % 4];
  }
  if (kind == 3 && n > 2) s[rng() % n] = u(rng);
  return s;
}

// usage: designs [finalPerThread [max size]]
int main(int argc, char** argv) {
  std::mt19937 rng(42);
  if (argc > 1) g_finalPerThread = std::strtoul(argv[1], nullptr, 10);
  size_t maxN = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : ~size_t(0);
  std::vector<size_t> sizes = {0, 1, 2, 3, 4, 5, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2049, 4095, 4096, 4097, 65537, 131073};
  for (size_t n : sizes) {
    if (n > maxN) continue;
    for (int kind = 0; kind < 4; kind++) {
      if (n > 5000 && kind > 1) continue;
      std::vector<float> buf(n + 8);
      unsigned off = n % 4;
      auto s = gen(rng, n, kind);
      std::copy(s.begin(), s.end(), buf.begin() + off);
      // poison around
      for (unsigned i = 0; i < off; i++) buf[i] = -INFINITY;
      for (size_t i = off + n; i < buf.size(); i++) buf[i] = -INFINITY;
      float* src = (float*)(((uintptr_t)buf.data())); src += off;
      float wl = refMin(s.data(), n), wh = refMax(s.data(), n);
      for (int v = 0; v <= 7; v++) {
        for (int op = 0; op < 3; op++) {
          float res[2] = {12345.f, 12345.f};
          run(v, op, src, n, res);
          std::string w = "r" + std::to_string(v) + " op" + std::to_string(op) + " kind" + std::to_string(kind);
          if (op != 1) check((w + " lo").c_str(), res[0], wl, n);
          if (op != 0) check((w + " hi").c_str(), res[1], wh, n);
        }
      }
    }
    printf("n=%zu done, fails %d\n", n, fails);
    fflush(stdout);
  }
  printf("TOTAL FAILS %d\n", fails);
  return fails != 0;
}
