package kdtree

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// Camera is a pinhole camera: the eye, the point it looks at, the up
// direction (need not be perpendicular to the view; a zero or parallel Up
// is replaced by +Y, or +Z when the view is vertical) and the vertical
// field of view in degrees (0 < FovY < 180; out of range means 45).
type Camera struct {
	Eye, Look, Up mgl32.Vec3
	FovY          float32 // degrees
}

// DefaultFovY is the field of view of DefaultCamera, in degrees.
const DefaultFovY = 45

// DefaultCamera returns a camera that sees all of box b from outside:
// looking at the box centre from the +Z side and somewhat above (+Y up,
// the OBJ convention), far enough that the box's bounding sphere fits
// the vertical field of view. An empty box gives a camera at (0, 0, 1)
// looking at the origin.
func DefaultCamera(b scenes.Bounds) Camera {
	if b.Empty() {
		return Camera{Eye: mgl32.Vec3{0, 0, 1}, Up: mgl32.Vec3{0, 1, 0}, FovY: DefaultFovY}
	}
	c := b.Min.Add(b.Max).Mul(0.5)
	r := b.Max.Sub(b.Min).Len() / 2
	if !(r > 0) || math.IsInf(float64(r), 0) {
		r = 1
	}
	dist := r / float32(math.Sin(DefaultFovY/2*math.Pi/180))
	dir := mgl32.Vec3{0.35, 0.45, 1}.Normalize()
	return Camera{Eye: c.Add(dir.Mul(dist)), Look: c, Up: mgl32.Vec3{0, 1, 0}, FovY: DefaultFovY}
}

// Basis returns the camera's unit forward, right and up vectors.
func (c Camera) Basis() (forward, right, up mgl32.Vec3) {
	forward = c.Look.Sub(c.Eye)
	if l := forward.Len(); l > 0 && !math.IsInf(float64(l), 0) {
		forward = forward.Mul(1 / l)
	} else {
		forward = mgl32.Vec3{0, 0, -1}
	}
	upHint := c.Up
	right = forward.Cross(upHint)
	if right.Len() < 1e-6*upHint.Len() || upHint.Len() == 0 {
		upHint = mgl32.Vec3{0, 1, 0}
		if abs32(forward[1]) > 0.999 {
			upHint = mgl32.Vec3{0, 0, -1}
		}
		right = forward.Cross(upHint)
	}
	right = right.Normalize()
	up = right.Cross(forward)
	return forward, right, up
}

// Rays returns the w×h primary rays of the camera, row-major with y down
// (ray py·w+px for pixel column px, row py), through the pixel centres,
// unit directions, TMin 0 and TMax +Inf. The image's aspect ratio is w/h;
// FovY spans the image's height. Nil when w or h is not positive.
func (c Camera) Rays(w, h int) []Ray {
	if w <= 0 || h <= 0 {
		return nil
	}
	rays := make([]Ray, w*h)
	c.RaysInto(rays, w, h, 0)
	return rays
}

// RaysInto writes the primary rays of rows first, first+1, ... of a w×h
// image into rays (len(rays)/w rows; a partial row is left alone): Rays
// in bands, for images too large to hold all rays at once.
func (c Camera) RaysInto(rays []Ray, w, h, first int) {
	fov := float64(c.FovY)
	if !(fov > 0 && fov < 180) {
		fov = DefaultFovY
	}
	fwd, right, up := c.Basis()
	th := math.Tan(fov / 2 * math.Pi / 180)
	tw := th * float64(w) / float64(h)
	inf := float32(math.Inf(1))
	for k := 0; k+w <= len(rays); k += w {
		py := first + k/w
		sy := float32((1 - 2*(float64(py)+0.5)/float64(h)) * th)
		for px := 0; px < w; px++ {
			sx := float32((2*(float64(px)+0.5)/float64(w) - 1) * tw)
			d := fwd.Add(right.Mul(sx)).Add(up.Mul(sy)).Normalize()
			rays[k+px] = Ray{Org: c.Eye, Dir: d, TMin: 0, TMax: inf}
		}
	}
}
