package kdtree

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// sameHit fails unless the tree and the oracle agree exactly: hit or miss,
// and for a hit the triangle and the bits of T, U and V.
func sameHit(t *testing.T, tree *Tree, r Ray, what string) bool {
	t.Helper()
	got, gok := tree.Intersect(r)
	want, wok := IntersectBrute(tree.Scene, r)
	if gok != wok || (gok && (got.Prim != want.Prim || math.Float32bits(got.T) != math.Float32bits(want.T) ||
		got.U != want.U || got.V != want.V)) {
		t.Errorf("%s: ray %+v: tree %v %+v, brute force %v %+v", what, r, gok, got, wok, want)
		return false
	}
	if occ := tree.Occluded(r); occ != wok {
		t.Errorf("%s: ray %+v: Occluded %v, brute force hit %v", what, r, occ, wok)
		return false
	}
	return true
}

// hardRays aims rays at the scene's features: vertices, edge midpoints and
// centroids from random origins, axis-parallel rays (direction components
// exactly 0) through vertices, and random rays; all from a fixed seed.
func hardRays(s *scenes.Scene, n int, seed uint64) []Ray {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := s.Bounds
	e := b.Max.Sub(b.Min)
	pad := max(e[0], e[1], e[2], 1)
	inf := float32(math.Inf(1))
	randIn := func() mgl32.Vec3 {
		var p mgl32.Vec3
		for a := 0; a < 3; a++ {
			p[a] = b.Min[a] - pad/2 + float32(rng.Float64())*(e[a]+pad)
		}
		return p
	}
	var rays []Ray
	for len(rays) < n {
		if len(s.Tris) == 0 {
			o := randIn()
			rays = append(rays, Ray{Org: o, Dir: randIn().Sub(o), TMax: inf})
			continue
		}
		tri := s.Tris[rng.IntN(len(s.Tris))]
		p := [3]mgl32.Vec3{s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]]}
		var target mgl32.Vec3
		switch rng.IntN(4) {
		case 0:
			target = p[rng.IntN(3)]
		case 1:
			i := rng.IntN(3)
			target = p[i].Add(p[(i+1)%3]).Mul(0.5)
		case 2:
			target = p[0].Add(p[1]).Add(p[2]).Mul(1.0 / 3)
		default:
			target = randIn()
		}
		if rng.IntN(4) == 0 {
			// Axis-parallel through the target, from outside the scene.
			a := rng.IntN(3)
			o := target
			d := mgl32.Vec3{}
			if rng.IntN(2) == 0 {
				o[a], d[a] = b.Min[a]-pad, 1
			} else {
				o[a], d[a] = b.Max[a]+pad, -1
			}
			rays = append(rays, Ray{Org: o, Dir: d, TMax: inf})
			continue
		}
		o := randIn()
		rays = append(rays, Ray{Org: o, Dir: target.Sub(o), TMax: inf})
	}
	return rays
}

func TestIntersectMatchesBruteSmall(t *testing.T) {
	quad := newScene([]float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, [][3]uint32{{0, 1, 2}, {0, 2, 3}})
	one := newScene([]float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, [][3]uint32{{0, 1, 2}})
	degenerate := newScene([]float32{0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 1}, [][3]uint32{{0, 1, 2}, {0, 0, 3}, {0, 1, 3}})
	cases := []struct {
		name  string
		scene *scenes.Scene
	}{
		{"empty", newScene(nil, nil)},
		{"one", one},
		{"quad", quad},
		{"degenerate", degenerate},
		{"identical-33", scenes.Identical(33)},
		{"coplanar-64", scenes.Coplanar(64, 1)},
		{"coplanar-65", scenes.Coplanar(65, 2)},
		{"soup-31", scenes.Soup(31, 3)},
		{"soup-32", scenes.Soup(32, 4)},
		{"soup-33", scenes.Soup(33, 5)},
		{"soup-1000", scenes.Soup(1000, 6)},
		{"icosphere-2", scenes.Icosphere(2)},
		{"huge-among-tiny-200", scenes.HugeAmongTiny(200, 7)},
		{"slivers-200", scenes.Slivers(200, 8)},
		{"grid-quads", scenes.Grid(quad, 4, 3, 2)},
	}
	for _, c := range cases {
		for _, p := range []struct{ leaf, depth int }{{1, 20}, {4, 3}, {16, 30}, {1 << 20, 0}} {
			tree := refBuild(c.scene, p.leaf, p.depth)
			requireNoError(t, tree.Validate(), "%s", c.name)
			what := fmt.Sprintf("%s leaf %d depth %d", c.name, p.leaf, p.depth)
			bad := 0
			for _, r := range hardRays(c.scene, 400, 11) {
				if !sameHit(t, tree, r, what) {
					bad++
					if bad > 5 {
						t.Fatalf("%s: too many mismatches", what)
					}
				}
			}
		}
	}
}

