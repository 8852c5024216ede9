package kdtree

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// The meta section of a tree file, little-endian, in this order:
//
//	root box: min, max (6 float32)
//	scene bounds: min, max (6 float32)
//	stats: BuildMs (float64), Nodes, Leaves, EmptyLeaves, MaxDepth,
//	       References (int64), ReferencesPerTriangle, SAHCost (float64),
//	       DroppedTriangles (int64), HostPeakBytes, DevicePeakBytes
//	       (uint64), Levels (int64)
//	scene stats: Bytes, Faces, SkippedFaces, DegenerateTriangles (int64)
//	strings (uint32 length, then the bytes): Stats.Device, Scene.Name,
//	       Scene.Format
//	phases: count (uint32), then per phase in name order: name (string),
//	       ms (float64)
//	Stats.Limited (string)
//	scene stats: Primitives, WeldedVertices (int64)
//	meshes: count (uint32), then per mesh: Name (string), FirstTri,
//	       NumTris (int64); they must tile the triangles in order (or be
//	       none: a scene built by hand)
//
// Every field of Stats is kept except TraceBytes, which the loaded tree
// computes. The scene's attributes (normals, texture coordinates, names)
// and warnings are not kept.

// treeMeta is the decoded meta section.
type treeMeta struct {
	root, sceneBounds scenes.Bounds
	stats             Stats
	sceneStats        scenes.Stats
	name, format      string
	meshes            []scenes.Mesh
}

func encodeMeta(root scenes.Bounds, st Stats, s *scenes.Scene) []byte {
	var e metaEncoder
	e.box(root)
	e.box(s.Bounds)
	e.f64(st.BuildMs)
	for _, v := range []int{st.Nodes, st.Leaves, st.EmptyLeaves, st.MaxDepth, st.References} {
		e.u64(uint64(v))
	}
	e.f64(st.ReferencesPerTriangle)
	e.f64(st.SAHCost)
	e.u64(uint64(st.DroppedTriangles))
	e.u64(st.HostPeakBytes)
	e.u64(st.DevicePeakBytes)
	e.u64(uint64(st.Levels))
	for _, v := range []int64{s.Stats.Bytes, int64(s.Stats.Faces), int64(s.Stats.SkippedFaces), int64(s.Stats.DegenerateTriangles)} {
		e.u64(uint64(v))
	}
	e.str(st.Device)
	e.str(s.Name)
	e.str(s.Format)
	names := make([]string, 0, len(st.Phases))
	for k := range st.Phases {
		names = append(names, k)
	}
	sort.Strings(names)
	e.u32(uint32(len(names)))
	for _, k := range names {
		e.str(k)
		e.f64(st.Phases[k])
	}
	e.str(st.Limited)
	e.u64(uint64(s.Stats.Primitives))
	e.u64(uint64(s.Stats.WeldedVertices))
	e.u32(uint32(len(s.Meshes)))
	for _, m := range s.Meshes {
		e.str(m.Name)
		e.u64(uint64(m.FirstTri))
		e.u64(uint64(m.NumTris))
	}
	return e.b
}

type metaEncoder struct{ b []byte }

func (e *metaEncoder) u32(v uint32)  { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *metaEncoder) u64(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *metaEncoder) f64(v float64) { e.u64(math.Float64bits(v)) }
func (e *metaEncoder) str(s string)  { e.u32(uint32(len(s))); e.b = append(e.b, s...) }
func (e *metaEncoder) box(b scenes.Bounds) {
	for _, v := range [2]mgl32.Vec3{b.Min, b.Max} {
		for _, x := range v {
			e.u32(math.Float32bits(x))
		}
	}
}

