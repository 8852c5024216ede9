package scenes

import "github.com/go-gl/mathgl/mgl32"

// plyVertexAttr collects the per-vertex attributes of a PLY `vertex`
// element: normals (nx ny nz), texture coordinates (s t, u v or
// texture_u texture_v) and colours (red green blue [alpha]; integer types
// scaled by their maximum, 255 for uchar, floats kept as they are).
type plyVertexAttr struct {
	opt   *LoadOptions
	slot  []int8 // per property: -1, or 0..2 normal, 3..4 uv, 5..8 colour
	typ   []plyType
	cur   [9]float32
	has   [3]bool // the element has normals, UVs, colours
	alpha bool    // and an alpha property
	a     Attributes
}

// plyAttrSlots names the properties read and the slot each fills.
var plyAttrSlots = map[string]int8{
	"nx": 0, "ny": 1, "nz": 2,
	"s": 3, "t": 4, "u": 3, "v": 4, "texture_u": 3, "texture_v": 4, "texture_s": 3, "texture_t": 4,
	"red": 5, "green": 6, "blue": 7, "alpha": 8,
	"r": 5, "g": 6, "b": 7, "a": 8, "diffuse_red": 5, "diffuse_green": 6, "diffuse_blue": 7,
}

// newPLYVertexAttr maps e's properties to slots and counts the attributes
// present in st; it returns nil when opt keeps none of them, so that the
// positions-only parse pays one nil check per property.
func newPLYVertexAttr(e *plyElement, opt *LoadOptions, st *Stats) *plyVertexAttr {
	va := &plyVertexAttr{opt: opt, slot: make([]int8, len(e.props)), typ: make([]plyType, len(e.props))}
	var seen [9]bool
	for i, pr := range e.props {
		va.slot[i] = -1
		if k, ok := plyAttrSlots[pr.name]; ok && pr.countType == plyNone && !seen[k] {
			va.slot[i], va.typ[i] = k, pr.typ
			seen[k] = true
		}
	}
	va.has = [3]bool{seen[0] && seen[1] && seen[2], seen[3] && seen[4], seen[5] && seen[6] && seen[7]}
	va.alpha = seen[8]
	keep := [3]bool{opt.Normals && va.has[0], opt.UVs && va.has[1], opt.Colors && va.has[2]}
	for k, kind := range []string{KindNormals, KindUVs, KindColors} {
		if va.has[k] && !keep[k] {
			st.countAttr(kind, int(e.count), 0)
		}
	}
	va.has = keep
	if keep == [3]bool{} {
		return nil
	}
	return va
}

// set records property pi's value v of the current vertex.
func (va *plyVertexAttr) set(pi int, v float64) {
	k := va.slot[pi]
	if k < 0 {
		return
	}
	if k >= 5 {
		switch va.typ[pi] {
		case plyU8:
			v /= 255
		case plyU16:
			v /= 65535
		case plyI8:
			v /= 127
		case plyI16:
			v /= 32767
		}
	}
	va.cur[k] = float32(v)
}

// commit appends the current vertex's attributes.
func (va *plyVertexAttr) commit() {
	c := &va.cur
	if va.has[0] {
		va.a.Normals = append(va.a.Normals, mgl32.Vec3{c[0], c[1], c[2]})
	}
	if va.has[1] {
		va.a.UVs = append(va.a.UVs, mgl32.Vec2{c[3], c[4]})
	}
	if va.has[2] {
		alpha := float32(1)
		if va.alpha {
			alpha = c[8]
		}
		va.a.Colors = append(va.a.Colors, mgl32.Vec4{c[5], c[6], c[7], alpha})
	}
}

// finishPLYAttr sets Scene.Attr of a PLY load: per-vertex normals and UVs
// are indexed by the triangles' own vertex indices.
func (p *plyParser) finishPLYAttr(opt *LoadOptions) {
	if !opt.any() {
		return
	}
	s := p.s
	a := &Attributes{}
	if va := p.vattr; va != nil {
		a = &va.a
		n := len(s.Verts)
		if va.has[0] {
			a.NormalIdx = append([][3]uint32(nil), s.Tris...)
			s.Stats.countAttr(KindNormals, n, n)
		}
		if va.has[1] {
			a.UVIdx = append([][3]uint32(nil), s.Tris...)
			s.Stats.countAttr(KindUVs, n, n)
		}
		if va.has[2] {
			s.Stats.countAttr(KindColors, n, n)
		}
	}
	s.Attr = a
}