// TestWatertight shoots rays from inside a closed mesh, many of them through
// vertices and edges shared by several triangles: every one must hit.
func TestWatertight(t *testing.T) {
	s := scenes.Icosphere(3)
	tree := refBuild(s, 8, 20)
	requireNoError(t, tree.Validate(), "Validate")
	inf := float32(math.Inf(1))
	origins := []mgl32.Vec3{{0, 0, 0}, {0.1, -0.2, 0.3}, {-0.5, 0.25, 0.125}}
	misses := 0
	for _, o := range origins {
		for _, tri := range s.Tris {
			for _, target := range []mgl32.Vec3{
				s.Verts[tri[0]],
				s.Verts[tri[0]].Add(s.Verts[tri[1]]).Mul(0.5),
			} {
				r := Ray{Org: o, Dir: target.Sub(o), TMax: inf}
				if _, ok := tree.Intersect(r); !ok {
					misses++
				}
				if _, ok := IntersectBrute(s, r); !ok {
					misses++
				}
			}
		}
	}
	expectEqual(t, misses, 0, "rays from inside a closed mesh that escaped")
}

func TestIntersectInterval(t *testing.T) {
	// One triangle in the plane z = 2, the ray along +z from the origin.
	s := newScene([]float32{-1, -1, 2, 3, -1, 2, -1, 3, 2}, [][3]uint32{{0, 1, 2}})
	tree := refBuild(s, 1, 10)
	inf := float32(math.Inf(1))
	below := math.Nextafter32(2, 0)
	above := math.Nextafter32(2, 3)
	cases := []struct {
		tmin, tmax float32
		hit        bool
	}{
		{0, inf, true},
		{0, 2, true},
		{2, 2, true},
		{2, inf, true},
		{0, below, false},
		{above, inf, false},
		{-inf, inf, true},
		{3, 1, false},
	}
	for _, c := range cases {
		r := Ray{Org: mgl32.Vec3{0, 0, 0}, Dir: mgl32.Vec3{0, 0, 1}, TMin: c.tmin, TMax: c.tmax}
		h, ok := tree.Intersect(r)
		expectEqual(t, ok, c.hit, "hit in [%v, %v]", c.tmin, c.tmax)
		expectEqual(t, tree.Occluded(r), c.hit, "Occluded in [%v, %v]", c.tmin, c.tmax)
		if ok {
			expectEqual(t, h.T, 2, "T")
			expectEqual(t, h.Prim, 0, "Prim")
			if math.Abs(float64(h.U)-0.25) > 1e-6 || math.Abs(float64(h.V)-0.25) > 1e-6 {
				t.Errorf("U, V = %v, %v, want 0.25, 0.25", h.U, h.V)
			}
		}
		sameHit(t, tree, r, "interval")
	}
}

// TestEqualTSmallerPrim: identical triangles are hit at the same T; the
// smallest index wins whatever the leaf order.
func TestEqualTSmallerPrim(t *testing.T) {
	for _, n := range []int{2, 31, 32, 33, 64, 65} {
		s := scenes.Identical(n)
		tree := refBuild(s, 1, 10)
		for _, r := range hardRays(s, 100, uint64(n)) {
			h, ok := tree.Intersect(r)
			if ok {
				expectEqual(t, h.Prim, 0, "n=%d ray %+v", n, r)
			}
			sameHit(t, tree, r, fmt.Sprintf("identical-%d", n))
		}
	}
	// Two different triangles crossing at the ray: the triangle with the
	// smaller index wins the tie even when it comes later in the leaf walk.
	s := newScene([]float32{
		2, -1, -1, 2, 1, -1, 2, 0, 1, // x = 2
		2, -1, -1, 2, 1, -1, 2, 0, 1,
	}, [][3]uint32{{3, 4, 5}, {0, 1, 2}})
	tree := NewTree(s, []Node{LeafNode(0, 2)}, []uint32{0, 1}, s.Bounds, Stats{})
	h, ok := tree.Intersect(Ray{Org: mgl32.Vec3{0, 0, 0}, Dir: mgl32.Vec3{1, 0, 0}, TMax: float32(math.Inf(1))})
	expectEqual(t, ok, true, "hit")
	expectEqual(t, h.Prim, 0, "Prim of the tie")
}

func TestEmptyTreeMisses(t *testing.T) {
	s := newScene(nil, nil)
	tree := NewTree(s, nil, nil, scenes.EmptyBounds(), Stats{})
	_, ok := tree.Intersect(Ray{Dir: mgl32.Vec3{0, 0, 1}, TMax: 1})
	expectEqual(t, ok, false, "hit in an empty tree")
	expectEqual(t, tree.Occluded(Ray{Dir: mgl32.Vec3{0, 0, 1}, TMax: 1}), false, "occluded in an empty tree")
	requireNoError(t, tree.Validate(), "Validate")
}

