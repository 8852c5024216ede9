package scenes

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
)

// plyType is a PLY scalar type.
type plyType uint8

const (
	plyNone plyType = iota
	plyI8
	plyU8
	plyI16
	plyU16
	plyI32
	plyU32
	plyF32
	plyF64
)

var plyTypeNames = map[string]plyType{
	"char": plyI8, "int8": plyI8, "uchar": plyU8, "uint8": plyU8,
	"short": plyI16, "int16": plyI16, "ushort": plyU16, "uint16": plyU16,
	"int": plyI32, "int32": plyI32, "uint": plyU32, "uint32": plyU32,
	"float": plyF32, "float32": plyF32, "double": plyF64, "float64": plyF64,
}

func (t plyType) size() int {
	switch t {
	case plyI8, plyU8:
		return 1
	case plyI16, plyU16:
		return 2
	case plyI32, plyU32, plyF32:
		return 4
	case plyF64:
		return 8
	}
	return 0
}

func (t plyType) isInt() bool { return t >= plyI8 && t <= plyU32 }

type plyProp struct {
	name      string
	typ       plyType // scalar type, or item type of a list
	countType plyType // list count type; plyNone for a scalar
}

type plyElement struct {
	name  string
	count int64
	props []plyProp
}

const (
	plyASCII = iota
	plyLE
	plyBE
)

// maxPLYCount bounds element counts and list lengths so that a corrupt
// header cannot make the loader allocate without limit.
const maxPLYCount = 1 << 31

// LoadPLY parses a PLY mesh (ascii, binary_little_endian or
// binary_big_endian) from r; name is used in errors.
//
// The `vertex` element gives positions from its x, y, z properties, of any
// numeric type; other properties are skipped. Faces come from a `face`
// element's list property `vertex_indices` or `vertex_index` (any count and
// index integer types), fan-triangulated (v0, vi, vi+1); a `tristrips`
// element's index lists become strips, -1 restarting a strip and every second
// triangle of a strip flipped to keep the winding. Every other element is
// skipped (in binary files by its computed byte size). Comments and obj_info
// lines are ignored.
//
// Errors are *ParseError: with the line for the header and ascii bodies, with
// the byte offset and element index in binary bodies. Indices must lie in
// [0, vertex count); coordinates must be finite; an element name may appear
// once. Header lines may end in LF, CRLF or a bare CR (the first line's
// ending is the file's; an ascii body uses it too). Limits (DefaultLimits
// here): MaxHeader, MaxLine, MaxSceneBytes. An empty input loads with a
// warning and 0 triangles.
func LoadPLY(r io.Reader, name string) (*Scene, error) {
	return loadPLY(r, name, &LoadOptions{})
}

// loadPLY is LoadPLY keeping the attributes opt asks for (ply_attr.go),
// within opt.Limits.
func loadPLY(r io.Reader, name string, opt *LoadOptions) (*Scene, error) {
	lim := opt.Limits
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 1<<16)
	p := &plyParser{lim: lim.resolved(), guard: sceneGuard{lim: lim.resolved()}, eol: '\n', name: name, br: br, opt: opt, s: &Scene{Name: name, Format: "ply", Stats: Stats{Skipped: map[string]int{}}}}
	if s, ok := emptyInput(br, p.s); ok {
		return s, nil
	}
	if err := p.header(); err != nil {
		return nil, err
	}
	if err := p.body(); err != nil {
		return nil, err
	}
	// Whatever follows the last element is ignored, but read, so that
	// Stats.Bytes is the input size.
	n, err := drainTail(br, p.lim, name)
	if err != nil {
		return nil, p.readErr(err)
	}
	if n > 0 {
		p.s.Warnings = append(p.s.Warnings, fmt.Sprintf("%s: %d bytes after the last element ignored", name, n))
	}
	p.s.Stats.Bytes = cr.n
	p.finishPLYAttr(opt)
	return p.s.finish(), nil
}

type plyParser struct {
	lim    Limits
	guard  sceneGuard
	eol    byte // line terminator: '\n' (LF or CRLF) or '\r' (bare CR)
	name   string
	br     *bufio.Reader
	s      *Scene
	format int
	elems  []plyElement
	line   int   // ascii: current line
	off    int64 // binary: byte offset from the start of the file
	nverts int64 // declared vertex count
	opt    *LoadOptions
	vattr  *plyVertexAttr // attributes of the vertex element; nil when none kept
	// ascii tokenizer state
	toks    [][]byte
	buf     []byte
	scratch [8]byte
}

func (p *plyParser) errf(format string, args ...any) *ParseError {
	return parseErr(p.name, p.line, format, args...)
}

