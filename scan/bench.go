package scan

import (
	"fmt"
	"math/rand/v2"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// BenchOps lists the operations Bench measures.
var BenchOps = []string{"scan", "segscan", "compact", "sort"}

// Bench measures every variant of op ("scan", "segscan", "compact" or
// "sort") valid on ex at each size: the median of runs timed runs (at least
// 20) after a warm-up, through exec.Time (CUDA events on a GPU). Inputs are
// random from a fixed seed (uint32 items; compaction keeps about half; sort
// keys are full 32-bit with values). Bytes is the least traffic the work
// needs: scan 8 bytes per item (read, write), segmented scan 12 (with the
// heads; the offsets form: 8 plus 4 per offset; rows
// <variant>-offsets and <variant>-heads, segments of about 1000 items),
// compaction 8 per item plus 4 per kept item, sort 16 per pair. Each
// variant's result is checked once per size against the Go executor; a
// wrong result is an error. Sort timings exclude the copy that restores the
// unsorted keys before each run (timed separately and subtracted).
func Bench(ex exec.Executor, op string, sizes []int, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	if runs < 20 {
		runs = 20
	}
	var rows []exec.BenchRow
	for _, n := range sizes {
		var r []exec.BenchRow
		var err error
		switch op {
		case "scan":
			r, err = benchScan(ex, n, runs, copyGBps)
		case "segscan":
			r, err = benchSegscan(ex, n, runs, copyGBps)
		case "compact":
			r, err = benchCompact(ex, n, runs, copyGBps)
		case "sort":
			r, err = benchSort(ex, n, runs, copyGBps)
		default:
			return nil, fmt.Errorf("scan: Bench: unknown operation %q (want one of %v)", op, BenchOps)
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

func benchInput(n int, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	s := make([]uint32, n)
	for i := range s {
		s[i] = r.Uint32()
	}
	return s
}

// freeAll frees buffers, ignoring nil ones.
func freeAll(bufs ...*exec.Buf[uint32]) {
	for _, b := range bufs {
		b.Free()
	}
}

func mismatch(op, variant string, n int, got, want []uint32) error {
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("scan: Bench %s %s n=%d: item %d = %d, the Go executor says %d", op, variant, n, i, got[i], want[i])
		}
	}
	return nil
}

func benchScan(ex exec.Executor, n, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	host := benchInput(n, 1)
	want := make([]uint32, n)
	serialExclusive(want, host, 0)
	src, err := exec.FromHost(ex, host)
	if err != nil {
		return nil, err
	}
	dst, err := exec.Alloc[uint32](ex, n)
	if err != nil {
		src.Free()
		return nil, err
	}
	defer freeAll(src, dst)
	var rows []exec.BenchRow
	for _, v := range Variants(ex) {
		if err := ExclusiveVariant(ex, v, dst, src); err != nil {
			return rows, err
		}
		got, err := dst.ToHost()
		if err != nil {
			return rows, err
		}
		if err := mismatch("scan", v, n, got, want); err != nil {
			return rows, err
		}
		t, err := exec.Time(ex, runs, func() error { return ExclusiveVariant(ex, v, dst, src) })
		if err != nil {
			return rows, err
		}
		rows = append(rows, exec.NewRow("scan", v, n, 8*int64(n), t, copyGBps))
	}
	return rows, nil
}

func benchSegscan(ex exec.Executor, n, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	host := benchInput(n, 2)
	heads := make([]uint32, n)
	r := rand.New(rand.NewPCG(3, uint64(n)))
	for i := range heads {
		if r.IntN(1000) == 0 {
			heads[i] = 1
		}
	}
	want := make([]uint32, n)
	segSerial(want, host, heads, 0, false)
	src, err := exec.FromHost(ex, host)
	if err != nil {
		return nil, err
	}
	hb, err := exec.FromHost(ex, heads)
	if err != nil {
		src.Free()
		return nil, err
	}
	dst, err := exec.Alloc[uint32](ex, n)
	if err != nil {
		freeAll(src, hb)
		return nil, err
	}
	defer freeAll(src, hb, dst)
	// The offsets form first: segment starts as the builder gives them
	// (8 bytes per item plus the offsets).
	offsets := []uint32{0}
	for i := 1; i < n; i++ {
		if heads[i] != 0 {
			offsets = append(offsets, uint32(i))
		}
	}
	offsets = append(offsets, uint32(n))
	ob, err := exec.FromHost(ex, offsets)
	if err != nil {
		return nil, err
	}
	defer ob.Free()
	var rows []exec.BenchRow
	{
		v := VariantCPUSerial + "-offsets" // the Go offsets form is one loop per segment
		if ex.CUDA() != nil {
			v = VariantProduction + "-offsets"
		}
		row, err := checkedRow(ex, v, n, 8*int64(n)+4*int64(len(offsets)), runs, copyGBps, dst, want,
			func() error { return SegmentedExclusiveOffsets(ex, dst, src, ob) })
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	// The offsets form's tuning kernels (GPU).
	if ex.CUDA() != nil {
		for _, t := range tuningSegOffsets {
			row, err := checkedRow(ex, t.variant, n, 8*int64(n)+4*int64(len(offsets)), runs, copyGBps, dst, want,
				func() error { return segOffsetsTuning(ex, t.kernel, dst, src, ob) })
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
	// Then the heads form: on a GPU both kernel families, the default first
	// (rows named production-heads and production-v1-heads after the scans
	// they are built like).
	families := []string{""}
	if ex.CUDA() != nil {
		families = []string{defaultSegmented, segmentedV1}
		if defaultSegmented == segmentedV1 {
			families = []string{segmentedV1, segmentedV2}
		}
	}
	for _, family := range families {
		v := DefaultVariant(ex)
		switch family {
		case segmentedV2:
			v = VariantProduction
		case segmentedV1:
			v = VariantProductionV1
		}
		v += "-heads"
		row, err := checkedRow(ex, v, n, 12*int64(n), runs, copyGBps, dst, want,
			func() error { return segmentedFamilyOf(ex, nil, family, dst, src, hb, false) })
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// checkedRow runs a segmented scan once, checks dst against want, then
// times run: one row of the segscan bench moving bytes per run.
func checkedRow(ex exec.Executor, v string, n int, bytes int64, runs int, copyGBps float64, dst *exec.Buf[uint32], want []uint32, run func() error) (exec.BenchRow, error) {
	if err := run(); err != nil {
		return exec.BenchRow{}, err
	}
	got, err := dst.ToHost()
	if err != nil {
		return exec.BenchRow{}, err
	}
	if err := mismatch("segscan", v, n, got, want); err != nil {
		return exec.BenchRow{}, err
	}
	t, err := exec.Time(ex, runs, run)
	if err != nil {
		return exec.BenchRow{}, err
	}
	return exec.NewRow("segscan", v, n, bytes, t, copyGBps), nil
}

func benchCompact(ex exec.Executor, n, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	host := benchInput(n, 4)
	flags := make([]uint32, n)
	for i, v := range host {
		flags[i] = v & 1
	}
	want := refCompactHost(host, flags)
	src, err := exec.FromHost(ex, host)
	if err != nil {
		return nil, err
	}
	fb, err := exec.FromHost(ex, flags)
	if err != nil {
		src.Free()
		return nil, err
	}
	dst, err := exec.Alloc[uint32](ex, n)
	if err != nil {
		freeAll(src, fb)
		return nil, err
	}
	defer freeAll(src, fb, dst)
	var rows []exec.BenchRow
	for _, v := range CompactVariants(ex) {
		k, err := CompactVariant(ex, v, dst, src, fb)
		if err != nil {
			return rows, err
		}
		if k != len(want) {
			return rows, fmt.Errorf("scan: Bench compact %s n=%d: kept %d, the Go executor keeps %d", v, n, k, len(want))
		}
		got, err := dst.ToHost()
		if err != nil {
			return rows, err
		}
		if err := mismatch("compact", v, n, got[:k], want); err != nil {
			return rows, err
		}
		t, err := exec.Time(ex, runs, func() error { _, err := CompactVariant(ex, v, dst, src, fb); return err })
		if err != nil {
			return rows, err
		}
		rows = append(rows, exec.NewRow("compact", v, n, 8*int64(n)+4*int64(k), t, copyGBps))
	}
	return rows, nil
}

func refCompactHost(src, flags []uint32) []uint32 {
	out := make([]uint32, 0, len(src)/2)
	for i, v := range src {
		if flags[i] != 0 {
			out = append(out, v)
		}
	}
	return out
}

func benchSort(ex exec.Executor, n, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	hostK := benchInput(n, 5)
	hostV := make([]uint32, n)
	for i := range hostV {
		hostV[i] = uint32(i)
	}
	wantK, wantV := append([]uint32(nil), hostK...), append([]uint32(nil), hostV...)
	lsdSort(wantK, wantV, nil, nil)
	var bufs []*exec.Buf[uint32]
	defer func() { freeAll(bufs...) }()
	mk := func(h []uint32) (*exec.Buf[uint32], error) {
		b, err := exec.FromHost(ex, h)
		if err == nil {
			bufs = append(bufs, b)
		}
		return b, err
	}
	k0, err := mk(hostK)
	if err != nil {
		return nil, err
	}
	v0, err := mk(hostV)
	if err != nil {
		return nil, err
	}
	k, err := mk(hostK)
	if err != nil {
		return nil, err
	}
	v, err := mk(hostV)
	if err != nil {
		return nil, err
	}
	restore := func() error {
		if err := k.CopyFrom(k0); err != nil {
			return err
		}
		return v.CopyFrom(v0)
	}
	tc, err := exec.Time(ex, runs, restore)
	if err != nil {
		return nil, err
	}
	var rows []exec.BenchRow
	for _, variant := range SortVariants(ex) {
		if err := restore(); err != nil {
			return rows, err
		}
		if err := SortPairsVariant(ex, variant, k, v); err != nil {
			return rows, err
		}
		gotK, err := k.ToHost()
		if err != nil {
			return rows, err
		}
		gotV, err := v.ToHost()
		if err != nil {
			return rows, err
		}
		if err := mismatch("sort keys", variant, n, gotK, wantK); err != nil {
			return rows, err
		}
		if err := mismatch("sort values", variant, n, gotV, wantV); err != nil {
			return rows, err
		}
		t, err := exec.Time(ex, runs, func() error {
			if err := restore(); err != nil {
				return err
			}
			return SortPairsVariant(ex, variant, k, v)
		})
		if err != nil {
			return rows, err
		}
		t.Median = max(t.Median-tc.Median, 0)
		t.Min, t.Max = max(t.Min-tc.Median, 0), max(t.Max-tc.Median, 0)
		row := exec.NewRow("sort", variant, n, 16*int64(n), t, copyGBps)
		if t.Median > 0 {
			row.Note = fmt.Sprintf("%.2f Gkeys/s", float64(n)/(t.Median*1e6))
		}
		rows = append(rows, row)
	}
	return rows, nil
}
