// Emulated tests of kernels/scan.cu, compact.cu and sort.cu against reference
// loops (see scan/emu_test.go). Argument: scan, seg, compact, sort, quick or
// nothing for all.
#include "emu.h"
inline int g_prefix_mode = 0; // 0: always publish; 1: never; 2: every 5th tile
#define KD_SCAN_PUBLISH_PREFIX(tile) (g_prefix_mode == 0 || (g_prefix_mode == 2 && (tile) % 5 == 3))
#include "scan.cu"
#include "compact.cu"
#include "sort.cu"
#include <random>
#include <string>
#include <algorithm>
#include <numeric>
#include <functional>

static int fails = 0;
template <class T> static void expect(const std::string &what, const std::vector<T> &got, const std::vector<T> &want, size_t n) {
	for (size_t i = 0; i < n; i++) {
		if (tobits(got[i]) != tobits(want[i])) {
			if (fails++ < 40) printf("FAIL %s: [%zu] got %g want %g\n", what.c_str(), i, (double)got[i], (double)want[i]);
			return;
		}
	}
}
static void expect1(const std::string &what, uint64_t got, uint64_t want) {
	if (got != want && fails++ < 40) printf("FAIL %s: got %llu want %llu\n", what.c_str(), (unsigned long long)got, (unsigned long long)want);
}

const unsigned kGridCap = 6; // grid-stride kernels: few blocks in emulation
static unsigned gs(size_t n, unsigned threads) { return (unsigned)std::max<size_t>(1, std::min<size_t>((n + threads - 1) / threads, kGridCap)); }
static unsigned tiles(size_t n, size_t tile = 4096) { return (unsigned)((n + tile - 1) / tile); }
const size_t kTileV2 = 8192; // kd_scan::TilingP32 (production, compact_fused_u32)
static_assert(kd_scan::TilingP32::kTile == kTileV2 && kd_scan::TilingP24::kTile == 6144 &&
              kd_scan::TilingP16::kTile == 4096 && kd_scan::TilingV1::kTile == 4096, "tiles");

// Guarded buffer: G guard words each side.
const size_t G = 64;
template <class T> struct Buf {
	std::vector<T> v;
	size_t n;
	T guard;
	Buf(size_t n_, T g) : v(n_ + 2 * G, g), n(n_), guard(g) {}
	T *p() { return v.data() + G; }
	std::vector<T> out() { return std::vector<T>(v.begin() + G, v.begin() + G + n); }
	void check(const std::string &what) {
		for (size_t i = 0; i < G; i++)
			if (tobits(v[i]) != tobits(guard) || tobits(v[G + n + i]) != tobits(guard)) {
				if (fails++ < 40) printf("FAIL %s: guard overwritten\n", what.c_str());
				return;
			}
	}
};

static std::vector<unsigned long long> state;
static unsigned long long *fresh_state(size_t n) {
	state.assign(tiles(n) + 1, 0ull);
	return state.data();
}

// production: family 0 runs the default kernels (production, TilingP32),
// 1 production-v1, 2 production24, 3 production16, 4 production-bid; 5..10
// the tuning kernels (scan/tuning.go), with their tiles and block sizes.
const char *kFamilies[] = {"production", "production-v1", "production-24", "production-16", "production-bid",
                           "production-bid-32x4", "production-bid-24", "production-bid-noahead",
                           "production-bid-ahead1", "production-bid-ahead3", "production-bid-ahead6"};
constexpr int kNumFamilies = 11, kOldFamilies = 5;
const size_t kFamilyTile[kNumFamilies] = {kTileV2, 4096, 6144, 4096, kTileV2, 8192, 6144, 8192, 8192, 8192, 8192};
const unsigned kFamilyThreads[kNumFamilies] = {256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256};
template <class V> static void production(const V *src, V *dst, size_t n, bool incl, unsigned *total, int family = 0) {
	typedef void (*K)(const V *, V *, unsigned long long, unsigned long long *, unsigned *);
	K k;
	if constexpr (std::is_same_v<V, float>) {
		const K ks[kNumFamilies][2] = {{scan_excl_production_f32, scan_incl_production_f32},
		                    {scan_excl_production_v1_f32, scan_incl_production_v1_f32},
		                    {scan_excl_production24_f32, scan_incl_production24_f32},
		                    {scan_excl_production16_f32, scan_incl_production16_f32},
		                    {scan_excl_productionbid_f32, scan_incl_productionbid_f32},
		                    {scan_excl_productionbid_32x4_f32, scan_incl_productionbid_32x4_f32},
		                    {scan_excl_productionbid_24_f32, scan_incl_productionbid_24_f32},
		                    {scan_excl_productionbid_noahead_f32, scan_incl_productionbid_noahead_f32},
		                    {scan_excl_productionbid_ahead1_f32, scan_incl_productionbid_ahead1_f32},
		                    {scan_excl_productionbid_ahead3_f32, scan_incl_productionbid_ahead3_f32},
		                    {scan_excl_productionbid_ahead6_f32, scan_incl_productionbid_ahead6_f32}};
		k = ks[family][incl];
	} else {
		const K ks[kNumFamilies][2] = {{scan_excl_production_u32, scan_incl_production_u32},
		                    {scan_excl_production_v1_u32, scan_incl_production_v1_u32},
		                    {scan_excl_production24_u32, scan_incl_production24_u32},
		                    {scan_excl_production16_u32, scan_incl_production16_u32},
		                    {scan_excl_productionbid_u32, scan_incl_productionbid_u32},
		                    {scan_excl_productionbid_32x4_u32, scan_incl_productionbid_32x4_u32},
		                    {scan_excl_productionbid_24_u32, scan_incl_productionbid_24_u32},
		                    {scan_excl_productionbid_noahead_u32, scan_incl_productionbid_noahead_u32},
		                    {scan_excl_productionbid_ahead1_u32, scan_incl_productionbid_ahead1_u32},
		                    {scan_excl_productionbid_ahead3_u32, scan_incl_productionbid_ahead3_u32},
		                    {scan_excl_productionbid_ahead6_u32, scan_incl_productionbid_ahead6_u32}};
		k = ks[family][incl];
	}
	InOrder io(family >= 4); // the production-bid families: tile numbers from blockIdx.x
	launch(k, tiles(n, kFamilyTile[family]), kFamilyThreads[family], src, dst, (unsigned long long)n, fresh_state(n), total);
}

