package scenes

import (
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

// gridVertex is the grid's vertex arithmetic written out on its own: vertex
// vi of copy (i, j, k), each coordinate float64(v) plus the copy's index
// times 1.1 × the source extent (1 for a flat axis), rounded once.
func gridVertex(s *Scene, vi int, c [3]int) mgl32.Vec3 {
	var out mgl32.Vec3
	for a := 0; a < 3; a++ {
		e := float64(s.Bounds.Max[a]) - float64(s.Bounds.Min[a])
		if e == 0 {
			e = 1
		}
		out[a] = float32(float64(s.Verts[vi][a]) + float64(c[a])*(e*1.1))
	}
	return out
}

func TestGrid(t *testing.T) {
	base := Icosphere(1)
	for _, d := range [][3]int{{1, 1, 1}, {2, 1, 1}, {2, 3, 4}, {0, 1, 1}} {
		g := Grid(base, d[0], d[1], d[2])
		checkScene(t, g)
		n := [3]int{max(d[0], 1), max(d[1], 1), max(d[2], 1)}
		copies := n[0] * n[1] * n[2]
		require.Equal(t, copies*len(base.Tris), len(g.Tris))
		require.Equal(t, copies*len(base.Verts), len(g.Verts))
		assert.Equal(t, base.Bounds.Min, g.Bounds.Min)
		last := [3]int{n[0] - 1, n[1] - 1, n[2] - 1}
		for a := 0; a < 3; a++ {
			want := float32(float64(base.Bounds.Max[a]) + float64(last[a])*1.1*float64(base.Bounds.Extent()[a]))
			got := g.Bounds.Max[a]
			assert.True(t, got-want < 1e-5 && want-got < 1e-5, "axis %d max %v want %v", a, got, want)
		}
		// Copies keep the source's faces and triangle shape, shifted.
		assert.Equal(t, base.Faces, g.Faces[len(g.Faces)-len(base.Faces):])
		nv := len(base.Verts)
		assert.Equal(t, base.Tris[0][1]+uint32((copies-1)*nv), g.Tris[len(g.Tris)-len(base.Tris)][1])
	}
	flat := Grid(Coplanar(10, 1), 1, 1, 3)
	assert.Equal(t, float32(2.2), flat.Bounds.Max[2]) // a flat axis spaces copies by 1.1
}

// TestGridVertices checks vertices of several copies against gridVertex, bit
// for bit, and the gap between neighbours: 0.1 × the extent on every axis.
func TestGridVertices(t *testing.T) {
	base := Soup(50, 9)
	g := Grid(base, 3, 4, 2)
	nv := len(base.Verts)
	for _, c := range [][3]int{{0, 0, 0}, {1, 0, 0}, {2, 3, 1}, {0, 2, 1}, {2, 0, 0}} {
		copyIdx := (c[2]*4+c[1])*3 + c[0]
		for _, vi := range []int{0, 7, nv - 1} {
			got, want := g.Verts[copyIdx*nv+vi], gridVertex(base, vi, c)
			assert.Equal(t, want, got, "copy %v vertex %d", c, vi)
		}
	}
	ext := base.Bounds.Extent()
	copyBox := func(idx int) Bounds {
		b := Bounds{Min: g.Verts[idx*nv], Max: g.Verts[idx*nv]}
		for _, v := range g.Verts[idx*nv : (idx+1)*nv] {
			b = b.Grow(v)
		}
		return b
	}
	for a, next := range []int{1, 3, 12} { // the neighbour of copy 0 along x, y, z
		gap := copyBox(next).Min[a] - copyBox(0).Max[a]
		want := 0.1 * ext[a]
		assert.True(t, gap-want < 1e-5 && want-gap < 1e-5, "gap on axis %d: %v, want %v", a, gap, want)
	}
}

// TestGridBunny is the peers' bunny 8×8×2 grid: its triangle count and a
// vertex of the far corner's copy.
func TestGridBunny(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 8.9M triangles")
	}
	bunny, err := Load(filepath.Join(sharedDir(t), "scenes", "stanford-bunny.obj"))
	if err != nil {
		t.Skip(err)
	}
	g := Grid(bunny, 8, 8, 2)
	assert.Equal(t, 8889728, len(g.Tris))
	nv := len(bunny.Verts)
	last := 8*8*2 - 1
	assert.Equal(t, gridVertex(bunny, nv-1, [3]int{7, 7, 1}), g.Verts[last*nv+nv-1])
	assert.Equal(t, gridVertex(bunny, 0, [3]int{3, 5, 0}), g.Verts[(5*8+3)*nv])
}
