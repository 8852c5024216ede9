package scenes_test

import (
	"fmt"
	"strings"

	"github.com/kdbuild/kdbuild/scenes"
)

func ExampleLoadOBJ() {
	obj := "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nf -4 -3\n"
	s, err := scenes.LoadOBJ(strings.NewReader(obj), "quad.obj")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Tris, s.Faces, s.Bounds.Max, s.Stats.SkippedFaces)
	fmt.Println(s.Warnings)
	// Output:
	// [[0 1 2] [0 2 3]] [0 0] [1 1 0] 1
	// [quad.obj:6: face with 2 vertices skipped]
}

func ExampleParseError() {
	_, err := scenes.LoadOBJ(strings.NewReader("v 0 0 0\nf 1 1 2\n"), "bad.obj")
	fmt.Println(err)
	// Output: bad.obj:2: f: vertex index 2 out of range (1 defined so far)
}

func ExampleProcedural() {
	s, err := scenes.Procedural("grid:2:1:1:proc:icosphere:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d triangles, %d vertices, x from %.3f to %.3f\n", len(s.Tris), len(s.Verts), s.Bounds.Min[0], s.Bounds.Max[0])
	// Output: 160 triangles, 84 vertices, x from -1.000 to 3.200
}