template <class V> static std::vector<V> ref_scan(const std::vector<V> &s, bool incl) {
	std::vector<V> o(s.size());
	V acc = 0;
	for (size_t i = 0; i < s.size(); i++) {
		if (incl) { acc += s[i]; o[i] = acc; }
		else { o[i] = acc; acc += s[i]; }
	}
	return o;
}

template <class V> static std::vector<V> rnd(size_t n, unsigned seed) {
	std::mt19937 r(seed);
	std::vector<V> s(n);
	for (auto &x : s) {
		if constexpr (std::is_same_v<V, float>) x = (float)(r() % 8);
		else x = r();
	}
	return s;
}

template <class V> static void teaching(const std::string &variant, const V *src, V *dst, size_t n, bool incl) {
	constexpr bool F = std::is_same_v<V, float>;
	int inc = incl ? 1 : 0;
	if (variant == "naive") {
		std::vector<V> a(n);
		launch(F ? (void (*)(const V *, V *, unsigned long long, int))scan_naive_init_f32 : (void (*)(const V *, V *, unsigned long long, int))scan_naive_init_u32, gs(n, 256), 256, src, a.data(), (unsigned long long)n, inc);
		V *cur = a.data(), *other = dst;
		for (size_t d = 1; d < n; d <<= 1) {
			launch(F ? (void (*)(const V *, V *, unsigned long long, unsigned long long))scan_naive_step_f32 : (void (*)(const V *, V *, unsigned long long, unsigned long long))scan_naive_step_u32, gs(n, 256), 256, (const V *)cur, other, (unsigned long long)n, (unsigned long long)d);
			std::swap(cur, other);
		}
		if (cur != dst) launch(scan_copy_u32, gs(n, 256), 256, (unsigned *)dst, (const unsigned *)cur, (unsigned long long)n);
		return;
	}
	if (variant == "we" || variant == "we-threads") {
		size_t m = 1;
		while (m < n) m <<= 1;
		std::vector<V> a(m, (V)12345);
		typedef void (*KL)(const V *, V *, unsigned long long, unsigned long long);
		typedef void (*KS)(V *, unsigned long long, unsigned long long);
		typedef void (*KF)(const V *, const V *, V *, unsigned long long, int);
		launch(F ? (KL)scan_we_load_f32 : (KL)scan_we_load_u32, gs(m, 256), 256, src, a.data(), (unsigned long long)n, (unsigned long long)m);
		bool th = variant == "we-threads";
		KS up = th ? (F ? (KS)scan_we_up_threads_f32 : (KS)scan_we_up_threads_u32) : (F ? (KS)scan_we_up_f32 : (KS)scan_we_up_u32);
		KS down = th ? (F ? (KS)scan_we_down_threads_f32 : (KS)scan_we_down_threads_u32) : (F ? (KS)scan_we_down_f32 : (KS)scan_we_down_u32);
		for (size_t s = 2; s <= m; s <<= 1) launch(up, gs(th ? m / s : m, 256), 256, a.data(), (unsigned long long)m, (unsigned long long)s);
		a[m - 1] = 0;
		for (size_t s = m; s >= 2; s >>= 1) launch(down, gs(th ? m / s : m, 256), 256, a.data(), (unsigned long long)m, (unsigned long long)s);
		launch(F ? (KF)scan_we_finish_f32 : (KF)scan_we_finish_u32, gs(n, 256), 256, (const V *)a.data(), src, dst, (unsigned long long)n, inc);
		return;
	}
	// shared-naive / shared-we: recursive block sums.
	typedef void (*KB)(const V *, V *, V *, unsigned long long, int);
	typedef void (*KA)(V *, const V *, unsigned long long);
	bool nv = variant == "shared-naive";
	KB kb = nv ? (F ? (KB)scan_block_naive_f32 : (KB)scan_block_naive_u32) : (F ? (KB)scan_block_we_f32 : (KB)scan_block_we_u32);
	unsigned threads = nv ? 512 : 256;
	std::vector<V> sums(n / 256 + 64, (V)777);
	std::function<void(const V *, V *, size_t, int, V *)> rec = [&](const V *in, V *out, size_t n, int inc, V *sm) {
		size_t nb = (n + 511) / 512;
		launch(kb, (unsigned)nb, threads, in, out, sm, (unsigned long long)n, inc);
		if (nb == 1) return;
		V *next = sm + ((nb + 3) & ~(size_t)3);
		rec(sm, sm, nb, 0, next);
		launch(F ? (KA)scan_add_sums_f32 : (KA)scan_add_sums_u32, gs(n, 256), 256, out, (const V *)sm, (unsigned long long)n);
	};
	rec(src, dst, n, inc, sums.data());
}

