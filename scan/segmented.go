package scan

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// SegmentedExclusive writes the exclusive prefix sum of src restarted at
// every segment head to dst. heads[i] != 0 starts a segment at i (index 0
// always starts one):
//
//	var acc T
//	for i := range src {
//		if heads[i] != 0 { acc = 0 }
//		dst[i], acc = acc, acc+src[i]
//	}
//
// dst may be src. Lengths must match (a mismatch panics). Sums wrap like
// Exclusive's.
func SegmentedExclusive[T Value](ex exec.Executor, dst, src *exec.Buf[T], heads *exec.Buf[uint32]) error {
	return segmented(ex, nil, dst, src, heads, false)
}

// SegmentedInclusive is the inclusive form:
//
//	var acc T
//	for i := range src {
//		if heads[i] != 0 { acc = 0 }
//		acc += src[i]; dst[i] = acc
//	}
func SegmentedInclusive[T Value](ex exec.Executor, dst, src *exec.Buf[T], heads *exec.Buf[uint32]) error {
	return segmented(ex, nil, dst, src, heads, true)
}

// SegmentedExclusiveWith and SegmentedInclusiveWith use the scratch of sc.
func SegmentedExclusiveWith[T Value](sc *Scanner, dst, src *exec.Buf[T], heads *exec.Buf[uint32]) error {
	return segmented(sc.ex, sc, dst, src, heads, false)
}

// SegmentedInclusiveWith is SegmentedInclusive using the scratch of sc.
func SegmentedInclusiveWith[T Value](sc *Scanner, dst, src *exec.Buf[T], heads *exec.Buf[uint32]) error {
	return segmented(sc.ex, sc, dst, src, heads, true)
}

// SegmentedExclusiveOffsets is SegmentedExclusive with the segments given
// by their starts: segment s covers [offsets[s], offsets[s+1]), so there are
// len(offsets)-1 segments; offsets must be non-decreasing with offsets[0] = 0
// and offsets[len-1] = len(src) (the Go executor checks and returns an
// error; the CUDA executor trusts them and ignores offsets >= len(src)).
// Empty segments are allowed.
func SegmentedExclusiveOffsets[T Value](ex exec.Executor, dst, src *exec.Buf[T], offsets *exec.Buf[uint32]) error {
	return segmentedOffsets(ex, nil, dst, src, offsets, false)
}

// SegmentedInclusiveOffsets is the inclusive form of SegmentedExclusiveOffsets.
func SegmentedInclusiveOffsets[T Value](ex exec.Executor, dst, src *exec.Buf[T], offsets *exec.Buf[uint32]) error {
	return segmentedOffsets(ex, nil, dst, src, offsets, true)
}

// SegOffsetsTile is the tile, in items, of the offsets-form segmented scan
// on the CUDA executor (the unit of SegmentedExclusivePrepared's tile
// starts).
const SegOffsetsTile = 4096

// SegOffsetsTiles returns the number of SegOffsetsTile-item tiles of n
// items.
func SegOffsetsTiles(n int) int { return (n + SegOffsetsTile - 1) / SegOffsetsTile }

// SegOffsetsStateWords returns the 4-byte words of the look-back state
// SegmentedExclusivePrepared needs for n items.
func SegOffsetsStateWords(n int) int { return 2 * (SegOffsetsTiles(n) + 1) }

// SegmentedExclusivePrepared is SegmentedExclusiveOffsets with the work of
// the launch that precedes the CUDA scan done by the caller, whose own
// kernels can do it while they write the offsets (one launch less):
//   - tileSeg[t] = min{s : offsets[s] >= t·SegOffsetsTile} (len(offsets)
//     if none) for t < SegOffsetsTiles(len(src)): where each tile's
//     segments start;
//   - state: at least SegOffsetsStateWords(len(src)) words, all zero (the
//     scan leaves them dirty).
//
// On the Go executor, or when the native offsets kernel is off, tileSeg
// and state are not read.
func SegmentedExclusivePrepared[T Value](ex exec.Executor, dst, src *exec.Buf[T], offsets, tileSeg, state *exec.Buf[uint32]) error {
	n := src.Len()
	if ex.CUDA() == nil || !segmentedOffsetsNative || n == 0 {
		return segmentedOffsets(ex, nil, dst, src, offsets, false)
	}
	const op = "SegmentedExclusivePrepared"
	checkLen(op, dst.Len(), src.Len())
	if err := sameExec(ex, op, dst, src); err != nil {
		return err
	}
	if err := sameExec(ex, op, offsets, tileSeg, state); err != nil {
		return err
	}
	if err := checkGPUSize("segmented scan", n); err != nil {
		return err
	}
	tiles := SegOffsetsTiles(n)
	if tileSeg.Len() < tiles || state.Len() < SegOffsetsStateWords(n) {
		panic(fmt.Sprintf("scan: %s: %d tile starts and %d state words for %d items (want %d and %d)", op,
			tileSeg.Len(), state.Len(), n, tiles, SegOffsetsStateWords(n)))
	}
	kernel := "segscan_off_excl_" + suffix[T]()
	if lookbackTile(kernel) != SegOffsetsTile {
		return fmt.Errorf("scan: %s: %s has %d-item tiles, not %d", op, kernel, lookbackTile(kernel), SegOffsetsTile)
	}
	k, err := launch.Named[launch.SegscanOffExclU32Args](kernel)
	if err != nil {
		return err
	}
	return k.Launch(ex.CUDA(), cuda.Linear(tiles), cuda.Linear(lookbackThreads(kernel)), 0, launch.SegscanOffExclU32Args{
		Src: src.Ptr(), Offsets: offsets.Ptr(), TileSeg: tileSeg.Ptr(), Nentries: uint64(offsets.Len()), Dst: dst.Ptr(),
		N: uint64(n), State: state.Ptr()})
}

