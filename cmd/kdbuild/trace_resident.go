package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// residentRuns is how many times timeResident traces the rays; it reports
// the median.
const residentRuns = 5

// timeResident times closest-hit and any-hit traces of rays with rays and
// results already in device memory (the form for rays made on the GPU) on
// tree's device copy, and fills the resident_* keys of out.
func timeResident(ctx context.Context, tree *kdtree.Tree, ex exec.Executor, rays []kdtree.Ray, out *traceJSON) error {
	if len(rays) == 0 {
		return nil
	}
	words := make([]float32, 0, len(rays)*kdtree.DeviceRayWords)
	for _, r := range rays {
		words = append(words, r.Org[0], r.Org[1], r.Org[2], r.Dir[0], r.Dir[1], r.Dir[2], r.TMin, r.TMax)
	}
	if len(words) != len(rays)*kdtree.DeviceRayWords {
		return fmt.Errorf("trace: a device ray is %d words, not 8", kdtree.DeviceRayWords)
	}
	dRays, err := exec.FromHost(ex, words)
	if err != nil {
		return err
	}
	defer dRays.Free()
	dHits, err := exec.Alloc[float32](ex, len(rays)*kdtree.DeviceHitWords)
	if err != nil {
		return err
	}
	defer dHits.Free()
	dOcc, err := exec.Alloc[uint8](ex, len(rays))
	if err != nil {
		return err
	}
	defer dOcc.Free()
	closest := func() error { return tree.IntersectDevice(ctx, dRays, dHits) }
	anyHit := func() error { return tree.OccludedDevice(ctx, dRays, dOcc) }
	for _, q := range []struct {
		run func() error
		to  *traceQueryJSON
	}{{closest, &out.Trace}, {anyHit, &out.Occluded}} {
		ms, err := medianSynced(ex, q.run)
		if err != nil {
			return err
		}
		q.to.ResidentMs = round3(ms)
		if ms > 0 {
			q.to.ResidentMRaysPerS = round3(float64(len(rays)) / ms / 1e3)
		}
	}
	return nil
}

// medianSynced runs run once to warm up, then residentRuns times, each
// timed from a synchronised device to a synchronised device, and returns
// the median in ms.
func medianSynced(ex exec.Executor, run func() error) (float64, error) {
	c := ex.CUDA()
	if c == nil {
		return 0, fmt.Errorf("trace: no GPU")
	}
	times := make([]float64, 0, residentRuns)
	for i := -1; i < residentRuns; i++ {
		if err := c.Synchronize(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		if err := run(); err != nil {
			return 0, err
		}
		if err := c.Synchronize(); err != nil {
			return 0, err
		}
		if i >= 0 {
			times = append(times, msSince(t0))
		}
	}
	sort.Float64s(times)
	return times[len(times)/2], nil
}