// test_scans: families [f0, f1) (the first five by default) and, unless
// tuning_only, the teaching variants.
template <class V> static void test_scans(size_t n, int f0 = 0, int f1 = kOldFamilies, bool tuning_only = false) {
	auto src = rnd<V>(n, (unsigned)n);
	for (int incl = 0; incl < 2; incl++) {
		auto want = ref_scan(src, incl);
		for (int v1 = f0; v1 < f1; v1++)
		for (int mode = 0; mode < 3; mode++) {
			g_prefix_mode = mode;
			Buf<V> in(n, (V)0), out(n, (V)-5);
			std::copy(src.begin(), src.end(), in.p());
			unsigned total = 0xdeadbeef;
			production(in.p(), out.p(), n, incl, &total, v1);
			std::string what = std::string(kFamilies[v1]) + " " + (incl ? "incl" : "excl") + " n=" + std::to_string(n) + " mode=" + std::to_string(mode) + (std::is_same_v<V, float> ? " f32" : " u32");
			expect(what, out.out(), want, n);
			out.check(what);
			V sum = 0;
			for (auto x : src) sum += x;
			expect1(what + " total", total, tobits(sum));
			// in place
			production(in.p(), in.p(), n, incl, nullptr, v1);
			expect(what + " in place", in.out(), want, n);
			// unaligned (offset by one word): scalar path
			Buf<V> in2(n + 1, (V)0), out2(n + 1, (V)-5);
			std::copy(src.begin(), src.end(), in2.p() + 1);
			production(in2.p() + 1, out2.p() + 1, n, incl, nullptr, v1);
			auto o2 = out2.out();
			expect(what + " unaligned", std::vector<V>(o2.begin() + 1, o2.end()), want, n);
		}
		g_prefix_mode = 0;
		if (n <= 70000 && !tuning_only) {
			for (std::string v : {"naive", "we", "we-threads", "shared-naive", "shared-we"}) {
				Buf<V> in(n, (V)0), out(n, (V)-5);
				std::copy(src.begin(), src.end(), in.p());
				teaching(v, (const V *)in.p(), out.p(), n, incl);
				std::string what = v + (incl ? " incl" : " excl") + " n=" + std::to_string(n) + (std::is_same_v<V, float> ? " f32" : " u32");
				expect(what, out.out(), want, n);
				out.check(what);
				teaching(v, (const V *)in.p(), in.p(), n, incl);
				expect(what + " in place", in.out(), want, n);
			}
		}
	}
}

template <class V> static void test_seg(size_t n, unsigned every) {
	auto src = rnd<V>(n, (unsigned)n + 1);
	std::mt19937 r(n * every);
	std::vector<unsigned> heads(n);
	for (auto &h : heads) h = (r() % every == 0) ? (r() | 1) : 0;
	for (int incl = 0; incl < 2; incl++) {
		std::vector<V> want(n);
		V acc = 0;
		for (size_t i = 0; i < n; i++) {
			if (heads[i]) acc = 0;
			if (incl) { acc += src[i]; want[i] = acc; }
			else { want[i] = acc; acc += src[i]; }
		}
		for (int mode = 0; mode < 3; mode++) {
			g_prefix_mode = mode;
			for (int v1 = 0; v1 < 2; v1++) {
			Buf<V> out(n, (V)-5);
			void (*k)(const V *, const unsigned *, V *, unsigned long long, unsigned long long *);
			if constexpr (std::is_same_v<V, float>) {
				if (v1) k = incl ? segscan_incl_v1_f32 : segscan_excl_v1_f32;
				else k = incl ? segscan_incl_f32 : segscan_excl_f32;
			} else {
				if (v1) k = incl ? segscan_incl_v1_u32 : segscan_excl_v1_u32;
				else k = incl ? segscan_incl_u32 : segscan_excl_u32;
			}
			launch(k, tiles(n), 256, (const V *)src.data(), (const unsigned *)heads.data(), out.p(), (unsigned long long)n, fresh_state(n));
			std::string what = std::string(v1 ? "segscan-v1 " : "segscan ") + (incl ? "incl" : "excl") + " n=" + std::to_string(n) + " every=" + std::to_string(every) + " mode=" + std::to_string(mode);
			expect(what, out.out(), want, n);
			out.check(what);
			}
		}
	}
	g_prefix_mode = 0;
}