func segmented[T Value](ex exec.Executor, sc *Scanner, dst, src *exec.Buf[T], heads *exec.Buf[uint32], inclusive bool) error {
	return segmentedFamilyOf(ex, sc, segmentedFamily, dst, src, heads, inclusive)
}

// segmentedFamilyOf is segmented with the GPU kernel family chosen
// (segmentedV2 or segmentedV1; ignored on the Go executor).
func segmentedFamilyOf[T Value](ex exec.Executor, sc *Scanner, family string, dst, src *exec.Buf[T], heads *exec.Buf[uint32], inclusive bool) error {
	const op = "Segmented"
	checkLen(op, dst.Len(), src.Len())
	checkLen(op+" heads", heads.Len(), src.Len())
	if err := sameExec(ex, op, dst, src); err != nil {
		return err
	}
	if err := sameExec(ex, op, heads); err != nil {
		return err
	}
	if ex.CUDA() != nil {
		if src.Len() == 0 {
			return nil
		}
		sc, unlock, err := scannerFor(ex, sc)
		if err != nil {
			return err
		}
		defer unlock()
		return gpuSegmented(sc, family, dst, src, heads.Ptr(), inclusive)
	}
	goSegmented(ex.Workers(), dst.Host(), src.Host(), heads.Host(), inclusive)
	return nil
}

func segmentedOffsets[T Value](ex exec.Executor, sc *Scanner, dst, src *exec.Buf[T], offsets *exec.Buf[uint32], inclusive bool) error {
	const op = "SegmentedOffsets"
	checkLen(op, dst.Len(), src.Len())
	if err := sameExec(ex, op, dst, src); err != nil {
		return err
	}
	if err := sameExec(ex, op, offsets); err != nil {
		return err
	}
	n := src.Len()
	if ex.CUDA() != nil {
		if n == 0 {
			return nil
		}
		sc, unlock, err := scannerFor(ex, sc)
		if err != nil {
			return err
		}
		defer unlock()
		if !segmentedOffsetsNative {
			heads, err := gpuHeadsFromOffsets(sc, offsets, n)
			if err != nil {
				return err
			}
			return gpuSegmented(sc, segmentedFamily, dst, src, heads, inclusive)
		}
		return gpuSegmentedOffsets(sc, dst, src, offsets, inclusive)
	}
	off := offsets.Host()
	if n > 0 || len(off) > 0 {
		if len(off) < 2 || off[0] != 0 || int(off[len(off)-1]) != n {
			return fmt.Errorf("scan: %s: offsets must start at 0 and end at %d (have %d offsets)", op, n, len(off))
		}
	}
	d, s := dst.Host(), src.Host()
	for k := 0; k+1 < len(off); k++ {
		lo, hi := off[k], off[k+1]
		if hi < lo || int(hi) > n {
			return fmt.Errorf("scan: %s: offsets[%d]=%d, offsets[%d]=%d: not non-decreasing within [0, %d]", op, k, lo, k+1, hi, n)
		}
		if inclusive {
			serialInclusive(d[lo:hi], s[lo:hi], 0)
		} else {
			serialExclusive(d[lo:hi], s[lo:hi], 0)
		}
	}
	return nil
}

// segSerial is the reference loop over [0, len(src)) starting from carry;
// it returns the carry after the last element.
func segSerial[T Value](dst, src []T, heads []uint32, carry T, inclusive bool) T {
	acc := carry
	for i, v := range src {
		if heads[i] != 0 {
			acc = 0
		}
		if inclusive {
			acc += v
			dst[i] = acc
		} else {
			dst[i] = acc
			acc += v
		}
	}
	return acc
}

// segAggregate returns (any head in the range, the sum since the last head
// or the start).
func segAggregate[T Value](src []T, heads []uint32) (bool, T) {
	var acc T
	head := false
	for i, v := range src {
		if heads[i] != 0 {
			acc, head = 0, true
		}
		acc += v
	}
	return head, acc
}

// goSegmented runs the segmented scan in the two passes of parallelScan:
// the carry into a chunk is the sum since the last head before it.
func goSegmented[T Value](workers int, dst, src []T, heads []uint32, inclusive bool) {
	n := len(src)
	if workers <= 1 || n < parallelMin {
		segSerial(dst, src, heads, 0, inclusive)
		return
	}
	k := min(workers, n/(parallelMin/2))
	sums := make([]T, k)
	flags := make([]bool, k)
	forChunks(k, n, func(c, lo, hi int) { flags[c], sums[c] = segAggregate(src[lo:hi], heads[lo:hi]) })
	var carry T
	for c := range sums {
		s := sums[c]
		sums[c] = carry
		if flags[c] {
			carry = s
		} else {
			carry += s
		}
	}
	forChunks(k, n, func(c, lo, hi int) { segSerial(dst[lo:hi], src[lo:hi], heads[lo:hi], sums[c], inclusive) })
}

// segOffsetsTuning runs a tuning kernel of the offsets form (tuning.go) on
// a GPU executor: the exclusive uint32 segmented scan, for the benchmark.
func segOffsetsTuning(ex exec.Executor, kernel string, dst, src, offsets *exec.Buf[uint32]) error {
	if src.Len() == 0 {
		return nil
	}
	sc, unlock, err := scannerFor(ex, nil)
	if err != nil {
		return err
	}
	defer unlock()
	return gpuSegmentedOffsetsKernel(sc, kernel, dst, src, offsets)
}
