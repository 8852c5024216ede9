package scenes

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/go-gl/mathgl/mgl32"
)

// LoadSTL parses an STL mesh, binary or ascii, from r; name is used in
// errors.
//
// A file is binary when its first 84 bytes (the 80-byte header and the
// little-endian triangle count) hold a byte that ascii STL never has (NUL
// or another control character than tab, CR, LF, VT, FF) or do not begin
// with "solid" (exporters often begin binary headers with "solid", but
// their count or padding has a NUL); else it is ascii. Both are streamed.
// A binary file's bytes after its triangles are ignored with a warning
// (more than Limits.MaxLine of them is an error, as are any after a count
// of 0). STL shares no vertices: every facet adds three new vertices (no
// welding), so len(Verts) == 3*len(Tris). Ascii facets with more than three
// vertices are fan-triangulated; fewer are skipped with a warning; a solid
// without a facet is an error. Facet normals are ignored. An empty input
// loads with a warning and 0 triangles.
func LoadSTL(r io.Reader, name string) (*Scene, error) {
	return loadSTL(r, name, DefaultLimits)
}

func loadSTL(r io.Reader, name string, lim Limits) (*Scene, error) {
	lim = lim.resolved()
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 1<<16)
	s := &Scene{Name: name, Format: "stl", Stats: Stats{Skipped: map[string]int{}}}
	if s, ok := emptyInput(br, s); ok {
		return s, nil
	}
	head, _ := br.Peek(84)
	if len(head) == 84 && stlLooksBinary(head) {
		if err := stlBinary(br, head, s, lim); err != nil {
			return nil, err
		}
	} else if err := stlASCII(&lineSource{br: br, max: lim.MaxLine}, s, lim); err != nil {
		return nil, err
	}
	s.Stats.Bytes = cr.n
	return s.finish(), nil
}

// stlLooksBinary reports whether an STL file's first 84 bytes are those of
// a binary file (see LoadSTL).
func stlLooksBinary(head []byte) bool {
	if !bytes.HasPrefix(bytes.TrimLeft(head[:80], " \t\r\n"), []byte("solid")) {
		return true
	}
	for _, c := range head {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' {
			return true
		}
	}
	return false
}

// stlBinary reads a binary STL whose 84-byte header is head.
func stlBinary(r io.Reader, head []byte, s *Scene, lim Limits) error {
	n := int64(binary.LittleEndian.Uint32(head[80:84]))
	if _, err := io.ReadFull(r, make([]byte, 84)); err != nil {
		return parseErr(s.Name, 0, "binary STL: header truncated")
	}
	if n > 1<<28 {
		return parseErr(s.Name, 0, "binary STL: implausible triangle count %d", n)
	}
	s.Verts = make([]mgl32.Vec3, 0, min(3*n, 3<<16))
	s.Tris = make([][3]uint32, 0, min(n, 1<<16))
	s.Faces = make([]uint32, 0, min(n, 1<<16))
	var rec [50]byte
	guard := sceneGuard{lim: lim}
	for i := int64(0); i < n; i++ {
		if err := guard.grow(s, 0, 0); err != nil {
			return err
		}
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				return inputErr(s.Name, 0, err) // a limit of the input
			}
			return parseErr(s.Name, 0, "binary STL: byte offset %d, triangle %d: truncated (header says %d triangles)", 84+50*i, i, n)
		}
		base := uint32(len(s.Verts))
		for k := 0; k < 3; k++ {
			var v mgl32.Vec3
			for a := 0; a < 3; a++ {
				f := math.Float32frombits(binary.LittleEndian.Uint32(rec[12+12*k+4*a:]))
				if f-f != 0 {
					return parseErr(s.Name, 0, "binary STL: byte offset %d, triangle %d: non-finite coordinate", 84+50*i+int64(12+12*k+4*a), i)
				}
				v[a] = f
			}
			s.Verts = append(s.Verts, v)
		}
		s.Tris = append(s.Tris, [3]uint32{base, base + 1, base + 2})
		s.Faces = append(s.Faces, uint32(i))
	}
	s.Stats.Faces = int(n)
	if n == 0 {
		// Nothing may follow a count of 0: say so before reading on.
		var one [1]byte
		if k, _ := io.ReadFull(r, one[:]); k > 0 {
			return parseErr(s.Name, 0, "binary STL: the header says 0 triangles but data follows (not an STL file?)")
		}
	}
	k, err := drainTail(r, lim, s.Name)
	switch {
	case err != nil:
		return inputErr(s.Name, 0, err)
	case k > 0:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: binary STL: %d bytes after %d triangles ignored", s.Name, k, n))
	}
	return nil
}

