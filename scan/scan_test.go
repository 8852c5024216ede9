package scan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// cpuSizes covers the edges of the parallel scan: the serial cut-off and
// the per-worker tile and round sizes.
func cpuSizes(t *testing.T) []int {
	limit := 1<<20 + 1
	if !testing.Short() {
		limit = 1<<24 + 1
	}
	return sizesUpTo(limit, []int{parallelMin, 2 * parallelMin, 3*parallelMin + 5}, []int{5, 10, 16, 20, 22, 24})
}

func testCPUScan[T Value](t *testing.T) {
	for _, n := range cpuSizes(t) {
		src := randomValues[T](n, uint64(n))
		wantEx, wantIn := refExclusive(src), refInclusive(src)
		for _, v := range Variants(goEx) {
			got := make([]T, n)
			if err := ExclusiveVariant(goEx, v, exec.Wrap(got), exec.Wrap(src)); err != nil {
				t.Fatal(err)
			}
			equalExact(t, typeName[T]()+" exclusive "+v, got, wantEx)
			if err := InclusiveVariant(goEx, v, exec.Wrap(got), exec.Wrap(src)); err != nil {
				t.Fatal(err)
			}
			equalExact(t, typeName[T]()+" inclusive "+v, got, wantIn)
			// In place.
			inPlace := append([]T(nil), src...)
			if err := ExclusiveVariant(goEx, v, exec.Wrap(inPlace), exec.Wrap(inPlace)); err != nil {
				t.Fatal(err)
			}
			equalExact(t, typeName[T]()+" exclusive in place "+v, inPlace, wantEx)
		}
	}
}

func TestScanCPU(t *testing.T) {
	t.Run("int32", testCPUScan[int32])
	t.Run("uint32", testCPUScan[uint32])
	t.Run("float32", testCPUScan[float32])
}

// TestScanDefault checks the plain functions on the Go executor.
func TestScanDefault(t *testing.T) {
	src := randomValues[uint32](100003, 7)
	got := make([]uint32, len(src))
	if err := Exclusive(goEx, exec.Wrap(got), exec.Wrap(src)); err != nil {
		t.Fatal(err)
	}
	equalExact(t, "Exclusive", got, refExclusive(src))
	if err := Inclusive(goEx, exec.Wrap(got), exec.Wrap(src)); err != nil {
		t.Fatal(err)
	}
	equalExact(t, "Inclusive", got, refInclusive(src))
}

// overflowInputs returns values whose running sum passes 2^31 and 2^32
// many times, and the wrapped sums computed in 64-bit arithmetic.
func overflowInputs(n int) (s32 []int32, u32 []uint32, wantS, wantU []int64) {
	r := rand.New(rand.NewPCG(11, 12))
	var accS, accU int64
	for i := 0; i < n; i++ {
		v := int32(math.MaxInt32 - r.Int32N(1000))
		if i%3 == 2 {
			v = math.MinInt32 + r.Int32N(1000)
		}
		s32 = append(s32, v)
		u32 = append(u32, uint32(v)|0x80000000)
		accS += int64(v)
		accU += int64(uint32(v) | 0x80000000)
		wantS = append(wantS, accS)
		wantU = append(wantU, accU)
	}
	return
}

// checkOverflow verifies the documented behaviour: the inclusive sums equal
// the exact sums reduced modulo 2^32 (two's complement for int32).
func checkOverflow(t *testing.T, what string, gotS []int32, gotU []uint32, wantS, wantU []int64) {
	t.Helper()
	for i := range wantS {
		if gotS[i] != int32(uint32(uint64(wantS[i]))) {
			t.Fatalf("%s int32 [%d] = %d, want %d (exact %d mod 2^32)", what, i, gotS[i], int32(uint32(uint64(wantS[i]))), wantS[i])
		}
		if gotU[i] != uint32(uint64(wantU[i])) {
			t.Fatalf("%s uint32 [%d] = %d, want %d (exact %d mod 2^32)", what, i, gotU[i], uint32(uint64(wantU[i])), wantU[i])
		}
	}
}