// test_seg_off: the offsets form (segscan_tile_starts + segscan_off_*)
// against the reference loop over the same segments; every `every`-th item
// about starts a segment, some starts are repeated (empty segments) and the
// list ends with n (twice: an empty last segment).
template <class V> static void test_seg_off(size_t n, unsigned every) {
	auto src = rnd<V>(n, (unsigned)n + 7);
	std::mt19937 r(n * every + 1);
	std::vector<unsigned> off{0}, heads(n, 0);
	if (n > 0) heads[0] = 1;
	for (size_t i = 1; i < n; i++)
		if (r() % every == 0) {
			off.push_back((unsigned)i);
			heads[i] = 1;
			if (r() % 4 == 0) off.push_back((unsigned)i); // an empty segment
		}
	off.push_back((unsigned)n);
	off.push_back((unsigned)n);
	const size_t ntiles = tiles(n);
	for (int incl = 0; incl < 2; incl++) {
		std::vector<V> want(n);
		V acc = 0;
		for (size_t i = 0; i < n; i++) {
			if (heads[i]) acc = 0;
			if (incl) { acc += src[i]; want[i] = acc; }
			else { want[i] = acc; acc += src[i]; }
		}
		for (int mode = 0; mode < 3; mode++) {
			g_prefix_mode = mode;
			Buf<V> out(n, (V)-5);
			Buf<unsigned> ts(ntiles, 0u);
			launch(segscan_tile_starts, gs(ntiles, 256), 256, (const unsigned *)off.data(), (unsigned long long)off.size(), ts.p(), (unsigned long long)ntiles, (unsigned long long)4096, (unsigned long long *)nullptr);
			std::vector<unsigned> want_ts(ntiles);
			for (size_t t = 0; t < ntiles; t++)
				want_ts[t] = (unsigned)(std::lower_bound(off.begin(), off.end(), (unsigned)(t * 4096)) - off.begin());
			std::string what = std::string("segscan-off ") + (incl ? "incl" : "excl") + " n=" + std::to_string(n) + " every=" + std::to_string(every) + " mode=" + std::to_string(mode) + (std::is_same_v<V, float> ? " f32" : " u32");
			expect(what + " tile starts", ts.out(), want_ts, ntiles);
			ts.check(what + " tile starts");
			void (*k)(const V *, const unsigned *, const unsigned *, unsigned long long, V *, unsigned long long, unsigned long long *);
			if constexpr (std::is_same_v<V, float>) k = incl ? segscan_off_incl_f32 : segscan_off_excl_f32;
			else k = incl ? segscan_off_incl_u32 : segscan_off_excl_u32;
			InOrder io(true); // segscan_off takes tile numbers from blockIdx.x
			launch(k, tiles(n), 256, (const V *)src.data(), (const unsigned *)off.data(), (const unsigned *)ts.p(), (unsigned long long)off.size(), out.p(), (unsigned long long)n, fresh_state(n));
			expect(what, out.out(), want, n);
			// The state zeroed by segscan_tile_starts instead of a memset.
			{
				unsigned long long *st = fresh_state(n);
				std::fill(state.begin(), state.end(), ~0ull);
				Buf<unsigned> ts2(ntiles, 0u);
				launch(segscan_tile_starts, gs(ntiles, 256), 256, (const unsigned *)off.data(), (unsigned long long)off.size(), ts2.p(), (unsigned long long)ntiles, (unsigned long long)4096, st);
				Buf<V> out2(n, (V)-5);
				launch(k, tiles(n), 256, (const V *)src.data(), (const unsigned *)off.data(), (const unsigned *)ts2.p(), (unsigned long long)off.size(), out2.p(), (unsigned long long)n, st);
				expect(what + " state zeroed by tile starts", out2.out(), want, n);
			}
			out.check(what);
			// in place
			std::vector<V> in(src);
			launch(k, tiles(n), 256, (const V *)in.data(), (const unsigned *)off.data(), (const unsigned *)ts.p(), (unsigned long long)off.size(), in.data(), (unsigned long long)n, fresh_state(n));
			expect(what + " in place", in, want, n);
		}
	}
	g_prefix_mode = 0;
}

// The fused compaction kernels: 0 fused, 1 fused-v1, 2 fused-staged,
// 3 fused-prefetch, 4 fused-async; 5, 6 the tuning kernels (scan/tuning.go).
typedef void (*KC)(const unsigned *, const unsigned *, unsigned *, unsigned long long, unsigned long long,
                   unsigned long long *, unsigned *);
