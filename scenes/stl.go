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
// A file is binary when its size is exactly 84 + 50*n bytes, n being the
// little-endian count at byte 80, whatever its first 80 bytes say (exporters
// often begin binary headers with "solid"). When the header does not begin
// with "solid" the input is streamed as binary; otherwise it is read into
// memory first to learn its size; such a file that contains a NUL byte but
// has the wrong size for binary is an error. STL shares no vertices: every facet adds
// three new vertices (no welding), so len(Verts) == 3*len(Tris). Ascii
// facets with more than three vertices are fan-triangulated; fewer are
// skipped with a warning. Facet normals are ignored.
func LoadSTL(r io.Reader, name string) (*Scene, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 1<<16)
	s := &Scene{Name: name, Format: "stl", Stats: Stats{Skipped: map[string]int{}}}
	head, _ := br.Peek(84)
	if len(head) == 84 && !bytes.HasPrefix(bytes.TrimLeft(head[:80], " \t\r\n"), []byte("solid")) {
		if err := stlBinary(br, head, s, -1); err != nil {
			return nil, err
		}
		s.Stats.Bytes = cr.n
		return s.finish(), nil
	}
	all, err := io.ReadAll(br)
	if err != nil {
		return nil, parseErr(name, 0, "read: %v", err)
	}
	if len(all) >= 84 {
		n := int64(binary.LittleEndian.Uint32(all[80:84]))
		if 84+50*n == int64(len(all)) {
			if err := stlBinary(bytes.NewReader(all), all[:84], s, int64(len(all))); err != nil {
				return nil, err
			}
			s.Stats.Bytes = int64(len(all))
			return s.finish(), nil
		}
	}
	if len(all) >= 84 && bytes.IndexByte(all, 0) >= 0 {
		// Text has no NUL bytes: this is a binary file of the wrong size.
		n := int64(binary.LittleEndian.Uint32(all[80:84]))
		return nil, parseErr(name, 0, "binary STL: header says %d triangles (%d bytes) but the file has %d bytes", n, 84+50*n, len(all))
	}
	if err := stlASCII(all, s); err != nil {
		return nil, err
	}
	s.Stats.Bytes = int64(len(all))
	return s.finish(), nil
}

// stlBinary reads a binary STL whose 84-byte header is head; size is the
// known total size or -1 when streaming.
func stlBinary(r io.Reader, head []byte, s *Scene, size int64) error {
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
	for i := int64(0); i < n; i++ {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
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
	if size < 0 {
		if k, _ := io.Copy(io.Discard, r); k > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: binary STL: extra bytes after %d triangles ignored", s.Name, n))
		}
	}
	return nil
}

// stlASCII parses `solid ... facet normal ... outer loop vertex x y z ...
// endloop endfacet ... endsolid` line by line.
func stlASCII(data []byte, s *Scene) error {
	name := s.Name
	line := 0
	inFacet := false
	var poly []mgl32.Vec3
	sawSolid := false
	for len(data) > 0 {
		var ln []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			ln, data = data[:i], data[i+1:]
		} else {
			ln, data = data, nil
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
		return parseErr(name, 1, "not an STL file: neither binary (size != 84 + 50*count) nor ascii (no `solid`)")
	}
	return nil
}
