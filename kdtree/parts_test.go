package kdtree

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// partScenes are the procedural scenes of the BuildParts tests.
var partScenes = []struct {
	name  string
	scene func() *scenes.Scene
}{
	{"icosphere:4", func() *scenes.Scene { return scenes.Icosphere(4) }},
	{"soup:6000", func() *scenes.Scene { return scenes.Soup(6000, 7) }},
	{"grid:3:2:2:icosphere:3", func() *scenes.Scene { return scenes.Grid(scenes.Icosphere(3), 3, 2, 2) }},
	{"huge:3000", func() *scenes.Scene { return scenes.HugeAmongTiny(3000, 3) }},
	{"slivers:3000", func() *scenes.Scene { return scenes.Slivers(3000, 5) }},
	{"coplanar:3000", func() *scenes.Scene { return scenes.Coplanar(3000, 9) }},
	{"identical:500", func() *scenes.Scene { return scenes.Identical(500) }},
}

// checkPartsTree validates tree and compares its hits with IntersectBrute
// on random rays and every 97th primary ray.
func checkPartsTree(t *testing.T, tree *Tree, rays int) {
	t.Helper()
	if err := tree.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	all := RandomRays(tree.Scene.Bounds, rays)
	prim := PrimaryRays(tree.Scene.Bounds)
	for i := 0; i < len(prim); i += 97 {
		all = append(all, prim[i])
	}
	for i, r := range all {
		got, gok := tree.Intersect(r)
		want, wok := IntersectBrute(tree.Scene, r)
		if gok != wok || got.Prim != want.Prim || math.Float32bits(got.T) != math.Float32bits(want.T) {
			t.Fatalf("ray %d: hit %v (%v), brute force %v (%v)", i, got, gok, want, wok)
		}
	}
}

func TestBuildPartsHitsEqualBrute(t *testing.T) {
	for _, sc := range partScenes {
		s := sc.scene()
		for _, k := range []int{2, 4, 8} {
			t.Run(fmt.Sprintf("%s/K=%d", sc.name, k), func(t *testing.T) {
				tree, rep, err := BuildParts(context.Background(), s, Options{Executor: exec.Go(2)}, PartOptions{Parts: k})
				if err != nil {
					t.Fatal(err)
				}
				if sc.name != "identical:500" && rep.Parts < k {
					t.Errorf("%d parts, want at least %d", rep.Parts, k)
				}
				checkPartsTree(t, tree, 3000)
			})
		}
	}
}

func TestBuildPartsOneIsBuild(t *testing.T) {
	for _, sc := range partScenes[:3] {
		t.Run(sc.name, func(t *testing.T) {
			s := sc.scene()
			want, err := Build(context.Background(), s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, rep, err := BuildParts(context.Background(), s, Options{}, PartOptions{Parts: 1})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Parts != 1 {
				t.Errorf("%d parts, want 1", rep.Parts)
			}
			if len(got.Nodes) != len(want.Nodes) || len(got.Refs) != len(want.Refs) {
				t.Fatalf("%d nodes %d refs, Build %d nodes %d refs", len(got.Nodes), len(got.Refs), len(want.Nodes), len(want.Refs))
			}
			for i := range want.Nodes {
				if got.Nodes[i] != want.Nodes[i] {
					t.Fatalf("node %d: %v, Build %v", i, got.Nodes[i], want.Nodes[i])
				}
			}
			for i := range want.Refs {
				if got.Refs[i] != want.Refs[i] {
					t.Fatalf("ref %d: %d, Build %d", i, got.Refs[i], want.Refs[i])
				}
			}
		})
	}
}

func TestBuildPartsBudget(t *testing.T) {
	s := scenes.Grid(scenes.Icosphere(3), 4, 2, 2) // 16 × 1280 triangles
	tests := []struct {
		budget   int64
		minParts int
	}{
		{budget: 0, minParts: 1},
		{budget: 20480 * 100, minParts: 1},
		{budget: 5000 * 100, minParts: 5},
		{budget: 1200 * 100, minParts: 18},
	}
	whole, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.budget), func(t *testing.T) {
			tree, rep, err := BuildParts(context.Background(), s, Options{},
				PartOptions{MemoryBudget: tc.budget, BytesPerTriangle: 100})
			if err != nil {
				t.Fatal(err)
			}
			if rep.MaxTris != int(tc.budget/100) {
				t.Errorf("MaxTris %d, want %d", rep.MaxTris, tc.budget/100)
			}
			if rep.MaxTris > 0 && rep.MaxPartTris > rep.MaxTris {
				t.Errorf("biggest part %d triangles, budget %d", rep.MaxPartTris, rep.MaxTris)
			}
			if rep.Parts < tc.minParts {
				t.Errorf("%d parts, want at least %d", rep.Parts, tc.minParts)
			}
			checkPartsTree(t, tree, 1000)
			// Parts handed out while the split goes on: still Build's tree.
			btEqualTrees(t, fmt.Sprint("budget ", tc.budget), whole, tree)
		})
	}
	if _, _, err := BuildParts(context.Background(), s, Options{}, PartOptions{MemoryBudget: 50, BytesPerTriangle: 100}); err == nil {
		t.Error("a budget below one triangle: no error")
	}
}

