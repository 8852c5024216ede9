package scenes

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/go-gl/mathgl/mgl32"
)

// objReadBuffer is the bufio size for OBJ input; longer lines are assembled
// in a growing side buffer, so there is no line-length limit.
const objReadBuffer = 1 << 18

// maxWarnings caps Scene.Warnings; later warnings are only counted.
const maxWarnings = 100

// LoadOBJ parses Wavefront OBJ geometry from r; name is used in errors.
//
// Accepted: `v x y z [w]` and `v x y z r g b [w]` (w and colours ignored);
// `f` with indices in every form (v, v/vt, v//vn, v/vt/vn), positive or
// negative (relative); polygons fan-triangulated as (v0, vi, vi+1); CRLF, a
// UTF-8 BOM, tabs, `\` line continuation, `#` comments (also after a
// statement), no final newline, lines of any length. Without attributes
// asked (LoadOBJ), `vt`, `vn` and every other keyword (l, p, g, o, s,
// usemtl, mtllib, ...) are skipped and counted in Stats.Skipped by keyword;
// no .mtl file is read. With LoadOptions, the attributes asked for are
// kept instead (see objAttr) and Stats.Attributes says what was present and
// kept. Every `o` statement starts a new Mesh named after it, whatever the
// options (triangles before the first `o` form a mesh named after the
// file, dropped when empty); a file without `o` is one mesh.
//
// Errors (*ParseError with the line of the statement): an index of 0 (any
// slot); a vertex index out of range, checked at the face against the `v`
// statements seen so far, for positive and negative indices alike (so a face
// may not refer forward to a later vertex); a relative vertex index before
// any vertex; a malformed index; NaN, Inf or malformed numbers; a `v` with other than 3, 4, 6 or 7
// numbers. Faces of 1 or 2 vertices are skipped with a warning (counted in
// Stats.SkippedFaces and still numbered as faces); degenerate triangles are
// kept and counted.
//
// Limits (DefaultLimits here; LoadReaderWith takes others): a statement
// longer than MaxLine and a scene over MaxSceneBytes are errors; so is input
// that is not OBJ: more than maxJunk statements of unknown keywords before
// any `v` or `f`, or a file of statements without one `v` or `f`. A file of
// blank lines and comments only loads with a warning and 0 triangles.
func LoadOBJ(r io.Reader, name string) (*Scene, error) {
	return loadOBJ(r, name, &LoadOptions{})
}

// loadOBJ is LoadOBJ keeping the attributes opt asks for (obj_attr.go),
// within opt.Limits.
func loadOBJ(r io.Reader, name string, opt *LoadOptions) (*Scene, error) {
	lim := opt.Limits
	p := objParser{
		lim:   lim.resolved(),
		junk:  objJunk{guard: sceneGuard{lim: lim.resolved()}},
		name:  name,
		s:     &Scene{Name: name, Format: "obj", Stats: Stats{Skipped: map[string]int{}}},
		cr:    &countingReader{r: r},
		first: true,
	}
	p.br = bufio.NewReaderSize(p.cr, objReadBuffer)
	if opt.any() {
		p.attr = newObjAttr(opt)
	}
	var err error
	if p.attr != nil {
		err = p.runAttr()
	} else {
		err = p.run()
	}
	if err != nil {
		return nil, err
	}
	p.flushCounts()
	p.finishAttr()
	p.endObject()
	p.s.Stats.Bytes = p.cr.n
	if err := p.checkGeometry(); err != nil {
		return nil, err
	}
	return p.s.finish(), nil
}

type objParser struct {
	lim   Limits
	junk  objJunk
	name  string
	s     *Scene
	br    *bufio.Reader
	cr    *countingReader
	long  []byte // line being assembled across buffer fills or continuations
	line  int    // physical lines read
	first bool   // before the first line (BOM check)
	// counters for common skipped keywords, merged into Stats.Skipped at the end
	cvt, cvn, cg, co, cs, cusemtl, cl, cp int
	ccolor                                int // v statements with colours
	warned                                int
	attr                                  *objAttr // nil: positions only
}