struct CompactKernel {
	const char *name;
	KC k;
	size_t tile;
	unsigned threads;
	bool bid; // tile numbers from blockIdx.x: blocks must run in index order
};
const CompactKernel kCompact[] = {
    {"fused", compact_fused_u32, kTileV2, 256, false},
    {"fused-v1", compact_fused_v1_u32, 4096, 256, false},
    {"fused-staged", compact_fused_staged_u32, kTileV2, 256, false},
    {"fused-prefetch", compact_fused_prefetch_u32, 4096, 256, false},
    {"fused-async", compact_fused_async_u32, 4096, 256, true},
    {"fused-async-24-bid", compact_fused_async_24bid_u32, 6144, 256, true},
    {"fused-async-nobackoff", compact_fused_async_nobackoff_u32, 4096, 256, true},
};
constexpr int kNumCompact = 7, kOldCompact = 5;

// test_compact: kernels [c0, c1) (the first five by default); the tuning
// kernels also write to a dst one word off 16-byte alignment; unless
// tuning_only, the three-kernel form too.
static void test_compact(size_t n, unsigned density, int c0 = 0, int c1 = kOldCompact, bool tuning_only = false) {
	std::mt19937 r(n + density);
	std::vector<unsigned> src(n), flags(n);
	std::vector<unsigned> want;
	for (size_t i = 0; i < n; i++) {
		src[i] = r();
		flags[i] = (r() % 100 < density) ? (r() | 1) : 0;
		if (flags[i]) want.push_back(src[i]);
	}
	for (int mode = 0; mode < 3; mode++) {
		g_prefix_mode = mode;
		for (size_t cap : {n, want.size() / 2}) {
			for (int v1 = c0; v1 < c1; v1++) {
			const CompactKernel &ck = kCompact[v1];
			for (int off = 0; off < (v1 >= kOldCompact ? 2 : 1); off++) { // off: dst one word past 16-byte alignment
			Buf<unsigned> out(cap + off, 0xabababab);
			unsigned count = 0xdeadbeef;
			InOrder io(ck.bid);
			launch(ck.k, tiles(n, ck.tile), ck.threads, (const unsigned *)src.data(), (const unsigned *)flags.data(), out.p() + off, (unsigned long long)n, (unsigned long long)cap, fresh_state(n), &count);
			std::string what = std::string("compact ") + ck.name + " n=" + std::to_string(n) + " d=" + std::to_string(density) + " cap=" + std::to_string(cap) + " mode=" + std::to_string(mode) + " off=" + std::to_string(off);
			expect1(what + " count", count, want.size());
			auto o = out.out();
			if (off) expect1(what + " word before dst", o[0], 0xababababu);
			expect(what, std::vector<unsigned>(o.begin() + off, o.end()), want, std::min(cap, want.size()));
			out.check(what);
			}
			}
			if (tuning_only) continue;
			std::string what = "compact n=" + std::to_string(n) + " d=" + std::to_string(density) + " cap=" + std::to_string(cap) + " mode=" + std::to_string(mode);
			// scan-scatter
			Buf<unsigned> out2(cap, 0xabababab);
			std::vector<unsigned> f(n);
			unsigned count2 = 0xdeadbeef;
			launch(compact_flags_u32, gs(n, 256), 256, (const unsigned *)flags.data(), f.data(), (unsigned long long)n);
			production(f.data(), f.data(), n, false, &count2);
			launch(compact_scatter_u32, gs(n, 256), 256, (const unsigned *)src.data(), (const unsigned *)flags.data(), (const unsigned *)f.data(), out2.p(), (unsigned long long)n, (unsigned long long)cap);
			expect1(what + " scan-scatter count", count2, want.size());
			expect(what + " scan-scatter", out2.out(), want, std::min(cap, want.size()));
			out2.check(what + " scan-scatter");
			// mask: bits and chunk counts, scan of the counts, gather; src
			// and dst also one word off 16-byte alignment (scalar loads).
			for (int off = 0; off < 2; off++) {
				const size_t chunks = (n + 1023) / 1024;
				std::vector<unsigned> mask(32 * chunks, 0xcdcdcdcd), counts(chunks + 1, 0xcdcdcdcd);
				std::vector<unsigned> fo(n + off), so(n + off);
				std::copy(flags.begin(), flags.end(), fo.begin() + off);
				std::copy(src.begin(), src.end(), so.begin() + off);
				Buf<unsigned> out3(cap + off, 0xabababab);
				unsigned count3 = 0xdeadbeef;
				const unsigned grid = (unsigned)((chunks + 7) / 8);
				launch(compact_mask_u32, grid, 256, (const unsigned *)fo.data() + off, (unsigned long long)n, mask.data(), counts.data());
				production(counts.data(), counts.data(), chunks, false, &count3);
				expect1(what + " mask count word after the counts", counts[chunks], 0xcdcdcdcdu);
				launch(compact_gather_u32, grid, 256, (const unsigned *)so.data() + off, (const unsigned *)mask.data(), (const unsigned *)counts.data(), out3.p() + off, (unsigned long long)n, (unsigned long long)cap);
				std::string w3 = what + " mask off=" + std::to_string(off);
				expect1(w3 + " count", count3, want.size());
				auto o = out3.out();
				if (off) expect1(w3 + " word before dst", o[0], 0xababababu);
				expect(w3, std::vector<unsigned>(o.begin() + off, o.end()), want, std::min(cap, want.size()));
				out3.check(w3);
			}
		}
	}
	g_prefix_mode = 0;
}

