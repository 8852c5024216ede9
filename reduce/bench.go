package reduce

import (
	"fmt"
	"math/rand/v2"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// BenchSizes is the default ladder of Bench: 2^10 … 2^28 elements.
func BenchSizes() []int {
	var s []int
	for k := 10; k <= 28; k++ {
		s = append(s, 1<<k)
	}
	return s
}

// benchData returns n float32 values in [-1e6, 1e6) from a fixed seed.
func benchData(n int) []float32 {
	rng := rand.New(rand.NewPCG(2026, 5))
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.Float64()*2e6 - 1e6)
	}
	return s
}

// Bench times every design's min reduction at each size (BenchSizes when
// sizes is empty), one row per design and size, the designs of Variants
// followed by the TuningVariants (so each design is seen at several block
// sizes), its note the label and the number of launches: the median of runs (at least 20) runs
// measured with exec.Time, kernels only (the result stays on the device).
// Bytes counts the input read once (4n). Before timing a size, every
// design's min and min+max results are checked against the Go executor's;
// a mismatch is an error.
// copyGBps is the device-to-device copy bandwidth (read + write) to compare
// with; when it is <= 0, Bench measures it on the largest size and adds that
// measurement as a row (op "copy"). On the Go executor there is one design,
// "go".
func Bench(ex exec.Executor, sizes []int, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	if len(sizes) == 0 {
		sizes = BenchSizes()
	}
	runs = max(runs, 20)
	nmax := 0
	for _, n := range sizes {
		if n < 0 || n > maxLen {
			return nil, fmt.Errorf("reduce: bench size %d out of range", n)
		}
		nmax = max(nmax, n)
	}
	host := benchData(nmax)
	src, err := exec.FromHost(ex, host)
	if err != nil {
		return nil, fmt.Errorf("reduce: bench input of %d floats: %w", nmax, err)
	}
	defer src.Free()
	r := NewReducer(ex)
	defer r.Free()
	var rows []exec.BenchRow

	if copyGBps <= 0 && nmax > 0 {
		row, err := benchCopy(ex, src, runs)
		if err != nil {
			return nil, err
		}
		copyGBps = row.GBps
		rows = append(rows, row)
	}

	ref := exec.Go(0)
	for _, n := range sizes {
		in := src.Slice(0, n)
		wantLo, wantHi, _ := MinMax(ref, exec.Wrap(host[:n]))
		if r.ctx == nil {
			t, err := exec.Time(ex, runs, func() error { _, err := r.Min(in); return err })
			if err != nil {
				return nil, err
			}
			rows = append(rows, exec.NewRow("reduce_min", "go", n, int64(4*n), t, copyGBps))
			continue
		}
		for _, v := range benchVariants() { // each design once per size
			// min+max checks both results; the min alone is timed.
			lo, hi, err := r.reduce(v.Name, opMinMax, in)
			if err != nil {
				return nil, err
			}
			if !sameBits(lo, wantLo) || !sameBits(hi, wantHi) {
				return nil, fmt.Errorf("reduce: %s at n=%d gave (%v, %v), the Go executor (%v, %v)",
					v.Kernel("minmax"), n, lo, hi, wantLo, wantHi)
			}
			if lo, err = r.MinVariant(v.Name, in); err != nil {
				return nil, err
			}
			if !sameBits(lo, wantLo) {
				return nil, fmt.Errorf("reduce: %s at n=%d gave %v, the Go executor %v", v.Kernel("min"), n, lo, wantLo)
			}
			t, err := exec.Time(ex, runs, func() error {
				r.mu.Lock()
				defer r.mu.Unlock()
				return r.enqueue(v, opMin, in, r.result, 0, 1)
			})
			if err != nil {
				return nil, err
			}
			row := exec.NewRow("reduce_min", v.Name, n, int64(4*n), t, copyGBps)
			row.Note = fmt.Sprintf("%s, %d launches", v.Label(), v.Launches(n))
			if v.Launches(n) == 1 {
				row.Note = v.Label() + ", 1 launch"
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// benchCopy times a device-to-device copy of src (read + write bytes).
func benchCopy(ex exec.Executor, src *exec.Buf[float32], runs int) (exec.BenchRow, error) {
	n := src.Len()
	dst, err := exec.Alloc[float32](ex, n)
	if err != nil {
		return exec.BenchRow{}, fmt.Errorf("reduce: copy bench: %w", err)
	}
	defer dst.Free()
	t, err := exec.Time(ex, runs, func() error { return dst.CopyFrom(src) })
	if err != nil {
		return exec.BenchRow{}, err
	}
	row := exec.NewRow("copy", "memcpy", n, int64(8*n), t, 0)
	row.PctCopy = 100
	row.Note = "device-to-device copy, read+write bytes"
	return row, nil
}

// benchVariants lists the variants Bench times, in row order: the designs,
// then the tuning variants.
func benchVariants() []Variant { return append(Variants(), tuning...) }

func sameBits(a, b float32) bool { return orderKey(a) == orderKey(b) }
