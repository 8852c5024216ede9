package scan

import (
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

// parallelTile is the number of elements one worker handles per round of
// the parallel scan: 64 Ki 4-byte elements (256 KiB) stay in a core's L2
// between the two passes over the round.
var parallelTile = 1 << 16

// parallelMin is the size below which the parallel scan runs serially: the
// goroutine hand-offs cost more than the work.
const parallelMin = 1 << 15

// parallelScan is the cpu-parallel variant: the array is cut into rounds of
// workers×parallelTile elements; in each round every worker sums its tile,
// the tile sums are scanned serially, and every worker scans its tile from
// its offset while the tile is still in its cache. Memory traffic is one read
// and one write per element, like the serial loop.
func parallelScan[T Value](workers int, dst, src []T, inclusive bool) (total T) {
	n := len(src)
	if workers <= 1 || n < parallelMin {
		if inclusive {
			return serialInclusive(dst, src, 0)
		}
		return serialExclusive(dst, src, 0)
	}
	tile := parallelTile
	if n < workers*tile {
		tile = (n + workers - 1) / workers
	}
	round := workers * tile
	sums := make([]T, workers)
	var carry T
	pool := newPool(workers)
	defer pool.close()
	for base := 0; base < n; base += round {
		end := min(base+round, n)
		// Pass 1: tile sums.
		pool.run(func(w int) {
			lo, hi := min(base+w*tile, end), min(base+(w+1)*tile, end)
			sums[w] = sum(src[lo:hi])
		})
		// Tile offsets.
		for w := range sums {
			s := sums[w]
			sums[w] = carry
			carry += s
		}
		// Pass 2: scan each tile from its offset.
		pool.run(func(w int) {
			lo, hi := min(base+w*tile, end), min(base+(w+1)*tile, end)
			if inclusive {
				serialInclusive(dst[lo:hi], src[lo:hi], sums[w])
			} else {
				serialExclusive(dst[lo:hi], src[lo:hi], sums[w])
			}
		})
	}
	return carry
}

// pool is a fixed set of goroutines that run one function per worker index
// per round; worker 0 is the calling goroutine. It avoids starting
// goroutines for every round of the parallel scan.
type pool struct {
	workers int
	start   []chan func(int)
	done    chan struct{}
}

func newPool(workers int) *pool {
	p := &pool{workers: workers, done: make(chan struct{}, workers)}
	p.start = make([]chan func(int), workers)
	for w := 1; w < workers; w++ {
		ch := make(chan func(int), 1)
		p.start[w] = ch
		go func(w int) {
			for f := range ch {
				f(w)
				p.done <- struct{}{}
			}
		}(w)
	}
	return p
}

// run calls f(w) for every worker w concurrently and waits for all.
func (p *pool) run(f func(int)) {
	for w := 1; w < p.workers; w++ {
		p.start[w] <- f
	}
	f(0)
	for w := 1; w < p.workers; w++ {
		<-p.done
	}
}

func (p *pool) close() {
	for w := 1; w < p.workers; w++ {
		close(p.start[w])
	}
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
