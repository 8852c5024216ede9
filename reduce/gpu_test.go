package reduce

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// GPU tests compare every CUDA path with the Go executor, bit for bit. They
// skip without a usable GPU. testing.Short() caps sizes at 2^20. Each test
// bounds its own sizes (most of the time goes into generating data and the
// Go reference on the host): the whole -test.run GPU of this package takes
// about 10^9 generated values, well under a minute on the GPU machine.

func gpuOrSkip(t testing.TB) exec.Executor {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	return ex
}

// maxKEnv caps the GPU test sizes at 2^value, for slow stand-in drivers
// (testdata/cpuemu).
const maxKEnv = "KDBUILD_REDUCE_MAXK"

func gpuMaxK() int {
	k := 26
	if testing.Short() {
		k = 20
	}
	if v, err := strconv.Atoi(os.Getenv(maxKEnv)); err == nil && v >= 10 {
		k = min(k, v)
	}
	return k
}

// upload places s on the device at element offset len(s)%4 of a larger
// buffer, so that the float4 paths meet every alignment, between pads of
// alternating -Inf and +Inf (-Inf next to the data): a stray read of a pad
// changes the min or the max. It returns the view of s and a cleanup.
func upload(t testing.TB, ex exec.Executor, s []float32) (*exec.Buf[float32], func()) {
	t.Helper()
	const tail = 4
	o := len(s) % 4
	padded := make([]float32, o+len(s)+tail)
	for i := 0; i < o; i++ {
		padded[o-1-i] = []float32{negInf, posInf}[i%2]
	}
	copy(padded[o:], s)
	for i := 0; i < tail; i++ {
		padded[o+len(s)+i] = []float32{negInf, posInf}[i%2]
	}
	b, err := exec.FromHost(ex, padded)
	require.NoError(t, err)
	return b.Slice(o, len(s)), func() { b.Free() }
}

func TestGPUVariantsMatchGo(t *testing.T) {
	ex := gpuOrSkip(t)
	ref := exec.Go(0)
	for _, kind := range dataKinds {
		// Every edge size up to 2^22 (2^20 for the rarer kinds), then a few
		// odd sizes up to 2^26 for uniform data.
		maxK := min(gpuMaxK(), 22)
		if kind != "uniform" && kind != "special" {
			maxK = min(maxK, 20)
		}
		sizes := testSizes(maxK)
		if kind == "uniform" {
			for _, k := range []int{24, 26} {
				if k <= gpuMaxK() {
					sizes = append(sizes, 1<<k-1, 1<<k+1)
				}
			}
		}
		for _, n := range sizes {
			s := genData(kind, n, 17)
			wantLo, wantHi, err := MinMax(ref, exec.Wrap(s))
			require.NoError(t, err)
			src, free := upload(t, ex, s)
			for _, v := range benchVariants() { // the designs and the tuning variants
				name := fmt.Sprintf("%s/%s/n=%d", v.Name, kind, n)
				lo, err := MinVariant(ex, v.Name, src)
				require.NoError(t, err, name)
				bitsEqual(t, name+" min", lo, wantLo)
				hi, err := MaxVariant(ex, v.Name, src)
				require.NoError(t, err, name)
				bitsEqual(t, name+" max", hi, wantHi)
				lo, hi, err = MinMaxVariant(ex, v.Name, src)
				require.NoError(t, err, name)
				bitsEqual(t, name+" minmax lo", lo, wantLo)
				bitsEqual(t, name+" minmax hi", hi, wantHi)
			}
			free()
			if t.Failed() {
				t.FailNow()
			}
		}
	}
}

