package scenes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

const na = NoAttr

// TestOBJAttributes checks the attributes kept from small OBJ files: every
// index form, negative indices, per-corner rows after fan triangulation,
// names per triangle, objects as meshes and the statistics.
func TestOBJAttributes(t *testing.T) {
	head := "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvn 0 0 1\nvn 0 0 -1\n"
	for _, c := range []struct {
		name       string
		in         string
		normalIdx  [][3]uint32
		uvIdx      [][3]uint32
		groups     []string
		groupOf    []uint32
		materialOf []uint32
		meshes     []Mesh
		warnings   int
	}{
		{"v/vt/vn quad", head + "f 1/1/1 2/2/1 3/3/2 4/1/2\n",
			[][3]uint32{{0, 0, 1}, {0, 1, 1}}, [][3]uint32{{0, 1, 2}, {0, 2, 0}}, nil, nil, nil, nil, 0},
		{"v//vn and v/vt", head + "f 1//2 2//2 3//1\nf 1/3 2/2 3/1\n",
			[][3]uint32{{1, 1, 0}, {na, na, na}}, [][3]uint32{{na, na, na}, {2, 1, 0}}, nil, nil, nil, nil, 0},
		{"negative", head + "f -4/-3/-2 -3/-2/-1 -2/-1/-1\n",
			[][3]uint32{{0, 1, 1}}, [][3]uint32{{0, 1, 2}}, nil, nil, nil, nil, 0},
		{"mixed corners", head + "f 1/1/1 2 3/3\n",
			[][3]uint32{{0, na, na}}, [][3]uint32{{0, na, 2}}, nil, nil, nil, nil, 0},
		{"normal out of range warns", head + "f 1//9 2//1 3//1\n",
			[][3]uint32{{na, 0, 0}}, nil, nil, nil, nil, nil, 1},
		{"groups and materials", head + "f 1 2 3\ng a  b\nusemtl m1\nf 1 2 3\ng c\nf 1 3 4\ng a b\nusemtl m2\nf 2 3 4\ng\nf 1 2 4\n",
			nil, nil, []string{"a b", "c", "default"}, []uint32{na, 0, 1, 0, 2}, []uint32{na, 0, 0, 1, 1}, nil, 0},
		{"objects are meshes", head + "f 1 2 3\no first\nf 1 2 3\nf 1 3 4\no empty\no last # c\nf 2 3 4\n",
			nil, nil, nil, nil, nil, []Mesh{{"objects are meshes", 0, 1}, {"first", 1, 2}, {"empty", 3, 0}, {"last", 3, 1}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := loadOBJ(strings.NewReader(c.in), c.name, ptr(AllAttributes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			a := s.Attr
			eq(t, "NormalIdx", a.NormalIdx, c.normalIdx)
			eq(t, "UVIdx", a.UVIdx, c.uvIdx)
			eq(t, "Groups", a.Groups, c.groups)
			eq(t, "GroupOf", a.GroupOf, c.groupOf)
			if c.materialOf != nil {
				eq(t, "MaterialOf", a.MaterialOf, c.materialOf)
			}
			if c.meshes != nil {
				eq(t, "Meshes", s.Meshes, c.meshes)
			}
			if len(s.Warnings) != c.warnings {
				t.Errorf("warnings %q, want %d", s.Warnings, c.warnings)
			}
			if len(a.Normals) != 2 || len(a.UVs) != 3 || a.Normals[1] != (mgl32.Vec3{0, 0, -1}) || a.UVs[2] != (mgl32.Vec2{1, 1}) {
				t.Errorf("normals %v, uvs %v", a.Normals, a.UVs)
			}
			// The same file without attributes: same triangles and meshes.
			plain, err := LoadOBJ(strings.NewReader(c.in), c.name)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "Tris", plain.Tris, s.Tris)
			eq(t, "Meshes", plain.Meshes, s.Meshes)
			if plain.Attr != nil || plain.Stats.Attributes[KindNormals] != (AttrStat{Present: 2}) || plain.Stats.Skipped["vn"] != 2 {
				t.Errorf("positions-only: Attr %v, stats %v, skipped %v", plain.Attr, plain.Stats.Attributes, plain.Stats.Skipped)
			}
			if st := s.Stats.Attributes; st[KindNormals] != (AttrStat{2, 2}) || st[KindUVs] != (AttrStat{3, 3}) || s.Stats.Skipped["vn"] != 0 {
				t.Errorf("with attributes: stats %v, skipped %v", st, s.Stats.Skipped)
			}
		})
	}
}

// TestOBJAttributeErrors checks kept attributes are parsed as strictly as
// positions.
func TestOBJAttributeErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"vn 0 0\n", "t:1: vn: 2 numbers (want 3 to 3)"},
		{"vn 0 0 1 2\n", "t:1: vn: more than 3 numbers"},
		{"vt nan 0\n", `t:1: vt: non-finite number "nan"`},
		{"vt\n", "t:1: vt: 0 numbers (want 1 to 3)"},
		// vn and vt are parsed beside the faces: the earlier line's error wins.
		{"vn x 0 0\nv 0 0 0\nf 1 1 9\n", `t:1: vn: malformed number "x"`},
		{"v 0 0 0\nf 1 1 9\nvn x 0 0\n", "t:2: f: vertex index 9 out of range (1 defined so far)"},
		{strings.Repeat("vt 0 0\n", 20000) + "vt 1e99\nf 1 1 1\n", `t:20001: vt: non-finite number "1e99"`},
		{"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/0 2 3\n", "t:4: f: texture index 0 is invalid (OBJ indices start at 1)"},
		{"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1//x 2 3\n", `t:4: f: malformed normal index "x"`},
		{"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2 3\n", `t:4: f: malformed vertex "1/1/1/1"`},
		{"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", "t:4: f: vertex index 4 out of range (3 defined so far)"},
	} {
		_, err := loadOBJ(strings.NewReader(c.in), "t", ptr(AllAttributes()))
		if err == nil || err.Error() != c.msg {
			t.Errorf("%q: error %v, want %s", clipS(c.in), err, c.msg)
		}
	}
}

