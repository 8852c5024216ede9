package scenes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// testProp describes a PLY property: "float x" or "list uchar int vertex_indices".
type testElem struct {
	name  string
	props []string
	rows  [][]float64 // values in file order; a list is its count then items
}

// buildPLY writes a PLY file in the given format ("ascii",
// "binary_little_endian", "binary_big_endian").
func buildPLY(t testing.TB, format string, elems []testElem) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "ply\nformat %s 1.0\ncomment made by a test\nobj_info nothing\n", format)
	for _, e := range elems {
		fmt.Fprintf(&b, "element %s %d\n", e.name, len(e.rows))
		for _, p := range e.props {
			fmt.Fprintf(&b, "property %s\n", p)
		}
	}
	b.WriteString("end_header\n")
	var bo binary.AppendByteOrder = binary.LittleEndian
	if format == "binary_big_endian" {
		bo = binary.BigEndian
	}
	put := func(typ string, v float64) {
		if format == "ascii" {
			fmt.Fprintf(&b, "%v ", v)
			return
		}
		switch plyTypeNames[typ] {
		case plyI8, plyU8:
			b.WriteByte(byte(int64(v)))
		case plyI16, plyU16:
			b.Write(bo.AppendUint16(nil, uint16(int64(v))))
		case plyI32, plyU32:
			b.Write(bo.AppendUint32(nil, uint32(int64(v))))
		case plyF32:
			b.Write(bo.AppendUint32(nil, math.Float32bits(float32(v))))
		case plyF64:
			b.Write(bo.AppendUint64(nil, math.Float64bits(v)))
		default:
			t.Fatalf("bad type %q", typ)
		}
	}
	for _, e := range elems {
		for _, row := range e.rows {
			i := 0
			for _, p := range e.props {
				f := strings.Fields(p)
				if f[0] == "list" {
					n := int(row[i])
					put(f[1], row[i])
					i++
					for k := 0; k < n; k++ {
						put(f[2], row[i])
						i++
					}
				} else {
					put(f[0], row[i])
					i++
				}
			}
			if i != len(row) {
				t.Fatalf("row %v does not match %v", row, e.props)
			}
			if format == "ascii" {
				b.WriteString("\n")
			}
		}
	}
	return b.Bytes()
}

var plyFormats = []string{"ascii", "binary_little_endian", "binary_big_endian"}

