package kdtree

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// batchChunk is the most rays a worker takes from a batch at a time:
// large enough that the shared counter is touched rarely and that each
// worker reads rays and writes answers in long runs (with 256, two workers
// taking turns ran camera rays at 1.4–1.7× one, against 1.98× for two
// processes: the hardware prefetcher restarts at every chunk). A batch
// too small for eight chunks a worker takes halves of it, down to
// walkChunk, so that rows of an image of uneven cost still spread over
// the workers.
const batchChunk = 4096

// chunkSize is the number of rays a worker of batch takes at a time for
// n rays on workers goroutines.
func chunkSize(n, workers int) int {
	size := batchChunk
	for size > walkChunk && n < 8*workers*size {
		size /= 2
	}
	return size
}

// IntersectBatch sets hits[i] to Intersect(rays[i]) for every i (a miss is
// Hit{T: +Inf, Prim: NoHit}). A tree with a device copy runs the batch
// there, with the same hits; otherwise the Go executor runs it on every core
// (GOMAXPROCS goroutines taking chunks of rays from a shared counter) and
// checks ctx between chunks: when ctx is cancelled it returns ctx.Err()
// with some hits unset. len(hits) must equal len(rays).
func (t *Tree) IntersectBatch(ctx context.Context, rays []Ray, hits []Hit) error {
	if len(rays) != len(hits) {
		return fmt.Errorf("kdtree: IntersectBatch: %d rays but %d hits", len(rays), len(hits))
	}
	if ok, err := t.intersectOnDevice(ctx, rays, hits); ok {
		return err
	}
	out := answers{hits: hits}
	return t.batch(ctx, len(rays), func(w *walker, lo, hi int) {
		w.walk(t, rays, lo, hi, false, &out)
	})
}

// OccludedBatch sets occluded[i] to Occluded(rays[i]) for every i, on the
// device copy when there is one, else on every core like IntersectBatch, with the same cancellation. len(occluded) must
// equal len(rays).
func (t *Tree) OccludedBatch(ctx context.Context, rays []Ray, occluded []bool) error {
	if len(rays) != len(occluded) {
		return fmt.Errorf("kdtree: OccludedBatch: %d rays but %d results", len(rays), len(occluded))
	}
	if ok, err := t.occludedOnDevice(ctx, rays, occluded); ok {
		return err
	}
	out := answers{occluded: occluded}
	return t.batch(ctx, len(rays), func(w *walker, lo, hi int) {
		w.walk(t, rays, lo, hi, true, &out)
	})
}

// batch runs do over [0, n) in chunks of chunkSize on GOMAXPROCS
// goroutines, each with its own walker, taking the next chunk from an
// atomic counter, and
// returns ctx.Err() if ctx was cancelled before every chunk ran (nil when
// every chunk ran).
func (t *Tree) batch(ctx context.Context, n int, do func(w *walker, lo, hi int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	t.traceData() // made once here rather than raced for by the workers
	size := chunkSize(n, runtime.GOMAXPROCS(0))
	chunks := (n + size - 1) / size
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var next, done atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		defer wg.Done()
		w := new(walker)
		for ctx.Err() == nil {
			c := int(next.Add(1)) - 1
			if c >= chunks {
				return
			}
			lo := c * size
			do(w, lo, min(lo+size, n))
			done.Add(1)
		}
	}
	wg.Add(workers)
	for w := 1; w < workers; w++ {
		go work()
	}
	work()
	wg.Wait()
	if int(done.Load()) < chunks {
		return ctx.Err() // a worker stops early only when ctx is done
	}
	return nil
}
