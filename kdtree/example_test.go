package kdtree_test

import (
	"context"
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
)

// A tiny ray tracer: a square wall (triangles 0 and 1) with a triangle in
// front of it (triangle 2), seen from the +Z side and drawn in characters.
func ExampleTree_Intersect() {
	verts := []mgl32.Vec3{
		{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, // the wall, z = 0
		{-0.5, -0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0.6, 0.5}, // the triangle, z = 0.5
	}
	scene := &scenes.Scene{
		Name:   "example",
		Verts:  verts,
		Tris:   [][3]uint32{{0, 1, 2}, {0, 2, 3}, {4, 5, 6}},
		Faces:  []uint32{0, 0, 1},
		Bounds: scenes.VertexBounds(verts),
	}
	tree, err := kdtree.Build(context.Background(), scene, kdtree.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}

	// Orthographic rays along -Z over [-1.2, 1.2]²; '#' the front triangle,
	// '+' the wall, '.' nothing.
	const w, h = 24, 10
	for y := 0; y < h; y++ {
		line := make([]byte, w)
		for x := 0; x < w; x++ {
			org := mgl32.Vec3{-1.2 + 2.4*(float32(x)+0.5)/w, 1.2 - 2.4*(float32(y)+0.5)/h, 2}
			hit, ok := tree.Intersect(kdtree.Ray{Org: org, Dir: mgl32.Vec3{0, 0, -1}, TMax: float32(math.Inf(1))})
			switch {
			case !ok:
				line[x] = '.'
			case hit.Prim == 2:
				line[x] = '#'
			default:
				line[x] = '+'
			}
		}
		fmt.Println(string(line))
	}

	// The closest hit of one ray, and a shadow ray stopped short of it.
	r := kdtree.Ray{Org: mgl32.Vec3{0, 0, 2}, Dir: mgl32.Vec3{0, 0, -1}, TMax: float32(math.Inf(1))}
	hit, ok := tree.Intersect(r)
	fmt.Printf("hit %v: triangle %d at t = %v\n", ok, hit.Prim, hit.T)
	r.TMax = 1.25
	fmt.Println("occluded before t = 1.25:", tree.Occluded(r))
	// Output:
	// ........................
	// ..++++++++++++++++++++..
	// ..++++++++++++++++++++..
	// ..+++++++++##+++++++++..
	// ..++++++++####++++++++..
	// ..+++++++######+++++++..
	// ..++++++########++++++..
	// ..++++++++++++++++++++..
	// ..++++++++++++++++++++..
	// ........................
	// hit true: triangle 2 at t = 1.5
	// occluded before t = 1.25: false
}