// prefetch (lsd8 only): sort_scatter8_prefetch_u32 instead of sort_scatter8_u32.
static void test_sort(size_t n, unsigned range, bool split, bool with_vals, int sms, bool prefetch = false) {
	std::mt19937 r(n + range);
	std::vector<unsigned> keys(n), vals(n);
	for (size_t i = 0; i < n; i++) { keys[i] = range ? r() % range : r(); vals[i] = (unsigned)i; }
	std::vector<size_t> idx(n);
	std::iota(idx.begin(), idx.end(), 0);
	std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
	std::vector<unsigned> wk(n), wv(n);
	for (size_t i = 0; i < n; i++) { wk[i] = keys[idx[i]]; wv[i] = vals[idx[i]]; }
	std::vector<unsigned> res(4, 0);
	launch(sort_max_u32, gs(n, 2048), 256, (const unsigned *)keys.data(), (unsigned long long)n, res.data());
	unsigned mx = *std::max_element(keys.begin(), keys.end());
	expect1("max", res[0], mx);
	int nbits = mx ? 32 - __builtin_clz(mx) : 0;
	std::vector<unsigned> k = keys, v = vals, ak(n), av(n);
	unsigned *inK = k.data(), *inV = with_vals ? v.data() : nullptr, *altK = ak.data(), *altV = with_vals ? av.data() : nullptr;
	int passes = 0;
	if (split) {
		std::vector<unsigned> flags(n);
		for (int bit = 0; bit < nbits; bit++) {
			launch(sort_split_flags_u32, gs(n, 256), 256, (const unsigned *)inK, flags.data(), (unsigned long long)n, (unsigned)bit);
			production(flags.data(), flags.data(), n, false, &res[1]);
			launch(sort_split_scatter_u32, gs(n, 256), 256, (const unsigned *)inK, (const unsigned *)inV, altK, altV, (const unsigned *)flags.data(), (const unsigned *)&res[1], (unsigned long long)n, (unsigned)bit);
			std::swap(inK, altK);
			std::swap(inV, altV);
			passes++;
		}
	} else {
		size_t subs = (n + 2047) / 2048;
		size_t blocks = std::min<size_t>(subs, sms * 4);
		size_t per = (subs + blocks - 1) / blocks;
		blocks = (subs + per - 1) / per;
		std::vector<unsigned> hist(256 * blocks);
		for (int shift = 0; shift < nbits; shift += 8) {
			launch(sort_hist8_u32, (unsigned)blocks, 256, (const unsigned *)inK, (unsigned long long)n, (unsigned)shift, hist.data(), (unsigned long long)per);
			production(hist.data(), hist.data(), hist.size(), false, nullptr);
			launch(prefetch ? sort_scatter8_prefetch_u32 : sort_scatter8_u32, (unsigned)blocks, 256, (const unsigned *)inK, (const unsigned *)inV, altK, altV, (unsigned long long)n, (unsigned)shift, (const unsigned *)hist.data(), (unsigned long long)per);
			std::swap(inK, altK);
			std::swap(inV, altV);
			passes++;
		}
	}
	std::vector<unsigned> gk(inK, inK + n);
	std::string what = std::string(split ? "split" : prefetch ? "lsd8-prefetch" : "lsd8") + " n=" + std::to_string(n) + " range=" + std::to_string(range) + (with_vals ? " pairs" : " keys");
	expect(what + " keys", gk, wk, n);
	if (with_vals) {
		std::vector<unsigned> gv(inV, inV + n);
		expect(what + " vals", gv, wv, n);
	}
}

