package scenes

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

// gltfRow is one row of ../shared/scenes/gltf/expected.tsv.
type gltfRow struct {
	file                                    string
	meshes, primitives, triangles, vertices int
	aabb                                    [6]float64
	centroid                                [3]float64
}

// readTSV returns the rows (header dropped, tab-split) of a TSV file,
// skipping the test when it is absent.
func readTSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() != "" {
			rows = append(rows, strings.Split(sc.Text(), "\t"))
		}
	}
	if len(rows) < 2 {
		t.Fatalf("%s: no rows", path)
	}
	return rows[1:]
}

// numbersAfter parses "key=(a,b,...)" groups in notes into floats.
func numbersAfter(t *testing.T, notes, key string) []float64 {
	t.Helper()
	i := strings.Index(notes, key+"=")
	if i < 0 {
		t.Fatalf("notes lack %s=", key)
	}
	s := notes[i+len(key)+1:]
	if j := strings.Index(s, ";"); j >= 0 {
		s = s[:j]
	}
	s = strings.NewReplacer("(", "", ")", "", "..", ",").Replace(strings.TrimSpace(s))
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out = append(out, x)
	}
	return out
}

func parseGLTFRow(t *testing.T, cols []string) gltfRow {
	t.Helper()
	if len(cols) < 6 {
		t.Fatalf("row %q: want 6 columns", cols)
	}
	r := gltfRow{file: cols[0]}
	for i, p := range []*int{&r.meshes, &r.primitives, &r.triangles, &r.vertices} {
		n, err := strconv.Atoi(cols[1+i])
		if err != nil {
			t.Fatalf("row %q: %v", cols[0], err)
		}
		*p = n
	}
	copy(r.aabb[:], numbersAfter(t, cols[5], "aabb"))
	copy(r.centroid[:], numbersAfter(t, cols[5], "centroid_mean"))
	return r
}

// usedBox and centroidMean are what expected.tsv's notes state: the box of
// the vertices triangles use and the mean of the triangle centroids.
func usedBox(s *Scene) Bounds {
	b := EmptyBounds()
	for _, tr := range s.Tris {
		for _, v := range tr {
			b = b.Grow(s.Verts[v])
		}
	}
	return b
}

func centroidMean(s *Scene) [3]float64 {
	var m [3]float64
	for _, tr := range s.Tris {
		for _, v := range tr {
			for a := 0; a < 3; a++ {
				m[a] += float64(s.Verts[v][a]) / 3
			}
		}
	}
	for a := range m {
		m[a] /= float64(len(s.Tris))
	}
	return m
}

// TestGLTFExpected loads every file of expected.tsv and checks its counts,
// its box and its centroid mean (which catch transposed rotations and
// ignored node transforms).
func TestGLTFExpected(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "scenes", "gltf")
	for _, cols := range readTSV(t, filepath.Join(dir, "expected.tsv")) {
		row := parseGLTFRow(t, cols)
		t.Run(row.file, func(t *testing.T) {
			for _, opt := range []LoadOptions{{}, AllAttributes()} {
				s, err := LoadWith(filepath.Join(dir, row.file), opt)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
				verts := len(s.Verts) + s.Stats.Skipped["point and line vertices"]
				got := [4]int{len(s.Meshes), s.Stats.Primitives, len(s.Tris), verts}
				want := [4]int{row.meshes, row.primitives, row.triangles, row.vertices}
				if got != want {
					t.Errorf("meshes, primitives, triangles, vertices = %v, want %v", got, want)
				}
				b := usedBox(s)
				for a := 0; a < 3; a++ {
					if !near(float64(b.Min[a]), row.aabb[a]) || !near(float64(b.Max[a]), row.aabb[3+a]) {
						t.Errorf("box %v..%v, want %v", b.Min, b.Max, row.aabb)
						break
					}
				}
				if c := centroidMean(s); !near(c[0], row.centroid[0]) || !near(c[1], row.centroid[1]) || !near(c[2], row.centroid[2]) {
					t.Errorf("centroid mean %.4f, want %v", c, row.centroid)
				}
				if s.Stats.DegenerateTriangles != 0 {
					t.Errorf("%d degenerate triangles, want 0", s.Stats.DegenerateTriangles)
				}
				if opt.Normals {
					checkGLTFAttr(t, s)
				}
			}
		})
	}
}

// near compares with the 4 decimals of expected.tsv.
func near(got, want float64) bool { return math.Abs(got-want) <= 1.5e-4 }

