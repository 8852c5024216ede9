package scenes

import (
	"bytes"
	"fmt"
	"io"

	"github.com/go-gl/mathgl/mgl32"
)

// objAttr is the OBJ parser's state for the attributes LoadOptions asks for
// (nil in objParser when none is asked, so positions-only loads take the
// fast paths of obj.go untouched).
//
// Kept: `vn` (3 numbers) and `vt` (1 to 3 numbers; u and v kept, v = 0
// when absent) with the faces' per-corner indices (positive or negative,
// resolved against the `vn`/`vt` seen so far like vertex indices; an index
// out of range gives a warning and NoAttr for that corner, since such
// files are common); `g` (names joined by one space; an empty `g` is
// "default"), `o` and `usemtl` per triangle; colours of `v x y z r g b`.
type objAttr struct {
	opt         *LoadOptions
	a           Attributes
	withNormals int // triangles with at least one normal, or UV, corner
	withUVs     int
	colored     int // vertices with colours
	// current names (NoAttr before the first statement) and name tables
	group, object, material uint32
	names                   map[string]uint32 // per kind, keyed by kind+"\x00"+name
	statements              [3]int            // g, o, usemtl statements seen
	corners                 []objCorner
	// runs of triangles sharing names, expanded into GroupOf, ObjectOf
	// and MaterialOf at the end (cheaper than three appends a triangle)
	runs []objNameRun
	// vn and vt statements: counted here, parsed by floats
	nNormals, nUVs int
	floats         *floatWorker
	// rows while streaming; moved into a at the end
	normalIdx chunks[[3]uint32]
	uvIdx     chunks[[3]uint32]
}

// objNameRun: the triangles from first on have these names.
type objNameRun struct {
	first                   int
	group, object, material uint32
}

// nameChange records that triangles from now on have the current names.
func (p *objParser) nameChange() {
	at := p.attr
	r := objNameRun{first: len(p.s.Tris), group: at.group, object: at.object, material: at.material}
	if n := len(at.runs); n > 0 && at.runs[n-1].first == r.first {
		at.runs[n-1] = r
		return
	}
	at.runs = append(at.runs, r)
}

// expandNames fills the per-triangle name indices from the runs.
func (at *objAttr) expandNames(ntris int) {
	a := &at.a
	a.GroupOf = make([]uint32, ntris)
	a.ObjectOf = make([]uint32, ntris)
	a.MaterialOf = make([]uint32, ntris)
	cur := objNameRun{group: NoAttr, object: NoAttr, material: NoAttr}
	next := 0
	for t := 0; t < ntris; t++ {
		for next < len(at.runs) && at.runs[next].first <= t {
			cur = at.runs[next]
			next++
		}
		a.GroupOf[t], a.ObjectOf[t], a.MaterialOf[t] = cur.group, cur.object, cur.material
	}
}

// objCorner is one face corner's indices (NoAttr where absent or not kept).
type objCorner struct{ v, t, n uint32 }

func newObjAttr(opt *LoadOptions) *objAttr {
	return &objAttr{opt: opt, group: NoAttr, object: NoAttr, material: NoAttr, names: map[string]uint32{}}
}

// runAttr is run for loads that keep attributes, with vn and vt parsed
// by a floatWorker. Of an error of the worker and one of the statement
// loop, the one of the earlier line is returned, as a sequential parse
// would.
func (p *objParser) runAttr() error {
	p.attr.floats = newFloatWorker(p.name)
	err := p.attrLoop()
	werr := p.attr.floats.finish()
	if werr != nil && (err == nil || werr.(*ParseError).Line < lineOf(err)) {
		return werr
	}
	return err
}

// lineOf is the line of a *ParseError (0 for other errors).
func lineOf(err error) int {
	if pe, ok := err.(*ParseError); ok {
		return pe.Line
	}
	return 0
}

