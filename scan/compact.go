package scan

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Compaction variant names.
const (
	CompactCPUNoScan   = "cpu-no-scan"  // one loop appending kept items (Go)
	CompactCPUScan     = "cpu-scan"     // flags, exclusive scan, scatter (Go, the seeds' formulation)
	CompactCPUParallel = "cpu-parallel" // per-chunk counts, scan of counts, per-chunk scatter (Go)
	CompactScanScatter = "scan-scatter" // flags, production scan, scatter: three kernels (GPU)
	CompactFused       = "fused"        // one single-pass kernel with decoupled look-back, 256 x 32 items (GPU)
	CompactFusedV1     = "fused-v1"     // the first fused kernel: 256 x 16 items, busy polling (GPU)
	CompactFusedStaged = "fused-staged" // fused, each tile's kept items gathered in shared memory and written as one run (GPU)
	// CompactFusedAsync is fused-staged with each tile's values copied to
	// shared memory by asynchronous copies beside the flag loads and the
	// kept items' places in the tile recorded while the tile looks back for
	// its carry, 256 x 16 items, tile numbers from blockIdx.x (GPU).
	CompactFusedAsync = "fused-async"
	// CompactMask is flags, scan, scatter with the flags packed into bits:
	// one kernel writes a bit per item and the count of every 1024-item
	// chunk, the production scan turns the counts into the chunks' output
	// places, one kernel writes each chunk's kept items there (GPU; no
	// look-back in the passes over the data; the GPU default).
	CompactMask = "mask"
	// CompactFusedPrefetch is fused-staged with 256 x 16 items and each
	// item's value loaded with its flag at the start of the tile, in
	// registers.
	CompactFusedPrefetch = "fused-prefetch"
)

// ErrShortDst is returned (wrapped) by the compactions when dst is shorter
// than the number of kept items; dst then holds the first dst.Len() of them
// and the count returned is the full count.
var ErrShortDst = errors.New("scan: dst shorter than the number of kept items")

// CompactVariants lists the compaction variants valid on ex, default first.
func CompactVariants(ex exec.Executor) []string {
	if ex.CUDA() != nil {
		v := []string{defaultCompact}
		for _, s := range append([]string{CompactMask, CompactFusedAsync, CompactFusedPrefetch, CompactFusedStaged, CompactFused, CompactFusedV1, CompactScanScatter},
			tuningCompactVariants()...) {
			if s != defaultCompact {
				v = append(v, s)
			}
		}
		return v
	}
	return []string{CompactCPUParallel, CompactCPUNoScan, CompactCPUScan}
}

// Compact copies, in order, the items of src whose flag is nonzero to the
// start of dst and returns how many there are:
//
//	k := 0
//	for i := range src { if flags[i] != 0 { dst[k] = src[i]; k++ } }
//	return k
//
// dst may be shorter than src when fewer items are kept; if it is too short
// the error wraps ErrShortDst. dst must not overlap src or flags. On the CUDA
// executor the count is read back (4 bytes), so the call waits for the work.
func Compact(ex exec.Executor, dst, src, flags *exec.Buf[uint32]) (int, error) {
	return compact(ex, nil, CompactVariants(ex)[0], dst, src, flags)
}

// CompactQueued is Compact leaving the count in count[0] instead of
// returning it: on the CUDA executor the work is queued and nothing waits
// for it (the caller reads count when it needs it; dst must be able to hold
// every item of src, as nothing checks the count against it), on the Go
// executor it runs at once.
func CompactQueued(ex exec.Executor, dst, src, flags, count *exec.Buf[uint32]) error {
	const op = "CompactQueued"
	checkLen(op+" flags", flags.Len(), src.Len())
	if dst.Len() < src.Len() {
		return fmt.Errorf("%w: %s into %d of %d items", ErrShortDst, op, dst.Len(), src.Len())
	}
	if count.Len() < 1 {
		return fmt.Errorf("scan: %s: no word for the count", op)
	}
	if err := sameExec(ex, op, dst, src, flags, count); err != nil {
		return err
	}
	variant := CompactVariants(ex)[0]
	if ex.CUDA() == nil {
		count.Host()[0] = uint32(goCompact(ex.Workers(), variant, dst.Host(), src.Host(), flags.Host()))
		return nil
	}
	if src.Len() == 0 {
		return count.Dev().Slice(0, 1).Memset32(0)
	}
	sc, unlock, err := scannerFor(ex, nil)
	if err != nil {
		return err
	}
	defer unlock()
	return gpuCompactTo(sc, variant, dst, src, flags, count.Ptr())
}