func (p *plyParser) header() error {
	if head, _ := p.br.Peek(6); !bytes.HasPrefix(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), []byte("ply")) {
		return parseErr(p.name, 1, "not a PLY file (it does not begin with \"ply\")")
	}
	ln, err := p.readLine()
	if err != nil {
		return err
	}
	if strings.TrimSpace(strings.TrimPrefix(ln, "\xef\xbb\xbf")) != "ply" {
		return p.errf("not a PLY file (first line %q)", clipS(ln))
	}
	sawFormat := false
	for {
		ln, err := p.readLine()
		if err != nil {
			return err
		}
		f := strings.Fields(ln)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "comment", "obj_info":
		case "format":
			if len(f) < 2 {
				return p.errf("format: missing type")
			}
			switch f[1] {
			case "ascii":
				p.format = plyASCII
			case "binary_little_endian":
				p.format = plyLE
			case "binary_big_endian":
				p.format = plyBE
			default:
				return p.errf("format: unknown %q", clipS(f[1]))
			}
			sawFormat = true
		case "element":
			if len(f) != 3 {
				return p.errf("element: want `element <name> <count>`")
			}
			n, ok := parseInt([]byte(f[2]))
			if !ok || n < 0 || n > maxPLYCount {
				return p.errf("element %s: bad count %q", clipS(f[1]), clipS(f[2]))
			}
			if err := p.checkDuplicate(f[1]); err != nil {
				return err
			}
			p.elems = append(p.elems, plyElement{name: f[1], count: n})
		case "property":
			if len(p.elems) == 0 {
				return p.errf("property before any element")
			}
			e := &p.elems[len(p.elems)-1]
			var prop plyProp
			if len(f) >= 2 && f[1] == "list" {
				if len(f) != 5 {
					return p.errf("property list: want `property list <count type> <item type> <name>`")
				}
				ct, it := plyTypeNames[f[2]], plyTypeNames[f[3]]
				if ct == plyNone || it == plyNone || !ct.isInt() {
					return p.errf("property list: bad types %q %q", clipS(f[2]), clipS(f[3]))
				}
				prop = plyProp{name: f[4], typ: it, countType: ct}
			} else {
				if len(f) != 3 {
					return p.errf("property: want `property <type> <name>`")
				}
				t := plyTypeNames[f[1]]
				if t == plyNone {
					return p.errf("property: unknown type %q", clipS(f[1]))
				}
				prop = plyProp{name: f[2], typ: t}
			}
			e.props = append(e.props, prop)
		case "end_header":
			if !sawFormat {
				return p.errf("end_header before format")
			}
			for _, e := range p.elems {
				if e.name == "vertex" {
					p.nverts = e.count
				}
			}
			return nil
		default:
			return p.errf("unknown header keyword %q", clipS(f[0]))
		}
	}
}

func clipS(s string) string { return clip([]byte(s)) }

// role of an element in the scene
const (
	roleSkip = iota
	roleVertex
	roleFace
	roleStrip
)

