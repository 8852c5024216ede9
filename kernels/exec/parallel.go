package exec

import "sync"

// ParallelFor splits [0, n) into at most workers contiguous chunks of at
// least grain items and runs body(lo, hi) on each, concurrently, returning
// when all are done. Chunk c covers [c*n/k, (c+1)*n/k) for k chunks, so the
// split depends only on n, workers and grain.
func ParallelFor(workers, n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	k := workers
	if m := (n + grain - 1) / grain; m < k {
		k = m
	}
	if k <= 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	wg.Add(k - 1)
	for c := 1; c < k; c++ {
		lo, hi := c*n/k, (c+1)*n/k
		go func() { defer wg.Done(); body(lo, hi) }()
	}
	body(0, n/k)
	wg.Wait()
}