// readStatement returns the next logical line (continuations joined) without
// its line terminator, and the 1-based line number where it starts. The
// slice is valid until the next call.
func (p *objParser) readStatement() ([]byte, int, error) {
	start := p.line + 1
	p.long = p.long[:0]
	joined := false
	for {
		chunk, err := p.br.ReadSlice('\n')
		if int64(len(p.long)+len(chunk)) > p.lim.MaxLine {
			return nil, start, lineLimit(p.lim)
		}
		if err == bufio.ErrBufferFull {
			p.long = append(p.long, chunk...)
			joined = true
			continue
		}
		if err != nil && err != io.EOF {
			return nil, start, err
		}
		if len(chunk) == 0 && err == io.EOF {
			if joined {
				p.line++
				return p.long, start, nil
			}
			return nil, start, io.EOF
		}
		p.line++
		var ln []byte
		if joined {
			p.long = append(p.long, chunk...)
			ln = p.long
		} else {
			ln = chunk
		}
		ln = trimEOL(ln)
		if len(ln) > 0 && ln[len(ln)-1] == '\\' && err == nil {
			// Continuation: keep the text, the backslash becomes a space.
			if !joined {
				p.long = append(p.long[:0], ln...)
			} else {
				p.long = ln
			}
			p.long[len(p.long)-1] = ' '
			joined = true
			continue
		}
		if err == io.EOF && len(ln) > 0 && ln[len(ln)-1] == '\\' {
			ln = ln[:len(ln)-1]
		}
		return ln, start, nil
	}
}

func trimEOL(b []byte) []byte {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
	}
	if n > 0 && b[n-1] == '\r' {
		n--
	}
	return b[:n]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// nextToken splits b at whitespace: it returns the first token and the rest.
// A token starting with '#' ends the statement (an empty token comes back).
func nextToken(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i < len(b) && b[i] == '#' {
		return nil, nil
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

// run parses statements for a positions-only load (runAttr is its twin
// for loads that keep attributes).
func (p *objParser) run() error {
	for {
		ln, lineNo, err := p.readStatement()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.readErr(err, lineNo)
		}
		if p.first {
			p.first = false
			ln = bytes.TrimPrefix(ln, []byte("\xef\xbb\xbf"))
		}
		kw, rest := nextToken(ln)
		if err := p.junk.see(p, kw, lineNo); err != nil {
			return err
		}
		switch {
		case len(kw) == 0:
			// blank line or comment
		case len(kw) == 1 && kw[0] == 'v':
			if !p.vertexFast(rest) {
				if err := p.vertex(rest, lineNo); err != nil {
					return err
				}
			}
		case len(kw) == 1 && kw[0] == 'f':
			if !p.faceFast(rest) {
				if err := p.face(rest, lineNo); err != nil {
					return err
				}
			}
		default:
			p.skip(kw, rest)
		}
	}
	return nil
}

// nextStatement is readStatement with read errors as *ParseError and the
// BOM of the first line removed (run does the same inline).
func (p *objParser) nextStatement() ([]byte, int, error) {
	ln, lineNo, err := p.readStatement()
	if err == io.EOF {
		return nil, lineNo, err
	}
	if err != nil {
		return nil, lineNo, &ParseError{File: p.name, Line: p.line, Msg: "read: " + err.Error()}
	}
	if p.first {
		p.first = false
		ln = bytes.TrimPrefix(ln, []byte("\xef\xbb\xbf"))
	}
	return ln, lineNo, nil
}

// startObject closes the current mesh and opens one for an `o` statement.
func (p *objParser) startObject(rest []byte) {
	s := p.s
	p.endObject()
	s.Meshes = append(s.Meshes, Mesh{Name: objectName(rest), FirstTri: len(s.Tris)})
}

// endObject sets the triangle count of the last mesh; before the first
// `o` it makes the mesh of the triangles so far, named after the file,
// unless there are none.
func (p *objParser) endObject() {
	s := p.s
	if len(s.Meshes) == 0 {
		if len(s.Tris) > 0 {
			s.Meshes = append(s.Meshes, Mesh{Name: s.Name, NumTris: len(s.Tris)})
		}
		return
	}
	m := &s.Meshes[len(s.Meshes)-1]
	m.NumTris = len(s.Tris) - m.FirstTri
}

// skip counts a statement that is not kept; an `o` starts a mesh.
func (p *objParser) skip(kw, rest []byte) {
	switch string(kw) {
	case "vt":
		p.cvt++
	case "vn":
		p.cvn++
	case "g":
		p.cg++
	case "o":
		p.co++
		p.startObject(rest)
	case "s":
		p.cs++
	case "usemtl":
		p.cusemtl++
	case "l":
		p.cl++
	case "p":
		p.cp++
	default:
		p.s.Stats.Skipped[skippedKey(p.s.Stats.Skipped, kw)]++
	}
}

func (p *objParser) flushCounts() {
	for _, kc := range []struct {
		k string
		n int
	}{{"vt", p.cvt}, {"vn", p.cvn}, {"g", p.cg}, {"o", p.co}, {"s", p.cs}, {"usemtl", p.cusemtl}, {"l", p.cl}, {"p", p.cp}} {
		if kc.n > 0 {
			p.s.Stats.Skipped[kc.k] += kc.n
		}
	}
}

// endsToken reports whether b[i] ends a token: end of line or whitespace.
func endsToken(b []byte, i int) bool {
	return i == len(b) || b[i] == ' ' || b[i] == '\t' || b[i] == '\r'
}

// vertexFast parses a `v` statement whose numbers all take the fast path of
// parseFloatPrefix, in one pass. It returns false, having changed nothing,
// for anything else; vertex then parses the statement or reports the error.
func (p *objParser) vertexFast(b []byte) bool {
	var xs [7]float32
	n := 0
	i := 0
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) || b[i] == '\r' || b[i] == '#' {
			break
		}
		if n == len(xs) {
			return false
		}
		f, used, ok := parseFloatPrefix(b[i:])
		if !ok || !endsToken(b, i+used) {
			return false
		}
		xs[n] = f
		n++
		i += used
	}
	if n != 3 && n != 4 && n != 6 && n != 7 {
		return false
	}
	if n >= 6 {
		p.ccolor++
	}
	p.s.Verts = append(p.s.Verts, mgl32.Vec3{xs[0], xs[1], xs[2]})
	return true
}