func TestScanOverflowWraps(t *testing.T) {
	for _, n := range []int{1, 33, 70001} {
		s32, u32, wantS, wantU := overflowInputs(n)
		for _, v := range Variants(goEx) {
			gotS, gotU := make([]int32, n), make([]uint32, n)
			if err := InclusiveVariant(goEx, v, exec.Wrap(gotS), exec.Wrap(s32)); err != nil {
				t.Fatal(err)
			}
			if err := InclusiveVariant(goEx, v, exec.Wrap(gotU), exec.Wrap(u32)); err != nil {
				t.Fatal(err)
			}
			checkOverflow(t, v, gotS, gotU, wantS, wantU)
		}
	}
}

// TestScanFloatTolerance compares float32 scans of fractional values with a
// float64 reference: the error may reach 1e-4 of the sum of magnitudes
// (serial summation of 3e5 terms measures 1.2e-5; a lost or doubled carry
// is off by whole tile sums).
func TestScanFloatTolerance(t *testing.T) {
	n := 300007
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, n)
	for i := range src {
		src[i] = r.Float32()*2 - 0.5
	}
	for _, v := range Variants(goEx) {
		got := make([]float32, n)
		if err := InclusiveVariant(goEx, v, exec.Wrap(got), exec.Wrap(src)); err != nil {
			t.Fatal(err)
		}
		var acc, abs float64
		for i, x := range src {
			acc += float64(x)
			abs += math.Abs(float64(x))
			if tol := 1e-4 * abs; math.Abs(float64(got[i])-acc) > tol {
				t.Fatalf("%s [%d] = %v, want %v ± %v", v, i, got[i], acc, tol)
			}
		}
	}
}

func TestScanErrors(t *testing.T) {
	a := exec.Wrap(make([]uint32, 4))
	if err := ExclusiveVariant(goEx, "production", a, a); err == nil {
		t.Error("a GPU variant on the Go executor: no error")
	}
	if err := ExclusiveVariant(goEx, "nonsense", a, a); err == nil {
		t.Error("unknown variant: no error")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("length mismatch did not panic")
			}
		}()
		_ = Exclusive(goEx, a, exec.Wrap(make([]uint32, 5)))
	}()
	if got := Variants(goEx); len(got) != 2 || got[0] != DefaultVariant(goEx) {
		t.Errorf("Variants(Go) = %v, want the default %q first of 2", got, DefaultVariant(goEx))
	}
}

func TestScanCPUGuarded(t *testing.T) {
	sizes := sizesUpTo(1<<17+1, []int{parallelMin, 2 * parallelMin}, []int{12, 17})
	checkScans[uint32](t, goEx, Variants(goEx), sizes)
	checkScans[float32](t, goEx, Variants(goEx), sizes)
}

func TestSegmentedCPU(t *testing.T) {
	sizes := sizesUpTo(1<<20+1, []int{parallelMin, 2 * parallelMin, 3*parallelMin + 5}, []int{10, 17, 20})
	checkSegmented[uint32](t, goEx, sizes)
	checkSegmented[int32](t, goEx, sizes[:8])
	checkSegmented[float32](t, goEx, sizes)
}

func TestSegmentedOffsetsErrors(t *testing.T) {
	a := exec.Wrap(make([]uint32, 10))
	for _, off := range [][]uint32{{}, {1, 10}, {0, 9}, {0, 5, 3, 10}, {0, 11, 10}} {
		if err := SegmentedExclusiveOffsets(goEx, a, a, exec.Wrap(off)); err == nil {
			t.Errorf("offsets %v: no error", off)
		}
	}
	if err := SegmentedInclusiveOffsets(goEx, exec.Wrap([]uint32{}), exec.Wrap([]uint32{}), exec.Wrap([]uint32{0, 0})); err != nil {
		t.Errorf("empty input, one empty segment: %v", err)
	}
}

func TestCompactCPU(t *testing.T) {
	sizes := sizesUpTo(1<<17+1, []int{parallelMin}, []int{10, 17})
	checkCompact(t, goEx, CompactVariants(goEx), sizes)
}

func TestCompactQueuedCPU(t *testing.T) {
	checkCompactQueued(t, goEx, sizesUpTo(1<<17+1, []int{parallelMin}, []int{10, 17}))
}

func TestSortCPU(t *testing.T) {
	limit := 1<<16 + 1
	if !testing.Short() {
		limit = 1<<18 + 1
	}
	checkSort(t, goEx, SortVariants(goEx), sizesUpTo(limit, nil, []int{8, 16, 18}))
}
