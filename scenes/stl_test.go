package scenes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// binarySTL writes a binary STL with the given 80-byte header prefix and
// triangles (9 floats each).
func binarySTL(header string, tris [][9]float32) []byte {
	var b bytes.Buffer
	h := make([]byte, 80)
	copy(h, header)
	b.Write(h)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(tris))))
	for _, t := range tris {
		b.Write(make([]byte, 12)) // normal
		for _, f := range t {
			b.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(f)))
		}
		b.Write([]byte{0, 0})
	}
	return b.Bytes()
}

func TestSTLBinary(t *testing.T) {
	tri := [9]float32{0, 0, 0, 1, 0, 0, 0, 1, 0}
	for _, n := range []int{0, 1, 2, 31, 32, 33} {
		for _, header := range []string{"binary from a test", "solid but really binary", "  solid"} {
			tris := make([][9]float32, n)
			for i := range tris {
				tris[i] = tri
				tris[i][2] = float32(i)
				tris[i][5] = float32(i)
				tris[i][8] = float32(i)
			}
			data := binarySTL(header, tris)
			s, err := LoadSTL(bytes.NewReader(data), "b.stl")
			require.NoError(t, err, "n=%d header=%q", n, header)
			require.NoError(t, s.Validate())
			assert.Equal(t, n, len(s.Tris))
			assert.Equal(t, 3*n, len(s.Verts))
			assert.Equal(t, n, s.Stats.Faces)
			assert.Equal(t, int64(len(data)), s.Stats.Bytes)
			for i := 0; i < n; i++ {
				assert.Equal(t, [3]uint32{uint32(3 * i), uint32(3*i + 1), uint32(3*i + 2)}, s.Tris[i])
				assert.Equal(t, uint32(i), s.Faces[i])
				assert.Equal(t, float32(i), s.Verts[3*i+2][2])
			}
			if n > 0 {
				assert.Equal(t, float32(n-1), s.Bounds.Max[2])
			}
		}
	}
}

func TestSTLBinaryErrors(t *testing.T) {
	data := binarySTL("binary", [][9]float32{{0, 0, 0, 1, 0, 0, 0, 1, 0}, {0, 0, 0, 1, 0, 0, 0, 1, 0}})
	for n := 84; n < len(data); n++ {
		_, err := LoadSTL(bytes.NewReader(data[:n]), "t.stl")
		require.Error(t, err, "truncated to %d", n)
		var pe *ParseError
		require.True(t, errors.As(err, &pe))
		assert.Contains(t, pe.Msg, "truncated")
	}
	nan := binarySTL("binary", [][9]float32{{0, 0, 0, float32(math.NaN()), 0, 0, 0, 1, 0}})
	_, err := LoadSTL(bytes.NewReader(nan), "nan.stl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "non-finite")
	assert.Contains(t, err.Error(), "byte offset 108")
	// A "solid" header whose size does not match is parsed as ascii and fails.
	bad := binarySTL("solid x", [][9]float32{{0, 0, 0, 1, 0, 0, 0, 1, 0}})
	_, err = LoadSTL(bytes.NewReader(bad[:len(bad)-1]), "amb.stl")
	require.Error(t, err)
}

const asciiSTL = `solid cube part
  facet normal 0 0 1
    outer loop
      vertex 0 0 0
      vertex 1 0 0
      vertex 0 1 0
    endloop
  endfacet
  facet normal 0 0 1
    outer loop
      vertex 1.5e0 0 0
      vertex 1 1 0
      vertex 0 1 0
      vertex -1 0.5 0
    endloop
  endfacet
endsolid cube part
solid second
facet normal 0 0 0
outer loop
vertex 0 0 5
vertex 0 0 6
endloop
endfacet
endsolid
`

func TestSTLASCII(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n"} {
		in := strings.ReplaceAll(asciiSTL, "\n", eol)
		s, err := LoadSTL(strings.NewReader(in), "a.stl")
		require.NoError(t, err)
		require.NoError(t, s.Validate())
		assert.Equal(t, [][3]uint32{{0, 1, 2}, {3, 4, 5}, {3, 5, 6}}, s.Tris)
		assert.Equal(t, []uint32{0, 1, 1}, s.Faces)
		assert.Equal(t, 7, len(s.Verts))
		assert.Equal(t, 3, s.Stats.Faces)
		assert.Equal(t, 1, s.Stats.SkippedFaces)
		assert.Len(t, s.Warnings, 1)
		assert.Equal(t, float32(1.5), s.Bounds.Max[0])
		assert.Equal(t, float32(-1), s.Bounds.Min[0])
	}
}

func TestSTLASCIIErrors(t *testing.T) {
	for _, c := range []struct {
		name, in string
		line     int
		msg      string
	}{
		{"malformed", strings.Replace(asciiSTL, "vertex 1 1 0", "vertex 1 x 0", 1), 12, "malformed"},
		{"nan", strings.Replace(asciiSTL, "vertex 1 1 0", "vertex 1 nan 0", 1), 12, "non-finite"},
		{"short vertex", strings.Replace(asciiSTL, "vertex 1 1 0", "vertex 1 1", 1), 12, "3 numbers"},
		{"long vertex", strings.Replace(asciiSTL, "vertex 1 1 0", "vertex 1 1 0 0", 1), 12, "extra"},
		{"unknown", strings.Replace(asciiSTL, "outer loop", "outer loop\nbogus", 1), 4, "unknown keyword"},
		{"no endfacet", strings.Replace(asciiSTL, "endfacet", "", 1), 9, "facet inside"},
		{"unterminated", "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n", 4, "end of file"},
		{"vertex outside", "solid x\nvertex 0 0 0\n", 2, "outside"},
		{"not stl", "hello\n", 1, "unknown keyword"},
		{"blank", "\n \n", 1, "not an STL"},
		{"no facet", "solid x\nendsolid x\n", 2, "without a facet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadSTL(strings.NewReader(c.in), "bad.stl")
			require.Error(t, err)
			var pe *ParseError
			require.True(t, errors.As(err, &pe))
			assert.Contains(t, pe.Msg, c.msg)
			assert.Equal(t, c.line, pe.Line, "%v", err)
		})
	}
}
