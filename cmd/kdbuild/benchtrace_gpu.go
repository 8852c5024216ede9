package main

import (
	"context"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// benchTraceSceneGPU measures one tree on the GPU: primary and random rays
// × closest and any hit × rays from the host (the batch calls, copies
// included) and rays already in device memory (IntersectDevice).
func benchTraceSceneGPU(ctx context.Context, tree *kdtree.Tree, ex exec.Executor, scene string, runs int) ([]traceBenchRow, error) {
	if err := tree.Upload(ex); err != nil {
		return nil, err
	}
	defer tree.Close()
	var rows []traceBenchRow
	b := tree.Scene.Bounds
	for _, set := range []string{"primary", "random"} {
		rays := kdtree.PrimaryRays(b)
		if set == "random" {
			rays = kdtree.RandomRays(b, defaultRandomRays)
		}
		hits, occ := make([]kdtree.Hit, len(rays)), make([]bool, len(rays))
		var hitCount [2]int
		for qi, query := range []string{"closest", "any"} {
			pass := func() (int, error) {
				return tracePass(ctx, tree, rays, hits, occ, query == "any", false)
			}
			ms, n, err := medianMs(runs, pass)
			if err != nil {
				return nil, err
			}
			hitCount[qi] = n
			rows = append(rows, traceBenchRow{
				Scene: scene, Rays: set, Query: query, Calls: "batch", From: "host", RayCount: len(rays), Hits: n,
				Ms: round3(ms), MRaysPerS: round3(float64(len(rays)) / ms / 1e3),
			})
		}
		// Random rays start and point anywhere: the dynamic-fetch kernel.
		if set == "random" {
			tree.SetDeviceRays(kdtree.IncoherentRays)
		}
		var res traceJSON
		err := timeResident(ctx, tree, ex, rays, &res)
		tree.SetDeviceRays(kdtree.CoherentRays)
		if err != nil {
			return nil, err
		}
		for qi, q := range []traceQueryJSON{res.Trace, res.Occluded} {
			rows = append(rows, traceBenchRow{
				Scene: scene, Rays: set, Query: []string{"closest", "any"}[qi], Calls: "device", From: "device", RayCount: len(rays),
				Hits: hitCount[qi], Ms: q.ResidentMs, MRaysPerS: q.ResidentMRaysPerS,
			})
		}
	}
	return rows, nil
}
