package scan

import (
	"fmt"
	"slices"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Sort variant names.
const (
	SortCPULSD8 = "cpu-lsd8" // Go: LSD radix sort, 8 bits per pass, constant digits skipped
	SortSplit   = "split"    // GPU: the seeds' split sort, 1 bit per pass (flags, scan, scatter), high zero bits skipped
	SortLSD8    = "lsd8"     // GPU: 8 bits per pass, per-block digit histograms, scan, stable scatter with per-warp ranking
	// GPU: lsd8 whose scatter loads each sub-tile at once, the next one
	// while the current one is written out (the default).
	SortLSD8Prefetch = "lsd8-prefetch"
	// GPU: 8 bits per pass, one kernel per pass (Adinets & Merrill's
	// onesweep): all four digit histograms from one read of the keys, then
	// per pass one launch that ranks 3840-key tiles in shared memory, finds
	// each tile's digit offsets by decoupled look-back and writes each
	// digit's run contiguously. Up to 2^30-1 keys; larger inputs take
	// lsd8-prefetch.
	SortOnesweep = "onesweep"
)

// SortVariants lists the sort variants valid on ex, default first.
func SortVariants(ex exec.Executor) []string {
	if ex.CUDA() != nil {
		v := []string{defaultSort}
		for _, s := range []string{SortOnesweep, SortLSD8Prefetch, SortLSD8, SortSplit} {
			if s != defaultSort {
				v = append(v, s)
			}
		}
		return v
	}
	return []string{SortCPULSD8}
}

// SortPairs sorts keys ascending, stably, carrying vals along (vals may be
// nil; otherwise its length must equal keys'): afterwards keys is sorted and,
// for equal keys, the pairs keep their original order — the result of
// slices.SortStableFunc on the pairs by key. On the CUDA executor the call
// reads back the maximum key (4 bytes) to skip the passes over zero bits.
func SortPairs(ex exec.Executor, keys, vals *exec.Buf[uint32]) error {
	return sortPairs(ex, nil, SortVariants(ex)[0], keys, vals)
}

// SortPairsVariant is SortPairs with the variant chosen by name.
func SortPairsVariant(ex exec.Executor, variant string, keys, vals *exec.Buf[uint32]) error {
	return sortPairs(ex, nil, variant, keys, vals)
}

// SortPairsWith is SortPairs using the scratch of sc.
func SortPairsWith(sc *Scanner, keys, vals *exec.Buf[uint32]) error {
	return sortPairs(sc.ex, sc, SortVariants(sc.ex)[0], keys, vals)
}

// SortPairsBitsWith is SortPairsWith for keys known to be below 2^bits
// (0 <= bits <= 32): the CUDA path skips reading back the maximum key, so
// the call queues its work and returns without waiting. Keys at or above
// 2^bits make the order unspecified.
func SortPairsBitsWith(sc *Scanner, keys, vals *exec.Buf[uint32], bits int) error {
	if bits < 0 || bits > 32 {
		return fmt.Errorf("scan: SortPairsBitsWith: bits %d outside [0, 32]", bits)
	}
	return sortPairsBits(sc.ex, sc, SortVariants(sc.ex)[0], keys, vals, bits)
}

func sortPairs(ex exec.Executor, sc *Scanner, variant string, keys, vals *exec.Buf[uint32]) error {
	return sortPairsBits(ex, sc, variant, keys, vals, -1)
}

// sortPairsBits sorts by the low bits of the keys; bits < 0: find them.
func sortPairsBits(ex exec.Executor, sc *Scanner, variant string, keys, vals *exec.Buf[uint32], bits int) error {
	const op = "SortPairs"
	if vals != nil {
		checkLen(op, vals.Len(), keys.Len())
	}
	if err := sameExec(ex, op, keys, vals); err != nil {
		return err
	}
	if !slices.Contains(SortVariants(ex), variant) {
		return fmt.Errorf("scan: %s: unknown variant %q on %s (want one of %v)", op, variant, ex.Name(), SortVariants(ex))
	}
	if keys.Len() < 2 {
		return nil
	}
	if ex.CUDA() != nil {
		sc, unlock, err := scannerFor(ex, sc)
		if err != nil {
			return err
		}
		defer unlock()
		return gpuSort(sc, variant, keys, vals, bits)
	}
	var vs []uint32
	if vals != nil {
		vs = vals.Host()
	}
	var tk, tv []uint32
	if sc != nil {
		if err := sc.ReserveSort(keys.Len()); err != nil {
			return err
		}
		tk, tv = sc.hostKeys[:keys.Len()], sc.hostVals[:keys.Len()]
	}
	lsdSort(keys.Host(), vs, tk, tv)
	return nil
}

// lsdSort sorts keys (and vals, when not nil) stably by 8-bit digits from
// the least significant. One read computes the four digit histograms;
// a digit that is the same for every key is skipped. tk and tv are
// scratch of len(keys) (allocated when nil).
func lsdSort(keys, vals, tk, tv []uint32) {
	n := len(keys)
	var hist [4][256]int
	for _, k := range keys {
		hist[0][k&0xff]++
		hist[1][(k>>8)&0xff]++
		hist[2][(k>>16)&0xff]++
		hist[3][k>>24]++
	}
	if vals == nil {
		tv = nil // keys only: no value scratch, whatever was passed
	}
	if tk == nil {
		tk = make([]uint32, n)
	}
	if vals != nil && tv == nil {
		tv = make([]uint32, n)
	}
	srcK, srcV, dstK, dstV := keys, vals, tk[:n], tv
	if vals != nil {
		dstV = tv[:n]
	}
	for pass := 0; pass < 4; pass++ {
		h := &hist[pass]
		shift := uint(8 * pass)
		if h[(srcK[0]>>shift)&0xff] == n {
			continue // every key has this digit: the pass would not move anything
		}
		var off [256]int
		sum := 0
		for d := range h {
			off[d], sum = sum, sum+h[d]
		}
		if srcV == nil {
			for _, k := range srcK {
				d := (k >> shift) & 0xff
				dstK[off[d]] = k
				off[d]++
			}
		} else {
			for i, k := range srcK {
				d := (k >> shift) & 0xff
				j := off[d]
				dstK[j] = k
				dstV[j] = srcV[i]
				off[d]++
			}
		}
		srcK, dstK = dstK, srcK
		srcV, dstV = dstV, srcV
	}
	if &srcK[0] != &keys[0] {
		copy(keys, srcK)
		if vals != nil {
			copy(vals, srcV)
		}
	}
}