// checkGLTFAttr checks kept normals are unit vectors that agree in sign
// with the geometric normal of their triangle on the whole (the files'
// normals point outwards, and mirrored instances must keep that).
func checkGLTFAttr(t *testing.T, s *Scene) {
	t.Helper()
	a := s.Attr
	if a == nil {
		t.Fatal("Attr nil with attributes asked")
	}
	if a.NormalIdx == nil {
		return
	}
	if len(a.NormalIdx) != len(s.Tris) {
		t.Fatalf("%d normal rows for %d triangles", len(a.NormalIdx), len(s.Tris))
	}
	agree, total := 0, 0
	for i, tr := range s.Tris {
		r := a.NormalIdx[i]
		if r[0] == NoAttr {
			continue
		}
		p0, p1, p2 := s.Verts[tr[0]], s.Verts[tr[1]], s.Verts[tr[2]]
		gn := p1.Sub(p0).Cross(p2.Sub(p0))
		var sum mgl32.Vec3
		for _, k := range r {
			n := a.Normals[k]
			if l := n.Len(); math.Abs(float64(l)-1) > 1e-3 {
				t.Fatalf("normal %d has length %v", k, l)
			}
			sum = sum.Add(n)
		}
		total++
		if sum.Dot(gn) > 0 {
			agree++
		}
	}
	if total > 0 && float64(agree) < 0.95*float64(total) {
		t.Errorf("only %d of %d triangles face along their vertex normals", agree, total)
	}
}

// TestGLTFUnsupported checks the files of unsupported.tsv fail with an
// error naming an extension they require.
func TestGLTFUnsupported(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "scenes", "gltf")
	for _, cols := range readTSV(t, filepath.Join(dir, "unsupported.tsv")) {
		t.Run(cols[0], func(t *testing.T) {
			_, err := Load(filepath.Join(dir, cols[0]))
			if err == nil {
				t.Fatal("loaded; want an unsupported-extension error")
			}
			named := false
			for _, e := range strings.Split(cols[1], ",") {
				named = named || strings.Contains(err.Error(), e)
			}
			if !named || !strings.Contains(err.Error(), "unsupported") {
				t.Errorf("error %q names none of %s", err, cols[1])
			}
			t.Log(err)
		})
	}
}