func TestPLY(t *testing.T) {
	square := [][]float64{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0.5, 2, 0}}
	for _, c := range []struct {
		name   string
		elems  []testElem
		tris   [][3]uint32
		faces  []uint32
		nverts int
		skip   int
	}{
		{"float verts, uchar int faces", []testElem{
			{"vertex", []string{"float x", "float y", "float z"}, square},
			{"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 2}, {4, 0, 1, 2, 3}}},
		}, [][3]uint32{{0, 1, 2}, {0, 1, 2}, {0, 2, 3}}, []uint32{0, 1, 1}, 5, 0},
		{"double verts with extras, vertex_index ushort/uint", []testElem{
			{"vertex", []string{"uchar red", "double z", "double y", "list uchar float junk", "double x", "float nx"},
				[][]float64{{1, 0, 0, 2, 9, 9, 0, 0}, {2, 0, 0, 0, 1, 0}, {3, 0, 1, 1, 7, 1, 0}}},
			{"face", []string{"uchar flags", "list ushort uint vertex_index", "float quality"}, [][]float64{{7, 3, 2, 1, 0, 0.5}}},
		}, [][3]uint32{{2, 1, 0}}, []uint32{0}, 3, 0},
		{"int verts, char short faces, skipped elements", []testElem{
			{"material", []string{"float r", "uchar g"}, [][]float64{{1, 2}, {3, 4}}},
			{"vertex", []string{"int x", "short y", "char z"}, [][]float64{{0, 0, 0}, {10, 0, -1}, {0, 10, 0}}},
			{"edge", []string{"int vertex1", "int vertex2", "list uchar uchar more"}, [][]float64{{0, 1, 2, 5, 5}, {1, 2, 0}}},
			{"face", []string{"list char short vertex_indices"}, [][]float64{{3, 0, 1, 2}, {2, 0, 1}, {0}}},
		}, [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 2},
		{"tristrips", []testElem{
			{"vertex", []string{"float x", "float y", "float z"}, square},
			{"tristrips", []string{"list int int vertex_indices"}, [][]float64{{9, 0, 1, 2, 3, -1, 4, 3, 2, -1}}},
		}, [][3]uint32{{0, 1, 2}, {2, 1, 3}, {4, 3, 2}}, []uint32{0, 0, 0}, 5, 0},
		{"tristrips short and empty strips", []testElem{
			{"vertex", []string{"float x", "float y", "float z"}, square},
			{"tristrips", []string{"list uint int vertex_indices"}, [][]float64{{3, -1, -1, 0}, {5, 0, 1, 2, 3, 4}, {0}}},
		}, [][3]uint32{{0, 1, 2}, {2, 1, 3}, {2, 3, 4}}, []uint32{1, 1, 1}, 5, 0},
		{"no faces", []testElem{
			{"vertex", []string{"float x", "float y", "float z"}, square},
		}, nil, nil, 5, 0},
		{"empty", []testElem{
			{"vertex", []string{"float x", "float y", "float z"}, nil},
			{"face", []string{"list uchar int vertex_indices"}, nil},
		}, nil, nil, 0, 0},
	} {
		for _, format := range plyFormats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				data := buildPLY(t, format, c.elems)
				s, err := LoadPLY(bytes.NewReader(data), "t.ply")
				require.NoError(t, err)
				require.NoError(t, s.Validate())
				assert.Equal(t, len(c.tris), len(s.Tris))
				if len(c.tris) > 0 {
					assert.Equal(t, c.tris, s.Tris)
					assert.Equal(t, c.faces, s.Faces)
				}
				assert.Equal(t, c.nverts, len(s.Verts))
				assert.Equal(t, c.skip, s.Stats.SkippedFaces)
				assert.Equal(t, int64(len(data)), s.Stats.Bytes)
			})
		}
	}
}

func TestPLYVertexValues(t *testing.T) {
	for _, format := range plyFormats {
		data := buildPLY(t, format, []testElem{
			{"vertex", []string{"double x", "int y", "float z"}, [][]float64{{0.25, -3, 1e-5}, {-7.5, 70000, 2}}},
		})
		s, err := LoadPLY(bytes.NewReader(data), "v.ply")
		require.NoError(t, err, format)
		require.Len(t, s.Verts, 2)
		assert.Equal(t, [3]float32{0.25, -3, 1e-5}, [3]float32(s.Verts[0]), format)
		assert.Equal(t, [3]float32{-7.5, 70000, 2}, [3]float32(s.Verts[1]), format)
		assert.Equal(t, float32(-7.5), s.Bounds.Min[0])
		assert.Equal(t, float32(70000), s.Bounds.Max[1])
	}
}

