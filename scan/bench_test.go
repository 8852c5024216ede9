package scan

import (
	"fmt"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Go benchmarks. The CPU ones take the Go executor with GOMAXPROCS workers;
// compare variants with benchstat, e.g.
//
//	go test -run '^$' -bench 'Exclusive/cpu' -count 10 ./scan
//
// The GPU ones (-bench GPU) skip without a device.

var benchSizes = []int{10, 16, 20, 24}

func BenchmarkExclusive(b *testing.B) {
	ex := exec.Go(0)
	for _, v := range Variants(ex) {
		for _, k := range benchSizes {
			b.Run(fmt.Sprintf("%s/2^%d", v, k), func(b *testing.B) {
				benchScanOn(b, ex, v, 1<<k)
			})
		}
	}
}

func benchScanOn(b *testing.B, ex exec.Executor, v string, n int) {
	src, err := exec.FromHost(ex, benchInput(n, 1))
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	dst, err := exec.Alloc[uint32](ex, n)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Free()
	b.SetBytes(8 * int64(n))
	if err := ExclusiveVariant(ex, v, dst, src); err != nil { // warm-up, scratch allocation
		b.Fatal(err)
	}
	syncEx(b, ex)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := ExclusiveVariant(ex, v, dst, src); err != nil {
			b.Fatal(err)
		}
	}
	syncEx(b, ex)
}

func syncEx(b *testing.B, ex exec.Executor) {
	if ctx := ex.CUDA(); ctx != nil {
		if err := ctx.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSegmentedExclusive(b *testing.B) {
	ex := exec.Go(0)
	for _, k := range []int{16, 20, 24} {
		b.Run(fmt.Sprintf("2^%d", k), func(b *testing.B) { benchSegOn(b, ex, 1<<k) })
	}
}

func benchSegOn(b *testing.B, ex exec.Executor, n int) {
	src, _ := exec.FromHost(ex, benchInput(n, 1))
	heads, _ := exec.FromHost(ex, randomHeads(n, 1000, 1))
	dst, _ := exec.Alloc[uint32](ex, n)
	defer freeAll(src, heads, dst)
	b.SetBytes(12 * int64(n))
	if err := SegmentedExclusive(ex, dst, src, heads); err != nil {
		b.Fatal(err)
	}
	syncEx(b, ex)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := SegmentedExclusive(ex, dst, src, heads); err != nil {
			b.Fatal(err)
		}
	}
	syncEx(b, ex)
}

func BenchmarkCompact(b *testing.B) {
	ex := exec.Go(0)
	for _, v := range CompactVariants(ex) {
		for _, k := range []int{16, 20, 24} {
			b.Run(fmt.Sprintf("%s/2^%d", v, k), func(b *testing.B) { benchCompactOn(b, ex, v, 1<<k) })
		}
	}
}

func benchCompactOn(b *testing.B, ex exec.Executor, v string, n int) {
	host := benchInput(n, 4)
	flags := make([]uint32, n)
	for i, x := range host {
		flags[i] = x & 1
	}
	src, _ := exec.FromHost(ex, host)
	fb, _ := exec.FromHost(ex, flags)
	dst, _ := exec.Alloc[uint32](ex, n)
	defer freeAll(src, fb, dst)
	b.SetBytes(10 * int64(n))
	if _, err := CompactVariant(ex, v, dst, src, fb); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := CompactVariant(ex, v, dst, src, fb); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSortPairs(b *testing.B) {
	ex := exec.Go(0)
	for _, v := range SortVariants(ex) {
		for _, k := range []int{16, 20, 24} {
			b.Run(fmt.Sprintf("%s/2^%d", v, k), func(b *testing.B) { benchSortOn(b, ex, v, 1<<k) })
		}
	}
}

// benchSortOn sorts fresh copies of the same random pairs; the copy is
// outside the timer.
func benchSortOn(b *testing.B, ex exec.Executor, v string, n int) {
	hk := benchInput(n, 5)
	hv := benchInput(n, 6)
	k0, _ := exec.FromHost(ex, hk)
	v0, _ := exec.FromHost(ex, hv)
	k, _ := exec.Alloc[uint32](ex, n)
	vv, _ := exec.Alloc[uint32](ex, n)
	defer freeAll(k0, v0, k, vv)
	b.SetBytes(16 * int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := k.CopyFrom(k0); err != nil {
			b.Fatal(err)
		}
		if err := vv.CopyFrom(v0); err != nil {
			b.Fatal(err)
		}
		syncEx(b, ex)
		b.StartTimer()
		if err := SortPairsVariant(ex, v, k, vv); err != nil {
			b.Fatal(err)
		}
		syncEx(b, ex)
	}
}

// GPU benchmarks (skip without a device).

func gpuBench(b *testing.B) exec.Executor {
	ex, why := exec.TestGPU()
	if ex == nil {
		b.Skip(why)
	}
	return ex
}

func BenchmarkGPUExclusive(b *testing.B) {
	ex := gpuBench(b)
	for _, v := range Variants(ex) {
		for _, k := range []int{20, 24, 28} {
			b.Run(fmt.Sprintf("%s/2^%d", v, k), func(b *testing.B) { benchScanOn(b, ex, v, 1<<k) })
		}
	}
}

func BenchmarkGPUSegmented(b *testing.B) {
	ex := gpuBench(b)
	for _, k := range []int{20, 24, 28} {
		b.Run(fmt.Sprintf("2^%d", k), func(b *testing.B) { benchSegOn(b, ex, 1<<k) })
	}
}

func BenchmarkGPUCompact(b *testing.B) {
	ex := gpuBench(b)
	for _, v := range CompactVariants(ex) {
		for _, k := range []int{20, 24, 28} {
			b.Run(fmt.Sprintf("%s/2^%d", v, k), func(b *testing.B) { benchCompactOn(b, ex, v, 1<<k) })
		}
	}
}

func BenchmarkGPUSortPairs(b *testing.B) {
	ex := gpuBench(b)
	for _, v := range SortVariants(ex) {
		for _, k := range []int{20, 24, 28} {
			b.Run(fmt.Sprintf("%s/2^%d", v, k), func(b *testing.B) { benchSortOn(b, ex, v, 1<<k) })
		}
	}
}

// BenchmarkCPUScanForms compares, at 2^24 items, the serial loop, the
// one-pass look-back form of cpu-parallel (the default) and the first
// two-pass form (chunk sums, then chunk scans), all exclusive uint32:
//
//	go test -run '^$' -bench CPUScanForms -count 6 ./scan
func BenchmarkCPUScanForms(b *testing.B) {
	const n = 1 << 24
	src := benchInput(n, 1)
	dst := make([]uint32, n)
	w := exec.Go(0).Workers()
	forms := []struct {
		name string
		fn   func()
	}{
		{"serial", func() { serialExclusive(dst, src, 0) }},
		{"lookback", func() { lookbackScan(w, dst, src, false) }},
		{"two-pass", func() { twoPassScan(w, dst, src, false) }},
	}
	for _, f := range forms {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(8 * n)
			f.fn()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.fn()
			}
		})
	}
}
