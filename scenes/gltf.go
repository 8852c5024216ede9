package scenes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/qmuntal/gltf"
)

// LoadGLTF parses a glTF 2.0 file, JSON (.gltf) or binary (.glb), from r;
// name is used in errors. dir is the folder for relative buffer URIs ("":
// external buffers are refused). See loadGLTF for what is read.
func LoadGLTF(r io.Reader, name, dir string) (*Scene, error) {
	return loadGLTF(r, name, &LoadOptions{Dir: dir})
}

// loadGLTF reads the default scene (`scene`, else scenes[0], else every root
// node) of a glTF 2.0 file, through github.com/qmuntal/gltf's document
// types. The whole input is read first: glTF needs random access.
//
// Every node reached is placed by its world transform (`matrix`, or
// translation·rotation·scale, composed down the hierarchy); a node with a
// mesh is one Mesh of the scene. Each triangle primitive (TRIANGLES,
// TRIANGLE_STRIP, TRIANGLE_FAN; indexed by UNSIGNED_BYTE, SHORT or INT
// indices, or not indexed) adds its POSITION vertices, transformed, and
// its triangles; where a transform mirrors (negative determinant) the
// winding is swapped, so geometric normals keep facing outwards. POINTS,
// LINES, LINE_LOOP and LINE_STRIP primitives are counted in Stats.Skipped
// by mode name (their vertices under "point and line vertices"). POSITION
// is FLOAT, or with KHR_mesh_quantization any integer type; sparse
// accessors are applied. Morph targets and skins are ignored (bind pose).
//
// Stats.Faces counts triangles, Scene.Faces gives each triangle's number
// within its primitive, Stats.Primitives the primitive instances.
//
// Errors (*ParseError, Line 0) name the accessor, bufferView, buffer, mesh
// or node at fault: out-of-range indices, reads past a view or buffer,
// wrong types, non-finite values, node cycles, GLB chunk problems, and any
// required extension the loader cannot read (KHR_draco_mesh_compression,
// EXT_meshopt_compression, ...), named before any buffer is read.
func loadGLTF(r io.Reader, name string, opt *LoadOptions) (*Scene, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, parseErr(name, 0, "read: %v", err)
	}
	g := &gltfLoader{name: name, opt: opt, size: len(data),
		s: &Scene{Name: name, Format: "gltf", Stats: Stats{Bytes: int64(len(data)), Skipped: map[string]int{}}}}
	if err := g.load(data); err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, pe
		}
		return nil, parseErr(name, 0, "%v", err)
	}
	if g.s.Meshes == nil {
		g.s.Meshes = []Mesh{}
	}
	g.finishAttr()
	return g.s.finish(), nil
}

// gltfLoader holds one load's state.
type gltfLoader struct {
	name string
	opt  *LoadOptions
	size int // input bytes
	doc  gltf.Document
	bufs buffers
	s    *Scene
	attr gltfAttr
	// vertices and triangles instancing may still produce
	budget int64
}

// maxInstancedElements bounds the node visits, vertices and triangles a
// file of size bytes may make: instancing (one mesh placed by many nodes) multiplies
// geometry without making the file larger, so a corrupt or hostile file
// could ask for any amount. 256 per byte allows heavy real instancing.
func maxInstancedElements(size int) int64 { return 256*int64(size) + 1<<16 }

