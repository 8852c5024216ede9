package scenes

import "github.com/go-gl/mathgl/mgl32"

// NoAttr marks a triangle corner without a normal or texture coordinate, or
// a triangle outside any group, object or material.
const NoAttr = ^uint32(0)

// Attributes are what a file holds beside positions, kept when LoadOptions
// asks for them (Scene.Attr is nil otherwise). Index slices have one row per
// triangle of Scene.Tris, in the same order; an index slice is nil when no
// triangle of the scene has that attribute.
type Attributes struct {
	Normals   []mgl32.Vec3 // as in the file (glTF: transformed to world space and normalised)
	NormalIdx [][3]uint32  // per triangle corner: index into Normals, or NoAttr
	UVs       []mgl32.Vec2 // texture coordinates (OBJ vt u v, PLY s t / u v, glTF TEXCOORD_0)
	UVIdx     [][3]uint32  // per triangle corner: index into UVs, or NoAttr
	// Colors are per vertex, indexed like Verts (so through Tris), RGBA in
	// [0, 1]; alpha is 1 where the file has none. Nil when the file has none.
	Colors []mgl32.Vec4

	Groups     []string // distinct OBJ group names (`g a b` gives "a b"), in order of first use
	GroupOf    []uint32 // per triangle: index into Groups, or NoAttr before any `g`
	Objects    []string // distinct OBJ object names (`o`)
	ObjectOf   []uint32 // per triangle: index into Objects, or NoAttr
	Materials  []string // distinct material names (OBJ usemtl, glTF material name or "material <i>")
	MaterialOf []uint32 // per triangle: index into Materials, or NoAttr
}

// Attribute kinds, the keys of Stats.Attributes.
const (
	KindNormals   = "normals"
	KindUVs       = "uvs"
	KindColors    = "colors"
	KindGroups    = "groups"
	KindObjects   = "objects"
	KindMaterials = "materials"
)

// AttrStat counts one kind of attribute: Present in the file (OBJ: vn, vt,
// g, o or usemtl statements, v statements with colours; PLY: vertices
// carrying the properties; glTF: NORMAL, TEXCOORD_0 and COLOR_0 elements
// of the primitive instances read, and primitives with a material), Kept
// in Scene.Attr. Present -
// Kept were skipped, because LoadOptions did not ask for them or (rarely)
// because they could not be used (each such case has a warning).
type AttrStat struct {
	Present, Kept int
}

// AllAttributes asks for every attribute.
func AllAttributes() LoadOptions {
	return LoadOptions{Normals: true, UVs: true, Colors: true, Names: true}
}

// any reports whether o asks for any attribute (then Scene.Attr is set).
func (o *LoadOptions) any() bool {
	return o.Normals || o.UVs || o.Colors || o.Names
}

// countAttr adds present and kept to the stats of kind.
func (st *Stats) countAttr(kind string, present, kept int) {
	if present == 0 && kept == 0 {
		return
	}
	if st.Attributes == nil {
		st.Attributes = map[string]AttrStat{}
	}
	a := st.Attributes[kind]
	a.Present += present
	a.Kept += kept
	st.Attributes[kind] = a
}

// add sums o into st (Merge).
func (st *Stats) add(o *Stats) {
	st.Bytes += o.Bytes
	st.Faces += o.Faces
	st.SkippedFaces += o.SkippedFaces
	st.DegenerateTriangles += o.DegenerateTriangles
	st.Primitives += o.Primitives
	st.WeldedVertices += o.WeldedVertices
	for k, v := range o.Skipped {
		st.Skipped[k] += v
	}
	for k, v := range o.Attributes {
		st.countAttr(k, v.Present, v.Kept)
	}
}