// faceFast parses an `f` statement of 3 to 16 well-formed, in-range vertex
// references in one pass and adds its triangles. It returns false, having
// changed nothing, for anything else; face then handles the statement.
func (p *objParser) faceFast(b []byte) bool {
	var idx [16]uint32
	nv := int64(len(p.s.Verts))
	n := 0
	i := 0
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) || b[i] == '\r' || b[i] == '#' {
			break
		}
		if n == len(idx) {
			return false
		}
		v, used := scanIndex(b[i:])
		if used == 0 {
			return false
		}
		i += used
		switch {
		case v > 0 && v <= nv:
			idx[n] = uint32(v - 1)
		case v < 0 && -v <= nv:
			idx[n] = uint32(nv + v)
		default:
			return false
		}
		n++
		// Optional /vt and /vn: well-formed and non-zero when present.
		for slot := 0; slot < 2 && i < len(b) && b[i] == '/'; slot++ {
			i++
			if i < len(b) && b[i] != '/' && !endsToken(b, i) {
				a, used := scanIndex(b[i:])
				if used == 0 || a == 0 {
					return false
				}
				i += used
			}
		}
		if !endsToken(b, i) {
			return false
		}
	}
	if n < 3 {
		return false
	}
	s := p.s
	face := uint32(s.Stats.Faces)
	s.Stats.Faces++
	for k := 1; k+1 < n; k++ {
		s.Tris = append(s.Tris, [3]uint32{idx[0], idx[k], idx[k+1]})
		s.Faces = append(s.Faces, face)
	}
	return true
}

// scanIndex reads [+-]digits (at most 12 digits) at the start of b and
// returns the value and the bytes used; used is 0 when there is none.
func scanIndex(b []byte) (int64, int) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var v int64
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		if i-start == 12 {
			return 0, 0
		}
		v = v*10 + int64(b[i]-'0')
	}
	if i == start {
		return 0, 0
	}
	if neg {
		v = -v
	}
	return v, i
}

func (p *objParser) vertex(rest []byte, lineNo int) error {
	var xs [8]float32
	n := 0
	for {
		var tok []byte
		tok, rest = nextToken(rest)
		if len(tok) == 0 {
			break
		}
		if n == len(xs) {
			return parseErr(p.name, lineNo, "v: too many numbers (want 3, 4, 6 or 7)")
		}
		f, ok := parseFloat32(tok)
		if !ok {
			return parseErr(p.name, lineNo, "v: malformed number %q", clip(tok))
		}
		if f-f != 0 { // NaN or ±Inf
			return parseErr(p.name, lineNo, "v: non-finite coordinate %q", clip(tok))
		}
		xs[n] = f
		n++
	}
	switch n {
	case 3, 4, 6, 7:
	default:
		return parseErr(p.name, lineNo, "v: %d numbers (want 3, 4, 6 or 7)", n)
	}
	p.s.Verts = append(p.s.Verts, mgl32.Vec3{xs[0], xs[1], xs[2]})
	return nil
}

