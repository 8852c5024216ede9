package kdtree

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// laneRays is a mix that reaches every path of traceLanes: hard rays, random
// rays, rays with an odd direction component (zero, tiny, huge: trace's
// descendSafe), unusable rays (NaN, zero direction) and short intervals.
func laneRays(s *scenes.Scene, n int, seed uint64) []Ray {
	rays := append(hardRays(s, n, seed), RandomRays(s.Bounds, n)...)
	rng := rand.New(rand.NewPCG(seed, 3))
	nan := float32(math.NaN())
	for i := 0; i < n/4; i++ {
		r := rays[rng.IntN(len(rays))]
		switch i % 6 {
		case 0, 1, 2:
			r.Dir[i%3] = []float32{0, 0x1p-140, 0x1p110}[i%3]
		case 3:
			r.Dir = mgl32.Vec3{}
		case 4:
			r.Org[1] = nan
		case 5:
			r.TMin, r.TMax = 0.25, 0.5
		}
		rays = append(rays, r)
	}
	rng.Shuffle(len(rays), func(i, j int) { rays[i], rays[j] = rays[j], rays[i] })
	return rays
}

// checkLanes traces rays[lo:hi] through traceLanes and fails unless every
// ray is answered once, with trace's hit bit for bit.
func checkLanes(t *testing.T, tree *Tree, ls *lanes, rays []Ray, lo, hi int, what string) {
	t.Helper()
	for _, anyHit := range []bool{false, true} {
		seen := make([]int, len(rays))
		tree.traceLanes(ls, rays, lo, hi, anyHit, func(i int, h Hit) {
			seen[i]++
			want := tree.trace(&rays[i], anyHit, nil, true)
			if math.Float32bits(h.T) != math.Float32bits(want.T) || h.U != want.U || h.V != want.V || h.Prim != want.Prim || h.N != want.N {
				t.Fatalf("%s any=%v ray %d %+v: lanes %+v, trace %+v", what, anyHit, i, rays[i], h, want)
			}
		})
		for i, c := range seen {
			if in := i >= lo && i < hi; (in && c != 1) || (!in && c != 0) {
				t.Fatalf("%s any=%v: ray %d answered %d times (range %d-%d)", what, anyHit, i, c, lo, hi)
			}
		}
	}
}

// TestLanesMatchTrace: traceLanes gives trace's hits on procedural scenes
// and tree shapes, for ranges shorter than, equal to and longer than the
// lanes, and with the lanes reused from range to range.
func TestLanesMatchTrace(t *testing.T) {
	cases := []struct {
		name  string
		scene *scenes.Scene
	}{
		{"empty", newScene(nil, nil)},
		{"coplanar-65", scenes.Coplanar(65, 2)},
		{"soup-1000", scenes.Soup(1000, 6)},
		{"icosphere-2", scenes.Icosphere(2)},
		{"slivers-200", scenes.Slivers(200, 8)},
		{"huge-among-tiny-200", scenes.HugeAmongTiny(200, 7)},
	}
	var ls lanes
	for _, c := range cases {
		for _, p := range []struct{ leaf, depth int }{{1, 20}, {4, 3}, {1 << 20, 0}, {1, MaxTreeDepth}} {
			tree := refBuild(c.scene, p.leaf, p.depth)
			rays := laneRays(c.scene, 600, 31)
			for _, r := range [][2]int{{0, 0}, {0, 1}, {3, 3 + laneCount}, {5, 5 + laneCount + 1}, {0, len(rays)}} {
				checkLanes(t, tree, &ls, rays, r[0], r[1], c.name)
			}
		}
	}
}

// TestLanesMatchTraceShared: the same on the shared scenes' ANCHORS ray
// sets (a stride of them), where the walks are long.
func TestLanesMatchTraceShared(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var ls lanes
	for _, sc := range traceBenchScenes {
		tree, sets := benchTreeRays(t, sc.file)
		for name, rays := range sets {
			rays = strided(rays, 50_000)
			checkLanes(t, tree, &ls, rays, 0, len(rays), sc.name+" "+name)
		}
	}
}

// TestWalkChoice: one chunk each way first, then the faster way, and the
// slower one again every walkRetryEvery chunks.
func TestWalkChoice(t *testing.T) {
	for _, lanesFaster := range []bool{false, true} {
		var c walkChoice
		var got []bool
		for k := 0; k < 3*walkRetryEvery; k++ {
			w := c.pick()
			got = append(got, w)
			ns := 100 * time.Nanosecond
			if w != lanesFaster {
				ns *= 2
			}
			c.record(w, 256, 256*ns)
		}
		for k, w := range got {
			want := lanesFaster
			switch {
			case k == 0:
				want = false
			case k == 1:
				want = true
			case k%walkRetryEvery == 0:
				want = !lanesFaster
			}
			if w != want {
				t.Fatalf("lanes faster %v: chunk %d picked lanes=%v, want %v (%v)", lanesFaster, k, w, want, got)
			}
		}
	}
}