// attrLoop is the statement loop of runAttr.
func (p *objParser) attrLoop() error {
	for {
		ln, lineNo, err := p.nextStatement()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		kw, rest := nextToken(ln)
		if err := p.junk.see(p, kw, lineNo); err != nil {
			return err
		}
		switch {
		case len(kw) == 0:
		case len(kw) == 1 && kw[0] == 'v':
			if p.attr.opt.Colors {
				err = p.vertexColor(rest, lineNo)
			} else if !p.vertexFast(rest) {
				err = p.vertex(rest, lineNo)
			}
		case len(kw) == 1 && kw[0] == 'f':
			err = p.faceAttr(rest, lineNo)
		default:
			var kept bool
			if kept, err = p.attrStatement(kw, rest, lineNo); !kept && err == nil {
				p.skip(kw, rest)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// attrStatement handles the statements objAttr keeps; it reports false for
// the others (they are skipped and counted as before).
func (p *objParser) attrStatement(kw, rest []byte, lineNo int) (bool, error) {
	at := p.attr
	switch string(kw) {
	case "vn":
		if !at.opt.Normals {
			return false, nil
		}
		at.nNormals++
		at.floats.add('n', rest, lineNo)
	case "vt":
		if !at.opt.UVs {
			return false, nil
		}
		at.nUVs++
		at.floats.add('t', rest, lineNo)
	case "g", "usemtl":
		if !at.opt.Names {
			return false, nil
		}
		name := string(bytes.Join(bytes.Fields(stripComment(rest)), []byte(" ")))
		if kw[0] == 'g' {
			if name == "" {
				name = "default"
			}
			at.statements[0]++
			at.group = at.intern(&at.a.Groups, "g", name)
		} else {
			at.statements[2]++
			at.material = at.intern(&at.a.Materials, "m", name)
		}
		p.nameChange()
	case "o":
		if !at.opt.Names {
			return false, nil
		}
		p.startObject(rest)
		at.statements[1]++
		at.object = at.intern(&at.a.Objects, "o", objectName(rest))
		p.nameChange()
	default:
		return false, nil
	}
	return true, nil
}

// stripComment cuts b at a '#'.
func stripComment(b []byte) []byte {
	if i := bytes.IndexByte(b, '#'); i >= 0 {
		return b[:i]
	}
	return b
}

// objectName is the name of an `o` statement (its text, trimmed).
func objectName(rest []byte) string {
	return string(bytes.Join(bytes.Fields(stripComment(rest)), []byte(" ")))
}

// intern returns name's index in list, adding it when new.
func (at *objAttr) intern(list *[]string, kind, name string) uint32 {
	key := kind + "\x00" + name
	if i, ok := at.names[key]; ok {
		return i
	}
	i := uint32(len(*list))
	*list = append(*list, name)
	at.names[key] = i
	return i
}

// numbersFast parses up to len(xs) numbers that all take the fast path of
// parseFloatPrefix, in one pass; ok is false for anything else (more
// numbers, a malformed or non-finite one), and numbers then decides.
func numbersFast(b []byte, xs []float32) (n int, ok bool) {
	i := 0
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) || b[i] == '\r' || b[i] == '#' {
			return n, true
		}
		if n == len(xs) {
			return n, false
		}
		f, used, ok := parseFloatPrefix(b[i:])
		if !ok || !endsToken(b, i+used) || f-f != 0 {
			return n, false
		}
		xs[n] = f
		n++
		i += used
	}
}

// vertexColor parses a `v` statement keeping its colour (opaque white when
// it has none), for LoadOptions.Colors.
func (p *objParser) vertexColor(rest []byte, lineNo int) error {
	if err := p.vertex(rest, lineNo); err != nil {
		return err
	}
	var xs [7]float32
	n := 0
	for r := rest; n < len(xs); n++ {
		var tok []byte
		if tok, r = nextToken(r); len(tok) == 0 {
			break
		}
		xs[n], _ = parseFloat32(tok)
	}
	c := mgl32.Vec4{1, 1, 1, 1}
	if n >= 6 {
		c = mgl32.Vec4{xs[3], xs[4], xs[5], 1}
		p.attr.colored++
	}
	p.attr.a.Colors = append(p.attr.a.Colors, c)
	return nil
}

// faceAttr is face for loads that keep attributes: the same checks, and
// the corners' kept normal and texture indices and the current names for
// every triangle.
func (p *objParser) faceAttr(rest []byte, lineNo int) error {
	at := p.attr
	s := p.s
	face := uint32(s.Stats.Faces)
	s.Stats.Faces++
	if !p.cornersFast(rest) {
		at.corners = at.corners[:0]
		for {
			var tok []byte
			tok, rest = nextToken(rest)
			if len(tok) == 0 {
				break
			}
			c, err := p.corner(tok, lineNo)
			if err != nil {
				return err
			}
			at.corners = append(at.corners, c)
		}
	}
	k := len(at.corners)
	if k < 3 {
		s.Stats.SkippedFaces++
		p.warn(lineNo, fmt.Sprintf("face with %d vertices skipped", k))
		return nil
	}
	cs := at.corners
	hasN, hasT := false, false
	for _, c := range cs {
		hasN = hasN || c.n != NoAttr
		hasT = hasT || c.t != NoAttr
	}
	for i := 1; i+1 < k; i++ {
		a, b, c := cs[0], cs[i], cs[i+1]
		s.Tris = append(s.Tris, [3]uint32{a.v, b.v, c.v})
		s.Faces = append(s.Faces, face)
		if at.opt.Normals {
			at.normalIdx.add([3]uint32{a.n, b.n, c.n})
		}
		if at.opt.UVs {
			at.uvIdx.add([3]uint32{a.t, b.t, c.t})
		}
	}
	if hasN {
		at.withNormals += k - 2
	}
	if hasT {
		at.withUVs += k - 2
	}
	return nil
}

// cornersFast reads a face's corners into attr.corners in one pass when
// every index is well-formed and in range; it returns false otherwise,
// and corner then parses the face or reports the error.
func (p *objParser) cornersFast(b []byte) bool {
	at := p.attr
	at.corners = at.corners[:0]
	counts := [3]int64{int64(len(p.s.Verts)), int64(at.nUVs), int64(at.nNormals)}
	keep := [3]bool{true, at.opt.UVs, at.opt.Normals}
	i := 0
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) || b[i] == '\r' || b[i] == '#' {
			return true
		}
		c := [3]uint32{NoAttr, NoAttr, NoAttr}
		for slot := 0; slot < 3; slot++ {
			if slot > 0 {
				if i == len(b) || b[i] != '/' {
					break
				}
				i++
				if i == len(b) || b[i] == '/' || endsToken(b, i) {
					continue // empty slot
				}
			}
			v, used := scanIndex(b[i:])
			if used == 0 {
				return false
			}
			i += used
			n := counts[slot]
			switch {
			case !keep[slot]:
				if v == 0 {
					return false
				}
			case v > 0 && v <= n:
				c[slot] = uint32(v - 1)
			case v < 0 && -v <= n:
				c[slot] = uint32(n + v)
			default:
				return false
			}
		}
		if !endsToken(b, i) {
			return false
		}
		at.corners = append(at.corners, objCorner{v: c[0], t: c[1], n: c[2]})
	}
}