func (p *plyParser) body() error {
	s := p.s
	for ei := range p.elems {
		e := &p.elems[ei]
		role := roleSkip
		xyz := [3]int{-1, -1, -1}
		list := -1
		switch e.name {
		case "vertex":
			for i, pr := range e.props {
				if pr.countType == plyNone {
					switch pr.name {
					case "x":
						xyz[0] = i
					case "y":
						xyz[1] = i
					case "z":
						xyz[2] = i
					}
				}
			}
			if xyz[0] < 0 || xyz[1] < 0 || xyz[2] < 0 {
				return parseErr(p.name, 0, "element vertex lacks scalar x, y and z properties")
			}
			role = roleVertex
			s.Verts = make([]mgl32.Vec3, 0, min(e.count, 1<<16))
			p.vattr = newPLYVertexAttr(e, p.opt, &s.Stats)
		case "face", "tristrips":
			for i, pr := range e.props {
				if pr.countType != plyNone && (pr.name == "vertex_indices" || pr.name == "vertex_index") {
					list = i
					break
				}
			}
			if list < 0 {
				return parseErr(p.name, 0, "element %s lacks a vertex_indices list", e.name)
			}
			if !e.props[list].typ.isInt() {
				return parseErr(p.name, 0, "element %s: vertex_indices must have an integer item type", e.name)
			}
			role = roleFace
			if e.name == "tristrips" {
				role = roleStrip
			}
		default:
			s.Stats.Skipped[e.name] += int(e.count)
		}
		if p.format != plyASCII && role == roleSkip {
			if err := p.skipBinary(e); err != nil {
				return err
			}
			continue
		}
		var idx []int64
		for k := int64(0); k < e.count; k++ {
			var pos [3]float64
			idx = idx[:0]
			if err := p.guard.grow(s, 0, p.line); err != nil {
				return err
			}
			if err := p.beginItem(); err != nil {
				return p.itemErr(e, k, err)
			}
			for pi, pr := range e.props {
				if pr.countType == plyNone {
					v, err := p.scalar(pr.typ)
					if err != nil {
						return p.itemErr(e, k, err)
					}
					for a := 0; a < 3; a++ {
						if xyz[a] == pi {
							pos[a] = v
						}
					}
					if role == roleVertex && p.vattr != nil {
						p.vattr.set(pi, v)
					}
					continue
				}
				cnt, err := p.scalar(pr.countType)
				if err != nil {
					return p.itemErr(e, k, err)
				}
				if cnt < 0 || cnt > maxPLYCount {
					return p.itemErr(e, k, fmt.Errorf("list %s: bad length %v", pr.name, cnt))
				}
				if int64(cnt) > p.lim.MaxLine {
					return p.itemErr(e, k, &LimitError{Field: "MaxLine", Flag: "--max-line", Limit: p.lim.MaxLine,
						What: fmt.Sprintf("list %s of %v items", pr.name, cnt)})
				}
				for j := int64(0); j < int64(cnt); j++ {
					v, err := p.scalar(pr.typ)
					if err != nil {
						return p.itemErr(e, k, err)
					}
					if pi == list {
						idx = append(idx, int64(v))
					}
				}
			}
			if err := p.endItem(); err != nil {
				return p.itemErr(e, k, err)
			}
			switch role {
			case roleVertex:
				var v mgl32.Vec3
				for a := 0; a < 3; a++ {
					f := float32(pos[a])
					if f-f != 0 {
						return p.itemErr(e, k, fmt.Errorf("non-finite coordinate %v", pos[a]))
					}
					v[a] = f
				}
				s.Verts = append(s.Verts, v)
				if p.vattr != nil {
					p.vattr.commit()
				}
			case roleFace:
				if err := p.addFace(e, k, idx); err != nil {
					return err
				}
			case roleStrip:
				if err := p.addStrips(e, k, idx); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p *plyParser) itemErr(e *plyElement, k int64, err error) error {
	if pe, ok := err.(*ParseError); ok {
		return pe
	}
	if le, ok := err.(*LimitError); ok {
		return limitErr(p.name, p.line, le)
	}
	if p.format == plyASCII {
		return parseErr(p.name, p.line, "element %s %d: %v", e.name, k, err)
	}
	return parseErr(p.name, 0, "byte offset %d, element %s %d: %v", p.off, e.name, k, err)
}

func (p *plyParser) checkIndex(e *plyElement, k int64, v int64) error {
	if v < 0 || v >= p.nverts {
		return p.itemErr(e, k, fmt.Errorf("vertex index %d out of range [0, %d)", v, p.nverts))
	}
	return nil
}

func (p *plyParser) addFace(e *plyElement, k int64, idx []int64) error {
	s := p.s
	face := uint32(s.Stats.Faces)
	s.Stats.Faces++
	for _, v := range idx {
		if err := p.checkIndex(e, k, v); err != nil {
			return err
		}
	}
	if len(idx) < 3 {
		s.Stats.SkippedFaces++
		if len(s.Warnings) < maxWarnings {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: face %d with %d vertices skipped", p.name, k, len(idx)))
		}
		return nil
	}
	for i := 1; i+1 < len(idx); i++ {
		s.Tris = append(s.Tris, [3]uint32{uint32(idx[0]), uint32(idx[i]), uint32(idx[i+1])})
		s.Faces = append(s.Faces, face)
	}
	return nil
}

// addStrips turns one tristrips list into triangles: -1 ends a strip; in a
// strip s0 s1 s2 s3 ... triangle i is (s[i], s[i+1], s[i+2]) for even i and
// (s[i+1], s[i], s[i+2]) for odd i, so all keep the first one's winding.
func (p *plyParser) addStrips(e *plyElement, k int64, idx []int64) error {
	s := p.s
	face := uint32(s.Stats.Faces)
	s.Stats.Faces++
	start := 0
	for i := 0; i <= len(idx); i++ {
		if i < len(idx) && idx[i] != -1 {
			if err := p.checkIndex(e, k, idx[i]); err != nil {
				return err
			}
			continue
		}
		strip := idx[start:i]
		for j := 0; j+2 < len(strip); j++ {
			a, b, c := strip[j], strip[j+1], strip[j+2]
			if j%2 == 1 {
				a, b = b, a
			}
			s.Tris = append(s.Tris, [3]uint32{uint32(a), uint32(b), uint32(c)})
			s.Faces = append(s.Faces, face)
		}
		start = i + 1
	}
	return nil
}
