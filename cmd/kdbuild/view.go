package main

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kdtree"
)

// Interior views. A scene seen from inside (a building such as sponza)
// shows only its outer walls to kdtree.DefaultCamera; such a scene is
// recognised by the rays from its box centre: most horizontal rays hit a
// surface that faces the centre (an object's inside shows back faces, and
// open space shows nothing).
const (
	interiorProbes   = 32   // horizontal rays cast from the centre
	interiorFraction = 0.75 // share of front-facing hits that makes an interior
	interiorFovY     = 65   // degrees
)

// chooseCamera returns the view render uses without --camera: from inside
// for an interior (isInterior), else kdtree.DefaultCamera of the scene.
func chooseCamera(tree *kdtree.Tree) kdtree.Camera {
	b := tree.Scene.Bounds
	if b.Empty() || !isInterior(tree) {
		return kdtree.DefaultCamera(b)
	}
	return interiorCamera(tree)
}

// isInterior reports whether at least interiorFraction of horizontal rays
// (+Y up) from the box centre hit a surface facing them.
func isInterior(tree *kdtree.Tree) bool {
	b := tree.Scene.Bounds
	c := b.Min.Add(b.Max).Mul(0.5)
	front := 0
	for k := 0; k < interiorProbes; k++ {
		a := 2 * math.Pi * (float64(k) + 0.5) / interiorProbes
		d := mgl32.Vec3{float32(math.Cos(a)), 0, float32(math.Sin(a))}
		if h, ok := tree.Intersect(kdtree.NewRay(c, d)); ok && h.N.Dot(d) < 0 {
			front++
		}
	}
	return float64(front) >= interiorFraction*interiorProbes
}

// interiorCamera stands near one end of the box's longer horizontal axis,
// at a third of its height, looking along that axis to the far end and a
// little up, with a wide field of view.
func interiorCamera(tree *kdtree.Tree) kdtree.Camera {
	b := tree.Scene.Bounds
	ext := b.Max.Sub(b.Min)
	c := b.Min.Add(b.Max).Mul(0.5)
	axis := 0
	if ext[2] > ext[0] {
		axis = 2
	}
	eye, look := c, c
	eye[axis] = b.Min[axis] + 0.2*ext[axis]
	eye[1] = b.Min[1] + 0.3*ext[1]
	look[axis] = b.Max[axis]
	look[1] = eye[1] + 0.12*ext[1]
	return kdtree.Camera{Eye: eye, Look: look, Up: mgl32.Vec3{0, 1, 0}, FovY: interiorFovY}
}
