package kdtree

import (
	"context"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

func angleDeg(a, b mgl32.Vec3) float64 {
	c := float64(a.Dot(b)) / float64(a.Len()*b.Len())
	return math.Acos(math.Max(-1, math.Min(1, c))) * 180 / math.Pi
}

func TestCameraRaysGeometry(t *testing.T) {
	cam := Camera{Eye: mgl32.Vec3{1, 2, 3}, Look: mgl32.Vec3{1, 2, -7}, Up: mgl32.Vec3{0, 1, 0}, FovY: 60}
	for _, sz := range [][2]int{{1, 1}, {3, 3}, {5, 3}, {64, 48}, {2, 7}} {
		w, h := sz[0], sz[1]
		rays := cam.Rays(w, h)
		if len(rays) != w*h {
			t.Fatalf("%dx%d: %d rays", w, h, len(rays))
		}
		for i, r := range rays {
			if r.Org != cam.Eye || r.TMin != 0 || !math.IsInf(float64(r.TMax), 1) || math.Abs(float64(r.Dir.Len())-1) > 1e-6 {
				t.Fatalf("%dx%d ray %d: %+v", w, h, i, r)
			}
		}
		// Top-left looks up and left, bottom-right down and right (y down).
		tl, br := rays[0].Dir, rays[w*h-1].Dir
		if w > 1 && h > 1 && !(tl[0] < 0 && tl[1] > 0 && br[0] > 0 && br[1] < 0) {
			t.Fatalf("%dx%d: corners %v %v", w, h, tl, br)
		}
		// Pixel centres: the vertical angle between the middle of the top
		// and bottom rows is FovY·(h−1)/h (for the centre column).
		if w%2 == 1 && h > 1 {
			top, bot := rays[w/2].Dir, rays[(h-1)*w+w/2].Dir
			half := math.Atan(math.Tan(30*math.Pi/180) * float64(h-1) / float64(h))
			want := 2 * half * 180 / math.Pi
			if got := angleDeg(top, bot); math.Abs(got-want) > 1e-3 {
				t.Fatalf("%dx%d: vertical span %v°, want %v°", w, h, got, want)
			}
		}
		if w%2 == 1 && h%2 == 1 {
			if d := rays[h/2*w+w/2].Dir; angleDeg(d, mgl32.Vec3{0, 0, -1}) > 1e-3 {
				t.Fatalf("%dx%d: centre ray %v", w, h, d)
			}
		}
	}
	if cam.Rays(0, 5) != nil || cam.Rays(5, -1) != nil {
		t.Fatal("rays for an empty image")
	}
}

// TestCameraDegenerate: a zero or parallel up vector, an eye at the look
// point and a bad field of view still give finite unit directions.
func TestCameraDegenerate(t *testing.T) {
	for _, cam := range []Camera{
		{Eye: mgl32.Vec3{0, 5, 0}, Look: mgl32.Vec3{0, 0, 0}, Up: mgl32.Vec3{0, 1, 0}, FovY: 45},
		{Eye: mgl32.Vec3{0, 0, 5}, Look: mgl32.Vec3{0, 0, 0}, FovY: 45},
		{Eye: mgl32.Vec3{1, 1, 1}, Look: mgl32.Vec3{1, 1, 1}, Up: mgl32.Vec3{0, 1, 0}, FovY: 45},
		{Eye: mgl32.Vec3{0, 0, 5}, Up: mgl32.Vec3{0, 1, 0}, FovY: 400},
		{Eye: mgl32.Vec3{0, 0, 5}, Up: mgl32.Vec3{0, 1, 0}, FovY: float32(math.NaN())},
	} {
		for _, r := range cam.Rays(4, 3) {
			if l := r.Dir.Len(); math.Abs(float64(l)-1) > 1e-5 {
				t.Fatalf("%+v: direction %v", cam, r.Dir)
			}
		}
	}
}

// TestDefaultCameraSeesBox: every corner of the box is inside the view,
// and the centre pixel hits a sphere at the box centre.
func TestDefaultCameraSeesBox(t *testing.T) {
	s := scenes.Icosphere(3)
	for _, b := range []scenes.Bounds{s.Bounds, {Min: mgl32.Vec3{-30, 0, -10}, Max: mgl32.Vec3{30, 20, 10}}, {Min: mgl32.Vec3{5, 5, 5}, Max: mgl32.Vec3{5, 5, 5}}} {
		cam := DefaultCamera(b)
		fwd, right, up := cam.Basis()
		th := math.Tan(float64(cam.FovY) / 2 * math.Pi / 180)
		for k := 0; k < 8; k++ {
			p := b.Min
			for a := 0; a < 3; a++ {
				if k>>a&1 == 1 {
					p[a] = b.Max[a]
				}
			}
			d := p.Sub(cam.Eye)
			z := float64(d.Dot(fwd))
			if z <= 0 || math.Abs(float64(d.Dot(up)))/z > th || math.Abs(float64(d.Dot(right)))/z > th {
				t.Fatalf("box %v: corner %v outside the view of %+v", b, p, cam)
			}
		}
	}
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rays := DefaultCamera(s.Bounds).Rays(9, 9)
	if _, ok := tree.Intersect(rays[4*9+4]); !ok {
		t.Fatal("centre ray misses the sphere")
	}
	if _, ok := tree.Intersect(rays[0]); ok {
		t.Fatal("corner ray hits the sphere")
	}
}

func TestCameraRaysInto(t *testing.T) {
	cam := DefaultCamera(scenes.Icosphere(1).Bounds)
	all := cam.Rays(7, 5)
	band := make([]Ray, 2*7)
	cam.RaysInto(band, 7, 5, 2)
	for i := range band {
		if band[i] != all[2*7+i] {
			t.Fatalf("band ray %d: %+v, want %+v", i, band[i], all[2*7+i])
		}
	}
}
