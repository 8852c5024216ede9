package scan

import (
	"fmt"
	"math"
	"slices"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Scan variant names, selectable with ExclusiveVariant and InclusiveVariant.
// The first two run on the Go executor, the others on the CUDA executor.
const (
	VariantCPUSerial            = "cpu-serial"             // one loop, left to right (the reference)
	VariantCPUParallel          = "cpu-parallel"           // chunk sums, scan of sums, chunk scans, over goroutines
	VariantNaive                = "naive"                  // Hillis–Steele in global memory, one launch per level
	VariantWorkEfficient        = "work-efficient"         // Blelloch up/down-sweep in global memory, all threads every level
	VariantWorkEfficientThreads = "work-efficient-threads" // the same, launching only the threads a level needs
	VariantSharedNaive          = "shared-naive"           // Hillis–Steele per block in shared memory, block sums scanned recursively
	VariantSharedWorkEfficient  = "shared-work-efficient"  // Blelloch per block in shared memory (conflict-free offsets), recursive block sums
	VariantProduction           = "production"             // single pass, decoupled look-back, 256 x 32 items, backoff (the GPU default)
	VariantProduction24         = "production-24"          // the same, 256 x 24 items, 5 blocks per SM
	VariantProduction16         = "production-16"          // the same, 256 x 16 items, 8 blocks per SM
	VariantProductionV1         = "production-v1"          // the first production kernel: 256 x 16 items, busy polling
	VariantProductionBid        = "production-bid"         // production with the tile number from blockIdx.x, no atomic ticket
)

var (
	cpuVariants = []string{VariantCPUSerial, VariantCPUParallel}
	gpuVariants = append([]string{VariantNaive, VariantWorkEfficient, VariantWorkEfficientThreads,
		VariantSharedNaive, VariantSharedWorkEfficient, VariantProduction,
		VariantProduction24, VariantProduction16, VariantProductionV1, VariantProductionBid},
		tuningScanVariants()...) // tuning.go
)

// Variants lists the scan variant names valid on ex, the default first.
func Variants(ex exec.Executor) []string {
	if ex.CUDA() != nil {
		v := []string{defaultScan}
		for _, s := range gpuVariants {
			if s != defaultScan {
				v = append(v, s)
			}
		}
		return v
	}
	return []string{VariantCPUParallel, VariantCPUSerial}
}

// DefaultVariant is the variant Exclusive and Inclusive use on ex:
// defaultScan (production) on a GPU, cpu-parallel on the Go executor.
func DefaultVariant(ex exec.Executor) string {
	if ex.CUDA() != nil {
		return defaultScan
	}
	return VariantCPUParallel
}

// Exclusive writes the exclusive prefix sum of src to dst:
//
//	var acc T
//	for i := range src { dst[i], acc = acc, acc+src[i] }
//
// dst may be src. Integer sums wrap modulo 2^32; float32 sums are rounded
// in a variant-dependent order. Mismatched lengths panic. On the CUDA
// executor the work is queued on the default stream and scratch comes from a
// per-executor cache (see Scanner).
func Exclusive[T Value](ex exec.Executor, dst, src *exec.Buf[T]) error {
	return ExclusiveVariant(ex, DefaultVariant(ex), dst, src)
}

// Inclusive writes the inclusive prefix sum of src to dst:
//
//	var acc T
//	for i := range src { acc += src[i]; dst[i] = acc }
//
// with the same rules as Exclusive.
func Inclusive[T Value](ex exec.Executor, dst, src *exec.Buf[T]) error {
	return InclusiveVariant(ex, DefaultVariant(ex), dst, src)
}

// ExclusiveVariant is Exclusive with the variant chosen by name (Variants
// lists the names valid on ex). An unknown name is an error.
func ExclusiveVariant[T Value](ex exec.Executor, variant string, dst, src *exec.Buf[T]) error {
	return scanVariant(ex, nil, variant, dst, src, false)
}

// InclusiveVariant is Inclusive with the variant chosen by name.
func InclusiveVariant[T Value](ex exec.Executor, variant string, dst, src *exec.Buf[T]) error {
	return scanVariant(ex, nil, variant, dst, src, true)
}

// ExclusiveWith is Exclusive (default variant) using the scratch of sc, so
// that a loop of scans allocates nothing once sc is large enough.
func ExclusiveWith[T Value](sc *Scanner, dst, src *exec.Buf[T]) error {
	return scanVariant(sc.ex, sc, DefaultVariant(sc.ex), dst, src, false)
}

// InclusiveWith is Inclusive using the scratch of sc.
func InclusiveWith[T Value](sc *Scanner, dst, src *exec.Buf[T]) error {
	return scanVariant(sc.ex, sc, DefaultVariant(sc.ex), dst, src, true)
}

// ExclusiveTotal is Exclusive (default variant) that also returns the sum
// of all of src (what an inclusive scan's last item would be, 0 when
// empty). On the CUDA executor the total is read back (4 bytes), so the
// call waits for the scan.
func ExclusiveTotal[T Value](ex exec.Executor, dst, src *exec.Buf[T]) (T, error) {
	var zero T
	if ex.CUDA() == nil {
		checkLen("ExclusiveTotal", dst.Len(), src.Len())
		if err := sameExec(ex, "ExclusiveTotal", dst, src); err != nil {
			return zero, err
		}
		return goScan(ex, DefaultVariant(ex), dst.Host(), src.Host(), false), nil
	}
	sc, unlock, err := cached(ex)
	if err != nil {
		return zero, err
	}
	defer unlock()
	p, err := sc.resultPtr(2)
	if err != nil {
		return zero, err
	}
	if err := sc.bufs[scratchResult].Slice(8, 4).Memset8(0); err != nil {
		return zero, err
	}
	if err := exclusiveTotalTo(sc, dst, src, p); err != nil {
		return zero, err
	}
	bits, err := sc.readResult(2)
	if err != nil {
		return zero, err
	}
	return fromBits[T](bits), nil
}

// ExclusiveTotalTo is Exclusive (default variant) that also writes the sum
// of all of src to total[0] (0 when src is empty), without waiting: the
// builder's way to learn a count on the device with no read-back.
func ExclusiveTotalTo[T Value](sc *Scanner, dst, src, total *exec.Buf[T]) error {
	if total.Len() < 1 {
		panic("scan: ExclusiveTotalTo: total has no room")
	}
	if err := sameExec(sc.ex, "ExclusiveTotalTo", total); err != nil {
		return err
	}
	if sc.ex.CUDA() == nil {
		checkLen("ExclusiveTotalTo", dst.Len(), src.Len())
		if err := sameExec(sc.ex, "ExclusiveTotalTo", dst, src); err != nil {
			return err
		}
		total.Host()[0] = goScan(sc.ex, DefaultVariant(sc.ex), dst.Host(), src.Host(), false)
		return nil
	}
	if src.Len() == 0 {
		return total.Slice(0, 1).Dev().Memset32(0)
	}
	return exclusiveTotalTo(sc, dst, src, total.Ptr())
}

func exclusiveTotalTo[T Value](sc *Scanner, dst, src *exec.Buf[T], total cuda.DevPtr) error {
	checkLen("ExclusiveTotal", dst.Len(), src.Len())
	if err := sameExec(sc.ex, "ExclusiveTotal", dst, src); err != nil {
		return err
	}
	if src.Len() == 0 {
		return nil // the caller zeroed the total
	}
	if err := checkGPUSize("scan", src.Len()); err != nil {
		return err
	}
	return sc.productionRaw(suffix[T](), dst.Ptr(), src.Ptr(), src.Len(), false, total)
}

// fromBits converts the 32 bits of a total read back from the device to T.
func fromBits[T Value](b uint32) T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(math.Float32frombits(b)).(T)
	}
	return T(b)
}

func scanVariant[T Value](ex exec.Executor, sc *Scanner, variant string, dst, src *exec.Buf[T], inclusive bool) error {
	op := "Exclusive"
	if inclusive {
		op = "Inclusive"
	}
	checkLen(op, dst.Len(), src.Len())
	if err := sameExec(ex, op, dst, src); err != nil {
		return err
	}
	if ctx := ex.CUDA(); ctx != nil {
		if !slices.Contains(gpuVariants, variant) {
			return fmt.Errorf("scan: %s: unknown GPU variant %q (want one of %v)", op, variant, gpuVariants)
		}
		if src.Len() == 0 {
			return nil
		}
		sc, unlock, err := scannerFor(ex, sc)
		if err != nil {
			return err
		}
		defer unlock()
		return gpuScan(sc, variant, dst, src, inclusive)
	}
	if !slices.Contains(cpuVariants, variant) {
		return fmt.Errorf("scan: %s: unknown Go variant %q (want one of %v)", op, variant, cpuVariants)
	}
	goScan(ex, variant, dst.Host(), src.Host(), inclusive)
	return nil
}