// TestIntersectConcurrent: one tree, many goroutines, the same answers.
func TestIntersectConcurrent(t *testing.T) {
	s := scenes.Soup(500, 9)
	tree := refBuild(s, 4, 20)
	rays := hardRays(s, 2000, 3)
	want := make([]Hit, len(rays))
	for i, r := range rays {
		want[i], _ = tree.Intersect(r)
	}
	done := make(chan int, 8)
	for g := 0; g < 8; g++ {
		go func() {
			bad := 0
			for i, r := range rays {
				if h, _ := tree.Intersect(r); h != want[i] {
					bad++
				}
			}
			done <- bad
		}()
	}
	for g := 0; g < 8; g++ {
		expectEqual(t, <-done, 0, "concurrent mismatches")
	}
}

// TestTreeLiteral: a Tree made without NewTree (no triangle copy) traces
// the same hits.
func TestTreeLiteral(t *testing.T) {
	s := scenes.Soup(300, 12)
	made := refBuild(s, 4, 20)
	lit := &Tree{Nodes: made.Nodes, Refs: made.Refs, Bounds: made.Bounds, Scene: s}
	for i, r := range hardRays(s, 500, 13) {
		h1, ok1 := made.Intersect(r)
		h2, ok2 := lit.Intersect(r)
		if ok1 != ok2 || h1 != h2 {
			t.Fatalf("ray %d: NewTree's %v %+v, literal's %v %+v", i, ok1, h1, ok2, h2)
		}
	}
}

func TestIntersectNoAlloc(t *testing.T) {
	s := scenes.Soup(200, 10)
	tree := refBuild(s, 4, 20)
	rays := hardRays(s, 64, 4)
	allocs := testing.AllocsPerRun(10, func() {
		for _, r := range rays {
			tree.Intersect(r)
			tree.Occluded(r)
		}
	})
	expectEqual(t, allocs, 0, "allocations per batch")
}

// TestIntersectDegenerateRays: rays whose origin lies exactly on split
// planes, with direction components 0, denormal or huge, agree with brute
// force; a zero or NaN direction and a NaN origin hit nothing.
func TestIntersectDegenerateRays(t *testing.T) {
	s := scenes.Soup(400, 41)
	tree := refBuild(s, 2, 25)
	requireNoError(t, tree.Validate(), "tree")
	var splits [3][]float32
	for _, n := range tree.Nodes {
		if !n.IsLeaf() && len(splits[n.Axis()]) < 6 {
			splits[n.Axis()] = append(splits[n.Axis()], n.Split())
		}
	}
	comps := []float32{0, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-30, -0.7, 1, 3e30}
	inf := float32(math.Inf(1))
	rng := rand.New(rand.NewPCG(5, 6))
	count := 0
	for i := 0; i < 3000; i++ {
		var o, d mgl32.Vec3
		for a := 0; a < 3; a++ {
			o[a] = float32(rng.Float64())
			if l := splits[a]; len(l) > 0 && rng.IntN(2) == 0 {
				o[a] = l[rng.IntN(len(l))]
			}
			d[a] = comps[rng.IntN(len(comps))]
		}
		if d == (mgl32.Vec3{}) {
			continue
		}
		count++
		sameHit(t, tree, Ray{Org: o, Dir: d, TMax: inf}, "degenerate ray")
	}
	if count < 2000 {
		t.Fatalf("only %d rays tested", count)
	}
	nan := float32(math.NaN())
	for _, r := range []Ray{
		{Org: mgl32.Vec3{0.5, 0.5, -1}, Dir: mgl32.Vec3{}, TMax: inf},
		{Org: mgl32.Vec3{0.5, 0.5, -1}, Dir: mgl32.Vec3{0, 0, nan}, TMax: inf},
		{Org: mgl32.Vec3{nan, 0.5, -1}, Dir: mgl32.Vec3{0, 0, 1}, TMax: inf},
	} {
		if h, ok := tree.Intersect(r); ok {
			t.Errorf("ray %+v hit %+v", r, h)
		}
		if h, ok := IntersectBrute(s, r); ok {
			t.Errorf("ray %+v hit %+v by brute force", r, h)
		}
	}
}