func TestPLYErrors(t *testing.T) {
	verts := testElem{"vertex", []string{"float x", "float y", "float z"}, [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}}
	for _, c := range []struct {
		name  string
		elems []testElem
		msg   string
	}{
		{"index out of range", []testElem{verts, {"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 3}}}}, "out of range"},
		{"negative index", []testElem{verts, {"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, -1, 2}}}}, "out of range"},
		{"strip index out of range", []testElem{verts, {"tristrips", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 5}}}}, "out of range"},
		{"nan", []testElem{{"vertex", []string{"float x", "float y", "float z"}, [][]float64{{0, math.NaN(), 0}}}}, "non-finite"},
		{"inf", []testElem{{"vertex", []string{"double x", "float y", "float z"}, [][]float64{{math.Inf(1), 0, 0}}}}, "non-finite"},
		{"no xyz", []testElem{{"vertex", []string{"float x", "float y"}, [][]float64{{0, 0}}}}, "x, y and z"},
		{"no index list", []testElem{verts, {"face", []string{"list uchar int foo"}, [][]float64{{3, 0, 1, 2}}}}, "vertex_indices"},
		{"float index list", []testElem{verts, {"face", []string{"list uchar float vertex_indices"}, [][]float64{{3, 0, 1, 2}}}}, "integer"},
	} {
		for _, format := range plyFormats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				data := buildPLY(t, format, c.elems)
				_, err := LoadPLY(bytes.NewReader(data), "bad.ply")
				require.Error(t, err)
				var pe *ParseError
				require.True(t, errors.As(err, &pe))
				assert.Equal(t, "bad.ply", pe.File)
				assert.Contains(t, pe.Msg, c.msg)
				if format == "binary_little_endian" && strings.Contains(c.msg, "range") {
					assert.Contains(t, pe.Msg, "byte offset")
				}
				if format == "ascii" && strings.Contains(c.msg, "range") {
					assert.True(t, pe.Line > 0, "ascii error without line: %v", err)
				}
			})
		}
	}
}

func TestPLYMalformed(t *testing.T) {
	good := string(buildPLY(t, "ascii", []testElem{
		{"vertex", []string{"float x", "float y", "float z"}, [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}},
		{"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 2}}},
	}))
	_, err := LoadPLY(strings.NewReader(good), "g.ply")
	require.NoError(t, err)
	for _, c := range []struct {
		name, in string
		line     int
		msg      string
	}{
		{"not ply", "plx\n", 1, "not a PLY"},
		{"no end_header", "ply\nformat ascii 1.0\nelement vertex 1\n", 3, "end_header"},
		{"bad format", "ply\nformat text 1.0\nend_header\n", 2, "unknown"},
		{"no format", "ply\nend_header\n", 2, "before format"},
		{"bad count", "ply\nformat ascii 1.0\nelement vertex -1\n", 3, "bad count"},
		{"bad type", "ply\nformat ascii 1.0\nelement vertex 1\nproperty quad x\n", 4, "unknown type"},
		{"property first", "ply\nformat ascii 1.0\nproperty float x\n", 3, "before any element"},
		{"bad keyword", "ply\nformat ascii 1.0\nfoo\n", 3, "unknown header keyword"},
		{"malformed number", strings.Replace(good, "\n1 0 0 \n", "\n1 x 0 \n", 1), 13, "malformed number"},
		{"short line", strings.Replace(good, "\n1 0 0 \n", "\n1 0\n", 1), 13, "too few values"},
		{"extra values", strings.Replace(good, "\n1 0 0 \n", "\n1 0 0 4\n", 1), 13, "extra values"},
		{"truncated ascii", good[:len(good)-8], 15, "too few values"},
		{"missing face line", good[:len(good)-9], 14, "end of file"},
		{"malformed index", strings.Replace(good, "3 0 1 2", "3 0 1 2.5", 1), 15, "malformed integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadPLY(strings.NewReader(c.in), "m.ply")
			require.Error(t, err)
			var pe *ParseError
			require.True(t, errors.As(err, &pe))
			assert.Contains(t, pe.Msg, c.msg)
			assert.Equal(t, c.line, pe.Line, "%v", err)
		})
	}
	// Binary truncation at every length must fail cleanly, never panic.
	for _, format := range plyFormats[1:] {
		data := buildPLY(t, format, []testElem{
			{"vertex", []string{"float x", "float y", "float z"}, [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}},
			{"extra", []string{"list uchar int stuff", "short s"}, [][]float64{{2, 1, 2, 3}}},
			{"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 2}}},
		})
		hdr := bytes.Index(data, []byte("end_header\n")) + len("end_header\n")
		for n := hdr; n < len(data); n++ {
			_, err := LoadPLY(bytes.NewReader(data[:n]), "trunc.ply")
			require.Error(t, err, "%s truncated to %d of %d", format, n, len(data))
		}
	}
}
