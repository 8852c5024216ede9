package kdtree

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// TestSplitMix64Vectors: the generator's published outputs for state 0.
func TestSplitMix64Vectors(t *testing.T) {
	g := splitMix64{}
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		expectEqual(t, g.next(), want, "splitmix64(0) output %d", i)
	}
}

// testBounds is a box with every axis different, for the ray set tests.
var testBounds = scenes.Bounds{Min: mgl32.Vec3{-1, -2, -3}, Max: mgl32.Vec3{1, 2, 3.5}}

// hexVec3 rounds float64 values (hex literals computed independently with
// Python's float64 arithmetic and libm, rounded once to float32).
func hexVec3(x, y, z float64) mgl32.Vec3 {
	return mgl32.Vec3{float32(x), float32(y), float32(z)}
}

// TestRandomRaysReference compares the first rays with values computed by
// an independent Python implementation of ANCHORS' definition.
func TestRandomRaysReference(t *testing.T) {
	rays := RandomRays(testBounds, 2)
	want := []Ray{
		{Org: hexVec3(0x1.eeb992p-2, -0x1.5c4074p+0, -0x1.306860p+0), Dir: hexVec3(0x1.d8aed8p-1, 0x1.cc975cp-3, 0x1.3f18f0p-2)},
		{Org: hexVec3(0x1.7910c8p-1, -0x1.205a64p+0, 0x1.1a2030p+1), Dir: hexVec3(-0x1.64bd64p-1, -0x1.48a7a6p-1, 0x1.47d23cp-2)},
	}
	for i := range want {
		expectEqual(t, rays[i].Org, want[i].Org, "random ray %d origin", i)
		expectEqual(t, rays[i].Dir, want[i].Dir, "random ray %d direction", i)
		expectEqual(t, rays[i].TMin, 0, "TMin")
		expectEqual(t, rays[i].TMax, float32(math.Inf(1)), "TMax")
	}
}

func TestPrimaryRaysReference(t *testing.T) {
	rays := PrimaryRays(testBounds)
	expectEqual(t, len(rays), PrimaryImageSize*PrimaryImageSize, "primary ray count")
	eye := mgl32.Vec3{0, 0, 0x1.ep+2} // (c.x, c.y, max.z + max(e.x, e.y)) = (0, 0, 3.5+4)
	for _, c := range []struct {
		px, py int
		dir    mgl32.Vec3
	}{
		{0, 0, hexVec3(-0x1.a1c622p-2, 0x1.a1c622p-2, -0x1.a22eaep-1)},
		{700, 100, hexVec3(0x1.58d150p-3, 0x1.785f60p-2, -0x1.d44b1ep-1)},
	} {
		r := rays[c.py*PrimaryImageSize+c.px]
		expectEqual(t, r.Org, eye, "primary ray (%d, %d) origin", c.px, c.py)
		expectEqual(t, r.Dir, c.dir, "primary ray (%d, %d) direction", c.px, c.py)
	}
}

// TestPrimaryRaysSymmetry: the image is symmetric about its centre lines,
// every direction is unit length (to float32 rounding) and looks along -Z.
func TestPrimaryRaysSymmetry(t *testing.T) {
	const n = PrimaryImageSize
	rays := PrimaryRays(testBounds)
	for py := 0; py < n; py += 31 {
		for px := 0; px < n; px += 33 {
			r := rays[py*n+px]
			m := rays[py*n+(n-1-px)]
			f := rays[(n-1-py)*n+px]
			if m.Dir[0] != -r.Dir[0] || m.Dir[1] != r.Dir[1] || f.Dir[1] != -r.Dir[1] || f.Dir[0] != r.Dir[0] {
				t.Fatalf("pixel (%d, %d): %v, mirrored %v and %v", px, py, r.Dir, m.Dir, f.Dir)
			}
			if l := r.Dir.Len(); math.Abs(float64(l)-1) > 1e-6 || !(r.Dir[2] < 0) {
				t.Fatalf("pixel (%d, %d): direction %v length %v", px, py, r.Dir, l)
			}
			if px < n/2 != (r.Dir[0] < 0) || py < n/2 != (r.Dir[1] > 0) {
				t.Fatalf("pixel (%d, %d): direction %v on the wrong side", px, py, r.Dir)
			}
		}
	}
}

// TestRandomRaysProperties: prefixes agree, origins lie in the box,
// directions are unit length to rounding, and the set covers all octants.
func TestRandomRaysProperties(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 33, 1000} {
		expectEqual(t, len(RandomRays(testBounds, n)), n, "len(RandomRays(%d))", n)
	}
	long := RandomRays(testBounds, 4096)
	short := RandomRays(testBounds, 1000)
	var octants [8]int
	for i, r := range long {
		if i < len(short) && short[i] != r {
			t.Fatalf("ray %d differs between RandomRays(1000) and RandomRays(4096)", i)
		}
		for a := 0; a < 3; a++ {
			if r.Org[a] < testBounds.Min[a] || r.Org[a] > testBounds.Max[a] {
				t.Fatalf("ray %d origin %v outside %v", i, r.Org, testBounds)
			}
		}
		if l := r.Dir.Len(); math.Abs(float64(l)-1) > 1e-6 {
			t.Fatalf("ray %d direction %v length %v", i, r.Dir, l)
		}
		o := 0
		for a := 0; a < 3; a++ {
			if r.Dir[a] > 0 {
				o |= 1 << a
			}
		}
		octants[o]++
	}
	for o, c := range octants {
		if c < 4096/8/2 {
			t.Errorf("octant %d has %d of 4096 directions", o, c)
		}
	}
}