func (g *gltfLoader) load(data []byte) error {
	js := data
	var bin []byte
	glb := isGLB(data)
	if glb {
		var err error
		if js, bin, err = splitGLB(data); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(js, &g.doc); err != nil {
		return fmt.Errorf("JSON: %v", err)
	}
	if err := checkEnums(js); err != nil {
		return err
	}
	if err := checkRequired(&g.doc); err != nil {
		return err
	}
	g.bufs = buffers{doc: &g.doc, bin: bin, glb: glb, dir: g.opt.Dir}
	g.budget = maxInstancedElements(len(data))
	roots, err := g.roots()
	if err != nil {
		return err
	}
	onPath := make([]bool, len(g.doc.Nodes))
	for _, n := range roots {
		if err := g.node(n, mgl64Identity(), onPath); err != nil {
			return err
		}
	}
	return nil
}

// roots returns the root nodes of the default scene.
func (g *gltfLoader) roots() ([]int, error) {
	d := &g.doc
	if d.Scene != nil {
		if *d.Scene < 0 || *d.Scene >= len(d.Scenes) {
			return nil, fmt.Errorf("scene %d does not exist (%d scenes)", *d.Scene, len(d.Scenes))
		}
		return d.Scenes[*d.Scene].Nodes, nil
	}
	if len(d.Scenes) > 0 {
		return d.Scenes[0].Nodes, nil
	}
	// No scene at all: every node that is nobody's child.
	child := make([]bool, len(d.Nodes))
	for _, n := range d.Nodes {
		for _, c := range n.Children {
			if c >= 0 && c < len(child) {
				child[c] = true
			}
		}
	}
	var roots []int
	for i, c := range child {
		if !c {
			roots = append(roots, i)
		}
	}
	return roots, nil
}

// node adds node ni and its descendants under the parent transform.
func (g *gltfLoader) node(ni int, parent mat4, onPath []bool) error {
	if ni < 0 || ni >= len(g.doc.Nodes) {
		return fmt.Errorf("node %d does not exist (%d nodes)", ni, len(g.doc.Nodes))
	}
	if onPath[ni] {
		return fmt.Errorf("node %d is its own ancestor (the node hierarchy has a cycle)", ni)
	}
	// Node visits count against the budget: a hierarchy whose nodes share
	// children is a DAG that grows exponentially when walked as a tree.
	if g.budget--; g.budget < 0 {
		return fmt.Errorf("node %d: the hierarchy or its instancing makes more nodes, vertices and triangles than a %d-byte file justifies", ni, g.size)
	}
	onPath[ni] = true
	defer func() { onPath[ni] = false }()
	n := g.doc.Nodes[ni]
	world := parent.mul(localTransform(n))
	if n.Mesh != nil {
		if err := g.meshInstance(ni, *n.Mesh, world); err != nil {
			return err
		}
	}
	for _, c := range n.Children {
		if err := g.node(c, world, onPath); err != nil {
			return err
		}
	}
	return nil
}

// meshInstance adds mesh mi placed by world as one Mesh.
func (g *gltfLoader) meshInstance(ni, mi int, world mat4) error {
	if mi < 0 || mi >= len(g.doc.Meshes) {
		return fmt.Errorf("node %d: mesh %d does not exist (%d meshes)", ni, mi, len(g.doc.Meshes))
	}
	m := g.doc.Meshes[mi]
	name := g.doc.Nodes[ni].Name
	if name == "" {
		name = m.Name
	}
	if name == "" {
		name = fmt.Sprintf("mesh %d", mi)
	}
	first := len(g.s.Tris)
	for pi, p := range m.Primitives {
		if err := g.primitive(p, world); err != nil {
			return fmt.Errorf("mesh %d primitive %d: %w", mi, pi, err)
		}
	}
	g.s.Meshes = append(g.s.Meshes, Mesh{Name: name, FirstTri: first, NumTris: len(g.s.Tris) - first})
	return nil
}

// primitive adds one primitive's vertices and triangles.
func (g *gltfLoader) primitive(p *gltf.Primitive, world mat4) error {
	s := g.s
	s.Stats.Primitives++
	pa, ok := p.Attributes[gltf.POSITION]
	if !ok {
		return fmt.Errorf("no POSITION attribute")
	}
	pos, err := g.view(pa)
	if err != nil {
		return err
	}
	if pos.comps != 3 || (pos.ctype != gltf.ComponentFloat && (!g.quantized() || pos.ctype == gltf.ComponentUint)) {
		return fmt.Errorf("accessor %d: POSITION must be VEC3 FLOAT (or integer with KHR_mesh_quantization), got %d components of %s", pa, pos.comps, componentName(pos.ctype))
	}
	if !isTriangleMode(p.Mode) {
		s.Stats.Skipped[modeName(p.Mode)]++
		s.Stats.Skipped["point and line vertices"] += pos.count
		return nil
	}
	if len(p.Targets) > 0 {
		s.Stats.Skipped["morph targets"] += len(p.Targets)
	}
	var idx []uint32
	n := pos.count
	if p.Indices != nil {
		ia, err := g.view(*p.Indices)
		if err != nil {
			return err
		}
		if ia.comps != 1 || (ia.ctype != gltf.ComponentUbyte && ia.ctype != gltf.ComponentUshort && ia.ctype != gltf.ComponentUint) {
			return fmt.Errorf("accessor %d: indices must be SCALAR UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT, got %d components of %s", ia.index, ia.comps, componentName(ia.ctype))
		}
		idx = ia.uints()
		for k, v := range idx {
			if int(v) >= pos.count {
				return fmt.Errorf("accessor %d: index %d at element %d out of range [0, %d) of POSITION accessor %d", ia.index, v, k, pos.count, pa)
			}
		}
		n = len(idx)
	}
	ntri := triangleCount(p.Mode, n)
	if p.Mode == gltf.PrimitiveTriangles && n%3 != 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: TRIANGLES primitive with %d indices: the last %d ignored", g.name, n, n%3))
	}
	g.budget -= int64(pos.count) + int64(ntri)
	if g.budget < 0 {
		return fmt.Errorf("instancing makes more vertices and triangles than a %d-byte file justifies", g.size)
	}
	xyz, err := pos.floats()
	if err != nil {
		return err
	}
	if int64(len(s.Verts))+int64(pos.count) > 1<<32-1 {
		return fmt.Errorf("more than 2^32-1 vertices")
	}
	base := uint32(len(s.Verts))
	for i := 0; i < pos.count; i++ {
		v := world.point(xyz[3*i], xyz[3*i+1], xyz[3*i+2])
		if v[0]-v[0] != 0 || v[1]-v[1] != 0 || v[2]-v[2] != 0 {
			return fmt.Errorf("accessor %d: element %d is not finite after the node transform", pa, i)
		}
		s.Verts = append(s.Verts, v)
	}
	flip := world.det3() < 0
	firstTri := len(s.Tris)
	for t := 0; t < ntri; t++ {
		a, b, c := modeCorners(p.Mode, t)
		if idx != nil {
			a, b, c = int(idx[a]), int(idx[b]), int(idx[c])
		}
		if flip {
			b, c = c, b
		}
		s.Tris = append(s.Tris, [3]uint32{base + uint32(a), base + uint32(b), base + uint32(c)})
		s.Faces = append(s.Faces, uint32(t))
	}
	s.Stats.Faces += ntri
	return g.primitiveAttr(p, world, base, pos.count, firstTri)
}