// With finalPerThread = 1 every multi-pass design (and tuning variant) runs
// level after level (blocks of PerBlock inputs) down to one block of at
// most FinalThreads inputs: the path large inputs take, here at sizes the
// emulator can run too.
func TestGPUVariantsLevels(t *testing.T) {
	ex := gpuOrSkip(t)
	defer func(old int) { finalPerThread = old }(finalPerThread)
	finalPerThread = 1
	sizes := []int{257, 513, 1025, 1<<11 + 1, 5000}
	for _, n := range []int{1<<16 + 1, 1<<17 + 3, 1<<20 + 7} {
		if n <= 1<<gpuMaxK()+7 {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		for _, kind := range []string{"uniform", "special"} {
			s := genData(kind, n, 41)
			wantLo, wantHi := refMin(s), refMax(s)
			src, free := upload(t, ex, s)
			for _, v := range append(Variants()[:6], TuningVariants()...) {
				name := fmt.Sprintf("%s/%s/n=%d (%d launches)", v.Name, kind, n, v.Launches(n))
				if n > finalPerThread*v.FinalThreads {
					require.Greater(t, v.Launches(n), 1, name)
				}
				lo, err := MinVariant(ex, v.Name, src)
				require.NoError(t, err, name)
				bitsEqual(t, name+" min", lo, wantLo)
				lo, hi, err := MinMaxVariant(ex, v.Name, src)
				require.NoError(t, err, name)
				bitsEqual(t, name+" minmax lo", lo, wantLo)
				bitsEqual(t, name+" minmax hi", hi, wantHi)
			}
			free()
		}
	}
}

// Every design and tuning variant launches as many kernels as
// Variant.Launches says (counted by the CUDA context's debug mode), at the
// thesis size and at 2^24.
func TestGPULaunchCounts(t *testing.T) {
	ex := gpuOrSkip(t)
	ctx := ex.CUDA()
	was := ctx.Debug()
	ctx.SetDebug(true)
	defer ctx.SetDebug(was)
	sizes := []int{5000}
	for _, n := range []int{69451, 1 << 24} {
		if n <= 1<<gpuMaxK() {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		s := genData("uniform", n, 43)
		src, free := upload(t, ex, s)
		for _, v := range benchVariants() {
			ctx.ResetKernelTimes()
			lo, err := MinVariant(ex, v.Name, src)
			require.NoError(t, err)
			bitsEqual(t, fmt.Sprintf("%s n=%d", v.Name, n), lo, refMin(s))
			launches := 0
			for _, kt := range ctx.KernelTimes() {
				launches += kt.Launches
			}
			require.Equal(t, v.Launches(n), launches, "%s n=%d: %+v", v.Name, n, ctx.KernelTimes())
			t.Logf("%s n=%d: %d launches", v.Name, n, launches)
		}
		free()
	}
}

// The one-pass design keeps a counter on the device that must be back at 0
// after every launch: alternate sizes and operations on one Reducer.
func TestGPUOnePassRepeats(t *testing.T) {
	ex := gpuOrSkip(t)
	r := NewReducer(ex)
	defer r.Free()
	for rep := 0; rep < 3; rep++ {
		for _, n := range []int{1 << 20, 1, 5000, 1<<22 + 3, 0} {
			s := genData("uniform", n, uint64(rep))
			src, free := upload(t, ex, s)
			lo, err := r.Min(src)
			require.NoError(t, err)
			bitsEqual(t, fmt.Sprintf("rep %d n %d min", rep, n), lo, refMin(s))
			lo, hi, err := r.MinMax(src)
			require.NoError(t, err)
			bitsEqual(t, "minmax lo", lo, refMin(s))
			bitsEqual(t, "minmax hi", hi, refMax(s))
			xyz := s[:len(s)/3*3]
			xs, freeXYZ := upload(t, ex, xyz)
			blo, bhi, err := r.Bounds(xs)
			require.NoError(t, err)
			wlo, whi := refBounds(xyz)
			require.Equal(t, bitsOf(wlo[:]), bitsOf(blo[:]))
			require.Equal(t, bitsOf(whi[:]), bitsOf(bhi[:]))
			freeXYZ()
			free()
		}
	}
}

const guard = float32(-12345.5)

// guarded allocates n device floats between two guard values; check
// verifies the guards and returns the n values.
func guarded(t testing.TB, ex exec.Executor, n int) (*exec.Buf[float32], func() []float32) {
	t.Helper()
	init := make([]float32, n+2)
	for i := range init {
		init[i] = guard
	}
	b, err := exec.FromHost(ex, init)
	require.NoError(t, err)
	return b.Slice(1, n), func() []float32 {
		all, err := b.ToHost()
		require.NoError(t, err)
		b.Free()
		require.Equal(t, guard, all[0], "guard before the output overwritten")
		require.Equal(t, guard, all[n+1], "guard after the output overwritten")
		return all[1 : n+1]
	}
}

func TestGPUSegmentedMatchesGo(t *testing.T) {
	ex := gpuOrSkip(t)
	ref := exec.Go(0)
	var extra []segCfg
	if !testing.Short() {
		for _, c := range bigSegCfgs {
			if c.n <= 1<<gpuMaxK()+3 {
				extra = append(extra, c)
			}
		}
	}
	for _, c := range segCases(extra) {
		for _, kind := range []string{"special", "uniform"} {
			name := c.name + "/" + kind
			s := genData(kind, c.n, 23)
			ns := len(c.offsets) - 1
			wantLo, wantHi := make([]float32, ns), make([]float32, ns)
			require.NoError(t, SegmentedMinMax(ref, exec.Wrap(wantLo), exec.Wrap(wantHi), exec.Wrap(s), exec.Wrap(c.offsets)))
			src, free := upload(t, ex, s)
			off, err := exec.FromHost(ex, c.offsets)
			require.NoError(t, err)

			dst, read := guarded(t, ex, ns)
			require.NoError(t, SegmentedMin(ex, dst, src, off), name)
			require.Equal(t, bitsOf(wantLo), bitsOf(read()), name+" min")

			dst, read = guarded(t, ex, ns)
			require.NoError(t, SegmentedMax(ex, dst, src, off), name)
			require.Equal(t, bitsOf(wantHi), bitsOf(read()), name+" max")

			lo, readLo := guarded(t, ex, ns)
			hi, readHi := guarded(t, ex, ns)
			require.NoError(t, SegmentedMinMax(ex, lo, hi, src, off), name)
			require.Equal(t, bitsOf(wantLo), bitsOf(readLo()), name+" minmax lo")
			require.Equal(t, bitsOf(wantHi), bitsOf(readHi()), name+" minmax hi")
			off.Free()
			free()
		}
	}
}

// clampOffsets turns offsets into the segments the CUDA kernels read:
// [min(off[s], hi), hi) with hi = min(off[s+1], n), as (lo, hi) pairs.
func clampOffsets(off []uint32, n int) [][2]uint32 {
	var segs [][2]uint32
	for s := 0; s+1 < len(off); s++ {
		hi := min(off[s+1], uint32(n))
		segs = append(segs, [2]uint32{min(off[s], hi), hi})
	}
	return segs
}

// Bad offsets are not checked on the GPU but clamped: no stray reads or
// writes, and the documented results, also when overlapping segments
// overflow the list of long segments.
func TestGPUSegmentedClampsBadOffsets(t *testing.T) {
	ex := gpuOrSkip(t)
	cases := []struct {
		n   int
		off []uint32
	}{
		{10, []uint32{0, 5, 4, 100}},
		{10000, []uint32{0, 10000, 0, 10000, 0, 10000, 0, 10000, 0, 10000, 3}},
		{50000, []uint32{7, 50000, 0, 49000, 1, 60000, 2, 48000, 3, 47000, 4}},
	}
	for _, c := range cases {
		s := genData("special", c.n, 1)
		src, free := upload(t, ex, s)
		off, err := exec.FromHost(ex, c.off)
		require.NoError(t, err)
		segs := clampOffsets(c.off, c.n)
		ns := len(segs)
		var wantLo, wantHi, wantBox []float32
		for _, g := range segs {
			wantLo = append(wantLo, refMin(s[g[0]:g[1]]))
			wantHi = append(wantHi, refMax(s[g[0]:g[1]]))
			wantBox = append(wantBox, refMin(s[g[0]:g[1]]), refMin(s[g[0]:g[1]]), refMin(s[g[0]:g[1]]),
				refMax(s[g[0]:g[1]]), refMax(s[g[0]:g[1]]), refMax(s[g[0]:g[1]]))
		}
		lo, readLo := guarded(t, ex, ns)
		hi, readHi := guarded(t, ex, ns)
		require.NoError(t, SegmentedMinMax(ex, lo, hi, src, off))
		require.Equal(t, bitsOf(wantLo), bitsOf(readLo()), "n=%d lo", c.n)
		require.Equal(t, bitsOf(wantHi), bitsOf(readHi()), "n=%d hi", c.n)
		dst, read := guarded(t, ex, ns)
		require.NoError(t, SegmentedMin(ex, dst, src, off))
		require.Equal(t, bitsOf(wantLo), bitsOf(read()), "n=%d min", c.n)
		box, readBox := guarded(t, ex, 6*ns)
		require.NoError(t, SegmentedBoxes(ex, box, [3]*exec.Buf[float32]{src, src, src}, [3]*exec.Buf[float32]{src, src, src}, off))
		require.Equal(t, bitsOf(wantBox), bitsOf(readBox()), "n=%d boxes", c.n)
		// The counters are back at 0: a valid call afterwards is right.
		good, err := exec.FromHost(ex, []uint32{0, uint32(c.n)})
		require.NoError(t, err)
		one, readOne := guarded(t, ex, 1)
		require.NoError(t, SegmentedMax(ex, one, src, good))
		require.Equal(t, bitsOf([]float32{refMax(s)}), bitsOf(readOne()), "n=%d after", c.n)
		good.Free()
		off.Free()
		free()
	}
}

func TestGPUSegmentedBoxesMatchesGo(t *testing.T) {
	ex := gpuOrSkip(t)
	var extra []segCfg
	if !testing.Short() && gpuMaxK() >= 21 { // six arrays per case: fewer, smaller big cases
		extra = []segCfg{{1 << 21, 1}, {1<<21 + 3, 1000}, {1 << 21, 1 << 16}}
	}
	for _, c := range segCases(extra) {
		lo, hi := boxArrays("special", c.n)
		var glo, ghi, dlo, dhi [3]*exec.Buf[float32]
		var frees []func()
		for a := range 3 {
			glo[a], ghi[a] = exec.Wrap(lo[a]), exec.Wrap(hi[a])
			var f1, f2 func()
			dlo[a], f1 = upload(t, ex, lo[a])
			dhi[a], f2 = upload(t, ex, hi[a])
			frees = append(frees, f1, f2)
		}
		ns := len(c.offsets) - 1
		want := make([]float32, 6*ns)
		require.NoError(t, SegmentedBoxes(exec.Go(0), exec.Wrap(want), glo, ghi, exec.Wrap(c.offsets)))
		off, err := exec.FromHost(ex, c.offsets)
		require.NoError(t, err)
		out, read := guarded(t, ex, 6*ns)
		require.NoError(t, SegmentedBoxes(ex, out, dlo, dhi, off), c.name)
		require.Equal(t, bitsOf(want), bitsOf(read()), c.name)
		off.Free()
		for _, f := range frees {
			f()
		}
	}
}

func TestGPUBoundsMatchesGo(t *testing.T) {
	ex := gpuOrSkip(t)
	pts := []int{0, 1, 2, 31, 32, 33, 127, 128, 129, 383, 384, 385, 1000, 100001}
	if !testing.Short() && gpuMaxK() >= 22 {
		pts = append(pts, 1<<20+1)
	}
	for _, kind := range []string{"uniform", "special", "descending", "nan"} {
		kpts := pts
		if kind == "uniform" && !testing.Short() && gpuMaxK() >= 24 {
			kpts = append(kpts, 1<<22+1, 1<<24)
		}
		for _, p := range kpts {
			xyz := genData(kind, 3*p, 29)
			wlo, whi, err := Bounds(exec.Go(0), exec.Wrap(xyz))
			require.NoError(t, err)
			src, free := upload(t, ex, xyz)
			lo, hi, err := Bounds(ex, src)
			require.NoError(t, err)
			name := fmt.Sprintf("%s/%d", kind, p)
			require.Equal(t, bitsOf(wlo[:]), bitsOf(lo[:]), name+" lo")
			require.Equal(t, bitsOf(whi[:]), bitsOf(hi[:]), name+" hi")
			free()
		}
	}
}

// Bench validates every design and tuning variant against the Go executor
// before timing it.
func TestGPUBenchValidates(t *testing.T) {
	ex := gpuOrSkip(t)
	var sizes []int
	for _, n := range []int{1 << 10, 1<<16 + 3, 1 << 20} {
		if n <= 1<<gpuMaxK() {
			sizes = append(sizes, n)
		}
	}
	rows, err := Bench(ex, sizes, 20, 0)
	require.NoError(t, err)
	all := benchVariants()
	require.Len(t, rows, 1+len(sizes)*len(all))
	for i, r := range rows[1:] { // each variant once per size: Variants, then TuningVariants
		require.Equal(t, all[i%len(all)].Name, r.Variant, "%+v", r)
	}
	for _, r := range rows {
		require.Greater(t, r.Ms, 0.0, "%+v", r)
	}
}

// A synthetic kd-tree workload: every design's results of every level are
// checked inside ThesisTable (against SegmentedBoxesAoS on the Go executor).
// The builder's real workload runs in cmd/kdbuild (kdbuild bench thesis).
func TestGPUThesisTableSmall(t *testing.T) {
	ex := gpuOrSkip(t)
	n := 300000 // three passes of r0–r3 (256² < n) on the root level
	if k := gpuMaxK(); n > 1<<k {
		n = 1 << k
	}
	wl := synthWorkload(n, 9)
	rows, err := ThesisTable(ex, wl, 2)
	require.NoError(t, err)
	require.Len(t, rows, len(Variants())+1)
	for i, r := range rows[:len(Variants())] {
		require.Equal(t, Variants()[i].Label(), r.Label)
		require.Greater(t, r.TotalUs, 0.0)
		require.Equal(t, 2*len(wl), r.Reductions)
		require.GreaterOrEqual(t, r.Launches, len(wl))
	}
	require.Equal(t, "aos", rows[len(rows)-1].Variant)
	t.Log("\n" + FormatThesisTable(rows))
}

func BenchmarkGPUReduce(b *testing.B) {
	ex := gpuOrSkip(b)
	ctx := ex.CUDA()
	for _, n := range []int{1 << 16, 1 << 20, 1 << 24, 1 << 28} {
		host := benchData(n)
		src, err := exec.FromHost(ex, host)
		require.NoError(b, err)
		r := NewReducer(ex)
		for _, v := range benchVariants() {
			for _, o := range []op{opMin, opMinMax} {
				b.Run(fmt.Sprintf("%s/%s/n=2^%d", o, v.Name, int(math.Log2(float64(n)))), func(b *testing.B) {
					if _, _, err := r.reduce(v.Name, o, src); err != nil {
						b.Fatal(err)
					}
					b.SetBytes(int64(4 * n))
					b.ResetTimer()
					r.mu.Lock()
					for i := 0; i < b.N; i++ {
						if err := r.enqueue(v, o, src, r.result, 0, 1); err != nil {
							b.Fatal(err)
						}
					}
					r.mu.Unlock()
					if err := ctx.Synchronize(); err != nil {
						b.Fatal(err)
					}
				})
			}
		}
		r.Free()
		src.Free()
	}
}

func BenchmarkGPUSegmented(b *testing.B) {
	ex := gpuOrSkip(b)
	ctx := ex.CUDA()
	const n = 1 << 24
	host := benchData(n)
	src, err := exec.FromHost(ex, host)
	require.NoError(b, err)
	defer src.Free()
	for _, ns := range []int{1, 16, 1 << 10, 1 << 16, 1 << 20} {
		offs := make([]uint32, ns+1)
		for i := range offs {
			offs[i] = uint32(i * n / ns)
		}
		off, err := exec.FromHost(ex, offs)
		require.NoError(b, err)
		lo, err := exec.Alloc[float32](ex, ns)
		require.NoError(b, err)
		hi, err := exec.Alloc[float32](ex, ns)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("minmax/segments=%d", ns), func(b *testing.B) {
			b.SetBytes(4 * n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := SegmentedMinMax(ex, lo, hi, src, off); err != nil {
					b.Fatal(err)
				}
			}
			if err := ctx.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
		off.Free()
		lo.Free()
		hi.Free()
	}
}

func BenchmarkGPUBounds(b *testing.B) {
	ex := gpuOrSkip(b)
	ctx := ex.CUDA()
	for _, pts := range []int{69451, 1 << 20, 1 << 24} {
		xyz, err := exec.FromHost(ex, benchData(3*pts))
		require.NoError(b, err)
		dst, err := exec.Alloc[float32](ex, 6)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("points=%d", pts), func(b *testing.B) {
			b.SetBytes(int64(12 * pts))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := BoundsInto(ex, dst, xyz); err != nil {
					b.Fatal(err)
				}
			}
			if err := ctx.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
		xyz.Free()
		dst.Free()
	}
}

func BenchmarkGPUSegmentedBoxes(b *testing.B) {
	ex := gpuOrSkip(b)
	ctx := ex.CUDA()
	const n = 1 << 22
	var lo, hi [3]*exec.Buf[float32]
	for a := range 3 {
		var err error
		lo[a], err = exec.FromHost(ex, benchData(n))
		require.NoError(b, err)
		hi[a], err = exec.FromHost(ex, benchData(n))
		require.NoError(b, err)
	}
	for _, ns := range []int{1, 64, 1 << 12, 1 << 18} {
		offs := make([]uint32, ns+1)
		for i := range offs {
			offs[i] = uint32(i * n / ns)
		}
		off, err := exec.FromHost(ex, offs)
		require.NoError(b, err)
		out, err := exec.Alloc[float32](ex, 6*ns)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("segments=%d", ns), func(b *testing.B) {
			b.SetBytes(24 * n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := SegmentedBoxes(ex, out, lo, hi, off); err != nil {
					b.Fatal(err)
				}
			}
			if err := ctx.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
		off.Free()
		out.Free()
	}
	for a := range 3 {
		lo[a].Free()
		hi[a].Free()
	}
}
