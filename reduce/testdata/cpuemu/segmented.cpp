// Emulated run of the segmented, box and bounds kernels (see README.md).
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
static void check(const std::string& what, float got, float want) {
  if (__float_as_uint(got) != __float_as_uint(want)) {
    if (fails < 30) printf("FAIL %s got %g (%08x) want %g (%08x)\n", what.c_str(), got, __float_as_uint(got), want, __float_as_uint(want));
    fails++;
  }
}
static const unsigned SMS = 2, BPSM = 8, LIMIT = 4096, BOXLIMIT = 2048;
static unsigned counters[8];
static size_t cdiv_(size_t t) { return (t + 255) / 256; }
typedef void (*KW)(const float*, const unsigned*, float*, float*, unsigned*, unsigned*, unsigned*, unsigned, unsigned, unsigned, unsigned);
typedef void (*KB)(const float*, const unsigned*, float*, float*, const unsigned*, unsigned*, unsigned*, unsigned, unsigned);
static KW kw[3] = {reduce_segwarp_min_f32, reduce_segwarp_max_f32, reduce_segwarp_minmax_f32};
static KB kb[3] = {reduce_segbig_min_f32, reduce_segbig_max_f32, reduce_segbig_minmax_f32};

static std::vector<float> gen(std::mt19937& rng, size_t n) {
  static const float sp[] = {0.f, -0.f, INFINITY, -INFINITY, __uint_as_float(0x7fc00000), __uint_as_float(0xffc00001),
                             __uint_as_float(0x7fffffff), __uint_as_float(0xffffffff), __uint_as_float(1), 1.f, -1.f};
  std::uniform_real_distribution<float> u(-1000, 1000);
  std::vector<float> s(n);
  for (auto& x : s) x = (rng() % 3 == 0) ? sp[rng() % 11] : u(rng);
  return s;
}

static void segcase(std::mt19937& rng, const std::string& name, size_t n, std::vector<unsigned> off) {
  auto s = gen(rng, n);
  unsigned ns = off.size() - 1;
  std::vector<std::pair<unsigned, unsigned>> segs;
  for (unsigned i = 0; i < ns; i++) { unsigned hi = std::min<unsigned>(off[i + 1], n); segs.push_back({std::min(off[i], hi), hi}); }
  size_t cap = n / LIMIT + 1;
  std::vector<unsigned> work(3 * cap);
  const float* in = n ? s.data() : nullptr;
  for (int op = 0; op < 3; op++) {
    std::vector<float> lo(ns + 2, 7.f), hi(ns + 2, 7.f);
    float* outLo = op == 1 ? hi.data() + 1 : lo.data() + 1;
    float* outHi = op == 2 ? hi.data() + 1 : nullptr;
    launch(kw[op], (unsigned)cdiv_(ns * 32), 256, in, (const unsigned*)off.data(), outLo, outHi, work.data(), work.data() + cap, &counters[4], ns, (unsigned)n, LIMIT, (unsigned)cap);
    launch(kb[op], SMS * BPSM, 256, in, (const unsigned*)off.data(), outLo, outHi, (const unsigned*)work.data(), work.data() + cap, &counters[4], (unsigned)n, (unsigned)cap);
    if (counters[4] || counters[5]) { printf("FAIL counters %u %u\n", counters[4], counters[5]); fails++; counters[4] = counters[5] = 0; }
    for (unsigned i = 0; i < ns; i++) {
      if (op != 1) check(name + " op" + std::to_string(op) + " lo[" + std::to_string(i) + "]", lo[1 + i], refMin(s.data() + segs[i].first, segs[i].second - segs[i].first));
      if (op != 0) check(name + " op" + std::to_string(op) + " hi[" + std::to_string(i) + "]", hi[1 + i], refMax(s.data() + segs[i].first, segs[i].second - segs[i].first));
    }
    check(name + " guard", lo[0], 7.f); check(name + " guard", lo[ns + 1], 7.f);
    check(name + " guard", hi[0], 7.f); check(name + " guard", hi[ns + 1], 7.f);
  }
  // boxes: use 6 arrays
  std::vector<float> a[6];
  for (int j = 0; j < 6; j++) a[j] = gen(rng, n);
  size_t bcap = n / BOXLIMIT + 1;
  std::vector<unsigned> bw(7 * bcap);
  std::vector<float> out(6 * ns + 2, 7.f);
  const float* p[6];
  for (int j = 0; j < 6; j++) p[j] = n ? a[j].data() : nullptr;
  launch(reduce_segwarp_box_f32, (unsigned)cdiv_(ns * 32), 256, p[0], p[1], p[2], p[3], p[4], p[5], (const unsigned*)off.data(), out.data() + 1, bw.data(), bw.data() + bcap, &counters[4], ns, (unsigned)n, BOXLIMIT, (unsigned)bcap);
  launch(reduce_segbig_box_f32, SMS * BPSM, 256, p[0], p[1], p[2], p[3], p[4], p[5], (const unsigned*)off.data(), out.data() + 1, (const unsigned*)bw.data(), bw.data() + bcap, &counters[4], (unsigned)n, (unsigned)bcap);
  if (counters[4] || counters[5]) { printf("FAIL box counters\n"); fails++; counters[4] = counters[5] = 0; }
  for (unsigned i = 0; i < ns; i++) {
    size_t l = segs[i].first, len = segs[i].second - segs[i].first;
    for (int j = 0; j < 3; j++) {
      check(name + " box min", out[1 + 6 * i + j], refMin(a[j].data() + l, len));
      check(name + " box max", out[1 + 6 * i + 3 + j], refMax(a[3 + j].data() + l, len));
    }
  }
  check(name + " box guard", out[0], 7.f); check(name + " box guard", out[6 * ns + 1], 7.f);
  printf("%s done, fails %d\n", name.c_str(), fails); fflush(stdout);
}

