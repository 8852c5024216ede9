package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	normalOBJ = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nvt 0 0\nf 1/1/1 2/1/1 3/1/1\n"
	squarePLY = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n" +
		"element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 1\n1 0 1\n1 1 1\n0 1 1\n4 0 1 2 3\n"
	twoSTL = "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 1 1 0\nendloop\nendfacet\n" +
		"facet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 1 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid s\n"
)

// TestTwoFilesOneScene checks kdbuild a.obj b.ply loads both into one
// scene with a mesh each, reports attributes, and builds one tree.
func TestTwoFilesOneScene(t *testing.T) {
	obj := writeFile(t, "a.obj", normalOBJ)
	ply := writeFile(t, "b.ply", squarePLY)
	r := kdbuild(t, "--json", "--no-build", "--attributes", obj, ply)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	m := decode(t, r.stdout)
	meshes, _ := lookup(m, "scene.meshes")
	assert.Equal(t, []any{
		map[string]any{"name": obj, "first_triangle": 0.0, "triangles": 1.0},
		map[string]any{"name": ply, "first_triangle": 1.0, "triangles": 2.0},
	}, meshes)
	normals, _ := lookup(m, "scene.attributes.normals")
	assert.Equal(t, map[string]any{"present": 1.0, "kept": 1.0, "skipped": 0.0}, normals)
	tris, _ := lookup(m, "scene.triangles")
	assert.Equal(t, 3.0, tris)
	format, _ := lookup(m, "scene.format")
	assert.Equal(t, "mixed", format)

	// Without --attributes the same counts are present but skipped.
	r = kdbuild(t, "--json", "--no-build", obj, ply)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	normals, _ = lookup(decode(t, r.stdout), "scene.attributes.normals")
	assert.Equal(t, map[string]any{"present": 1.0, "kept": 0.0, "skipped": 1.0}, normals)

	r = kdbuild(t, "--json", "--device", "cpu", obj, ply)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	refs, _ := lookup(decode(t, r.stdout), "tree.references")
	assert.GreaterOrEqual(t, refs.(float64), 3.0)
}

// TestWeldFlag checks --weld shares the corners of an STL file.
func TestWeldFlag(t *testing.T) {
	stl := writeFile(t, "two.stl", twoSTL)
	for _, c := range []struct {
		args          []string
		verts, welded float64
	}{{nil, 6, 0}, {[]string{"--weld"}, 4, 2}} {
		r := kdbuild(t, append([]string{"--json", "--no-build", stl}, c.args...)...)
		require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
		m := decode(t, r.stdout)
		v, _ := lookup(m, "scene.vertices")
		w, _ := lookup(m, "scene.welded_vertices")
		assert.Equal(t, c.verts, v, "%v", c.args)
		assert.Equal(t, c.welded, w, "%v", c.args)
	}
}
