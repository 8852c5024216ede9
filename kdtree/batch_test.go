package kdtree

import (
	"context"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// TestBatchMatchesSingle: the batch calls give Intersect's and Occluded's
// answers ray for ray, for batch sizes around the chunk size.
func TestBatchMatchesSingle(t *testing.T) {
	s := scenes.Soup(800, 21)
	tree := refBuild(s, 4, 20)
	all := hardRays(s, 3*batchChunk+7, 22)
	for _, n := range []int{0, 1, walkChunk - 1, walkChunk + 1, batchChunk - 1, batchChunk, batchChunk + 1, len(all)} {
		rays := all[:n]
		hits := make([]Hit, n)
		occ := make([]bool, n)
		requireNoError(t, tree.IntersectBatch(context.Background(), rays, hits), "IntersectBatch(%d)", n)
		requireNoError(t, tree.OccludedBatch(context.Background(), rays, occ), "OccludedBatch(%d)", n)
		for i, r := range rays {
			want, ok := tree.Intersect(r)
			if hits[i] != want || occ[i] != ok || (hits[i].Prim != NoHit) != ok {
				t.Fatalf("n %d ray %d: batch %+v %v, single %+v %v", n, i, hits[i], occ[i], want, ok)
			}
		}
	}
}

// TestWalkMixedRuns: a batch whose chunks alternate between runs of
// camera rays and runs of random rays (of one, two and three chunks, the
// last one short) walks each run with its own walk, and gives Intersect's
// and Occluded's answers ray for ray.
func TestWalkMixedRuns(t *testing.T) {
	s := scenes.Soup(800, 21)
	tree := refBuild(s, 4, 20)
	camera, random := PrimaryRays(s.Bounds), RandomRays(s.Bounds, 8*walkChunk)
	var rays []Ray
	var kinds []bool // per chunk: camera rays
	ci, ri := 0, 0
	for k, run := range []int{1, 2, 3, 1, 2, 1} {
		for range run {
			if k%2 == 0 {
				rays, ci = append(rays, camera[ci:ci+walkChunk]...), ci+walkChunk
			} else {
				rays, ri = append(rays, random[ri:ri+walkChunk]...), ri+walkChunk
			}
			kinds = append(kinds, k%2 == 0)
		}
	}
	rays = rays[:len(rays)-walkChunk/2]
	diag := tree.Bounds.Max.Sub(tree.Bounds.Min).Len()
	for c, want := range kinds {
		if got := coherent(rays[c*walkChunk:min((c+1)*walkChunk, len(rays))], diag); got != want {
			t.Fatalf("chunk %d: coherent %v, want %v: the batch does not mix the walks", c, got, want)
		}
	}
	var w walker
	hits, occ := make([]Hit, len(rays)), make([]bool, len(rays))
	w.walk(tree, rays, 0, len(rays), false, &answers{hits: hits})
	w.walk(tree, rays, 0, len(rays), true, &answers{occluded: occ})
	for i, r := range rays {
		want, ok := tree.Intersect(r)
		if hits[i] != want || occ[i] != ok {
			t.Fatalf("ray %d (chunk %d): walk %+v %v, single %+v %v", i, i/walkChunk, hits[i], occ[i], want, ok)
		}
	}
}

func TestBatchErrors(t *testing.T) {
	s := scenes.Soup(100, 23)
	tree := refBuild(s, 4, 20)
	rays := hardRays(s, 10, 24)
	if err := tree.IntersectBatch(context.Background(), rays, make([]Hit, 9)); err == nil {
		t.Error("IntersectBatch: no error for 10 rays and 9 hits")
	}
	if err := tree.OccludedBatch(context.Background(), rays, make([]bool, 11)); err == nil {
		t.Error("OccludedBatch: no error for 10 rays and 11 results")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := make([]Ray, 100*batchChunk)
	for i := range big {
		big[i] = rays[i%len(rays)]
	}
	if err := tree.IntersectBatch(ctx, big, make([]Hit, len(big))); err != context.Canceled {
		t.Errorf("IntersectBatch on a cancelled context: %v", err)
	}
	if err := tree.OccludedBatch(ctx, big, make([]bool, len(big))); err != context.Canceled {
		t.Errorf("OccludedBatch on a cancelled context: %v", err)
	}
}

// TestMissAndNormal: misses are Hit{T: +Inf, Prim: NoHit}; a NaN or zero
// direction misses without visiting a node; hits carry the geometric
// normal, the same from the tree and from brute force.
func TestMissAndNormal(t *testing.T) {
	s := newScene([]float32{0, 0, 0, 2, 0, 0, 0, 3, 0}, [][3]uint32{{0, 1, 2}})
	tree := refBuild(s, 1, 10)
	miss := Hit{T: float32(math.Inf(1)), Prim: NoHit}
	nan := float32(math.NaN())
	r := NewRay(mgl32.Vec3{0.1, 0.1, 1}, mgl32.Vec3{0, 0, -1})
	if r.TMin != 0 || !math.IsInf(float64(r.TMax), 1) {
		t.Fatalf("NewRay: %+v", r)
	}
	h, ok := tree.Intersect(r)
	want := Hit{T: 1, U: 0.05, V: float32(0.1) / 3, Prim: 0, N: mgl32.Vec3{0, 0, 6}}
	if !ok || h.T != want.T || h.Prim != 0 || h.N != want.N {
		t.Errorf("hit %+v, want about %+v", h, want)
	}
	if b, _ := IntersectBrute(s, r); b != h {
		t.Errorf("brute %+v, tree %+v", b, h)
	}
	for _, r := range []Ray{
		NewRay(mgl32.Vec3{5, 5, 1}, mgl32.Vec3{0, 0, -1}),
		NewRay(mgl32.Vec3{0.1, 0.1, 1}, mgl32.Vec3{}),
		NewRay(mgl32.Vec3{0.1, 0.1, 1}, mgl32.Vec3{0, nan, -1}),
		NewRay(mgl32.Vec3{nan, 0.1, 1}, mgl32.Vec3{0, 0, -1}),
	} {
		var st RayStats
		h, ok := tree.IntersectStats(r, &st)
		if ok || h != miss {
			t.Errorf("ray %+v: %+v %v, want a miss %+v", r, h, ok, miss)
		}
		if b, ok := IntersectBrute(s, r); ok || b != miss {
			t.Errorf("ray %+v: brute %+v %v, want a miss", r, b, ok)
		}
		if r.Dir[0] != r.Dir[0] || r.Org[0] != r.Org[0] || r.Dir == (mgl32.Vec3{}) {
			if st != (RayStats{}) {
				t.Errorf("ray %+v: visited %+v, want nothing", r, st)
			}
		}
	}
}

// TestIntersectStats: IntersectStats returns Intersect's hit and counts at
// least one node per ray that enters the box, and a triangle per hit.
func TestIntersectStats(t *testing.T) {
	s := scenes.Soup(500, 25)
	tree := refBuild(s, 4, 20)
	var total RayStats
	hitsN := 0
	for _, r := range hardRays(s, 300, 26) {
		var st RayStats
		h, ok := tree.IntersectStats(r, &st)
		want, wok := tree.Intersect(r)
		if h != want || ok != wok {
			t.Fatalf("ray %+v: IntersectStats %+v, Intersect %+v", r, h, want)
		}
		if ok {
			hitsN++
			if st.Nodes == 0 || st.Tris == 0 {
				t.Fatalf("ray %+v hit after %+v", r, st)
			}
		}
		total.Nodes += st.Nodes
		total.Tris += st.Tris
	}
	if hitsN == 0 || total.Tris < uint32(hitsN) || total.Nodes < total.Tris/4 {
		t.Errorf("%d hits, totals %+v", hitsN, total)
	}
}

// TestChunkSize checks the chunks batch hands out: at most batchChunk
// rays, at least walkChunk, and eight or more a worker when the batch
// allows it.
func TestChunkSize(t *testing.T) {
	for _, tc := range []struct{ n, workers, want int }{
		{0, 2, walkChunk},
		{1, 1, walkChunk},
		{10_000, 2, 512},
		{65_536, 2, batchChunk},
		{1 << 20, 2, batchChunk},
		{1 << 20, 64, 2048},
		{100_000, 16, 512},
		{1 << 20, 1024, walkChunk},
	} {
		got := chunkSize(tc.n, tc.workers)
		if got != tc.want {
			t.Errorf("chunkSize(%d, %d) = %d, want %d", tc.n, tc.workers, got, tc.want)
		}
		if chunks := (tc.n + got - 1) / got; got > walkChunk && chunks < 8*tc.workers {
			t.Errorf("chunkSize(%d, %d) = %d: %d chunks for %d workers", tc.n, tc.workers, got, chunks, tc.workers)
		}
	}
}