// TestBuildPartsOutOfMemory builds parts with a stand-in for Build that
// runs out of device memory above 1500 triangles: those parts are split
// again until every part builds.
func TestBuildPartsOutOfMemory(t *testing.T) {
	s := scenes.Grid(scenes.Icosphere(3), 3, 2, 2)
	oom := func(ctx context.Context, ps *scenes.Scene, o Options, st *refbuild.Start) (*Tree, error) {
		if len(ps.Tris) > 1500 {
			return nil, fmt.Errorf("part of %d: %w", len(ps.Tris), exec.ErrOutOfMemory)
		}
		return buildStart(ctx, ps, o, st)
	}
	tree, rep, err := buildParts(context.Background(), s, Options{}, PartOptions{Parts: 2}, oom)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resplits == 0 || rep.MaxPartTris > 1500 {
		t.Errorf("%d resplits, biggest part %d triangles", rep.Resplits, rep.MaxPartTris)
	}
	checkPartsTree(t, tree, 1000)

	other := errors.New("device lost")
	fail := func(context.Context, *scenes.Scene, Options, *refbuild.Start) (*Tree, error) { return nil, other }
	if _, _, err := buildParts(context.Background(), s, Options{}, PartOptions{Parts: 2}, fail); !errors.Is(err, other) {
		t.Errorf("a failing part: error %v, want %v", err, other)
	}
}

func TestBuildPartsCancel(t *testing.T) {
	s := scenes.Grid(scenes.Icosphere(3), 3, 2, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := BuildParts(ctx, s, Options{}, PartOptions{Parts: 4}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: error %v", err)
	}
	// Cancelled by the second part's build: no more parts start, the
	// error is the context's.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	builds := 0
	stop := func(c context.Context, ps *scenes.Scene, o Options, st *refbuild.Start) (*Tree, error) {
		builds++
		if builds == 2 {
			cancel()
		}
		return buildStart(c, ps, o, st)
	}
	_, _, err := buildParts(ctx, s, Options{}, PartOptions{Parts: 6}, stop)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during: error %v", err)
	}
	if builds != 2 {
		t.Errorf("%d parts started, want 2", builds)
	}
}

