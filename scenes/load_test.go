package scenes

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gz(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestLoadFormatsAndGzip(t *testing.T) {
	objText := []byte("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3 4\n")
	ply := buildPLY(t, "binary_big_endian", []testElem{
		{"vertex", []string{"float x", "float y", "float z"}, [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}},
		{"face", []string{"list uchar int vertex_indices"}, [][]float64{{4, 0, 1, 2, 3}}},
	})
	stl := binarySTL("solid looks ascii", [][9]float32{{0, 0, 0, 1, 0, 0, 0, 1, 0}, {1, 0, 0, 1, 1, 0, 0, 1, 0}})
	dir := t.TempDir()
	for _, c := range []struct {
		file   string
		data   []byte
		format string
	}{
		{"a.obj", objText, "obj"},
		{"a.obj.gz", gz(t, objText), "obj"},
		{"A.OBJ", objText, "obj"},
		{"gzip-without-suffix.obj", gz(t, objText), "obj"},
		{"a.ply", ply, "ply"},
		{"a.ply.gz", gz(t, ply), "ply"},
		{"a.stl", stl, "stl"},
		{"a.stl.gz", gz(t, stl), "stl"},
		{"plain-with-gz-suffix.stl.gz", stl, "stl"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			require.NoError(t, os.WriteFile(path, c.data, 0o644))
			s, err := Load(path)
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			assert.Equal(t, c.format, s.Format)
			assert.Equal(t, path, s.Name)
			assert.Equal(t, 2, len(s.Tris))
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.obj"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)

	unknown := filepath.Join(dir, "x.txt")
	require.NoError(t, os.WriteFile(unknown, []byte("v 0 0 0\n"), 0o644))
	_, err = Load(unknown)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown mesh format")

	badGz := filepath.Join(dir, "bad.obj.gz")
	data := gz(t, []byte(strings.Repeat("v 0 0 0\n", 1000)))
	require.NoError(t, os.WriteFile(badGz, data[:len(data)/2], 0o644))
	_, err = Load(badGz)
	require.Error(t, err)
	var pe *ParseError
	require.True(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Equal(t, badGz, pe.File)

	lineErr := filepath.Join(dir, "line.obj.gz")
	require.NoError(t, os.WriteFile(lineErr, gz(t, []byte("v 0 0 0\n\nf 1 2 3\n")), 0o644))
	_, err = Load(lineErr)
	require.Error(t, err)
	assert.Equal(t, lineErr+":3: f: vertex index 2 out of range (1 defined so far)", err.Error())
}
