package kdtree_test

import (
	"context"
	"fmt"

	"github.com/go-gl/mathgl/mgl32"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
)

// Build a tree over a sphere with the default options (Go executor) and
// shoot one ray through its centre.
func ExampleBuild() {
	scene := scenes.Icosphere(2) // 320 triangles
	tree, err := kdtree.Build(context.Background(), scene, kdtree.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	st := tree.Stats()
	fmt.Println("device:", st.Device, "dropped:", st.DroppedTriangles, "valid:", tree.Validate() == nil)
	ray := kdtree.Ray{Org: mgl32.Vec3{0, 0, -5}, Dir: mgl32.Vec3{0, 0, 1}, TMin: 0, TMax: 100}
	hit, ok := tree.Intersect(ray)
	fmt.Printf("hit: %v at t = %.2f\n", ok, hit.T)
	// Output:
	// device: cpu dropped: 0 valid: true
	// hit: true at t = 4.00
}
