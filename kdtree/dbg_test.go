package kdtree

import (
	"testing"
	"time"
)

func TestDbgTiming(t *testing.T) {
	s := loadShared(t, "stanford-bunny.obj")
	tree := refBuild(s, 8, 40)
	for _, set := range [][]Ray{PrimaryRays(s.Bounds), RandomRays(s.Bounds, 1000000)} {
		var sub []Ray
		for i := 0; i < len(set); i += 97 {
			sub = append(sub, set[i])
		}
		t0 := time.Now()
		t.Log("hits", countHits(tree, sub), len(sub), time.Since(t0))
		t0 = time.Now()
		n := 0
		for _, r := range sub[:100] {
			if _, ok := IntersectBrute(s, r); ok {
				n++
			}
		}
		t.Log("brute 100", n, time.Since(t0))
	}
}
