package exec

import (
	"errors"
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// CopySizes are the float32 counts of the copy benchmark: 2^20 .. 2^28.
func CopySizes() []int {
	var s []int
	for k := 20; k <= 28; k++ {
		s = append(s, 1<<k)
	}
	return s
}

// Copy benchmark variants. The row of variant CopyBest repeats the faster of
// the others at each size; it is the reference other benchmarks quote.
const (
	CopyBest     = "best"
	CopyMemcpy   = "memcpy_dtod" // cuMemcpyDtoD (CUDA)
	CopyKernel   = "copy_u32"    // the copy_u32 kernel of runtime.cu (CUDA)
	CopyGo       = "go_copy"     // copy() of two slices, one goroutine (Go)
	CopyParallel = "go_parallel" // copy() split over the executor's workers (Go)
)

// CopyBandwidth measures copying n float32 from one buffer to another for
// each n in sizes (CopySizes() when nil), the median of runs timed runs
// after one warm-up. Bytes count the read and the write (8n). On CUDA the
// variants are cuMemcpyDtoD and the copy_u32 kernel; on the Go executor
// copy() on one goroutine and split over Workers(). Every size also gets a
// row of variant CopyBest, the faster one, after the others (so the last row
// is the reference at the largest size). A size the device has no memory
// for gets a row with a Note instead of timings.
func CopyBandwidth(ex Executor, sizes []int, runs int) ([]BenchRow, error) {
	if sizes == nil {
		sizes = CopySizes()
	}
	var rows []BenchRow
	for _, n := range sizes {
		r, err := copyRows(ex, n, runs)
		if errors.Is(err, cuda.ErrOutOfMemory) {
			rows = append(rows, BenchRow{Op: "copy", Variant: CopyBest, N: n, Bytes: int64(8 * n), Note: "out of memory"})
			continue
		}
		if err != nil {
			return rows, fmt.Errorf("copy benchmark at n=%d: %w", n, err)
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

func copyRows(ex Executor, n, runs int) ([]BenchRow, error) {
	src, err := Alloc[float32](ex, n)
	if err != nil {
		return nil, err
	}
	defer src.Free()
	dst, err := Alloc[float32](ex, n)
	if err != nil {
		return nil, err
	}
	defer dst.Free()
	bytes := int64(8 * n)

	type variant struct {
		name string
		fn   func() error
	}
	var vs []variant
	if ctx := ex.CUDA(); ctx != nil {
		if err := src.Dev().Memset32(0x3f800000); err != nil { // 1.0f
			return nil, err
		}
		grid := cuda.GridFor((n+3)/4, 256)
		if lim := uint32(32 * ctx.Info().SMs); lim > 0 && grid.X > lim {
			grid.X = lim
		}
		vs = []variant{
			{CopyMemcpy, func() error { return dst.CopyFrom(src) }},
			{CopyKernel, func() error {
				return launch.CopyU32.Launch(ctx, grid, cuda.Linear(256), 0, launch.CopyU32Args{Dst: dst.Ptr(), Src: src.Ptr(), N: uint64(n)})
			}},
		}
	} else {
		s, d := src.Host(), dst.Host()
		for i := range s {
			s[i] = 1
		}
		vs = []variant{
			{CopyGo, func() error { copy(d, s); return nil }},
			{CopyParallel, func() error {
				ParallelFor(ex.Workers(), n, 1<<16, func(lo, hi int) { copy(d[lo:hi], s[lo:hi]) })
				return nil
			}},
		}
	}
	var rows []BenchRow
	best := -1
	for _, v := range vs {
		t, err := Time(ex, runs, v.fn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		rows = append(rows, NewRow("copy", v.name, n, bytes, t, 0))
		if last := len(rows) - 1; best < 0 || rows[last].GBps > rows[best].GBps {
			best = last
		}
	}
	b := rows[best]
	b.Variant, b.Note = CopyBest, rows[best].Variant
	return append(rows, b), nil
}

// CopyGBps returns the copy bandwidth of the CopyBest row at the largest
// size measured (0 when rows hold none): the reference that benchmarks
// quote their percentages against.
func CopyGBps(rows []BenchRow) float64 {
	n, g := -1, 0.0
	for _, r := range rows {
		if r.Op == "copy" && r.Variant == CopyBest && r.GBps > 0 && r.N > n {
			n, g = r.N, r.GBps
		}
	}
	return g
}
