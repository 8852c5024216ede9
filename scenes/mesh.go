package scenes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
)

// Mesh is a run of consecutive triangles of a Scene that came from one
// source: a file, an OBJ object (`o`) or a glTF mesh instance (a node with a
// mesh). Triangles FirstTri .. FirstTri+NumTris-1 belong to it; a mesh may
// be empty (a glTF mesh of points or lines).
type Mesh struct {
	Name     string // file name, OBJ object name or glTF node/mesh name
	FirstTri int    // index of the mesh's first triangle in Scene.Tris
	NumTris  int    // triangles in the mesh
}

// MeshOf returns the mesh that triangle prim belongs to and prim's index
// within that mesh. A scene without Meshes (built by hand) is one mesh:
// MeshOf returns (0, prim). A prim past the last triangle returns (-1, -1).
// Empty meshes are never returned.
func (s *Scene) MeshOf(prim uint32) (mesh, local int) {
	p := int(prim)
	if p >= len(s.Tris) {
		return -1, -1
	}
	if len(s.Meshes) == 0 {
		return 0, p
	}
	// The first mesh that ends after p holds it (meshes are consecutive,
	// so empty ones before it end at or before p).
	m := sort.Search(len(s.Meshes), func(i int) bool {
		return s.Meshes[i].FirstTri+s.Meshes[i].NumTris > p
	})
	if m == len(s.Meshes) || s.Meshes[m].FirstTri > p {
		return -1, -1
	}
	return m, p - s.Meshes[m].FirstTri
}

// oneMesh makes Meshes the whole scene as one mesh named after the scene,
// unless the loader already set them.
func (s *Scene) oneMesh() {
	if s.Meshes == nil {
		s.Meshes = []Mesh{{Name: s.Name, FirstTri: 0, NumTris: len(s.Tris)}}
	}
}

// checkMeshes verifies that Meshes tile Tris in order (Validate).
func (s *Scene) checkMeshes() error {
	if len(s.Meshes) == 0 {
		return nil
	}
	next := 0
	for i, m := range s.Meshes {
		if m.FirstTri != next || m.NumTris < 0 {
			return parseErr(s.Name, 0, "mesh %d (%q) starts at triangle %d with %d triangles, want start %d", i, m.Name, m.FirstTri, m.NumTris, next)
		}
		next += m.NumTris
	}
	if next != len(s.Tris) {
		return parseErr(s.Name, 0, "meshes cover %d triangles of %d", next, len(s.Tris))
	}
	return nil
}

// Merge joins parts into one scene: vertices and triangles concatenated in
// order (indices shifted), the parts' meshes one after another, Faces kept
// as each part numbered them, Stats summed (Skipped and Attributes added by
// key), Warnings concatenated, Bounds over all. Name is the parts' names
// joined with " + "; Format is theirs when all agree, else "mixed".
//
// Attributes: when any part has Attr, the result has Attr; rows of a part
// without a given attribute get NoAttr corners, its triangles NoAttr
// names, and its vertices opaque white when another part has colours.
// The parts are not changed. Merge of no parts is an empty scene.
func Merge(parts ...*Scene) (*Scene, error) {
	out := &Scene{Stats: Stats{Skipped: map[string]int{}}}
	var names, formats []string
	nv, nt := 0, 0
	for _, p := range parts {
		nv += len(p.Verts)
		nt += len(p.Tris)
	}
	if int64(nv) > 1<<32-1 {
		return nil, fmt.Errorf("merge: %d vertices exceed the 32-bit index range", nv)
	}
	out.Verts = make([]mgl32.Vec3, 0, nv)
	out.Tris = make([][3]uint32, 0, nt)
	out.Faces = make([]uint32, 0, nt)
	for _, p := range parts {
		base := uint32(len(out.Verts))
		first := len(out.Tris)
		out.Verts = append(out.Verts, p.Verts...)
		for _, t := range p.Tris {
			out.Tris = append(out.Tris, [3]uint32{t[0] + base, t[1] + base, t[2] + base})
		}
		out.Faces = append(out.Faces, p.Faces...)
		for len(out.Faces) < len(out.Tris) { // hand-built parts may lack Faces
			out.Faces = append(out.Faces, uint32(len(out.Faces)-first))
		}
		if len(p.Meshes) == 0 {
			out.Meshes = append(out.Meshes, Mesh{Name: p.Name, FirstTri: first, NumTris: len(p.Tris)})
		}
		for _, m := range p.Meshes {
			m.FirstTri += first
			out.Meshes = append(out.Meshes, m)
		}
		out.Stats.add(&p.Stats)
		out.Warnings = append(out.Warnings, p.Warnings...)
		names = append(names, p.Name)
		if !contains(formats, p.Format) {
			formats = append(formats, p.Format)
		}
	}
	out.Name = strings.Join(names, " + ")
	switch len(formats) {
	case 0:
	case 1:
		out.Format = formats[0]
	default:
		out.Format = "mixed"
	}
	out.Attr = mergeAttributes(parts)
	out.Bounds = VertexBounds(out.Verts)
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
