package refbuild

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// meetsBox decides as clipping the triangle to the box does (a polygon is
// left) on random triangles, flat ones among them, and random boxes.
func TestMeetsBoxAgreesWithClipping(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	met := 0
	for it := 0; it < 20000; it++ {
		tri := btRandomTriangle(rng)
		if it%5 == 0 { // axis-aligned (flat) triangles too
			btFlatten(rng, &tri, 0.25)
		}
		var box AABB
		for a := 0; a < 3; a++ {
			x, y := float32(rng.Float64()*1.5), float32(rng.Float64()*1.5)
			box.Lo[a], box.Hi[a] = min(x, y), max(x, y)
		}
		var p Poly
		want := ClipToBox(&tri, &box, &p)
		require.Equal(t, want, meetsBox(&tri, &box), "triangle %v box %v", tri, box)
		if want {
			met++
		}
	}
	require.Greater(t, met, 2000)
	require.Less(t, met, 18000)
}

// Boundary and separating-axis cases: touching a face, an edge or a corner
// counts; a triangle whose box overlaps the box but whose edge axis or
// plane separates them does not meet it.
func TestMeetsBoxCases(t *testing.T) {
	box := AABB{Lo: [3]float32{0, 0, 0}, Hi: [3]float32{1, 1, 1}}
	cases := []struct {
		name string
		tri  Triangle
		want bool
	}{
		{"inside", Triangle{{0.2, 0.2, 0.2}, {0.8, 0.2, 0.2}, {0.2, 0.8, 0.2}}, true},
		{"touches a face", Triangle{{1, 0.5, 0.5}, {2, 0.5, 0.5}, {2, 0.6, 0.5}}, true},
		{"lies in a face", Triangle{{0.2, 0.2, 1}, {0.8, 0.2, 1}, {0.2, 0.8, 1}}, true},
		{"touches a corner", Triangle{{1, 1, 1}, {2, 1, 1}, {1, 2, 1}}, true},
		{"beyond a face", Triangle{{1.01, 0.5, 0.5}, {2, 0.5, 0.5}, {2, 0.6, 0.5}}, false},
		{"crosses without a vertex inside", Triangle{{-1, 0.5, 0.5}, {2, 0.5, 0.5}, {0.5, 3, 0.5}}, true},
		// Bounds overlap the box in both; the edge on x + y = 1.5 crosses
		// the box, the one on x + y = 2.5 passes beyond the corner (1, 1):
		// an edge axis separates.
		{"edge crosses the box", Triangle{{1.5, 0, 0.5}, {0, 1.5, 0.5}, {1.5, 1.5, 0.5}}, true},
		{"edge axis separates", Triangle{{2.5, 0, 0.5}, {0, 2.5, 0.5}, {2.5, 2.5, 0.5}}, false},
		// The plane x + y + z = 3.5 passes beyond the corner (1, 1, 1).
		{"plane separates", Triangle{{3.5, 0, 0}, {0, 3.5, 0}, {0, 0, 3.5}}, false},
		{"plane touches the corner", Triangle{{3, 0, 0}, {0, 3, 0}, {0, 0, 3}}, true},
	}
	for _, c := range cases {
		require.Equal(t, c.want, meetsBox(&c.tri, &box), c.name)
	}
}