// onesweep: kind 0 random below range (full 32 bits when 0), 1 sorted, 2
// reverse-sorted. use_mask: skip the passes sort_onesweep_scan_u32 marks
// as moving nothing (the host path without known bits); otherwise run every
// pass below the highest set bit (SortPairsBitsWith).
static void test_onesweep(size_t n, unsigned range, int kind, bool with_vals, bool use_mask, unsigned hist_grid) {
	std::mt19937 r(n * 7 + range + kind);
	std::vector<unsigned> keys(n), vals(n);
	for (size_t i = 0; i < n; i++) {
		keys[i] = range ? r() % range : r();
		vals[i] = (unsigned)i * 3u + 1u;
	}
	if (kind == 1) std::sort(keys.begin(), keys.end());
	if (kind == 2) std::sort(keys.begin(), keys.end(), std::greater<unsigned>());
	std::vector<size_t> idx(n);
	std::iota(idx.begin(), idx.end(), 0);
	std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
	std::vector<unsigned> wk(n), wv(n);
	for (size_t i = 0; i < n; i++) { wk[i] = keys[idx[i]]; wv[i] = vals[idx[i]]; }
	std::string what = "onesweep n=" + std::to_string(n) + " range=" + std::to_string(range) + " kind=" + std::to_string(kind) + (with_vals ? " pairs" : " keys") + (use_mask ? " mask" : " bits") + " mode=" + std::to_string(g_prefix_mode);

	std::vector<unsigned> hist(4 * 256, 0), want_hist(4 * 256, 0);
	for (unsigned k : keys)
		for (int p = 0; p < 4; p++) want_hist[p * 256 + ((k >> (8 * p)) & 255u)]++;
	launch(sort_onesweep_hist_u32, hist_grid, 256, (const unsigned *)keys.data(), (unsigned long long)n, hist.data());
	expect(what + " hist", hist, want_hist, hist.size());
	unsigned mask = 0xdeadbeef, want_mask = 0;
	for (int p = 0; p < 4; p++) {
		bool trivial = false;
		for (int d = 0; d < 256; d++) trivial |= want_hist[p * 256 + d] == n;
		if (!trivial) want_mask |= 1u << p;
		unsigned run = 0;
		for (int d = 0; d < 256; d++) { unsigned c = want_hist[p * 256 + d]; want_hist[p * 256 + d] = run; run += c; }
	}
	launch(sort_onesweep_scan_u32, 1, 256, hist.data(), (unsigned long long)n, &mask);
	expect(what + " offsets", hist, want_hist, hist.size());
	expect1(what + " mask", mask, want_mask);
	if (!use_mask) {
		unsigned mx = n ? *std::max_element(keys.begin(), keys.end()) : 0;
		int nbits = mx ? 32 - __builtin_clz(mx) : 0;
		mask = 0;
		for (int p = 0; 8 * p < nbits; p++) mask |= 1u << p;
	}
	const size_t tile = 3840;
	size_t ntiles = (n + tile - 1) / tile;
	Buf<unsigned> k(n, 0), v(n, 0), ak(n, 0xabababab), av(n, 0xcdcdcdcd);
	std::copy(keys.begin(), keys.end(), k.p());
	std::copy(vals.begin(), vals.end(), v.p());
	unsigned *inK = k.p(), *inV = with_vals ? v.p() : nullptr, *altK = ak.p(), *altV = with_vals ? av.p() : nullptr;
	std::vector<unsigned> st(1 + ntiles * 256);
	for (int p = 0; p < 4; p++) {
		if (!(mask >> p & 1u)) continue;
		std::fill(st.begin(), st.end(), 0u);
		launch(sort_onesweep_pass_u32, (unsigned)ntiles, 256, (const unsigned *)inK, (const unsigned *)inV, altK, altV, (unsigned long long)n, (unsigned)(8 * p), (const unsigned *)(hist.data() + 256 * p), st.data());
		std::swap(inK, altK);
		std::swap(inV, altV);
	}
	expect(what + " keys", std::vector<unsigned>(inK, inK + n), wk, n);
	if (with_vals) expect(what + " vals", std::vector<unsigned>(inV, inV + n), wv, n);
	k.check(what + " k"); v.check(what + " v"); ak.check(what + " ak"); av.check(what + " av");
}