// stlASCII parses `solid ... facet normal ... outer loop vertex x y z ...
// endloop endfacet ... endsolid` line by line.
func stlASCII(src *lineSource, s *Scene, lim Limits) error {
	name := s.Name
	line := 0
	inFacet := false
	var poly []mgl32.Vec3
	sawSolid := false
	guard := sceneGuard{lim: lim}
	for {
		ln, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return inputErr(name, line+1, err)
		}
		line++
		if line == 1 {
			ln = bytes.TrimPrefix(ln, []byte("\xef\xbb\xbf"))
		}
		kw, rest := nextTokenNoComment(ln)
		switch string(kw) {
		case "":
		case "solid":
			sawSolid = true
		case "endsolid":
		case "facet":
			if inFacet {
				return parseErr(name, line, "facet inside a facet (missing endfacet)")
			}
			if !sawSolid {
				return parseErr(name, line, "facet before solid")
			}
			inFacet = true
			poly = poly[:0]
		case "outer", "endloop":
		case "vertex":
			if !inFacet {
				return parseErr(name, line, "vertex outside a facet")
			}
			if err := guard.grow(s, 12*int64(len(poly)), line); err != nil {
				return err
			}
			var v mgl32.Vec3
			for a := 0; a < 3; a++ {
				var tok []byte
				tok, rest = nextTokenNoComment(rest)
				if len(tok) == 0 {
					return parseErr(name, line, "vertex: want 3 numbers")
				}
				f, ok := parseFloat32(tok)
				if !ok {
					return parseErr(name, line, "vertex: malformed number %q", clip(tok))
				}
				if f-f != 0 {
					return parseErr(name, line, "vertex: non-finite coordinate %q", clip(tok))
				}
				v[a] = f
			}
			if tok, _ := nextTokenNoComment(rest); len(tok) > 0 {
				return parseErr(name, line, "vertex: extra value %q", clip(tok))
			}
			poly = append(poly, v)
		case "endfacet":
			if !inFacet {
				return parseErr(name, line, "endfacet outside a facet")
			}
			inFacet = false
			face := uint32(s.Stats.Faces)
			s.Stats.Faces++
			if len(poly) < 3 {
				s.Stats.SkippedFaces++
				if len(s.Warnings) < maxWarnings {
					s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: facet with %d vertices skipped", name, line, len(poly)))
				}
				continue
			}
			base := uint32(len(s.Verts))
			s.Verts = append(s.Verts, poly...)
			for i := 1; i+1 < len(poly); i++ {
				s.Tris = append(s.Tris, [3]uint32{base, base + uint32(i), base + uint32(i+1)})
				s.Faces = append(s.Faces, face)
			}
		default:
			return parseErr(name, line, "unknown keyword %q in ascii STL", clip(kw))
		}
	}
	if inFacet {
		return parseErr(name, line, "unexpected end of file inside a facet")
	}
	if !sawSolid {
		return parseErr(name, 1, "not an STL file: neither binary nor ascii (no `solid`)")
	}
	if s.Stats.Faces == 0 {
		return parseErr(name, line, "ascii STL without a facet")
	}
	return nil
}