// quantized reports whether the file declares KHR_mesh_quantization.
func (g *gltfLoader) quantized() bool {
	for _, lists := range [][]string{g.doc.ExtensionsUsed, g.doc.ExtensionsRequired} {
		for _, e := range lists {
			if e == "KHR_mesh_quantization" {
				return true
			}
		}
	}
	return false
}

func isTriangleMode(m gltf.PrimitiveMode) bool {
	return m == gltf.PrimitiveTriangles || m == gltf.PrimitiveTriangleStrip || m == gltf.PrimitiveTriangleFan
}

func modeName(m gltf.PrimitiveMode) string {
	return [...]string{"TRIANGLES", "POINTS", "LINES", "LINE_LOOP", "LINE_STRIP", "TRIANGLE_STRIP", "TRIANGLE_FAN"}[m]
}

// triangleCount is the number of triangles n vertices make in mode m.
func triangleCount(m gltf.PrimitiveMode, n int) int {
	if m == gltf.PrimitiveTriangles {
		return n / 3
	}
	return max(n-2, 0)
}

// modeCorners returns the vertex positions (in the index list) of triangle
// t, as the specification numbers them: strips (t, t+1+t%2, t+2-t%2),
// fans (t+1, t+2, 0).
func modeCorners(m gltf.PrimitiveMode, t int) (a, b, c int) {
	switch m {
	case gltf.PrimitiveTriangleStrip:
		return t, t + 1 + t%2, t + 2 - t%2
	case gltf.PrimitiveTriangleFan:
		return t + 1, t + 2, 0
	}
	return 3 * t, 3*t + 1, 3*t + 2
}

// checkEnums catches what the document types read silently: a component
// type or primitive mode outside the specification becomes a default
// value there, so the raw numbers are checked here.
func checkEnums(js []byte) error {
	var raw struct {
		Accessors []struct {
			ComponentType int `json:"componentType"`
			Sparse        *struct {
				Indices struct {
					ComponentType int `json:"componentType"`
				} `json:"indices"`
			} `json:"sparse"`
		} `json:"accessors"`
		Meshes []struct {
			Primitives []struct {
				Mode *int `json:"mode"`
			} `json:"primitives"`
		} `json:"meshes"`
	}
	if err := json.Unmarshal(js, &raw); err != nil {
		return fmt.Errorf("JSON: %v", err)
	}
	valid := func(c int) bool { return c >= 5120 && c <= 5126 && c != 5124 }
	for i, a := range raw.Accessors {
		if !valid(a.ComponentType) {
			return fmt.Errorf("accessor %d: componentType %d is not a glTF component type", i, a.ComponentType)
		}
		if a.Sparse != nil && !valid(a.Sparse.Indices.ComponentType) {
			return fmt.Errorf("accessor %d: sparse indices componentType %d is not a glTF component type", i, a.Sparse.Indices.ComponentType)
		}
	}
	for mi, m := range raw.Meshes {
		for pi, p := range m.Primitives {
			if p.Mode != nil && (*p.Mode < 0 || *p.Mode > 6) {
				return fmt.Errorf("mesh %d primitive %d: mode %d is not a glTF primitive mode (0..6)", mi, pi, *p.Mode)
			}
		}
	}
	return nil
}

// mgl64Identity is the identity transform.
func mgl64Identity() mat4 { return mat4{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1} }

var _ = mgl32.Vec3{}
