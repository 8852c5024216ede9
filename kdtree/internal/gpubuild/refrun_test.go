package gpubuild

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// goOpts are the kdtree.Options fields these tests vary (zero: default).
type goOpts struct{ SmallNode, Bins, MaxDepth int }

// goOptions is kdtree.Options{SmallNode, Bins, MaxDepth} on the Go
// executor resolved for a scene of n triangles, as kdtree.Build resolves
// it.
func goOptions(n int, o goOpts) refbuild.Options {
	r := refbuild.Options{Executor: exec.Go(0), TraversalCost: 1, IntersectCost: 1.5, EmptyBonus: 0.1,
		SmallNode: o.SmallNode, Bins: o.Bins, MaxDepth: o.MaxDepth}
	if r.SmallNode == 0 {
		r.SmallNode = 64
	}
	if r.Bins == 0 {
		r.Bins = 32
	}
	if r.MaxDepth == 0 {
		d := 3 + int(math.Round(1.3*math.Log2(float64(max(n, 1)))))
		r.MaxDepth = min(max(d, 16), refbuild.MaxTreeDepth)
	}
	return r
}

// goBuilder is a Go reference build of s with o, not started.
func goBuilder(s *scenes.Scene, o goOpts) *refbuild.Builder {
	opt := goOptions(len(s.Tris), o)
	return &refbuild.Builder{Ctx: context.Background(), Scene: s, Opt: opt, Ex: opt.Executor, Phases: map[string]float64{}}
}

// trySharedScene loads ../shared/scenes/file, or returns nil when the
// shared scenes are absent.
func trySharedScene(tb testing.TB, file string) *scenes.Scene {
	tb.Helper()
	path := filepath.Join("..", "..", "..", "..", "shared", "scenes", file)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	s, err := scenes.Load(path)
	require.NoError(tb, err, file)
	return s
}

// procedural is the edge-case scene list of the kdtree tests: soups
// around the block and mask sizes, coplanar, identical, sliver and
// huge-among-tiny triangles, a grid of spheres, and zero-area triangles.
func procedural() []*scenes.Scene {
	var out []*scenes.Scene
	for _, n := range []int{0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 4097} {
		out = append(out, scenes.Soup(n, uint64(7+n)))
	}
	for _, n := range []int{1, 2, 65, 500} {
		out = append(out, scenes.Coplanar(n, 3), scenes.Identical(n), scenes.Slivers(n, 5), scenes.HugeAmongTiny(n, 9))
	}
	out = append(out, scenes.Grid(scenes.Icosphere(2), 3, 2, 2))
	s := scenes.Soup(200, 11)
	for i := 0; i < 50; i++ {
		v := uint32(len(s.Verts))
		s.Verts = append(s.Verts, s.Verts[i], s.Verts[i+1], s.Verts[i].Add(s.Verts[i].Sub(s.Verts[i+1])))
		s.Tris = append(s.Tris, [3]uint32{v, v + 1, v + 2}, [3]uint32{uint32(i), uint32(i), uint32(i + 1)})
		s.Faces = append(s.Faces, uint32(len(s.Faces)), uint32(len(s.Faces)+1))
	}
	s.Name = "soup with zero-area triangles"
	return append(out, s)
}

// goLevel is one large-phase level as the Go build's OnLevel hook sees it.
type goLevel struct {
	nodes []refbuild.LNode
	dec   []refbuild.Decision
}

// goLevels runs the Go reference build of s and returns its large-phase
// levels.
func goLevels(tb testing.TB, s *scenes.Scene) []goLevel {
	var out []goLevel
	b := goBuilder(s, goOpts{})
	b.OnLevel = func(n []refbuild.LNode, d []refbuild.Decision) {
		out = append(out, goLevel{append([]refbuild.LNode(nil), n...), append([]refbuild.Decision(nil), d...)})
	}
	_, err := b.BuildGo()
	require.NoError(tb, err)
	return out
}