func TestBuildPartsEmpty(t *testing.T) {
	for _, s := range []*scenes.Scene{scenes.Icosphere(0), {Name: "empty"}, scenes.Identical(0)} {
		tree, _, err := BuildParts(context.Background(), s, Options{}, PartOptions{Parts: 3})
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if err := tree.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	// A non-finite triangle and a degenerate one are dropped, as Build drops them.
	s := scenes.Grid(scenes.Icosphere(2), 2, 1, 1)
	nan := float32(math.NaN())
	s.Verts = append(s.Verts, mgl32.Vec3{nan, 0, 0}, mgl32.Vec3{1, 1, 1}, mgl32.Vec3{0, 1, 0})
	n := uint32(len(s.Verts))
	s.Tris = append(s.Tris, [3]uint32{n - 3, n - 2, n - 1}, [3]uint32{n - 2, n - 2, n - 1})
	s.Faces = append(s.Faces, 0, 0)
	tree, rep, err := BuildParts(context.Background(), s, Options{}, PartOptions{Parts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := tree.Stats().DroppedTriangles; got != 2 || rep.Parts < 2 {
		t.Errorf("%d dropped triangles, want 2; %d parts", got, rep.Parts)
	}
	bad := &scenes.Scene{Name: "bad", Tris: [][3]uint32{{0, 1, 2}}}
	if _, _, err := BuildParts(context.Background(), bad, Options{}, PartOptions{Parts: 2}); err == nil {
		t.Error("vertex index out of range: no error")
	}
}

// TestBuildPartsSAH reports the joined trees' SAH cost against Build's on
// the shared bunny and a procedural grid. The goal is 1%: the grid is
// within 0.1%, the bunny 1.7–3.1% above (docs/parts.md); the test fails
// past 4%.
// TestBuildPartsIsBuild checks that the joined tree is Build's tree node
// for node: each part starts from its top leaf's box and clipped
// references, so its tree is Build's subtree there, and the split's planes
// are Build's top decisions. It logs the SAH cost against Build's.
func TestBuildPartsIsBuild(t *testing.T) {
	cases := []struct {
		name  string
		scene func(t *testing.T) *scenes.Scene
	}{
		{"grid:4:4:2:icosphere:4", func(*testing.T) *scenes.Scene { return scenes.Grid(scenes.Icosphere(4), 4, 4, 2) }},
		{"stanford-bunny", func(t *testing.T) *scenes.Scene { return loadShared(t, "stanford-bunny.obj") }},
	}
	for _, sc := range partScenes {
		cases = append(cases, struct {
			name  string
			scene func(t *testing.T) *scenes.Scene
		}{sc.name, func(*testing.T) *scenes.Scene { return sc.scene() }})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.scene(t)
			one, err := Build(context.Background(), s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			base := SAHCost(one)
			for _, k := range []int{2, 4, 8} {
				tree, rep, err := BuildParts(context.Background(), s, Options{}, PartOptions{Parts: k})
				if err != nil {
					t.Fatal(err)
				}
				got := SAHCost(tree)
				t.Logf("%s K=%d (%d parts, top depth %d): SAH %.4f vs %.4f (%+.3f%%), nodes %d vs %d",
					c.name, k, rep.Parts, rep.TopDepth, got, base, 100*(got/base-1), len(tree.Nodes), len(one.Nodes))
				btEqualTrees(t, fmt.Sprintf("%s K=%d", c.name, k), one, tree)
			}
		})
	}
}

func TestGoBytesPerTriangle(t *testing.T) {
	for _, s := range []*scenes.Scene{scenes.Icosphere(6), scenes.Soup(80000, 2), scenes.Grid(scenes.Icosphere(4), 4, 2, 2)} {
		tree, err := Build(context.Background(), s, Options{Executor: exec.Go(2)})
		if err != nil {
			t.Fatal(err)
		}
		per := float64(tree.BuildStats().HostPeakBytes) / float64(len(s.Tris))
		t.Logf("%s: %.0f B per triangle", s.Name, per)
		if per > GoBytesPerTriangle {
			t.Errorf("%s: %.0f B per triangle, GoBytesPerTriangle %d", s.Name, per, GoBytesPerTriangle)
		}
	}
}

// TestBuildPartsBunnyHits checks the joined trees of the shared bunny:
// valid, and on every primary ray and 100k random rays the same hits as
// Build's tree (TestRaysMatchBruteShared checks those against brute force), and on
// a sample the same as brute force's.
func TestBuildPartsBunnyHits(t *testing.T) {
	s := loadShared(t, "stanford-bunny.obj")
	one, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rays := append(PrimaryRays(s.Bounds), RandomRays(s.Bounds, 100_000)...)
	for _, k := range []int{3, 8} {
		tree, _, err := BuildParts(context.Background(), s, Options{}, PartOptions{Parts: k})
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Validate(); err != nil {
			t.Fatalf("K=%d: %v", k, err)
		}
		for i, r := range rays {
			got, gok := tree.Intersect(r)
			want, wok := one.Intersect(r)
			if gok != wok || got.Prim != want.Prim || math.Float32bits(got.T) != math.Float32bits(want.T) {
				t.Fatalf("K=%d ray %d: hit %v (%v), Build's tree %v (%v)", k, i, got, gok, want, wok)
			}
			if i%4001 == 0 {
				if b, bok := IntersectBrute(s, r); bok != gok || b.Prim != got.Prim {
					t.Fatalf("K=%d ray %d: hit %v (%v), brute force %v (%v)", k, i, got, gok, b, bok)
				}
			}
		}
	}
}

// TestPartScene checks the part scene against the plain loop it stands
// for (vertices numbered in order of first use), on chunk edges, with
// triangles that repeat a vertex, and that the scratch comes back zero.
func TestPartScene(t *testing.T) {
	s := scenes.Grid(scenes.Icosphere(3), 6, 5, 4) // 30,720 triangles: two chunks
	s.Tris[5] = [3]uint32{7, 7, 9}
	s.Tris[16384] = [3]uint32{11, 12, 11}
	for _, n := range []int{1, 16383, 16384, 16385, len(s.Tris)} {
		var refs []splitRef
		for i := 0; i < len(s.Tris) && len(refs) < n; i += 1 + i%2 {
			refs = append(refs, splitRef{tri: uint32(i), box: refbuild.AABB{Lo: [3]float32{float32(i)}}})
		}
		sc := newVertexScratch(len(s.Verts))
		box := refbuild.AABB{Hi: [3]float32{1, 2, 3}}
		for _, workers := range []int{1, 3} {
			in := partScene(s, refs, box, sc, workers)
			seen := map[uint32]uint32{}
			var verts []mgl32.Vec3
			for k, r := range refs {
				for c, v := range s.Tris[r.tri] {
					if _, ok := seen[v]; !ok {
						seen[v] = uint32(len(verts))
						verts = append(verts, s.Verts[v])
					}
					if got := in.scene.Tris[k][c]; got != seen[v] {
						t.Fatalf("n=%d: triangle %d corner %d: vertex %d, want %d", n, k, c, got, seen[v])
					}
				}
				if in.ids[k] != r.tri || in.start.Boxes[k] != r.box {
					t.Fatalf("n=%d: triangle %d: id %d box %v", n, k, in.ids[k], in.start.Boxes[k])
				}
			}
			if len(in.scene.Verts) != len(verts) || in.start.Box != box {
				t.Fatalf("n=%d: %d vertices, want %d", n, len(in.scene.Verts), len(verts))
			}
			for i := range verts {
				if in.scene.Verts[i] != verts[i] {
					t.Fatalf("n=%d: vertex %d", n, i)
				}
			}
			for v := range sc.first {
				if sc.first[v] != 0 || sc.remap[v] != 0 {
					t.Fatalf("n=%d: scratch of vertex %d not zero", n, v)
				}
			}
		}
	}
}
