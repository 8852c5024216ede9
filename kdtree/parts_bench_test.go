package kdtree

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// benchGoal is the split goal of K parts for scene s with default options.
func benchGoal(b *testing.B, s *scenes.Scene, k int) (Options, splitGoal) {
	o, err := Options{}.resolved(len(s.Tris))
	if err != nil {
		b.Fatal(err)
	}
	return o, splitGoal{parts: k, maxDepth: o.MaxDepth / 2, bins: o.Bins,
		sah: refbuild.NewSAH(ptr(o.internal())), workers: runtime.GOMAXPROCS(0)}
}

// BenchmarkPartsSplit times BuildParts' split (gathering the kept
// triangles, choosing the top planes, clipping the straddlers) of the
// bunny in a 4×4×2 grid (2.2M triangles) into K parts on GOMAXPROCS
// workers; ns/tri is the time per scene triangle.
func BenchmarkPartsSplit(b *testing.B) {
	s := scenes.Grid(loadShared(b, "stanford-bunny.obj"), 4, 4, 2)
	for _, k := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			_, g := benchGoal(b, s, k)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t, _, err := newPartTop(s, g.workers)
				if err != nil {
					b.Fatal(err)
				}
				t.split(0, g, &sync.Mutex{}, func() {}, func() bool { return false })
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(s.Tris)), "ns/tri")
		})
	}
}

// BenchmarkPartsJoin times the join of the K built parts of the bunny in a
// 2×2×2 grid (555k triangles) into one tree on GOMAXPROCS workers; ns/tri
// is the time per scene triangle.
func BenchmarkPartsJoin(b *testing.B) {
	s := scenes.Grid(loadShared(b, "stanford-bunny.obj"), 2, 2, 2)
	for _, k := range []int{4, 8} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			o, g := benchGoal(b, s, k)
			r := &partsRun{ctx: context.Background(), scene: s, maxDepth: o.MaxDepth, goal: g,
				exs: []exec.Executor{o.Executor}, rep: &PartsReport{}, build: buildStart, scratch: make([]*vertexScratch, 1)}
			t, _, err := newPartTop(s, g.workers)
			if err != nil {
				b.Fatal(err)
			}
			r.top = t
			t.split(0, g, &sync.Mutex{}, func() {}, func() bool { return false })
			r.pending = t.leaves(0)
			r.cond = sync.NewCond(&r.mu)
			r.startWorkers().Wait()
			if r.err != nil {
				b.Fatal(r.err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := t.join(g.workers); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(s.Tris)), "ns/tri")
		})
	}
}