int main() {
  std::mt19937 rng(7);
  segcase(rng, "empty-and-one", 5, {0, 0, 1, 1, 2, 5, 5});
  segcase(rng, "one-empty", 10, {3, 3});
  segcase(rng, "bad", 10, {0, 5, 4, 100});
  segcase(rng, "overlap-overflow", 10000, {0, 10000, 0, 10000, 0, 10000, 0, 10000, 0, 10000, 3});
  segcase(rng, "one-huge", 70001, {0, 70001});
  segcase(rng, "two-huge-offset", 70001, {1, 40000, 70000});
  {
    std::vector<unsigned> off = {0};
    size_t n = 60000; unsigned pos = 0;
    while (pos < n) { unsigned len = (rng() % 5 == 0) ? rng() % 9000 : rng() % 40; pos = std::min<size_t>(n, pos + len); off.push_back(pos); }
    segcase(rng, "mixed", n, off);
  }
  {
    std::vector<unsigned> off;
    for (unsigned i = 0; i <= 3000; i++) off.push_back(i * 7);
    segcase(rng, "many-tiny", 21000, off);
  }
  // bounds
  for (size_t pts : {0, 1, 2, 31, 128, 129, 385, 1000, 40001}) {
    auto s = gen(rng, 3 * pts);
    unsigned n = 3 * pts;
    unsigned g = std::max<unsigned>(1, std::min<unsigned>((n + 384 * 16 - 1) / (384 * 16), SMS * 5));
    std::vector<float> part(6 * g), out(8, 7.f);
    launch(reduce_bounds_f32, g, 384, (const float*)(n ? s.data() : nullptr), part.data(), &counters[3], out.data() + 1, n);
    if (counters[3]) { printf("FAIL bounds counter\n"); fails++; counters[3] = 0; }
    for (int a = 0; a < 3; a++) {
      std::vector<float> c;
      for (size_t i = a; i < n; i += 3) c.push_back(s[i]);
      check("bounds min " + std::to_string(pts), out[1 + a], refMin(c.data(), c.size()));
      check("bounds max " + std::to_string(pts), out[4 + a], refMax(c.data(), c.size()));
    }
    check("bounds guard", out[0], 7.f); check("bounds guard", out[7], 7.f);
    printf("bounds %zu done, fails %d\n", pts, fails); fflush(stdout);
  }
  printf("TOTAL FAILS %d\n", fails);
  return fails != 0;
}
