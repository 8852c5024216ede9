package kdtree

import (
	"context"
	"testing"
)

// traceBenchScenes are the shared scenes BenchmarkTrace runs on, by short
// name.
var traceBenchScenes = []struct{ name, file string }{
	{"bunny", "stanford-bunny.obj"},
	{"sponza", "sponza-dabrovic.obj.gz"},
	{"conference", "conference.obj.gz"},
}

// benchTreeRays returns the Build tree of a shared scene (skipping when the
// scenes are absent) and its ANCHORS ray sets by name.
func benchTreeRays(b testing.TB, file string) (*Tree, map[string][]Ray) {
	s := loadShared(b, file)
	key := file + "/Build"
	var tree *Tree
	if v, ok := treeCache.Load(key); ok {
		tree = v.(*Tree)
	} else {
		var err error
		if tree, err = Build(context.Background(), s, Options{}); err != nil {
			b.Fatalf("Build %s: %v", file, err)
		}
		treeCache.Store(key, tree)
	}
	return tree, map[string][]Ray{"primary": PrimaryRays(s.Bounds), "random": RandomRays(s.Bounds, anchorRandomRays)}
}

// BenchmarkTrace traces the ANCHORS ray sets of the shared scenes on one
// goroutine, one ray per iteration cycling through the set, closest hit
// (Intersect) and any hit (Occluded), and reports Mrays/s.
func BenchmarkTrace(b *testing.B) {
	for _, sc := range traceBenchScenes {
		b.Run(sc.name, func(b *testing.B) {
			tree, sets := benchTreeRays(b, sc.file)
			for _, set := range []string{"primary", "random"} {
				rays := sets[set]
				b.Run(set+"/closest", func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						tree.Intersect(rays[i%len(rays)])
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrays/s")
				})
				b.Run(set+"/any", func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						tree.Occluded(rays[i%len(rays)])
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrays/s")
				})
			}
		})
	}
}

// BenchmarkTraceBatch traces the same sets with IntersectBatch and
// OccludedBatch (every core), one whole set per iteration, and reports
// Mrays/s for all threads together.
func BenchmarkTraceBatch(b *testing.B) {
	ctx := context.Background()
	for _, sc := range traceBenchScenes {
		b.Run(sc.name, func(b *testing.B) {
			tree, sets := benchTreeRays(b, sc.file)
			for _, set := range []string{"primary", "random"} {
				rays := sets[set]
				hits, occ := make([]Hit, len(rays)), make([]bool, len(rays))
				b.Run(set+"/closest", func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := tree.IntersectBatch(ctx, rays, hits); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N*len(rays))/b.Elapsed().Seconds()/1e6, "Mrays/s")
				})
				b.Run(set+"/any", func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := tree.OccludedBatch(ctx, rays, occ); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N*len(rays))/b.Elapsed().Seconds()/1e6, "Mrays/s")
				})
			}
		})
	}
}
