package scenes

import (
	"fmt"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/qmuntal/gltf"
)

// gltfAttr gathers a glTF file's attributes while primitives are read.
type gltfAttr struct {
	a                         Attributes
	normals, uvs, colors, mat int // triangles (colours: vertices; materials: primitives) that have one
	mats                      map[string]uint32
	present                   map[string]int
}

// primitiveAttr reads the attributes of the primitive whose vertices start
// at base (count of them) and whose triangles start at firstTri.
func (g *gltfLoader) primitiveAttr(p *gltf.Primitive, world mat4, base uint32, count, firstTri int) error {
	at := &g.attr
	if at.present == nil {
		at.present = map[string]int{}
	}
	tris := g.s.Tris[firstTri:]
	for _, k := range []struct{ attr, kind string }{{gltf.NORMAL, KindNormals}, {gltf.TEXCOORD_0, KindUVs}, {gltf.COLOR_0, KindColors}} {
		if _, ok := p.Attributes[k.attr]; ok {
			at.present[k.kind] += count
		}
	}
	if p.Material != nil {
		at.present[KindMaterials]++
	}
	if g.opt.Normals {
		vals, err := g.attrFloats(p, gltf.NORMAL, []int{3}, count)
		if err != nil {
			return err
		}
		nb := uint32(len(at.a.Normals))
		for i := 0; i < len(vals)/3; i++ {
			at.a.Normals = append(at.a.Normals, world.normal(vals[3*i], vals[3*i+1], vals[3*i+2]))
		}
		at.a.NormalIdx = appendRows(at.a.NormalIdx, tris, base, nb, vals != nil)
		if vals != nil {
			at.normals += len(tris)
		}
	}
	if g.opt.UVs {
		vals, err := g.attrFloats(p, gltf.TEXCOORD_0, []int{2}, count)
		if err != nil {
			return err
		}
		ub := uint32(len(at.a.UVs))
		for i := 0; i < len(vals)/2; i++ {
			at.a.UVs = append(at.a.UVs, mgl32.Vec2{vals[2*i], vals[2*i+1]})
		}
		at.a.UVIdx = appendRows(at.a.UVIdx, tris, base, ub, vals != nil)
		if vals != nil {
			at.uvs += len(tris)
		}
	}
	if g.opt.Colors {
		if err := g.colors(p, count); err != nil {
			return err
		}
	}
	if g.opt.Names {
		m := NoAttr
		if p.Material != nil {
			m = at.material(&g.doc, *p.Material)
			at.mat++
		}
		for range tris {
			at.a.MaterialOf = append(at.a.MaterialOf, m)
		}
	}
	return nil
}

// colors appends the primitive's COLOR_0 per vertex (opaque white without).
func (g *gltfLoader) colors(p *gltf.Primitive, count int) error {
	at := &g.attr
	vals, err := g.attrFloats(p, gltf.COLOR_0, []int{3, 4}, count)
	if err != nil {
		return err
	}
	if vals == nil {
		for i := 0; i < count; i++ {
			at.a.Colors = append(at.a.Colors, mgl32.Vec4{1, 1, 1, 1})
		}
		return nil
	}
	k := len(vals) / count
	for i := 0; i < count; i++ {
		c := mgl32.Vec4{vals[k*i], vals[k*i+1], vals[k*i+2], 1}
		if k == 4 {
			c[3] = vals[k*i+3]
		}
		at.a.Colors = append(at.a.Colors, c)
	}
	at.colors += count
	return nil
}

// material returns the index of material mi's name in Materials.
func (at *gltfAttr) material(doc *gltf.Document, mi int) uint32 {
	name := fmt.Sprintf("material %d", mi)
	if mi >= 0 && mi < len(doc.Materials) && doc.Materials[mi].Name != "" {
		name = doc.Materials[mi].Name
	}
	if at.mats == nil {
		at.mats = map[string]uint32{}
	}
	if i, ok := at.mats[name]; ok {
		return i
	}
	i := uint32(len(at.a.Materials))
	at.mats[name] = i
	at.a.Materials = append(at.a.Materials, name)
	return i
}

// attrFloats decodes attribute name of a primitive with count vertices:
// nil when the primitive lacks it, an error when its accessor has another
// count, a component count not in comps, or a type glTF (with
// KHR_mesh_quantization when declared) does not allow.
func (g *gltfLoader) attrFloats(p *gltf.Primitive, name string, comps []int, count int) ([]float32, error) {
	ai, ok := p.Attributes[name]
	if !ok {
		return nil, nil
	}
	a, err := g.view(ai)
	if err != nil {
		return nil, err
	}
	if a.count != count {
		return nil, fmt.Errorf("accessor %d: %s has %d elements, POSITION %d", ai, name, a.count, count)
	}
	okComps := false
	for _, c := range comps {
		okComps = okComps || a.comps == c
	}
	okType := a.ctype == gltf.ComponentFloat ||
		(a.norm && (a.ctype == gltf.ComponentUbyte || a.ctype == gltf.ComponentUshort) && name != gltf.NORMAL) ||
		(g.quantized() && a.ctype != gltf.ComponentUint)
	if !okComps || !okType {
		return nil, fmt.Errorf("accessor %d: %s with %d components of %s (normalized %v) is not allowed", ai, name, a.comps, componentName(a.ctype), a.norm)
	}
	return a.floats()
}

// appendRows appends one index row per triangle: the triangle's vertices
// renumbered from base to vbase when has, else NoAttr.
func appendRows(rows [][3]uint32, tris [][3]uint32, base, vbase uint32, has bool) [][3]uint32 {
	for _, t := range tris {
		r := [3]uint32{NoAttr, NoAttr, NoAttr}
		if has {
			r = [3]uint32{t[0] - base + vbase, t[1] - base + vbase, t[2] - base + vbase}
		}
		rows = append(rows, r)
	}
	return rows
}

// finishAttr sets Scene.Attr and the attribute statistics.
func (g *gltfLoader) finishAttr() {
	at := &g.attr
	st := &g.s.Stats
	kept := map[string]int{KindNormals: 0, KindUVs: 0, KindColors: 0, KindMaterials: 0}
	if at.normals == 0 {
		at.a.Normals, at.a.NormalIdx = nil, nil
	} else {
		kept[KindNormals] = len(at.a.Normals)
	}
	if at.uvs == 0 {
		at.a.UVs, at.a.UVIdx = nil, nil
	} else {
		kept[KindUVs] = len(at.a.UVs)
	}
	if at.colors == 0 {
		at.a.Colors = nil
	} else {
		kept[KindColors] = at.colors
	}
	if at.mat == 0 {
		at.a.Materials, at.a.MaterialOf = nil, nil
	} else {
		kept[KindMaterials] = at.mat
	}
	for kind, k := range kept {
		st.countAttr(kind, at.present[kind], k)
	}
	if g.opt.any() {
		g.s.Attr = &at.a
	}
}