// TestGLTFMinimal checks a hand-made file: node transforms composed
// (matrix below TRS), winding swapped under a mirroring transform, strips,
// points skipped and counted, data URIs.
func TestGLTFMinimal(t *testing.T) {
	s, err := LoadGLTF(strings.NewReader(string(minimalGLTF())), "m.gltf", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// Vertex 1 (1,0,0): ×2, then scale (1,-1,1), a quarter turn about z and
	// the translation (1,2,3).
	if v := s.Verts[1]; v.Sub(mgl32.Vec3{1, 4, 3}).Len() > 1e-5 {
		t.Errorf("vertex 1 at %v, want (1,4,3)", v)
	}
	// TRIANGLES (0,1,2),(0,2,3); the strip over indices 0,1,2,0,2,3 takes
	// positions (0,1,2),(1,3,2),(2,3,4),(3,5,4): vertices (0,1,2),(1,0,2),
	// (2,0,2) (degenerate),(0,3,2); each winding swapped by the mirror; the
	// strip's vertices start at 4.
	want := [][3]uint32{{0, 2, 1}, {0, 3, 2}, {4, 6, 5}, {5, 6, 4}, {6, 6, 4}, {4, 6, 7}}
	eq(t, "Tris", s.Tris, want)
	if s.Stats.Skipped["POINTS"] != 1 || s.Stats.Skipped["point and line vertices"] != 4 || s.Stats.Primitives != 3 {
		t.Errorf("skipped %v, primitives %d", s.Stats.Skipped, s.Stats.Primitives)
	}
	eq(t, "Meshes", s.Meshes, []Mesh{{"mesh 0", 0, 6}})
	// An external buffer needs a folder.
	ext := strings.Replace(string(minimalGLTF()), `"uri":"data:`, `"uri":"x.bin","u":"`, 1)
	if _, err := LoadGLTF(strings.NewReader(ext), "m.gltf", ""); err == nil || !strings.Contains(err.Error(), "buffer 0: uri \"x.bin\": external buffers need the file's folder") {
		t.Errorf("external buffer without a folder: %v", err)
	}
}

// TestGLTFErrors checks errors name the accessor, view or node at fault.
func TestGLTFErrors(t *testing.T) {
	base := string(minimalGLTF())
	for _, c := range []struct{ from, to, msg string }{
		{`"count":6,"type":"SCALAR"`, `"count":7,"type":"SCALAR"`, "m.gltf: mesh 0 primitive 0: accessor 1: byteOffset 0 + 7 elements of 2 bytes (stride 2) need 14 bytes, bufferView 1 has 12"},
		{`"children":[1]`, `"children":[0]`, "m.gltf: node 0 is its own ancestor (the node hierarchy has a cycle)"},
		{`"componentType":5123`, `"componentType":5124`, "m.gltf: accessor 1: componentType 5124 is not a glTF component type"},
		{`"indices":1}`, `"indices":0}`, "m.gltf: mesh 0 primitive 0: accessor 0: indices must be SCALAR UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT, got 3 components of FLOAT"},
		{`"asset"`, `"extensionsRequired":["KHR_draco_mesh_compression","EXT_foo"],"asset"`, "m.gltf: unsupported required extension KHR_draco_mesh_compression, EXT_foo"},
		{`"byteOffset":48,"byteLength":12`, `"byteOffset":50,"byteLength":12`, "m.gltf: mesh 0 primitive 0: accessor 1: bufferView 1: bytes 50..62 outside buffer 0 of 60 bytes"},
		{`"mode":5`, `"mode":9`, "m.gltf: mesh 0 primitive 1: mode 9 is not a glTF primitive mode (0..6)"},
		{`"mesh":0`, `"mesh":3`, "m.gltf: node 1: mesh 3 does not exist (1 meshes)"},
	} {
		in := strings.Replace(base, c.from, c.to, 1)
		if in == base {
			t.Fatalf("%q not in the file", c.from)
		}
		_, err := LoadGLTF(strings.NewReader(in), "m.gltf", "")
		if err == nil || !strings.HasPrefix(err.Error(), c.msg) {
			t.Errorf("%s -> %s: error %v, want %s", c.from, c.to, err, c.msg)
		}
	}
	// An index past the POSITION count.
	data := minimalGLTF()
	in := strings.Replace(string(data), `"count":4,"type":"VEC3"`, `"count":2,"type":"VEC3"`, 1)
	if _, err := LoadGLTF(strings.NewReader(in), "m.gltf", ""); err == nil || !strings.Contains(err.Error(), "accessor 1: index 2 at element 2 out of range [0, 2) of POSITION accessor 0") {
		t.Errorf("index out of range: %v", err)
	}
}

// TestGLTFNodeDAG checks that nodes sharing children (a DAG walked as a
// tree, 2^40 paths here) stop at the size budget instead of running on.
func TestGLTFNodeDAG(t *testing.T) {
	var nodes []string
	for i := 0; i < 40; i++ {
		nodes = append(nodes, fmt.Sprintf(`{"children":[%d,%d]}`, i+1, i+1))
	}
	nodes = append(nodes, `{"mesh":0}`)
	in := strings.Replace(string(minimalGLTF()), `"nodes":[{"children":[1],`, `"nodes":[`+strings.Join(nodes, ",")+`,{"children":[1],`, 1)
	_, err := LoadGLTF(strings.NewReader(in), "dag.gltf", "")
	if err == nil || !strings.Contains(err.Error(), "than a") {
		t.Fatalf("error %v, want the size budget", err)
	}
}

// TestGLTFQuantized checks normalized SHORT positions (KHR_mesh_quantization)
// read as value/32767, and refused when the file does not declare it.
func TestGLTFQuantized(t *testing.T) {
	var buf []byte
	for _, v := range []int16{0, 0, 0, 7, 32767, 0, 0, 7, 0, -32767, 0, 7} { // 3 VEC3, each padded to 8 bytes
		buf = binary.LittleEndian.AppendUint16(buf, uint16(v))
	}
	doc := `{"asset":{"version":"2.0"},%s"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
"accessors":[{"bufferView":0,"componentType":5122,"normalized":true,"count":3,"type":"VEC3"}],
"bufferViews":[{"buffer":0,"byteLength":24,"byteStride":8}],
"buffers":[{"byteLength":24,"uri":"data:application/gltf-buffer;base64,` + base64.StdEncoding.EncodeToString(buf) + `"}]}`
	s, err := LoadGLTF(strings.NewReader(fmt.Sprintf(doc, `"extensionsUsed":["KHR_mesh_quantization"],"extensionsRequired":["KHR_mesh_quantization"],`)), "q.gltf", "")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Verts", s.Verts, []mgl32.Vec3{{0, 0, 0}, {1, 0, 0}, {0, -1, 0}})
	_, err = LoadGLTF(strings.NewReader(fmt.Sprintf(doc, "")), "q.gltf", "")
	if err == nil || !strings.Contains(err.Error(), "accessor 0: POSITION must be VEC3 FLOAT (or integer with KHR_mesh_quantization), got 3 components of SHORT") {
		t.Errorf("undeclared quantization: %v", err)
	}
}

// TestGLTFHugeCount checks a count the file cannot hold fails before any
// allocation (a product of count and stride could otherwise overflow).
func TestGLTFHugeCount(t *testing.T) {
	in := strings.Replace(string(minimalGLTF()), `"count":4,"type":"VEC3"`, `"count":4611686018427387904,"type":"VEC3"`, 1)
	_, err := LoadGLTF(strings.NewReader(in), "h.gltf", "")
	if err == nil || !strings.Contains(err.Error(), "accessor 0: count 4611686018427387904, more than a") {
		t.Fatalf("error %v", err)
	}
}
