package scenes

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestOBJFeatures(t *testing.T) {
	quad := "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
	for _, c := range []struct {
		name    string
		in      string
		tris    [][3]uint32
		faces   []uint32
		nverts  int
		skipped int // SkippedFaces
		degen   int
	}{
		{"empty", "", nil, nil, 0, 0, 0},
		{"triangle", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"no final newline", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"crlf", "v 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3\r\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"bom", "\xef\xbb\xbfv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"tabs", "v\t0\t0\t0\nv 1 0 0\n\tv 0 1 0\nf\t1\t2\t3\t\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"quad fan", quad + "f 1 2 3 4\n", [][3]uint32{{0, 1, 2}, {0, 2, 3}}, []uint32{0, 0}, 4, 0, 0},
		{"pentagon fan", quad + "v -1 0.5 0\nf 1 2 3 4 5\n", [][3]uint32{{0, 1, 2}, {0, 2, 3}, {0, 3, 4}}, []uint32{0, 0, 0}, 5, 0, 0},
		{"negative", quad + "f -4 -3 -2\nf -1 -4 -2\n", [][3]uint32{{0, 1, 2}, {3, 0, 2}}, []uint32{0, 1}, 4, 0, 0},
		{"negative relative to face position", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 5 5 5\nf -4 -3 -1\n", [][3]uint32{{0, 1, 2}, {0, 1, 3}}, []uint32{0, 1}, 4, 0, 0},
		{"index forms", quad + "vt 0 0\nvn 0 0 1\nf 1/1 2/1 3/1\nf 1//1 2//1 3//1\nf 1/1/1 2/1/1 3/1/1\nf 1/1/ 2/1/ 3/1/\n",
			[][3]uint32{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}, []uint32{0, 1, 2, 3}, 4, 0, 0},
		{"v with w", "v 0 0 0 1\nv 1 0 0 1\nv 0 1 0 0.5\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"v with rgb", "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1 1\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"continuation", "v 0 0 \\\n0\nv 1 0 0\nv 0 1 0\nf 1 \\\n 2 \\\n3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"continuation crlf", "v 0 0 \\\r\n0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3 \\", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"comments", "# c\nv 0 0 0 # trailing\nv 1 0 0\nv 0 1 0\n  # indented\nf 1 2 3 # tail\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"skipped keywords", quad + "vt 0 0\nvn 0 0 1\nl 1 2\np 1\ng a\no b\ns 1\nusemtl m\nmtllib x.mtl\ncstype bezier\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 4, 0, 0},
		{"short faces", quad + "f 1\nf 1 2\nf\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{3}, 4, 3, 0},
		{"repeated index degenerate", quad + "f 1 1 2\nf 1 2 3\n", [][3]uint32{{0, 0, 1}, {0, 1, 2}}, []uint32{0, 1}, 4, 0, 1},
		{"collinear degenerate", "v 0 0 0\nv 1 1 1\nv 2 2 2\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 1},
		{"numbers", "v .8e-1 1e-05 -0\nv +1 1. 1E2\nv 0 1 0\nf 1 2 3\n", [][3]uint32{{0, 1, 2}}, []uint32{0}, 3, 0, 0},
		{"blank and whitespace lines", "\n   \n\t\n\r\n", nil, nil, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := LoadOBJ(strings.NewReader(c.in), c.name)
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			assert.Equal(t, len(c.tris), len(s.Tris))
			if len(c.tris) > 0 {
				assert.Equal(t, c.tris, s.Tris)
				assert.Equal(t, c.faces, s.Faces)
			}
			assert.Equal(t, c.nverts, len(s.Verts))
			assert.Equal(t, c.skipped, s.Stats.SkippedFaces)
			if len(c.in) == 0 || c.nverts == 0 {
				// Empty or blank: one warning that there is nothing.
				assert.Len(t, s.Warnings, 1)
			} else {
				assert.Len(t, s.Warnings, c.skipped)
			}
			assert.Equal(t, c.degen, s.Stats.DegenerateTriangles)
			assert.Equal(t, int64(len(c.in)), s.Stats.Bytes)
		})
	}
}

func TestOBJValuesAndStats(t *testing.T) {
	in := "v .8e-1 1e-05 -0\nv +1 1. 1E2 7\nv -2.5 3 4 0.1 0.2 0.3\nvt 0 0\nvt 1 1\nvn 0 0 1\ng x\nfoo bar\nfoo\nf 1 2 3\n"
	s, err := LoadOBJ(strings.NewReader(in), "vals.obj")
	require.NoError(t, err)
	require.Len(t, s.Verts, 3)
	assert.Equal(t, float32(0.08), s.Verts[0][0])
	assert.Equal(t, float32(1e-05), s.Verts[0][1])
	assert.Equal(t, float32(1), s.Verts[1][0])
	assert.Equal(t, float32(100), s.Verts[1][2])
	assert.Equal(t, float32(-2.5), s.Bounds.Min[0])
	assert.Equal(t, float32(1), s.Bounds.Max[0])
	assert.Equal(t, float32(1e-05), s.Bounds.Min[1])
	assert.Equal(t, float32(3), s.Bounds.Max[1])
	assert.Equal(t, float32(0), s.Bounds.Min[2])
	assert.Equal(t, float32(100), s.Bounds.Max[2])
	assert.Equal(t, map[string]int{"vt": 2, "vn": 1, "g": 1, "foo": 2}, s.Stats.Skipped)
	assert.Equal(t, 1, s.Stats.Faces)
}

func TestOBJLongLine(t *testing.T) {
	for _, n := range []int{objReadBuffer - 1, objReadBuffer, objReadBuffer + 1, 3*objReadBuffer + 7} {
		var b strings.Builder
		b.WriteString("v 0 0 0\nv 1 0 0\n# ")
		b.WriteString(strings.Repeat("x", n))
		b.WriteString("\nv 0 1 0\nf 1 2 3")
		b.WriteString(strings.Repeat(" ", n)) // a long face line too
		b.WriteString("\n")
		s, err := LoadOBJ(strings.NewReader(b.String()), "long.obj")
		require.NoError(t, err, "n=%d", n)
		assert.Len(t, s.Tris, 1)
		assert.Len(t, s.Verts, 3)
	}
}

func TestOBJErrors(t *testing.T) {
	tri := "v 0 0 0\nv 1 0 0\nv 0 1 0\n"
	for _, c := range []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"index 0", tri + "f 0 1 2\n", 4, "index 0"},
		{"texture index 0", tri + "f 1/0 2/1 3/1\n", 4, "texture index 0"},
		{"normal index 0", tri + "f 1//0 2//1 3//1\n", 4, "normal index 0"},
		{"out of range", tri + "f 1 2 4\n", 4, "out of range"},
		{"forward reference", tri + "f 1 2 4\nv 1 1 1\n", 4, "out of range"},
		{"relative out of range", tri + "f -1 -2 -4\n", 4, "out of range"},
		{"relative before any vertex", "f -1 -2 -3\n", 1, "before any vertex"},
		{"positive before any vertex", "# c\nf 1 2 3\n", 2, "out of range"},
		{"nan", "v nan 0 0\n", 1, "non-finite"},
		{"inf", "v 0 inf 0\n", 1, "non-finite"},
		{"overflow", "v 0 0 1e39\n", 1, "non-finite"},
		{"malformed number", "v 0 0 1.#IND\n", 1, "malformed number"},
		{"malformed number 2", tri + "v 1 2 3x\n", 4, "malformed number"},
		{"two numbers", "v 1 2\n", 1, "2 numbers"},
		{"five numbers", "v 1 2 3 4 5\n", 1, "5 numbers"},
		{"nine numbers", "v 1 2 3 4 5 6 7 8 9\n", 1, "too many"},
		{"malformed index", tri + "f 1 2 x\n", 4, "malformed vertex index"},
		{"malformed index float", tri + "f 1 2 3.0\n", 4, "malformed vertex index"},
		{"too many slashes", tri + "f 1/1/1/1 2 3\n", 4, "malformed vertex"},
		{"huge index", tri + "f 1 2 99999999999999999999\n", 4, "malformed vertex index"},
		{"line after continuation", "v 0 0 \\\n0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", 5, "out of range"},
		{"line of continued statement", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 \\\n2 \\\n 9\n", 4, "out of range"},
		{"crlf line", "v 0 0 0\r\n\r\nv 0 0 x\r\n", 3, "malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := LoadOBJ(strings.NewReader(c.in), "bad.obj")
			require.Error(t, err)
			assert.Nil(t, s)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "error type %T", err)
			assert.Equal(t, "bad.obj", pe.File)
			assert.Equal(t, c.line, pe.Line, "%v", err)
			assert.Contains(t, pe.Msg, c.msg)
			assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("bad.obj:%d: ", c.line)), err.Error())
		})
	}
}

func TestOBJWarningCap(t *testing.T) {
	in := "v 0 0 0\n" + strings.Repeat("f 1 1\n", maxWarnings+5)
	s, err := LoadOBJ(strings.NewReader(in), "w.obj")
	require.NoError(t, err)
	assert.Equal(t, maxWarnings+5, s.Stats.SkippedFaces)
	assert.Len(t, s.Warnings, maxWarnings+1)
	assert.Equal(t, "w.obj:2: face with 2 vertices skipped", s.Warnings[0])
}