// decodeMeta reads the meta section; every read is bounds-checked and
// every byte must be used.
func decodeMeta(b []byte) (*treeMeta, error) {
	d := metaDecoder{b: b}
	m := &treeMeta{}
	m.root = d.box()
	m.sceneBounds = d.box()
	st := &m.stats
	st.BuildMs = d.f64()
	for _, p := range []*int{&st.Nodes, &st.Leaves, &st.EmptyLeaves, &st.MaxDepth, &st.References} {
		*p = d.int()
	}
	st.ReferencesPerTriangle = d.f64()
	st.SAHCost = d.f64()
	st.DroppedTriangles = d.int()
	st.HostPeakBytes = d.u64()
	st.DevicePeakBytes = d.u64()
	st.Levels = d.int()
	m.sceneStats.Bytes = int64(d.int())
	m.sceneStats.Faces = d.int()
	m.sceneStats.SkippedFaces = d.int()
	m.sceneStats.DegenerateTriangles = d.int()
	st.Device = d.str()
	m.name = d.str()
	m.format = d.str()
	n := d.u32()
	if uint64(n)*12 > uint64(len(d.b)) { // each phase takes at least 12 bytes
		return nil, fmt.Errorf("kdtree: tree file meta section: %d phases do not fit in %d bytes", n, len(d.b))
	}
	if n > 0 {
		st.Phases = make(map[string]float64, n)
	}
	for i := uint32(0); i < n && d.err == nil; i++ {
		k := d.str()
		st.Phases[k] = d.f64()
	}
	st.Limited = d.str()
	m.sceneStats.Primitives = d.int()
	m.sceneStats.WeldedVertices = d.int()
	if err := d.meshes(m); err != nil {
		return nil, err
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("kdtree: tree file meta section has %d bytes left over", len(d.b))
	}
	return m, nil
}

// meshes reads the mesh list into m; each mesh takes at least 20 bytes,
// so that a corrupt count allocates no more than the section justifies.
func (d *metaDecoder) meshes(m *treeMeta) error {
	n := d.u32()
	if uint64(n)*20 > uint64(len(d.b)) {
		return fmt.Errorf("kdtree: tree file meta section: %d meshes do not fit in %d bytes", n, len(d.b))
	}
	if n > 0 {
		m.meshes = make([]scenes.Mesh, n)
	}
	for i := range m.meshes {
		m.meshes[i] = scenes.Mesh{Name: d.str(), FirstTri: d.int(), NumTris: d.int()}
	}
	return d.err
}

// checkMeshes makes sure the meshes tile the ntris triangles in order.
func checkMeshes(meshes []scenes.Mesh, ntris int) error {
	if len(meshes) == 0 {
		return nil
	}
	next := 0
	for i, m := range meshes {
		if m.FirstTri != next || m.NumTris > ntris-next {
			return fmt.Errorf("kdtree: tree file mesh %d starts at triangle %d with %d triangles, want a start of %d and at most %d",
				i, m.FirstTri, m.NumTris, next, ntris-next)
		}
		next += m.NumTris
	}
	if next != ntris {
		return fmt.Errorf("kdtree: tree file meshes cover %d of %d triangles", next, ntris)
	}
	return nil
}

// metaDecoder reads little-endian values from b, keeping the first error
// (a short section) and returning zeros after it.
type metaDecoder struct {
	b   []byte
	err error
}

func (d *metaDecoder) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("kdtree: tree file meta section too short")
		d.b = nil
		return nil
	}
	r := d.b[:n]
	d.b = d.b[n:]
	return r
}

func (d *metaDecoder) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *metaDecoder) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *metaDecoder) f64() float64 { return math.Float64frombits(d.u64()) }

// int reads an int64 that must be a non-negative int.
func (d *metaDecoder) int() int {
	v := d.u64()
	if int64(v) < 0 || uint64(int(v)) != v {
		if d.err == nil {
			d.err = fmt.Errorf("kdtree: tree file meta section: count %d out of range", int64(v))
		}
		return 0
	}
	return int(v)
}

func (d *metaDecoder) str() string { return string(d.take(uint64(d.u32()))) }

func (d *metaDecoder) box() scenes.Bounds {
	var v [6]float32
	for i := range v {
		v[i] = math.Float32frombits(d.u32())
	}
	return scenes.Bounds{Min: mgl32.Vec3{v[0], v[1], v[2]}, Max: mgl32.Vec3{v[3], v[4], v[5]}}
}