// mergeAttributes joins the parts' attributes for Merge (nil when no part
// has any).
func mergeAttributes(parts []*Scene) *Attributes {
	var out Attributes
	has := false
	for _, p := range parts {
		has = has || p.Attr != nil
	}
	if !has {
		return nil
	}
	pick := func(p *Scene) *Attributes {
		if p.Attr == nil {
			return &Attributes{}
		}
		return p.Attr
	}
	out.Normals, out.NormalIdx = mergeIndexed(parts, func(p *Scene) ([]mgl32.Vec3, [][3]uint32) { a := pick(p); return a.Normals, a.NormalIdx })
	out.UVs, out.UVIdx = mergeIndexed(parts, func(p *Scene) ([]mgl32.Vec2, [][3]uint32) { a := pick(p); return a.UVs, a.UVIdx })
	out.Groups, out.GroupOf = mergeNames(parts, func(p *Scene) ([]string, []uint32) { a := pick(p); return a.Groups, a.GroupOf })
	out.Objects, out.ObjectOf = mergeNames(parts, func(p *Scene) ([]string, []uint32) { a := pick(p); return a.Objects, a.ObjectOf })
	out.Materials, out.MaterialOf = mergeNames(parts, func(p *Scene) ([]string, []uint32) { a := pick(p); return a.Materials, a.MaterialOf })
	for _, p := range parts {
		if pick(p).Colors != nil {
			out.Colors = []mgl32.Vec4{}
		}
	}
	if out.Colors != nil {
		for _, p := range parts {
			if c := pick(p).Colors; c != nil {
				out.Colors = append(out.Colors, c...)
				continue
			}
			for range p.Verts {
				out.Colors = append(out.Colors, mgl32.Vec4{1, 1, 1, 1})
			}
		}
	}
	return &out
}

// mergeIndexed concatenates per-corner indexed values, shifting indices and
// filling NoAttr rows for parts without them.
func mergeIndexed[T any](parts []*Scene, get func(*Scene) ([]T, [][3]uint32)) ([]T, [][3]uint32) {
	found := false
	for _, p := range parts {
		if _, idx := get(p); idx != nil {
			found = true
		}
	}
	if !found {
		return nil, nil
	}
	var vals []T
	var rows [][3]uint32
	for _, p := range parts {
		v, idx := get(p)
		base := uint32(len(vals))
		vals = append(vals, v...)
		for t := range p.Tris {
			r := [3]uint32{NoAttr, NoAttr, NoAttr}
			if idx != nil {
				r = idx[t]
				for c := range r {
					if r[c] != NoAttr {
						r[c] += base
					}
				}
			}
			rows = append(rows, r)
		}
	}
	return vals, rows
}

// mergeNames concatenates name lists and shifts the per-triangle indices.
func mergeNames(parts []*Scene, get func(*Scene) ([]string, []uint32)) ([]string, []uint32) {
	found := false
	for _, p := range parts {
		if _, of := get(p); of != nil {
			found = true
		}
	}
	if !found {
		return nil, nil
	}
	var names []string
	var of []uint32
	for _, p := range parts {
		n, o := get(p)
		base := uint32(len(names))
		names = append(names, n...)
		for t := range p.Tris {
			x := NoAttr
			if o != nil && o[t] != NoAttr {
				x = o[t] + base
			}
			of = append(of, x)
		}
	}
	return names, of
}

// checkAttributes verifies Attr (Validate): one row per triangle in every
// non-nil index slice, indices in range or NoAttr, one colour per vertex.
func (s *Scene) checkAttributes() error {
	a := s.Attr
	if a == nil {
		return nil
	}
	nt := len(s.Tris)
	for _, c := range []struct {
		what string
		rows [][3]uint32
		n    int
	}{{"NormalIdx", a.NormalIdx, len(a.Normals)}, {"UVIdx", a.UVIdx, len(a.UVs)}} {
		if c.rows == nil {
			continue
		}
		if len(c.rows) != nt {
			return parseErr(s.Name, 0, "%s has %d rows for %d triangles", c.what, len(c.rows), nt)
		}
		for t, r := range c.rows {
			for _, i := range r {
				if i != NoAttr && int(i) >= c.n {
					return parseErr(s.Name, 0, "%s of triangle %d: index %d out of range (%d values)", c.what, t, i, c.n)
				}
			}
		}
	}
	for _, c := range []struct {
		what string
		of   []uint32
		n    int
	}{{"GroupOf", a.GroupOf, len(a.Groups)}, {"ObjectOf", a.ObjectOf, len(a.Objects)}, {"MaterialOf", a.MaterialOf, len(a.Materials)}} {
		if c.of == nil {
			continue
		}
		if len(c.of) != nt {
			return parseErr(s.Name, 0, "%s has %d entries for %d triangles", c.what, len(c.of), nt)
		}
		for t, i := range c.of {
			if i != NoAttr && int(i) >= c.n {
				return parseErr(s.Name, 0, "%s of triangle %d: index %d out of range (%d names)", c.what, t, i, c.n)
			}
		}
	}
	if a.Colors != nil && len(a.Colors) != len(s.Verts) {
		return parseErr(s.Name, 0, "%d colours for %d vertices", len(a.Colors), len(s.Verts))
	}
	return nil
}
