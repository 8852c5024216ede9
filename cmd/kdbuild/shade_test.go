package main

import (
	"image"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShadingNormal: the corner normals blended by the barycentrics where
// every corner has one, else the geometric normal.
func TestShadingNormal(t *testing.T) {
	geo := mgl32.Vec3{0, 0, 2}
	attr := &scenes.Attributes{
		Normals: []mgl32.Vec3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {-1, 0, 0}},
		NormalIdx: [][3]uint32{
			{0, 1, 2},
			{0, scenes.NoAttr, 2},
			{0, 3, 0}, // opposite normals: a zero blend halfway
		},
	}
	cases := []struct {
		name string
		attr *scenes.Attributes
		hit  kdtree.Hit
		want mgl32.Vec3
	}{
		{"no attributes", nil, kdtree.Hit{Prim: 0, U: 0.5, N: geo}, geo},
		{"corner 0", attr, kdtree.Hit{Prim: 0, N: geo}, mgl32.Vec3{1, 0, 0}},
		{"corner 1", attr, kdtree.Hit{Prim: 0, U: 1, N: geo}, mgl32.Vec3{0, 1, 0}},
		{"corner 2", attr, kdtree.Hit{Prim: 0, V: 1, N: geo}, mgl32.Vec3{0, 0, 1}},
		{"blend", attr, kdtree.Hit{Prim: 0, U: 0.25, V: 0.5, N: geo}, mgl32.Vec3{0.25, 0.25, 0.5}},
		{"corner without normal", attr, kdtree.Hit{Prim: 1, U: 0.3, V: 0.3, N: geo}, geo},
		{"zero blend", attr, kdtree.Hit{Prim: 2, U: 0.5, N: geo}, geo},
		{"triangle past the rows", attr, kdtree.Hit{Prim: 7, N: geo}, geo},
	}
	for _, c := range cases {
		got := shadingNormal(c.attr, c.hit)
		assert.True(t, got.ApproxEqual(c.want), "%s: got %v, want %v", c.name, got, c.want)
	}
}

// TestRenderSmoothNormals renders a coarse sphere whose OBJ has a normal
// per vertex, and the same sphere without them: the flat render has
// facet edges (steps in brightness between neighbouring pixels), the
// smooth one none (only the small kinks of normals blended linearly
// across each triangle), and both are lit alike on the whole.
func TestRenderSmoothNormals(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "coarse-sphere.obj")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	flatOBJ := regexp.MustCompile(`(?m)^vn .*\n`).ReplaceAll(data, nil)
	flatOBJ = regexp.MustCompile(`//[0-9]+`).ReplaceAll(flatOBJ, nil)
	flatSrc := filepath.Join(dir, "flat.obj")
	require.NoError(t, os.WriteFile(flatSrc, flatOBJ, 0o644))

	render := func(scene, name string) image.Image {
		out := filepath.Join(dir, name+".png")
		r := kdbuild(t, "render", scene, "--size", "160x120", "--device", "cpu", "-q", "--out", out)
		require.Equal(t, 0, r.code, r.stderr)
		return readPNG(t, out)
	}
	smooth, flat := render(src, "smooth"), render(flatSrc, "flat")
	sJump, sMean := facetJumps(smooth)
	fJump, fMean := facetJumps(flat)
	t.Logf("largest step: smooth %d, flat %d; mean grey: smooth %.1f, flat %.1f", sJump, fJump, sMean, fMean)
	assert.GreaterOrEqual(t, fJump, 24, "the flat sphere shows its facets")
	assert.LessOrEqual(t, sJump, 8, "the smooth sphere shows no facet edges")
	assert.InDelta(t, fMean, sMean, 12, "both lit alike on the whole")
}

// facetJumps measures the central half of the object in img (pixels
// redder than blue: the grey surface, not the blue-grey sky): the largest
// change of the horizontal or vertical brightness step between neighbours
// (a second difference: zero on a flat facet and on a smooth gradient,
// large across a facet edge) and the mean green channel.
func facetJumps(img image.Image) (jump int, mean float64) {
	b := img.Bounds()
	grey := func(x, y int) (int, bool) {
		r, g, bl, _ := img.At(x, y).RGBA()
		return int(g >> 8), r >= bl
	}
	minX, minY, maxX, maxY := b.Max.X, b.Max.Y, b.Min.X, b.Min.Y
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, in := grey(x, y); in {
				minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
			}
		}
	}
	cx, cy := (minX+maxX)/2, (minY+maxY)/2
	rx, ry := (maxX-minX)/4, (maxY-minY)/4
	n := 0
	for y := cy - ry; y <= cy+ry; y++ {
		for x := cx - rx; x <= cx+rx; x++ {
			c, _ := grey(x, y)
			mean += float64(c)
			n++
			l, _ := grey(x-1, y)
			r, _ := grey(x+1, y)
			u, _ := grey(x, y-1)
			d, _ := grey(x, y+1)
			for _, s := range []int{l - 2*c + r, u - 2*c + d} {
				jump = max(jump, s, -s)
			}
		}
	}
	return jump, mean / float64(max(n, 1))
}