int main(int argc, char **argv) {
	std::string only = argc > 1 ? argv[1] : "";
	if (only == "" || only == "scan") {
		for (size_t n : {1, 2, 3, 31, 32, 33, 127, 128, 129, 511, 512, 513, 4095, 4096, 4097, 6143, 6144, 6145, 8191, 8192, 8193, 12289, 16385, 33 * 4096 + 5, 33 * 6144 + 5, 33 * 8192 + 5, 70 * 4096}) {
			test_scans<unsigned>(n);
			if (n < 20000 || n == 70 * 4096) test_scans<float>(n);
			fprintf(stderr, "scan n=%zu fails=%d\n", n, fails);
		}
	}
	if (only == "" || only == "seg") {
		for (size_t n : {1, 2, 33, 4095, 4096, 4097, 40 * 4096 + 3}) {
			for (unsigned every : {1u, 3u, 100u, 5000u, 1000000u}) {
				test_seg<unsigned>(n, every);
				if (n < 5000) test_seg<float>(n, every);
				test_seg_off<unsigned>(n, every);
				if (n < 5000) test_seg_off<float>(n, every);
			}
			fprintf(stderr, "seg n=%zu fails=%d\n", n, fails);
		}
	}
	if (only == "" || only == "compact") {
		for (size_t n : {1, 2, 33, 4095, 4096, 4097, 8191, 8192, 8193, 35 * 4096 + 7, 33 * 8192 + 7}) {
			for (unsigned d : {0u, 1u, 50u, 100u}) test_compact(n, d);
			fprintf(stderr, "compact n=%zu fails=%d\n", n, fails);
		}
	}
	if (only == "" || only == "sort") {
		for (size_t n : {2, 3, 33, 2047, 2048, 2049, 20000, 70001}) {
			for (unsigned range : {0u, 1000u, 1u << 20}) {
				for (int split = 0; split < 2; split++) {
					if (split && n > 20000) continue;
					test_sort(n, range, split, true, 2);
					test_sort(n, range, split, false, 1);
					if (!split) {
						test_sort(n, range, false, true, 2, true);
						test_sort(n, range, false, false, 1, true);
						test_sort(n, range, false, true, 3, true); // uneven sub-tiles per block
					}
				}
			}
			fprintf(stderr, "sort n=%zu fails=%d\n", n, fails);
		}
	}
	if (only == "" || only == "sort" || only == "onesweep") {
		for (size_t n : {1, 2, 3, 31, 32, 33, 3839, 3840, 3841, 20000, 36 * 3840 + 7}) {
			for (int mode = 0; mode < 3; mode++) {
				g_prefix_mode = mode;
				if (n > 20000) { // past a 32-tile window: fewer cases (slow)
					test_onesweep(n, 0, 0, true, true, 3);
					test_onesweep(n, 1000, 0, false, false, 2);
					if (mode == 1) test_onesweep(n, 1u << 20, 2, true, true, 2);
					continue;
				}
				for (unsigned range : {0u, 1000u, 1u << 20, 1u})
					test_onesweep(n, range, 0, true, true, gs(n, 4096));
				test_onesweep(n, 0, 0, false, false, 3);
				test_onesweep(n, 1000, 0, true, false, 1);
				test_onesweep(n, 0, 1, true, true, 2);
				test_onesweep(n, 1u << 20, 2, true, true, 2);
			}
			g_prefix_mode = 0;
			fprintf(stderr, "onesweep n=%zu fails=%d\n", n, fails);
		}
	}
	if (only == "new") { // the kernels of the second session, a few sizes each
		test_seg_off<unsigned>(1, 1);
		test_seg_off<unsigned>(4097, 3);
		test_seg_off<float>(4097, 100);
		test_seg_off<unsigned>(8192, 1);
		test_seg_off<unsigned>(40 * 4096 + 3, 100);
		test_seg_off<unsigned>(40 * 4096 + 3, 1000000);
		test_compact(4097, 50);
		test_compact(33, 100);
		test_compact(35 * 4096 + 7, 50);
		test_scans<unsigned>(8193);
	}
	if (only == "" || only == "tuning") { // the tuning kernels (scan/tuning.go), every one past a 32-tile window
		for (size_t n : {1, 33, 4097, 8193, 12289, 33 * 12288 + 5})
			test_scans<unsigned>(n, kOldFamilies, kNumFamilies, true);
		test_scans<float>(12289, kOldFamilies, kNumFamilies, true);
		for (size_t n : {1, 33, 4097, 8193, 33 * 8192 + 7})
			for (unsigned d : {1u, 50u, 100u}) test_compact(n, d, kOldCompact, kNumCompact, true);
		fprintf(stderr, "tuning fails=%d\n", fails);
	}
	if (only == "quick" || only == "tuning-quick") { // the tuning kernels, a few sizes
		for (size_t n : {33, 8193, 12289}) test_scans<unsigned>(n, kOldFamilies, kNumFamilies, true);
		test_compact(4097, 50, kOldCompact, kNumCompact, true);
		test_compact(33 * 8192 + 7, 50, kOldCompact, kNumCompact, true);
	}
	if (only == "segoff") { // the offsets form alone
		for (size_t n : {1, 2, 33, 4095, 4096, 4097, 40 * 4096 + 3})
			for (unsigned every : {1u, 3u, 100u, 5000u, 1000000u}) {
				test_seg_off<unsigned>(n, every);
				if (n < 5000) test_seg_off<float>(n, every);
			}
	}
	if (only == "quick") {
		g_prefix_mode = 1;
		test_onesweep(36 * 3840 + 7, 0, 0, true, true, 3);
		g_prefix_mode = 0;
		// One size per kernel family past the 32-tile look-back window.
		test_scans<unsigned>(33 * 8192 + 5); // every family past one 32-tile window
		test_scans<unsigned>(8193);
		test_seg<unsigned>(40 * 4096 + 3, 100);
		test_seg_off<unsigned>(40 * 4096 + 3, 100);
		test_seg_off<unsigned>(40 * 4096 + 3, 9000);
		test_seg_off<float>(4097, 3);
		test_seg_off<unsigned>(8192, 1);
		test_compact(33 * 8192 + 7, 50);
		test_sort(70001, 0, false, true, 2);
		test_sort(70001, 0, false, true, 2, true);
		test_sort(20000, 1u << 20, false, false, 3, true);
		test_sort(20000, 1000, true, true, 2);
	}
	printf("%s: %d failures, %d launches\n", fails ? "FAILED" : "PASSED", fails, g_launches);
	return fails != 0;
}
