package kdtree

import (
	"context"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// TestExactCoordinateRange checks the range documented at
// scenes.MaxExactCoordinate: a unit soup scaled by a power of two inside
// [MinExactExtent, MaxExactCoordinate] gives the unit soup's hits, every T
// scaled by the same power, through a built tree; outside it hits are lost
// (so the comparison can fail). Inside the range the tree agrees with
// brute force; outside it need not.
func TestExactCoordinateRange(t *testing.T) {
	base := scenes.Soup(1000, 1)
	rays := RandomRays(base.Bounds, 4096)
	want := make([]Hit, len(rays))
	wantOK := make([]bool, len(rays))
	for i, r := range rays {
		want[i], wantOK[i] = IntersectBrute(base, r)
	}
	for _, c := range []struct {
		exp   int
		exact bool
	}{
		{int(math.Log2(scenes.MinExactExtent)), true},
		{int(math.Log2(scenes.MaxExactCoordinate)), true},
		{-46, false}, // about 1e-14
		{50, false},
	} {
		s := float32(math.Ldexp(1, c.exp))
		sc := *base
		sc.Verts = make([]mgl32.Vec3, len(base.Verts))
		for i, v := range base.Verts {
			sc.Verts[i] = v.Mul(s)
		}
		sc.Bounds = scenes.VertexBounds(sc.Verts)
		tree, err := Build(context.Background(), &sc, Options{Executor: exec.Go(2)})
		if err != nil {
			t.Fatal(err)
		}
		same, lost := 0, 0
		for i, r := range rays {
			r.Org = r.Org.Mul(s)
			h, ok := tree.Intersect(r)
			b, bok := IntersectBrute(&sc, r)
			if c.exact && (ok != bok || (ok && (h.Prim != b.Prim || h.T != b.T))) {
				t.Fatalf("2^%d: ray %d: tree %v %v, brute force %v %v", c.exp, i, h, ok, b, bok)
			}
			if ok == wantOK[i] && (!ok || (h.Prim == want[i].Prim && h.T == want[i].T*s)) {
				same++
			}
			if wantOK[i] && !ok {
				lost++
			}
		}
		if exact := same == len(rays); exact != c.exact {
			t.Errorf("scale 2^%d: %d of %d rays as at unit scale, %d hits lost; want exact %v", c.exp, same, len(rays), lost, c.exact)
		}
	}
}
