// CPU emulation check of the large-phase kernels of kernels/kdtree.cu: the
// warp-per-node SAH (kdtree_sah_f32), the shared-memory histograms
// (kdtree_bin_u32), kdtree_nodewords_u32, kdtree_next_f32 and
// kdtree_park_f32, against sequential references. See README.md.
#include "cuda_emu.h"
#include "emu_extra.h"
#include "/tmp/kdtree_large_part.cu"
#include <random>
#include <cassert>

using namespace kd_tree;
static std::mt19937 rng(7);
static int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { fails++; if (fails < 20) { printf("FAIL %s:%d ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)

// The previous one-thread-per-node kernel body (the sequential reference).
static void ref_sah(const float *box, const float *g, const unsigned *h, unsigned n, int bins, double ct, double ci,
                    double keep, unsigned *d) {
	double bc = INFINITY;
	int ba = 3, bi = 0;
	float bp = 0.0f;
	double aN = area64(box);
	for (int a = 0; a < 3; a++) {
		float lo = g[3 * a], hi = g[3 * a + 1], w = g[3 * a + 2];
		if (!(w > 0.0f)) continue;
		unsigned nL = 0, nR = n;
		for (int k = 0; k <= bins; k++) {
			if (k > 0) {
				nL += h[(2 * a) * bins + k - 1];
				nR -= h[(2 * a + 1) * bins + k - 1];
			}
			float pos = lo + (float)k * w;
			if (k == bins) pos = hi;
			if (!(pos > box[a] && pos < box[3 + a])) continue;
			double aL, aR;
			child_areas(box, a, pos, aL, aR);
			double c = split_cost(ct, ci, keep, aN, aL, aR, nL, nR);
			if (better(c, a, pos, k, bc, ba, bp, bi)) { bc = c; ba = a; bp = pos; bi = k; }
		}
	}
	if (ba > 2 || !(bc < ci * (double)n)) { d[0] = kLeaf; d[1] = 0; d[2] = 0; return; }
	d[0] = kSplit; d[1] = (unsigned)ba; d[2] = __float_as_uint(bp);
}

static void test_sah(int nn, int bins) {
	std::vector<float> nbox(6 * nn), geo(9 * nn);
	std::vector<unsigned> info(4 * nn), hist(6 * bins * nn), dec(3 * nn), want(3 * nn);
	std::uniform_int_distribution<int> small(0, 3);
	for (int s = 0; s < nn; s++) {
		for (int a = 0; a < 3; a++) {
			nbox[6 * s + a] = 0; nbox[6 * s + 3 + a] = (float)(1 + small(rng));
			if (s % 7 == 3 && a == 1) nbox[6 * s + 3 + a] = 0; // flat
			float lo = nbox[6 * s + a] + (s % 3 == 1 ? 0.25f : 0.0f), hi = nbox[6 * s + 3 + a];
			geo[9 * s + 3 * a] = lo; geo[9 * s + 3 * a + 1] = hi; geo[9 * s + 3 * a + 2] = (hi - lo) / (float)bins;
		}
		unsigned n = 0;
		int m = 1 + small(rng);
		int refs = 65 + (int)(rng() % 400);
		for (int r = 0; r < refs; r++, n++)
			for (int a = 0; a < 3; a++) {
				int k0 = rng() % bins, k1 = std::min(bins - 1, k0 + (int)(rng() % m));
				hist[(size_t)s * 6 * bins + 2 * a * bins + k0]++;
				hist[(size_t)s * 6 * bins + (2 * a + 1) * bins + k1]++;
			}
		info[4 * s + 1] = n;
		dec[3 * s] = (s % 5 == 4) ? kSplit : kPending;
		dec[3 * s + 1] = 7; dec[3 * s + 2] = 9;
		want[3 * s] = dec[3 * s]; want[3 * s + 1] = 7; want[3 * s + 2] = 9;
		if (dec[3 * s] == kPending) ref_sah(&nbox[6 * s], &geo[9 * s], &hist[(size_t)s * 6 * bins], n, bins, 1, 1.5, 0.9, &want[3 * s]);
	}
	std::vector<unsigned> before = hist;
	launch(kdtree_sah_f32, (32 * nn + 255) / 256, 256, (const float *)nbox.data(), (const unsigned *)info.data(),
	       (unsigned)nn, (const float *)geo.data(), hist.data(), bins, 1.0, 1.5, 0.9, dec.data());
	for (int i = 0; i < 3 * nn; i++) CHECK(dec[i] == want[i], "sah bins %d node %d word %d: %u want %u", bins, i / 3, i % 3, dec[i], want[i]);
	// Pending nodes' histograms are cleared, the others' left alone.
	for (size_t i = 0; i < hist.size(); i++) {
		size_t s = i / (6 * bins);
		unsigned w = want[3 * s] == kSplit && (s % 5 == 4) ? before[i] : 0;
		CHECK(hist[i] == w, "sah bins %d: hist word %zu is %u, want %u", bins, i, hist[i], w);
	}
}

static void test_bin(std::vector<unsigned> cnts, int bins) {
	unsigned nn = cnts.size();
	std::vector<unsigned> offsets(nn + 1, 0);
	for (unsigned s = 0; s < nn; s++) offsets[s + 1] = offsets[s] + cnts[s];
	unsigned n = offsets[nn];
	std::vector<float> box(6 * (size_t)n + 6), geo(9 * nn);
	std::vector<unsigned> dec(3 * nn), hist(6 * bins * nn, 0), want(6 * bins * nn, 0);
	std::uniform_real_distribution<float> u(-0.2f, 1.2f);
	for (unsigned s = 0; s < nn; s++) {
		dec[3 * s] = (s % 4 == 1) ? kSmall : kPending;
		for (int a = 0; a < 3; a++) { geo[9 * s + 3 * a] = 0; geo[9 * s + 3 * a + 1] = 1; geo[9 * s + 3 * a + 2] = 1.0f / bins; }
	}
	for (unsigned s = 0; s < nn; s++)
		for (unsigned r = offsets[s]; r < offsets[s + 1]; r++) {
			for (int a = 0; a < 3; a++) {
				float x = u(rng), y = u(rng);
				box[6 * r + a] = std::min(x, y); box[6 * r + 3 + a] = std::max(x, y);
			}
			if (dec[3 * s] != kPending) continue;
			for (int a = 0; a < 3; a++) {
				want[(size_t)s * 6 * bins + 2 * a * bins + bin_of(box[6 * r + a], 0, 1.0f / bins, bins)]++;
				want[(size_t)s * 6 * bins + (2 * a + 1) * bins + bin_of(box[6 * r + 3 + a], 0, 1.0f / bins, bins)]++;
			}
		}
	unsigned grid = std::max(1u, (n + kBinTile - 1) / kBinTile);
	launch(kdtree_bin_u32, grid, 256, (const float *)box.data(), (const unsigned *)offsets.data(), nn, n,
	       (const unsigned *)dec.data(), (const float *)geo.data(), bins, hist.data());
	for (size_t i = 0; i < hist.size(); i++) CHECK(hist[i] == want[i], "bin n %u bins %d word %zu: %u want %u", n, bins, i, hist[i], want[i]);
}

static void test_next(int nn) {
	std::vector<unsigned> info(4 * nn), dec(6 * nn), offsets(nn + 1);
	std::vector<float> nbox(6 * nn);
	unsigned off = 0, base = 0;
	for (int s = 0; s < nn; s++) {
		unsigned c = rng() % 300;
		offsets[s] = off; info[4 * s] = off; info[4 * s + 1] = c; info[4 * s + 2] = rng() % 20; off += c;
		int f = rng() % 3;
		dec[3 * s] = f; dec[3 * s + 1] = rng() % 3; dec[3 * s + 2] = __float_as_uint((float)(rng() % 100) / 7);
		for (int i = 0; i < 6; i++) nbox[6 * s + i] = (float)(rng() % 1000) / 3;
		unsigned cl = 0, cr = 0;
		if (f == kSplit) { cl = rng() % (c + 1); cr = c + 1 - cl; }
		dec[3 * nn + s] = cl; dec[4 * nn + s] = cr; dec[5 * nn + s] = base; base += cl + cr;
	}
	offsets[nn] = off;
	unsigned n = off;
	std::vector<unsigned> pre(2 * nn + 2, 12345);
	launch(kdtree_nodewords_u32, (nn + 1 + 255) / 256, 256, (const unsigned *)info.data(), (const unsigned *)dec.data(), (unsigned)nn, pre.data());
	unsigned acc = 0;
	for (auto &x : pre) { unsigned v = x; x = acc; acc += v; }
	unsigned nsplit = pre[nn];
	unsigned nn2 = 2 * nsplit;
	std::vector<unsigned> table(11 * nn2 + 1, 0xDEADBEEF);
	launch(kdtree_next_f32, (nn + 1 + 255) / 256, 256, (const float *)nbox.data(), (const unsigned *)info.data(),
	       (const unsigned *)dec.data(), (const unsigned *)dec.data() + 3 * nn, (const unsigned *)pre.data(), (unsigned)nn, nn2, base, table.data());
	// Reference: the host loop of levelCUDA.
	unsigned j = 0, park = 0;
	std::vector<unsigned> parkOff(nn);
	for (int s = 0; s < nn; s++) {
		if (dec[3 * s] != kSplit) { parkOff[s] = park; park += info[4 * s + 1]; continue; }
		unsigned cl = dec[3 * nn + s], cr = dec[4 * nn + s], cb = dec[5 * nn + s];
		int a = dec[3 * s + 1];
		float pos = __uint_as_float(dec[3 * s + 2]);
		for (int c = 0; c < 2; c++, j++) {
			unsigned o = c ? cb + cl : cb, k = c ? cr : cl;
			CHECK(table[j] == o, "next offsets %u", j);
			const unsigned *in = &table[nn2 + 1 + 4 * j];
			CHECK(in[0] == o && in[1] == k && in[2] == info[4 * s + 2] + 1 && in[3] == 0, "next info %u", j);
			const float *b = (const float *)&table[5 * nn2 + 1 + 6 * j];
			for (int i = 0; i < 6; i++) {
				float w = nbox[6 * s + i];
				if (c == 0 && i == 3 + a) w = pos;
				if (c == 1 && i == a) w = pos;
				CHECK(b[i] == w, "next box %u %d", j, i);
			}
		}
	}
	if (nn2 > 0) CHECK(table[nn2] == base, "next total");
	// Park.
	std::vector<unsigned> tri(n + 1);
	std::vector<float> box(6 * (size_t)n + 6);
	for (unsigned r = 0; r < n; r++) { tri[r] = r * 3 + 1; for (int i = 0; i < 6; i++) box[6 * r + i] = (float)r + i; }
	unsigned pbase = 17;
	std::vector<unsigned> ptri(pbase + park + 1, 0xFFFFFFFF);
	std::vector<float> pbox(6 * (pbase + park + 1), -1);
	launch(kdtree_park_f32, std::max(1u, (n + 255) / 256), 256, (const unsigned *)tri.data(), (const float *)box.data(),
	       (const unsigned *)offsets.data(), (const unsigned *)pre.data(), (unsigned)nn, n, (const unsigned *)dec.data(), pbase, ptri.data(), pbox.data());
	for (int s = 0; s < nn; s++) {
		if (dec[3 * s] == kSplit) continue;
		for (unsigned r = offsets[s]; r < offsets[s + 1]; r++) {
			unsigned d = pbase + parkOff[s] + r - offsets[s];
			CHECK(ptri[d] == tri[r], "park tri node %d ref %u", s, r);
			CHECK(pbox[6 * d + 5] == box[6 * r + 5], "park box");
		}
	}
	CHECK(ptri[pbase + park] == 0xFFFFFFFF, "park wrote past the end");
	CHECK(ptri[pbase - 1] == 0xFFFFFFFF, "park wrote before the base");
}

int main() {
	for (int bins : {2, 7, 31, 32, 33, 64, 100})
		for (int nn : {1, 7, 8, 9, 33}) test_sah(nn, bins);
	printf("sah done (%d fails)\n", fails);
	test_bin({1}, 32);
	test_bin({0, 5000, 0}, 32);
	test_bin({2047, 1, 2049, 100, 0, 3000}, 7);
	test_bin({4096, 4097}, 33);
	test_bin({10, 20, 30, 2000, 5000, 65, 66}, 1024);
	std::vector<unsigned> many;
	for (int i = 0; i < 300; i++) many.push_back(rng() % 100);
	test_bin(many, 32);
	printf("bin done (%d fails)\n", fails);
	for (int nn : {1, 2, 255, 256, 257, 1000}) test_next(nn);
	printf("next/park done (%d fails)\n", fails);
	return fails != 0;
}