// TestBuildTreesMatchBrute: Build's trees (Go executor) of the hard
// procedural scenes and edge sizes validate and trace like brute force.
func TestBuildTreesMatchBrute(t *testing.T) {
	quad := newScene([]float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, [][3]uint32{{0, 1, 2}, {0, 2, 3}})
	cases := []*scenes.Scene{
		newScene(nil, nil),
		scenes.Soup(1, 51), scenes.Soup(2, 52), scenes.Soup(31, 53), scenes.Soup(32, 54), scenes.Soup(33, 55),
		scenes.Soup(63, 56), scenes.Soup(64, 57), scenes.Soup(65, 58), scenes.Soup(2000, 59),
		scenes.Coplanar(300, 60), scenes.Identical(100), scenes.HugeAmongTiny(500, 61),
		scenes.Slivers(500, 62), scenes.Icosphere(3), scenes.Grid(scenes.Icosphere(1), 3, 3, 3),
		scenes.Grid(quad, 8, 8, 1),
	}
	for _, s := range cases {
		tree, err := Build(context.Background(), s, Options{})
		if err != nil {
			t.Errorf("Build(%s, %d triangles): %v", s.Name, len(s.Tris), err)
			continue
		}
		if err := tree.Validate(); err != nil {
			t.Errorf("Build(%s, %d triangles): %v", s.Name, len(s.Tris), err)
			continue
		}
		bad := 0
		for _, r := range hardRays(s, 300, 17) {
			if !sameHit(t, tree, r, s.Name) {
				if bad++; bad > 3 {
					break
				}
			}
		}
	}
}

// TestFiniteMatchesSafe checks that descendFinite, which Intersect and
// Occluded run for rays with finite plane crossings, returns the hit of
// descendSafe bit for bit, and that rays with a zero, subnormal or huge
// Dir component go to descendSafe (rayAxes.finite).
func TestFiniteMatchesSafe(t *testing.T) {
	scenesToTrace := []struct {
		name  string
		scene *scenes.Scene
	}{
		{"coplanar-65", scenes.Coplanar(65, 2)},
		{"soup-1000", scenes.Soup(1000, 6)},
		{"icosphere-2", scenes.Icosphere(2)},
		{"slivers-200", scenes.Slivers(200, 8)},
	}
	for _, c := range scenesToTrace {
		tree := refBuild(c.scene, 1, 20)
		rays := append(hardRays(c.scene, 2000, 13), RandomRays(c.scene.Bounds, 2000)...)
		for i := 0; i < 50; i++ {
			r := rays[i]
			r.Dir[i%3] = []float32{0x1p-140, -0x1p-140, 0x1p110, 0}[i%4]
			rays = append(rays, r)
		}
		for _, r := range rays {
			var ax rayAxes
			for a := 0; a < 3; a++ {
				ax.dir[a], ax.inv[a] = r.Dir[a], 1/r.Dir[a]
				ax.slack[a] = traversalSlack * (tree.traceData().mag[a] + abs32(r.Org[a])) * abs32(ax.inv[a])
			}
			odd := r.Dir[0] == 0 || r.Dir[1] == 0 || r.Dir[2] == 0 || abs32(r.Dir[0]) < 0x1p-120 || abs32(r.Dir[1]) < 0x1p-120 || abs32(r.Dir[2]) < 0x1p-120
			if odd && ax.finite() {
				t.Fatalf("%s: ray %v taken as finite", c.name, r)
			}
			for _, anyHit := range []bool{false, true} {
				hf, hs := tree.trace(&r, anyHit, nil, true), tree.trace(&r, anyHit, nil, false)
				if anyHit {
					if (hf.Prim == NoHit) != (hs.Prim == NoHit) {
						t.Fatalf("%s: any hit of ray %v: finite %v, safe %v", c.name, r, hf, hs)
					}
				} else if math.Float32bits(hf.T) != math.Float32bits(hs.T) || hf.U != hs.U || hf.V != hs.V || hf.Prim != hs.Prim || hf.N != hs.N {
					t.Fatalf("%s: ray %v: finite %+v, safe %+v", c.name, r, hf, hs)
				}
			}
		}
	}
}

// TestPrepareAxes checks prepare's axes against pbrt-v3's MaxDimension of
// |Dir| (x unless beaten strictly, then y against z), ties included.
func TestPrepareAxes(t *testing.T) {
	vals := []float32{0, 1, -1, 2, -2, 0.5, 3}
	for _, x := range vals {
		for _, y := range vals {
			for _, z := range vals {
				r := Ray{Dir: mgl32.Vec3{x, y, z}}
				ax, ay, az := abs32(x), abs32(y), abs32(z)
				want := uint(2)
				if ax > ay {
					if ax > az {
						want = 0
					}
				} else if ay > az {
					want = 1
				}
				p := prepare(&r)
				if p.kz != want || p.kx != (want+1)%3 || p.ky != (want+2)%3 {
					t.Fatalf("Dir %v: axes %d %d %d, want kz %d", r.Dir, p.kx, p.ky, p.kz, want)
				}
			}
		}
	}
}
