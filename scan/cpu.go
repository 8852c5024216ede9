package scan

import (
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// The Go executor's scans. The serial loops are the reference every other
// variant is compared against:
//
//	exclusive: acc := 0; for i := range src { dst[i], acc = acc, acc+src[i] }
//	inclusive: acc := 0; for i := range src { acc += src[i]; dst[i] = acc }
//
// dst and src may be the same slice (each element is read before it is
// written).

// serialExclusive writes the exclusive scan of src, starting from carry, to
// dst and returns the total carry+sum(src).
func serialExclusive[T Value](dst, src []T, carry T) T {
	dst = dst[:len(src)]
	acc := carry
	i := 0
	// Four at a time: the loads are independent, only the adds chain.
	for ; i+4 <= len(src); i += 4 {
		a, b, c, d := src[i], src[i+1], src[i+2], src[i+3]
		dst[i] = acc
		acc += a
		dst[i+1] = acc
		acc += b
		dst[i+2] = acc
		acc += c
		dst[i+3] = acc
		acc += d
	}
	for ; i < len(src); i++ {
		v := src[i]
		dst[i] = acc
		acc += v
	}
	return acc
}

// serialInclusive writes the inclusive scan of src, starting from carry, to
// dst and returns the total.
func serialInclusive[T Value](dst, src []T, carry T) T {
	dst = dst[:len(src)]
	acc := carry
	i := 0
	for ; i+4 <= len(src); i += 4 {
		a, b, c, d := src[i], src[i+1], src[i+2], src[i+3]
		acc += a
		dst[i] = acc
		acc += b
		dst[i+1] = acc
		acc += c
		dst[i+2] = acc
		acc += d
		dst[i+3] = acc
	}
	for ; i < len(src); i++ {
		acc += src[i]
		dst[i] = acc
	}
	return acc
}

// sum returns the sum of s with four independent accumulators (so the adds
// overlap), combined as ((a+b)+(c+d)).
func sum[T Value](s []T) T {
	var a, b, c, d T
	i := 0
	for ; i+4 <= len(s); i += 4 {
		a += s[i]
		b += s[i+1]
		c += s[i+2]
		d += s[i+3]
	}
	for ; i < len(s); i++ {
		a += s[i]
	}
	return (a + b) + (c + d)
}

// parallelMin is the size below which the parallel scans run serially: the
// goroutine hand-offs cost more than the work.
const parallelMin = 1 << 15

// parallelScan is the cpu-parallel variant (see lookbackScan); the two-pass
// form below it stays as twoPassScan for comparison in the benchmarks.
func parallelScan[T Value](workers int, dst, src []T, inclusive bool) T {
	return lookbackScan(workers, dst, src, inclusive)
}

// lbBlock is the block of lookbackScan: 32768 items (128 KiB of 32-bit
// items), small enough to stay in a core's L2 cache between the block's sum
// and its scan.
const lbBlock = 1 << 15

// lookbackScan scans src in one pass over memory: blocks of lbBlock items
// go round-robin to the workers; a worker sums its block (which brings it
// into the cache), publishes the sum, takes its carry as its own previous
// block's inclusive prefix plus the published sums of the other workers'
// blocks in between (waiting for them if needed: a CPU form of decoupled
// look-back), and scans the block from the cache, writing with
// non-temporal stores (streamScan). Memory sees one read of src and one
// write of dst, against the three streams (read, read for ownership, write)
// of the serial loop and of a two-pass scan.
func lookbackScan[T Value](workers int, dst, src []T, inclusive bool) T {
	n := len(src)
	if workers <= 1 || n < parallelMin {
		return streamScan(dst, src, 0, inclusive)
	}
	nb := (n + lbBlock - 1) / lbBlock
	k := min(workers, nb)
	// pub[b]: 1<<32 | the bits of block b's sum, once known.
	pub := make([]atomic.Uint64, nb)
	var total T
	forChunks(k, k, func(w, _, _ int) {
		var prev T // inclusive prefix of this worker's previous block
		for b := w; b < nb; b += k {
			lo, hi := b*lbBlock, min((b+1)*lbBlock, n)
			s := blockSum(src[lo:hi])
			pub[b].Store(1<<32 | uint64(toBits(s)))
			carry := prev
			for j := max(b-k+1, 0); j < b; j++ {
				v := pub[j].Load()
				for v>>32 == 0 {
					runtime.Gosched()
					v = pub[j].Load()
				}
				carry += fromBits[T](uint32(v))
			}
			streamScan(dst[lo:hi], src[lo:hi], carry, inclusive)
			prev = carry + s
			if b == nb-1 {
				total = prev
			}
		}
	})
	return total
}

// blockSum is sum, with AVX2 for 32-bit integers where the CPU has it
// (integer sums are exact in any order).
func blockSum[T Value](s []T) T {
	if !haveAVX2 || isFloat[T]() || len(s) < 32 {
		return sum(s)
	}
	m := len(s) &^ 31
	return T(sumAVX2((*uint32)(unsafe.Pointer(&s[0])), m)) + sum(s[m:])
}

// toBits returns the 32 bits of v.
func toBits[T Value](v T) uint32 {
	if f, ok := any(v).(float32); ok {
		return math.Float32bits(f)
	}
	return uint32(v)
}

// twoPassScan is the first cpu-parallel form: src is cut into one contiguous
// chunk per worker; pass 1 sums the chunks concurrently, the chunk sums are
// scanned serially, and pass 2 scans every chunk from its offset
// concurrently, writing 32-bit integers with non-temporal stores on amd64
// (streamScan). Two hand-offs in all: measured on the 2-core development
// machine, finer-grained rounds that keep chunks in the cache between the
// passes lost more to waking goroutines than they saved.
func twoPassScan[T Value](workers int, dst, src []T, inclusive bool) (total T) {
	n := len(src)
	if workers <= 1 || n < parallelMin {
		return streamScan(dst, src, 0, inclusive)
	}
	k := min(workers, n/(parallelMin/2))
	sums := make([]T, k)
	forChunks(k, n, func(c, lo, hi int) { sums[c] = sum(src[lo:hi]) })
	var carry T
	for c := range sums {
		sums[c], carry = carry, carry+sums[c]
	}
	forChunks(k, n, func(c, lo, hi int) { streamScan(dst[lo:hi], src[lo:hi], sums[c], inclusive) })
	return carry
}

// streamScan scans src into dst from carry like the serial loops; for
// 32-bit integers on amd64 the 16-byte aligned middle of dst is written by
// scanNT with non-temporal stores, which saves the read of dst's lines
// before they are written: a third of the memory traffic of a scan that
// does not fit in the caches.
func streamScan[T Value](dst, src []T, carry T, inclusive bool) T {
	scalar := func(d, s []T, c T) T {
		if inclusive {
			return serialInclusive(d, s, c)
		}
		return serialExclusive(d, s, c)
	}
	n := len(src)
	if !haveNT || isFloat[T]() || n < 64 {
		return scalar(dst, src, carry)
	}
	if haveAVX2 {
		// Items before the first 32-byte boundary of dst, then groups of 8.
		head := int((32 - uintptr(unsafe.Pointer(&dst[0]))%32) % 32 / 4)
		mid := (n - head) &^ 7
		carry = scalar(dst[:head], src[:head], carry)
		c := scanNT8((*uint32)(unsafe.Pointer(&dst[head])), (*uint32)(unsafe.Pointer(&src[head])), mid, uint32(carry), inclusive)
		return scalar(dst[head+mid:], src[head+mid:], T(c))
	}
	// Items before the first 16-byte boundary of dst, then whole groups of 4.
	head := int((16 - uintptr(unsafe.Pointer(&dst[0]))%16) % 16 / 4)
	mid := (n - head) &^ 3
	carry = scalar(dst[:head], src[:head], carry)
	c := scanNT((*uint32)(unsafe.Pointer(&dst[head])), (*uint32)(unsafe.Pointer(&src[head])), mid, uint32(carry), inclusive)
	return scalar(dst[head+mid:], src[head+mid:], T(c))
}

// goScan runs a named Go variant and returns the sum of src.
func goScan[T Value](ex exec.Executor, variant string, dst, src []T, inclusive bool) T {
	if variant == VariantCPUSerial {
		if inclusive {
			return serialInclusive(dst, src, 0)
		}
		return serialExclusive(dst, src, 0)
	}
	return parallelScan(ex.Workers(), dst, src, inclusive)
}
