package kdtree

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// pcMixed is a soup of n triangles with every kind the prepare step drops
// mixed in at fixed places: repeated indices, zero area (collinear and
// coincident vertices), NaN and infinite coordinates, and tiny but
// non-zero areas (kept).
func pcMixed(n int) *scenes.Scene {
	s := scenes.Soup(n, uint64(5+n))
	add := func(vs ...mgl32.Vec3) uint32 {
		s.Verts = append(s.Verts, vs...)
		return uint32(len(s.Verts) - len(vs))
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for i := 0; i < 40; i++ {
		f := float32(i) / 7
		var v uint32
		switch i % 6 {
		case 0: // repeated index
			v = add(mgl32.Vec3{f, 0, 0}, mgl32.Vec3{0, f + 1, 0})
			s.Tris = append(s.Tris, [3]uint32{v, v, v + 1})
			continue
		case 1: // collinear
			v = add(mgl32.Vec3{f, f, f}, mgl32.Vec3{2 * f, 2 * f, 2 * f}, mgl32.Vec3{3 * f, 3 * f, 3 * f})
		case 2: // coincident vertices, distinct indices
			v = add(mgl32.Vec3{f, 1, 2}, mgl32.Vec3{f, 1, 2}, mgl32.Vec3{f, 2, 2})
		case 3: // NaN
			v = add(mgl32.Vec3{f, nan, 0}, mgl32.Vec3{1, 0, 0}, mgl32.Vec3{0, 1, 0})
		case 4: // infinite
			v = add(mgl32.Vec3{f, 0, inf}, mgl32.Vec3{1, 0, 0}, mgl32.Vec3{0, 1, 0})
		default: // tiny, kept
			v = add(mgl32.Vec3{f, 0, 0}, mgl32.Vec3{f + 1e-6, 0, 0}, mgl32.Vec3{f, 1e-6, 1e-6})
		}
		s.Tris = append(s.Tris, [3]uint32{v, v + 1, v + 2})
		// Move it among the soup's triangles.
		j := (i * 7919) % len(s.Tris)
		s.Tris[j], s.Tris[len(s.Tris)-1] = s.Tris[len(s.Tris)-1], s.Tris[j]
	}
	return s
}

// The device prepare step (kdtree_gather_f32 and the compaction) keeps and
// drops the triangles the Go one does, for sizes around the block size:
// the same tree and drop count.
func TestBuildGPUPrepareEqualsGo(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, n := range []int{1, 31, 255, 256, 257, 1000, 4097} {
		s := pcMixed(n)
		want, err := Build(context.Background(), s, Options{})
		require.NoError(t, err)
		got, err := Build(context.Background(), s, Options{Executor: ex})
		require.NoError(t, err, s.Name)
		require.Positive(t, want.Stats().DroppedTriangles)
		btEqualTrees(t, s.Name, want, got)
		st := got.Stats()
		require.Contains(t, st.Phases, "upload")
		require.LessOrEqual(t, st.DeviceMs(), st.BuildMs)
	}
	// Only dropped triangles: an empty tree on both.
	s := &scenes.Scene{Name: "all-degenerate", Verts: []mgl32.Vec3{{0, 0, 0}, {1, 1, 1}, {2, 2, 2}},
		Tris: [][3]uint32{{0, 1, 2}, {0, 0, 1}, {2, 1, 0}}}
	want, err := Build(context.Background(), s, Options{})
	require.NoError(t, err)
	got, err := Build(context.Background(), s, Options{Executor: ex})
	require.NoError(t, err)
	btEqualTrees(t, s.Name, want, got)
	require.Equal(t, 3, got.Stats().DroppedTriangles)
}

// An out-of-range vertex index is an error on the device too, naming the
// first bad triangle; no vertices at all as well.
func TestBuildGPUPrepareBadIndex(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, bad := range []int{0, 255, 256, 999} {
		s := scenes.Soup(1000, 3)
		s.Tris[bad][1] = uint32(len(s.Verts))
		if bad < 999 {
			s.Tris[999][2] = uint32(len(s.Verts) + 5)
		}
		_, err := Build(context.Background(), s, Options{Executor: ex})
		require.ErrorContains(t, err, "out of range")
		require.ErrorContains(t, err, "triangle "+itoa(bad)+" ")
	}
	s := &scenes.Scene{Name: "no-vertices", Tris: [][3]uint32{{0, 1, 2}}}
	_, err := Build(context.Background(), s, Options{Executor: ex})
	require.ErrorContains(t, err, "out of range")
}

func itoa(i int) string { return strconv.Itoa(i) }
