package scan

import (
	"fmt"
	"math/bits"
	"slices"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// GPU tests: every CUDA variant against the reference loops (the Go
// executor's contract), exactly, with guard items around every output.
// They skip without a GPU. Run them with -test.run GPU; -test.short leaves
// out the sizes above 2^20.

func gpuOrSkip(t *testing.T) exec.Executor {
	t.Helper()
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	return ex
}

// gpuSizes: the edge sizes around the shared-memory block (512), the
// production tiles (4096, 6144, 8192: lookbackTile) and one 32-tile
// look-back window past each, and powers of two, up to 2^24 (2^20 in
// -short).
func gpuSizes(slowVariants bool) []int {
	limit := 1<<24 + 1
	if testing.Short() || slowVariants {
		limit = 1<<20 + 1
	}
	return sizesUpTo(limit, []int{256, 512, 512 * 512, prodTile, 32 * prodTile, 6144, 33 * 6144, prodTileV2, 33 * prodTileV2,
		5120, 33 * 5120, 12288, 33 * 12288}, []int{10, 12, 13, 16, 17, 20, 22, 24})
}

func TestGPUScan(t *testing.T) {
	ex := gpuOrSkip(t)
	prod := []string{VariantProduction, VariantProduction24, VariantProduction16, VariantProductionV1}
	teaching := []string{VariantNaive, VariantWorkEfficient, VariantWorkEfficientThreads, VariantSharedNaive, VariantSharedWorkEfficient}
	t.Run("production/uint32", func(t *testing.T) { checkScans[uint32](t, ex, prod, gpuSizes(false)) })
	t.Run("production/int32", func(t *testing.T) { checkScans[int32](t, ex, prod, gpuSizes(true)) })
	t.Run("production/float32", func(t *testing.T) { checkScans[float32](t, ex, prod, gpuSizes(false)) })
	// The tuning variants (tuning.go): their tiles (4096 to 12288 items)
	// and block sizes (256, 512) are among gpuSizes' edges.
	tuning := append([]string{VariantProductionBid}, tuningScanVariants()...)
	t.Run("tuning/uint32", func(t *testing.T) { checkScans[uint32](t, ex, tuning, gpuSizes(false)) })
	t.Run("tuning/float32", func(t *testing.T) { checkScans[float32](t, ex, tuning, gpuSizes(true)) })
	t.Run("teaching/uint32", func(t *testing.T) { checkScans[uint32](t, ex, teaching, gpuSizes(false)) })
	t.Run("teaching/float32", func(t *testing.T) { checkScans[float32](t, ex, teaching, gpuSizes(true)) })
}

func TestGPUScanDefault(t *testing.T) {
	ex := gpuOrSkip(t)
	src := randomValues[uint32](1<<20+3, 5)
	_, in := upload(t, ex, src)
	ow, out := upload(t, ex, make([]uint32, len(src)))
	if err := Exclusive(ex, out, in); err != nil {
		t.Fatal(err)
	}
	equalExact(t, "Exclusive", download(t, "Exclusive", ow), refExclusive(src))
	sc, err := NewScanner(ex, len(src))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Free()
	for i := 0; i < 3; i++ { // reused scratch
		if err := InclusiveWith(sc, out, in); err != nil {
			t.Fatal(err)
		}
		equalExact(t, "InclusiveWith", download(t, "InclusiveWith", ow), refInclusive(src))
	}
}

// TestGPUScanLarge scans 2^28 int32 (1 GiB, in place) with the default and
// the v1 production kernels: 64-bit offsets and 32769 (8192-item tiles) or
// 65537 tiles of look-back.
func TestGPUScanLarge(t *testing.T) {
	ex := gpuOrSkip(t)
	if testing.Short() {
		t.Skip("2^28 items: not in -short")
	}
	n := 1<<28 + 5
	src := make([]uint32, n)
	for i := range src {
		src[i] = uint32(i*2654435761) >> 20
	}
	want := refInclusive(src)
	for _, v := range []string{VariantProduction, VariantProductionV1} {
		in, err := exec.FromHost(ex, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := InclusiveVariant(ex, v, in, in); err != nil {
			in.Free()
			t.Fatal(err)
		}
		got, err := in.ToHost()
		in.Free()
		if err != nil {
			t.Fatal(err)
		}
		equalExact(t, v+" inclusive 2^28+5 in place", got, want)
	}
}

func TestGPUOverflowWraps(t *testing.T) {
	ex := gpuOrSkip(t)
	for _, n := range []int{1, 33, 70001} {
		s32, u32, wantS, wantU := overflowInputs(n)
		for _, v := range Variants(ex) {
			_, ins := upload(t, ex, s32)
			_, inu := upload(t, ex, u32)
			sw, outs := upload(t, ex, make([]int32, n))
			uw, outu := upload(t, ex, make([]uint32, n))
			if err := InclusiveVariant(ex, v, outs, ins); err != nil {
				t.Fatal(err)
			}
			if err := InclusiveVariant(ex, v, outu, inu); err != nil {
				t.Fatal(err)
			}
			checkOverflow(t, v, download(t, v, sw), download(t, v, uw), wantS, wantU)
		}
	}
}

func TestGPUSegmented(t *testing.T) {
	ex := gpuOrSkip(t)
	sizes := sizesUpTo(1<<20+1, []int{prodTile, 32 * prodTile}, []int{10, 12, 13, 17, 20})
	if !testing.Short() {
		sizes = append(sizes, 1<<24+1)
	}
	defer func() { segmentedFamily, segmentedOffsetsNative = defaultSegmented, true }()
	// The offsets form runs its own kernels (segscan_off) in the first
	// run and goes through heads in the others.
	for i, family := range []string{segmentedV2, segmentedV2, segmentedV1} {
		segmentedFamily, segmentedOffsetsNative = family, i == 0
		name := family + "/offsets-via-heads"
		if i == 0 {
			name = family + "/offsets-native"
		}
		t.Run(name, func(t *testing.T) {
			checkSegmented[uint32](t, ex, sizes)
			checkSegmented[int32](t, ex, sizes[:10])
			checkSegmented[float32](t, ex, sizes)
		})
	}
}

func TestGPUCompact(t *testing.T) {
	ex := gpuOrSkip(t)
	sizes := sizesUpTo(1<<20+1, []int{prodTile, 33 * prodTile, 6144, 33 * 6144, prodTileV2, 33 * prodTileV2}, []int{10, 13, 17, 20})
	if !testing.Short() {
		sizes = append(sizes, 1<<24+1)
	}
	checkCompact(t, ex, CompactVariants(ex), sizes)
}

func TestGPUCompactQueued(t *testing.T) {
	ex := gpuOrSkip(t)
	checkCompactQueued(t, ex, sizesUpTo(1<<20+1, []int{prodTile, 6144, 33 * 6144}, []int{10, 20}))
}

func TestGPUSort(t *testing.T) {
	ex := gpuOrSkip(t)
	sizes := sizesUpTo(1<<20+1, []int{2048, 64 * 2048}, []int{8, 11, 16, 20})
	if !testing.Short() {
		sizes = append(sizes, 1<<24+1)
	}
	checkSort(t, ex, SortVariants(ex), sizes)
}

// TestGPUSortOnesweep checks the onesweep sort against the Go executor's
// SortPairs on sizes around its 3840-key tile and past a 32-tile look-back,
// on random, duplicate-heavy, all-equal, sorted and reverse-sorted keys,
// pairs and keys only, with the passes found from the histograms (SortPairs)
// and with every pass below a given bit count (SortPairsBitsWith's path).
func TestGPUSortOnesweep(t *testing.T) {
	ex := gpuOrSkip(t)
	goEx := exec.Go(2)
	defer goEx.Close()
	sc, err := NewScanner(ex, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Free()
	sizes := sizesUpTo(1<<20+1, []int{onesweepTile, 33 * onesweepTile, 64 * onesweepTile}, []int{8, 12, 16, 20})
	if !testing.Short() {
		sizes = append(sizes, 1<<24+1)
	}
	for _, n := range sizes {
		for _, kind := range []string{"full", "small", "bytes3", "equal", "sorted", "reverse"} {
			src := kind
			if kind == "sorted" || kind == "reverse" {
				src = "full"
			}
			keys := sortKeys(n, src, uint64(n)+11)
			if kind == "sorted" {
				slices.Sort(keys)
			}
			if kind == "reverse" {
				slices.Sort(keys)
				slices.Reverse(keys)
			}
			vals := make([]uint32, n)
			for i := range vals {
				vals[i] = uint32(i)*7 + 1
			}
			// The Go executor's result is the reference.
			wantK, wantV := append([]uint32(nil), keys...), append([]uint32(nil), vals...)
			if err := SortPairs(goEx, exec.Wrap(wantK), exec.Wrap(wantV)); err != nil {
				t.Fatal(err)
			}
			maxKey := uint32(0)
			for _, k := range keys {
				maxKey = max(maxKey, k)
			}
			for _, nbits := range []int{-1, bits.Len32(maxKey), 32} {
				what := fmt.Sprintf("onesweep %s n=%d bits=%d", kind, n, nbits)
				kw, kb := upload(t, ex, keys)
				vw, vb := upload(t, ex, vals)
				if err := sortPairsBits(ex, sc, SortOnesweep, kb, vb, nbits); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				equalExact(t, what+" keys", download(t, what, kw), wantK)
				equalExact(t, what+" values", download(t, what, vw), wantV)
				if err := kb.CopyFromHost(keys); err != nil {
					t.Fatal(err)
				}
				if err := sortPairsBits(ex, sc, SortOnesweep, kb, nil, nbits); err != nil {
					t.Fatalf("%s keys only: %v", what, err)
				}
				equalExact(t, what+" keys only", download(t, what, kw), wantK)
				kw.Free()
				vw.Free()
			}
		}
	}
}
