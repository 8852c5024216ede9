package scenes

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addCorpusSeeds adds every corpus file with one of exts (gzip files
// decompressed) as a fuzz seed; nothing when ../shared is absent.
func addCorpusSeeds(f *testing.F, exts ...string) {
	f.Helper()
	dir, err := findShared()
	if err != nil {
		return
	}
	filepath.Walk(filepath.Join(dir, "loader-corpus"), func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Size() > 1<<20 {
			return nil
		}
		name := strings.ToLower(strings.TrimSuffix(path, ".gz"))
		for _, e := range exts {
			if strings.HasSuffix(name, e) {
				if data, err := os.ReadFile(path); err == nil {
					if strings.HasSuffix(path, ".gz") {
						data = gunzip(data)
					}
					f.Add(data)
				}
			}
		}
		return nil
	})
}

// checkLoad is the property every loader keeps on any input: no panic; an
// error is a *ParseError; a scene satisfies Validate.
func checkLoad(t *testing.T, load func(io.Reader, string) (*Scene, error), data []byte) {
	s, err := load(bytes.NewReader(data), "fuzz")
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %T is not a *ParseError: %v", err, err)
		}
		if pe.File != "fuzz" {
			t.Fatalf("error names %q: %v", pe.File, err)
		}
		return
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(s.Faces) != len(s.Tris) {
		t.Fatalf("len(Faces) %d != len(Tris) %d", len(s.Faces), len(s.Tris))
	}
	for i, f := range s.Faces {
		if int(f) >= s.Stats.Faces {
			t.Fatalf("Faces[%d] = %d, only %d faces", i, f, s.Stats.Faces)
		}
	}
	if s.Stats.Bytes != int64(len(data)) {
		t.Fatalf("Stats.Bytes %d, input %d", s.Stats.Bytes, len(data))
	}
}

func FuzzLoadOBJ(f *testing.F) {
	addCorpusSeeds(f, ".obj")
	for _, s := range []string{
		"", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "v 1 2 3\nf -1 -1 -1", "f 1/2/3 4//5 6/7",
		"v .8e-1 1e-05 -0\\\n 1\nf 1 1 1 1 1", "\xef\xbb\xbfv 1 2 3\r\nf 1 1 1\r\n", "v 0x1p3 1_0 2\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, LoadOBJ, data) })
}

func FuzzLoadPLY(f *testing.F) {
	addCorpusSeeds(f, ".ply")
	for _, format := range plyFormats {
		f.Add(buildPLY(f, format, []testElem{
			{"vertex", []string{"float x", "float y", "float z"}, [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}},
			{"other", []string{"list uchar short a", "double b"}, [][]float64{{1, 5, 2}}},
			{"face", []string{"list uchar int vertex_indices"}, [][]float64{{4, 0, 1, 2, 3}}},
			{"tristrips", []string{"list int int vertex_indices"}, [][]float64{{6, 0, 1, 2, -1, 3, 2}}},
		}))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, LoadPLY, data) })
}

func FuzzLoadSTL(f *testing.F) {
	addCorpusSeeds(f, ".stl")
	f.Add([]byte(asciiSTL))
	f.Add(binarySTL("solid x", [][9]float32{{0, 0, 0, 1, 0, 0, 0, 1, 0}}))
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, LoadSTL, data) })
}
