package scenes

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// readGz returns the decompressed content of a gzip file under ../shared,
// skipping the test when it is absent.
func readShared(tb testing.TB, rel string) []byte {
	tb.Helper()
	path := filepath.Join(sharedDir(tb), rel)
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Skipf("%s: %v", path, err)
	}
	if filepath.Ext(path) != ".gz" {
		return raw
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkOBJConference measures OBJ parsing throughput (MB/s) on the
// decompressed conference room (12.4 MB, 331,179 triangles), in memory.
func BenchmarkOBJConference(b *testing.B) {
	data := readShared(b, "scenes/conference.obj.gz")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := LoadOBJ(bytes.NewReader(data), "conference.obj")
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Tris) != 331179 {
			b.Fatalf("triangles = %d", len(s.Tris))
		}
	}
}

// BenchmarkParseFloat32 measures the number parser alone.
func BenchmarkParseFloat32(b *testing.B) {
	toks := [][]byte{[]byte("-105.342712"), []byte("40.184242"), []byte("0.5"), []byte("1e-05"), []byte("8219.830078")}
	for i := 0; i < b.N; i++ {
		for _, t := range toks {
			parseFloat32(t)
		}
	}
}

// BenchmarkOBJSponza measures the Sponza atrium (7.6 MB decompressed,
// 66,454 triangles, 39,999 vn, 71,396 vt, 68 g) in memory, positions only
// and with normals, texture coordinates and names kept; the goal
// is attributes within 1.5× of positions only.
func BenchmarkOBJSponza(b *testing.B) {
	data := readShared(b, "scenes/sponza-dabrovic.obj.gz")
	for _, c := range []struct {
		name string
		opt  LoadOptions
	}{{"positions", LoadOptions{}}, {"attributes", LoadOptions{Normals: true, UVs: true, Names: true}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s, err := loadOBJ(bytes.NewReader(data), "sponza.obj", &c.opt)
				if err != nil {
					b.Fatal(err)
				}
				if len(s.Tris) != 66454 || (c.opt.Names && len(s.Attr.GroupOf) != 66454) {
					b.Fatalf("triangles = %d", len(s.Tris))
				}
			}
		})
	}
}
