package scenes

import (
	"reflect"
	"strings"
	"testing"
)

// checkScene asserts the invariants every scene keeps, including that
// Bounds equals a brute-force min/max and the degenerate count a recount.
func checkScene(t *testing.T, s *Scene) {
	t.Helper()
	require.NoError(t, s.Validate())
	want := EmptyBounds()
	for _, v := range s.Verts {
		for a := 0; a < 3; a++ {
			want.Min[a] = min(want.Min[a], v[a])
			want.Max[a] = max(want.Max[a], v[a])
		}
	}
	assert.Equal(t, want, s.Bounds)
	d := 0
	for i := range s.Tris {
		if s.Degenerate(i) {
			d++
		}
	}
	assert.Equal(t, d, s.Stats.DegenerateTriangles)
}

func TestIcosphere(t *testing.T) {
	for _, d := range []int{0, 1, 2, 3, 5} {
		s := Icosphere(d)
		checkScene(t, s)
		n := 20 << (2 * d)
		assert.Equal(t, n, len(s.Tris), "subdiv %d", d)
		assert.Equal(t, n/2+2, len(s.Verts), "subdiv %d", d) // Euler: V = F/2 + 2
		assert.Equal(t, 0, s.Stats.DegenerateTriangles)
		for _, v := range s.Verts {
			l := v.Len()
			assert.True(t, l > 0.9999 && l < 1.0001, "vertex off the sphere: %v", v)
		}
		// Every edge is shared by exactly two triangles (closed manifold).
		edges := map[[2]uint32]int{}
		for _, tr := range s.Tris {
			for k := 0; k < 3; k++ {
				a, b := tr[k], tr[(k+1)%3]
				edges[[2]uint32{min(a, b), max(a, b)}]++
			}
		}
		for e, c := range edges {
			if c != 2 {
				t.Fatalf("subdiv %d: edge %v used %d times", d, e, c)
			}
		}
	}
}

func TestGenerators(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 33, 1000} {
		for _, c := range []struct {
			name string
			make func(seed uint64) *Scene
			want int
		}{
			{"soup", func(seed uint64) *Scene { return Soup(n, seed) }, n},
			{"coplanar", func(seed uint64) *Scene { return Coplanar(n, seed) }, n},
			{"identical", func(uint64) *Scene { return Identical(n) }, n},
			{"huge", func(seed uint64) *Scene { return HugeAmongTiny(n, seed) }, max(n, 1)},
			{"slivers", func(seed uint64) *Scene { return Slivers(n, seed) }, n},
		} {
			a, b, other := c.make(7), c.make(7), c.make(8)
			checkScene(t, a)
			assert.Equal(t, c.want, len(a.Tris), "%s %d", c.name, n)
			assert.True(t, reflect.DeepEqual(a.Verts, b.Verts), "%s %d not deterministic", c.name, n)
			if n > 1 && c.name != "identical" {
				assert.True(t, !reflect.DeepEqual(a.Verts, other.Verts), "%s %d ignores the seed", c.name, n)
			}
			assert.Equal(t, "procedural", a.Format)
			for i, f := range a.Faces {
				if f != uint32(i) {
					t.Fatalf("%s: Faces[%d] = %d", c.name, i, f)
				}
			}
			if n == 0 {
				continue
			}
			switch c.name {
			case "coplanar":
				assert.Equal(t, float32(0), a.Bounds.Min[2])
				assert.Equal(t, float32(0), a.Bounds.Max[2])
			case "identical":
				assert.Equal(t, 3, len(a.Verts))
			case "huge":
				assert.Equal(t, float32(-1000), a.Bounds.Min[0])
				assert.Equal(t, float32(1000), a.Bounds.Max[2])
			case "soup":
				for _, v := range a.Verts {
					for k := 0; k < 3; k++ {
						assert.True(t, v[k] >= 0 && v[k] <= 1, "soup vertex %v outside the unit cube", v)
					}
				}
			case "slivers":
				for _, tr := range a.Tris {
					l := a.Verts[tr[1]].Sub(a.Verts[tr[0]]).Len()
					assert.True(t, l > 0.999 && l < 1.001, "sliver length %v", l)
				}
			}
		}
	}
}

func TestDefault(t *testing.T) {
	s := Default()
	checkScene(t, s)
	n := len(s.Tris)
	assert.True(t, n >= 50000 && n <= 100000, "default has %d triangles", n)
	assert.Equal(t, 2+3*20480+20000, n)
	assert.True(t, reflect.DeepEqual(s.Verts, Default().Verts), "default not deterministic")
}

func TestProceduralSpecs(t *testing.T) {
	for _, c := range []struct {
		spec string
		tris int
	}{
		{"default", 81442}, {"proc:default", 81442}, {"icosphere:0", 20}, {"icosphere:3", 1280},
		{"soup:100:42", 100}, {"soup:33", 33}, {"coplanar:1000:1", 1000}, {"identical:5", 5},
		{"huge:10:3", 10}, {"slivers:7:2", 7}, {"grid:2:2:2:proc:icosphere:1", 8 * 80},
		{"grid:1:2:1:proc:grid:2:1:1:proc:identical:3", 12},
	} {
		s, err := Procedural(c.spec)
		require.NoError(t, err, c.spec)
		assert.Equal(t, c.tris, len(s.Tris), c.spec)
		checkScene(t, s)
	}
	a, _ := Procedural("soup:50:9")
	assert.True(t, reflect.DeepEqual(a.Verts, Soup(50, 9).Verts), "spec and function differ")
	for _, c := range []struct{ spec, msg string }{
		{"", "unknown generator"}, {"cube", "unknown generator"}, {"icosphere", "arguments"},
		{"icosphere:12", "above 11"}, {"icosphere:-1", "non-negative"}, {"soup", "arguments"},
		{"soup:x", "non-negative integer"}, {"soup:1:2:3", "arguments"}, {"soup:999999999999", "above"},
		{"identical:3:4", "only a count"}, {"grid:1:1", "want grid"}, {"grid:0:1:1:proc:default", "outside"},
		{"grid:1:1:1:/nonexistent.obj", "nonexistent"}, {"default:1", "arguments"},
	} {
		_, err := Procedural(c.spec)
		require.Error(t, err, c.spec)
		assert.Contains(t, err.Error(), c.msg, c.spec)
	}
	_, err := Procedural("grid:1:1:1:/x.obj")
	assert.True(t, strings.Contains(err.Error(), "x.obj"), "%v", err)
}

func BenchmarkDefault(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Default()
	}
}
