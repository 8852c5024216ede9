package scan

import (
	"runtime"
	"sync/atomic"

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

// parallelChunk is the unit of work of the parallel scans: 64 Ki 4-byte
// elements (256 KiB).
const parallelChunk = 1 << 16

// parallelRound is the number of elements per round: 16 chunks (4 MiB of
// 4-byte elements) stay in the shared L3 (32 MiB on the development
// machine) between the two passes over the round.
const parallelRound = 16 * parallelChunk

// parallelMin is the size below which the parallel scans run serially: the
// goroutine hand-offs cost more than the work.
const parallelMin = 1 << 15

// parallelScan is the cpu-parallel variant: the array is cut into rounds of
// parallelRound elements and each round into chunks; pass 1 sums every
// chunk, the chunk sums are scanned serially, and pass 2 scans every chunk
// from its offset while the round is still in the cache. Memory traffic is
// one read and one write per element, like the serial loop.
func parallelScan[T Value](workers int, dst, src []T, inclusive bool) (total T) {
	n := len(src)
	if workers <= 1 || n < parallelMin {
		if inclusive {
			return serialInclusive(dst, src, 0)
		}
		return serialExclusive(dst, src, 0)
	}
	sums := make([]T, parallelRound/parallelChunk+1)
	var carry T
	twoPass(workers, n,
		func(c, lo, hi int) { sums[c] = sum(src[lo:hi]) },
		func(chunks int) {
			for c := 0; c < chunks; c++ {
				sums[c], carry = carry, carry+sums[c]
			}
		},
		func(c, lo, hi int) {
			if inclusive {
				serialInclusive(dst[lo:hi], src[lo:hi], sums[c])
			} else {
				serialExclusive(dst[lo:hi], src[lo:hi], sums[c])
			}
		})
	return carry
}

// twoPass runs the round structure of the parallel scans over [0, n): for
// each round, pass1(c, lo, hi) on every chunk c of the round (in any order,
// on any worker), then between(chunks) on the caller, then pass2 on every
// chunk. Chunks are claimed from a counter, so when a worker goroutine does
// not get a core the caller does the work itself instead of waiting for it.
func twoPass(workers, n int, pass1 func(c, lo, hi int), between func(chunks int), pass2 func(c, lo, hi int)) {
	// Chunks of at least parallelMin/workers items, at most parallelChunk.
	chunk := min(parallelChunk, max((n+2*workers-1)/(2*workers), parallelMin/workers))
	perRound := parallelRound / parallelChunk
	p := newPool(workers - 1)
	defer p.close()
	for base := 0; base < n; base += perRound * chunk {
		end := min(base+perRound*chunk, n)
		chunks := (end - base + chunk - 1) / chunk
		bounds := func(c int) (int, int) { return base + c*chunk, min(base+(c+1)*chunk, end) }
		p.run(chunks, func(c int) { lo, hi := bounds(c); pass1(c, lo, hi) })
		between(chunks)
		p.run(chunks, func(c int) { lo, hi := bounds(c); pass2(c, lo, hi) })
	}
}

// pool is a set of helper goroutines that claim chunks of the current job
// alongside the caller. Between jobs a helper spins for a while on the job
// pointer (the passes of a scan follow each other within microseconds, and
// waking a parked goroutine takes longer than a chunk), then parks until
// nudged.
type pool struct {
	cur  atomic.Pointer[job]
	quit atomic.Bool
	wake []chan struct{}
}

// helperSpins is how many times an idle helper polls for the next job
// before parking (tens of microseconds).
const helperSpins = 1 << 14

// job is one pass: chunks [0, chunks) claimed through next; done counts the
// finished ones.
type job struct {
	chunks int
	next   atomic.Int64
	done   atomic.Int64
	fn     func(c int)
}

// work claims and runs chunks until none is left.
func (j *job) work() {
	for {
		c := int(j.next.Add(1) - 1)
		if c >= j.chunks {
			return
		}
		j.fn(c)
		j.done.Add(1)
	}
}

func newPool(helpers int) *pool {
	p := &pool{wake: make([]chan struct{}, helpers)}
	for h := range p.wake {
		ch := make(chan struct{}, 1)
		p.wake[h] = ch
		go p.helper(ch)
	}
	return p
}

func (p *pool) helper(wake chan struct{}) {
	var last *job
	for {
		var j *job
		for spins := 0; ; spins++ {
			if p.quit.Load() {
				return
			}
			if j = p.cur.Load(); j != nil && j != last {
				break
			}
			if spins >= helperSpins {
				<-wake
				spins = 0
			}
		}
		last = j
		j.work()
	}
}

// run executes fn(c) for c in [0, chunks) on the caller and the helpers and
// returns when all are done. The caller never waits for a helper that has
// not started: it claims the chunks itself.
func (p *pool) run(chunks int, fn func(c int)) {
	j := &job{chunks: chunks, fn: fn}
	p.cur.Store(j)
	for _, ch := range p.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	j.work()
	for j.done.Load() < int64(chunks) {
		runtime.Gosched()
	}
}

func (p *pool) close() {
	p.quit.Store(true)
	for _, ch := range p.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
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