// TestOBJColors checks `v x y z r g b` colours, white where absent.
func TestOBJColors(t *testing.T) {
	s, err := loadOBJ(strings.NewReader("v 0 0 0 1 0 0\nv 1 0 0\nv 0 1 0 0 0.5 1 1\nf 1 2 3\n"), "c", &LoadOptions{Colors: true})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Colors", s.Attr.Colors, []mgl32.Vec4{{1, 0, 0, 1}, {1, 1, 1, 1}, {0, 0.5, 1, 1}})
	if s.Stats.Attributes[KindColors] != (AttrStat{2, 2}) {
		t.Errorf("stats %v", s.Stats.Attributes)
	}
}

// TestPLYAttributes checks normals, UVs (every naming) and colours of PLY
// vertices, in ascii and binary, with per-corner rows equal to Tris.
func TestPLYAttributes(t *testing.T) {
	verts := [][]float64{{0, 0, 0, 0, 0, 1, 0.25, 0.5, 255, 0, 51}, {1, 0, 0, 0, 1, 0, 1, 0, 0, 255, 0}, {0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 255}}
	for _, uv := range [][2]string{{"s", "t"}, {"u", "v"}, {"texture_u", "texture_v"}} {
		for _, format := range []string{"ascii", "binary_little_endian", "binary_big_endian"} {
			data := buildPLY(t, format, []testElem{
				{"vertex", []string{"float x", "float y", "float z", "float nx", "float ny", "float nz", "float " + uv[0], "float " + uv[1], "uchar red", "uchar green", "uchar blue"}, verts},
				{"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 2}}},
			})
			s, err := loadPLY(strings.NewReader(string(data)), "p.ply", ptr(AllAttributes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			a := s.Attr
			eq(t, "Normals", a.Normals, []mgl32.Vec3{{0, 0, 1}, {0, 1, 0}, {1, 0, 0}})
			eq(t, "UVs", a.UVs, []mgl32.Vec2{{0.25, 0.5}, {1, 0}, {0, 1}})
			eq(t, "Colors", a.Colors, []mgl32.Vec4{{1, 0, 0.2, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}})
			eq(t, "NormalIdx", a.NormalIdx, s.Tris)
			eq(t, "UVIdx", a.UVIdx, s.Tris)
			plain, err := LoadPLY(strings.NewReader(string(data)), "p.ply")
			if err != nil {
				t.Fatal(err)
			}
			if plain.Attr != nil || plain.Stats.Attributes[KindUVs] != (AttrStat{Present: 3}) {
				t.Errorf("positions-only: %v %v", plain.Attr, plain.Stats.Attributes)
			}
		}
	}
}

// TestWeld checks STL-like separate corners become shared vertices.
func TestWeld(t *testing.T) {
	s := &Scene{Name: "w", Verts: []mgl32.Vec3{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, float32(negZero())}, {1, 1, 0}},
		Tris: [][3]uint32{{0, 1, 2}, {3, 6, 4}, {3, 5, 4}}, Faces: []uint32{0, 1, 2}}
	s.finish()
	s.Weld()
	eq(t, "Verts", s.Verts, []mgl32.Vec3{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, float32(negZero())}})
	eq(t, "Tris", s.Tris, [][3]uint32{{0, 1, 2}, {1, 3, 2}, {1, 3, 2}})
	if s.Stats.WeldedVertices != 3 {
		t.Errorf("WeldedVertices %d", s.Stats.WeldedVertices)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

func negZero() float64 { z := 0.0; return -z }

// TestMergeAndMeshOf checks Merge shifts indices, meshes and attributes,
// and MeshOf maps every triangle back to its part.
func TestMergeAndMeshOf(t *testing.T) {
	a, err := loadOBJ(strings.NewReader("v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\no x\nf 1//1 2//1 3//1\no y\nf 3 2 1\n"), "a.obj", ptr(AllAttributes()))
	if err != nil {
		t.Fatal(err)
	}
	b := Icosphere(1)
	c := &Scene{Name: "c", Verts: []mgl32.Vec3{{5, 5, 5}, {6, 5, 5}, {5, 6, 5}}, Tris: [][3]uint32{{0, 1, 2}}}
	m, err := Merge(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	wantMeshes := []string{"x", "y", b.Name, "c"}
	if len(m.Meshes) != len(wantMeshes) {
		t.Fatalf("meshes %v", m.Meshes)
	}
	parts := []*Scene{a, a, b, c}
	partFirst := []int{0, 0, 2, 2 + len(b.Tris)}
	for i, mesh := range m.Meshes {
		if mesh.Name != wantMeshes[i] {
			t.Errorf("mesh %d named %q, want %q", i, mesh.Name, wantMeshes[i])
		}
		for l := 0; l < mesh.NumTris; l++ {
			prim := mesh.FirstTri + l
			gm, gl := m.MeshOf(uint32(prim))
			if gm != i || gl != l {
				t.Fatalf("MeshOf(%d) = %d, %d; want %d, %d", prim, gm, gl, i, l)
			}
			p := parts[i]
			src := p.Tris[prim-partFirst[i]]
			for k := 0; k < 3; k++ {
				if m.Verts[m.Tris[prim][k]] != p.Verts[src[k]] {
					t.Fatalf("triangle %d corner %d moved", prim, k)
				}
			}
		}
	}
	if gm, gl := m.MeshOf(uint32(len(m.Tris))); gm != -1 || gl != -1 {
		t.Errorf("MeshOf past the end = %d, %d", gm, gl)
	}
	eq(t, "NormalIdx[:2]", m.Attr.NormalIdx[:2], [][3]uint32{{0, 0, 0}, {na, na, na}})
	if len(m.Attr.NormalIdx) != len(m.Tris) || m.Attr.NormalIdx[len(m.Tris)-1] != [3]uint32{na, na, na} {
		t.Errorf("NormalIdx rows %d for %d triangles", len(m.Attr.NormalIdx), len(m.Tris))
	}
	if m.Format != "mixed" || m.Name != "a.obj + "+b.Name+" + c" {
		t.Errorf("name %q format %q", m.Name, m.Format)
	}
}

func ptr[T any](v T) *T { return &v }

// eq compares two values of a comparable-by-formatting kind and reports
// the field name.
func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if g, w := sprint(got), sprint(want); g != w {
		t.Errorf("%s = %s, want %s", what, g, w)
	}
}

func sprint(v any) string { return fmt.Sprintf("%v", v) }

// TestLoadAll checks LoadAll merges files by path, a mesh each.
func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.obj"), filepath.Join(dir, "b.obj")
	if err := os.WriteFile(a, []byte("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("v 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\nf 1 2 3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadAll([]string{a, b}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Meshes", s.Meshes, []Mesh{{a, 0, 1}, {b, 1, 2}})
	eq(t, "Tris", s.Tris, [][3]uint32{{0, 1, 2}, {3, 4, 5}, {3, 5, 6}})
	if _, err := LoadAll([]string{a, filepath.Join(dir, "missing.obj")}, LoadOptions{}); err == nil {
		t.Error("a missing file loaded")
	}
}