// CompactNonzero is Compact keeping the nonzero items of src (the flags are
// src itself).
func CompactNonzero(ex exec.Executor, dst, src *exec.Buf[uint32]) (int, error) {
	return compact(ex, nil, CompactVariants(ex)[0], dst, src, src)
}

// CompactVariant is Compact with the variant chosen by name.
func CompactVariant(ex exec.Executor, variant string, dst, src, flags *exec.Buf[uint32]) (int, error) {
	return compact(ex, nil, variant, dst, src, flags)
}

// CompactWith is Compact using the scratch of sc.
func CompactWith(sc *Scanner, dst, src, flags *exec.Buf[uint32]) (int, error) {
	return compact(sc.ex, sc, CompactVariants(sc.ex)[0], dst, src, flags)
}

func compact(ex exec.Executor, sc *Scanner, variant string, dst, src, flags *exec.Buf[uint32]) (int, error) {
	const op = "Compact"
	checkLen(op+" flags", flags.Len(), src.Len())
	if err := sameExec(ex, op, dst, src, flags); err != nil {
		return 0, err
	}
	if !slices.Contains(CompactVariants(ex), variant) {
		return 0, fmt.Errorf("scan: %s: unknown variant %q on %s (want one of %v)", op, variant, ex.Name(), CompactVariants(ex))
	}
	var k int
	if ex.CUDA() != nil {
		if src.Len() == 0 {
			return 0, nil
		}
		sc, unlock, err := scannerFor(ex, sc)
		if err != nil {
			return 0, err
		}
		defer unlock()
		k, err = gpuCompact(sc, variant, dst, src, flags)
		if err != nil {
			return 0, err
		}
	} else {
		k = goCompact(ex.Workers(), variant, dst.Host(), src.Host(), flags.Host())
	}
	if k > dst.Len() {
		return k, fmt.Errorf("%w: kept %d items, dst holds %d", ErrShortDst, k, dst.Len())
	}
	return k, nil
}

// goCompact runs a Go variant; it writes at most len(dst) items and returns
// the full count.
func goCompact(workers int, variant string, dst, src, flags []uint32) int {
	switch variant {
	case CompactCPUNoScan:
		k := 0
		for i, v := range src {
			if flags[i] != 0 {
				if k < len(dst) {
					dst[k] = v
				}
				k++
			}
		}
		return k
	case CompactCPUScan:
		// The seeds' three steps: 0/1 flags, exclusive scan, scatter.
		idx := make([]uint32, len(src))
		for i, f := range flags {
			if f != 0 {
				idx[i] = 1
			}
		}
		total := serialExclusive(idx, idx, 0)
		for i, v := range src {
			if flags[i] != 0 && int(idx[i]) < len(dst) {
				dst[idx[i]] = v
			}
		}
		return int(total)
	}
	// cpu-parallel: count per chunk, offsets, scatter per chunk.
	n := len(src)
	chunks := workers
	if n < parallelMin || chunks < 1 {
		chunks = 1
	}
	counts := make([]int, chunks)
	forChunks(chunks, n, func(c, lo, hi int) {
		k := 0
		for _, f := range flags[lo:hi] {
			if f != 0 {
				k++
			}
		}
		counts[c] = k
	})
	off := 0
	for c := range counts {
		counts[c], off = off, off+counts[c]
	}
	forChunks(chunks, n, func(c, lo, hi int) {
		k := counts[c]
		for i := lo; i < hi; i++ {
			if flags[i] != 0 {
				if k < len(dst) {
					dst[k] = src[i]
				}
				k++
			}
		}
	})
	return off
}

// forChunks runs body(c, lo, hi) concurrently for the chunks
// [c*n/k, (c+1)*n/k), c < k, and waits for all.
func forChunks(k, n int, body func(c, lo, hi int)) {
	var wg sync.WaitGroup
	for c := 1; c < k; c++ {
		wg.Add(1)
		go func() { defer wg.Done(); body(c, c*n/k, (c+1)*n/k) }()
	}
	body(0, 0, n/k)
	wg.Wait()
}