// corner parses one v[/vt[/vn]] reference of a face.
func (p *objParser) corner(tok []byte, lineNo int) (objCorner, error) {
	c := objCorner{t: NoAttr, n: NoAttr}
	vi, vt, vn := tok, []byte(nil), []byte(nil)
	if j := bytes.IndexByte(tok, '/'); j >= 0 {
		vi, vt = tok[:j], tok[j+1:]
		if j2 := bytes.IndexByte(vt, '/'); j2 >= 0 {
			vt, vn = vt[:j2], vt[j2+1:]
			if bytes.IndexByte(vn, '/') >= 0 {
				return c, parseErr(p.name, lineNo, "f: malformed vertex %q", clip(tok))
			}
		}
	}
	v, err := p.resolve(vi, len(p.s.Verts), "vertex", lineNo)
	if err != nil {
		return c, err
	}
	c.v = uint32(v)
	at := p.attr
	if c.t, err = p.attrIndex(vt, "texture", at.opt.UVs, at.nUVs, lineNo); err != nil {
		return c, err
	}
	c.n, err = p.attrIndex(vn, "normal", at.opt.Normals, at.nNormals, lineNo)
	return c, err
}

// attrIndex resolves a texture or normal index of a face corner: NoAttr
// when empty or not kept (then only its form is checked), or out of range
// (with a warning).
func (p *objParser) attrIndex(tok []byte, what string, keep bool, count int, lineNo int) (uint32, error) {
	if len(tok) == 0 {
		return NoAttr, nil
	}
	if !keep {
		return NoAttr, p.checkAttr(tok, what, lineNo)
	}
	v, ok := parseInt(tok)
	switch {
	case !ok:
		return NoAttr, parseErr(p.name, lineNo, "f: malformed %s index %q", what, clip(tok))
	case v == 0:
		return NoAttr, parseErr(p.name, lineNo, "f: %s index 0 is invalid (OBJ indices start at 1)", what)
	case v > 0 && v <= int64(count):
		return uint32(v - 1), nil
	case v < 0 && -v <= int64(count):
		return uint32(int64(count) + v), nil
	}
	p.warn(lineNo, fmt.Sprintf("%s index %d out of range (%d defined so far): corner without it", what, v, count))
	return NoAttr, nil
}

// finishAttr sets Scene.Attr and the attribute statistics of an OBJ load.
func (p *objParser) finishAttr() {
	st := &p.s.Stats
	st.countAttr(KindColors, p.ccolor, 0)
	if p.attr == nil {
		st.countAttr(KindNormals, p.cvn, 0)
		st.countAttr(KindUVs, p.cvt, 0)
		st.countAttr(KindGroups, p.cg, 0)
		st.countAttr(KindObjects, p.co, 0)
		st.countAttr(KindMaterials, p.cusemtl, 0)
		return
	}
	at := p.attr
	a := &at.a
	a.Normals, a.UVs = at.floats.normals.all(), at.floats.uvs.all()
	if at.withNormals > 0 {
		a.NormalIdx = at.normalIdx.all()
	}
	if at.withUVs > 0 {
		a.UVIdx = at.uvIdx.all()
	}
	if at.colored == 0 {
		a.Colors = nil
	}
	if at.statements != [3]int{} {
		at.expandNames(len(p.s.Tris))
	}
	if len(a.Groups) == 0 {
		a.GroupOf = nil
	}
	if len(a.Objects) == 0 {
		a.ObjectOf = nil
	}
	if len(a.Materials) == 0 {
		a.MaterialOf = nil
	}
	st.countAttr(KindNormals, p.cvn+len(a.Normals), len(a.Normals))
	st.countAttr(KindUVs, p.cvt+len(a.UVs), len(a.UVs))
	st.countAttr(KindColors, at.colored, at.colored)
	st.countAttr(KindGroups, p.cg+at.statements[0], at.statements[0])
	st.countAttr(KindObjects, p.co+at.statements[1], at.statements[1])
	st.countAttr(KindMaterials, p.cusemtl+at.statements[2], at.statements[2])
	p.s.Attr = a
}