// resolve turns a 1-based or negative OBJ index into a 0-based one, given
// count items defined so far.
func (p *objParser) resolve(tok []byte, count int, what string, lineNo int) (int, error) {
	v, ok := parseInt(tok)
	if !ok {
		return 0, parseErr(p.name, lineNo, "f: malformed %s index %q", what, clip(tok))
	}
	switch {
	case v == 0:
		return 0, parseErr(p.name, lineNo, "f: %s index 0 is invalid (OBJ indices start at 1)", what)
	case v > 0:
		if v > int64(count) {
			return 0, parseErr(p.name, lineNo, "f: %s index %d out of range (%d defined so far)", what, v, count)
		}
		return int(v - 1), nil
	default:
		if count == 0 {
			return 0, parseErr(p.name, lineNo, "f: relative %s index %d before any %s", what, v, what)
		}
		if -v > int64(count) {
			return 0, parseErr(p.name, lineNo, "f: relative %s index %d out of range (%d defined so far)", what, v, count)
		}
		return count + int(v), nil
	}
}

// checkAttr checks a texture or normal index: a well-formed non-zero
// integer. Its range is not checked: these attributes are not loaded, and
// common files (e.g. "f 1//1" with no vn) refer to normals they never define.
func (p *objParser) checkAttr(tok []byte, what string, lineNo int) error {
	v, ok := parseInt(tok)
	if !ok {
		return parseErr(p.name, lineNo, "f: malformed %s index %q", what, clip(tok))
	}
	if v == 0 {
		return parseErr(p.name, lineNo, "f: %s index 0 is invalid (OBJ indices start at 1)", what)
	}
	return nil
}

func (p *objParser) face(rest []byte, lineNo int) error {
	s := p.s
	face := uint32(s.Stats.Faces)
	s.Stats.Faces++
	nv := len(s.Verts)
	var v0, prev uint32
	k := 0
	for {
		var tok []byte
		tok, rest = nextToken(rest)
		if len(tok) == 0 {
			break
		}
		// Split v[/vt[/vn]] by hand.
		vi := tok
		var vt, vn []byte
		hasVT, hasVN := false, false
		if j := bytes.IndexByte(tok, '/'); j >= 0 {
			vi = tok[:j]
			r := tok[j+1:]
			if j2 := bytes.IndexByte(r, '/'); j2 >= 0 {
				vt, vn = r[:j2], r[j2+1:]
				hasVN = true
				if bytes.IndexByte(vn, '/') >= 0 {
					return parseErr(p.name, lineNo, "f: malformed vertex %q", clip(tok))
				}
			} else {
				vt = r
			}
			// Empty slots ("1//3", "1/2/") are allowed and mean "none".
			hasVT = len(vt) > 0
			hasVN = hasVN && len(vn) > 0
		}
		idx, err := p.resolve(vi, nv, "vertex", lineNo)
		if err != nil {
			return err
		}
		if hasVT {
			if err := p.checkAttr(vt, "texture", lineNo); err != nil {
				return err
			}
		}
		if hasVN {
			if err := p.checkAttr(vn, "normal", lineNo); err != nil {
				return err
			}
		}
		u := uint32(idx)
		switch k {
		case 0:
			v0 = u
		case 1:
		default:
			s.Tris = append(s.Tris, [3]uint32{v0, prev, u})
			s.Faces = append(s.Faces, face)
		}
		prev = u
		k++
	}
	if k < 3 {
		s.Stats.SkippedFaces++
		p.warn(lineNo, fmt.Sprintf("face with %d vertices skipped", k))
	}
	return nil
}

func (p *objParser) warn(lineNo int, msg string) {
	p.warned++
	if p.warned <= maxWarnings {
		p.s.Warnings = append(p.s.Warnings, fmt.Sprintf("%s:%d: %s", p.name, lineNo, msg))
	} else if p.warned == maxWarnings+1 {
		p.s.Warnings = append(p.s.Warnings, fmt.Sprintf("%s: further warnings not listed", p.name))
	}
}

// clip shortens a token for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// countingReader counts the bytes read through it (Stats.Bytes).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}
