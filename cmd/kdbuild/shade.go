package main

import (
	"context"
	"image"
	"image/color"
	"math"
	"runtime"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// Shading of kdbuild render. Surfaces are grey, lit by a key light from
// above and behind the camera's left shoulder plus a headlight, with the
// shading normal (shadingNormal: the file's normals interpolated across the
// triangle where the scene keeps them, else the geometric normal Hit.N)
// turned towards the viewer (two-sided); with ambient occlusion the light
// is scaled by the fraction of N cosine-distributed rays from the hit point
// that escape within aoRadius·(the scene's diagonal), spread over the
// hemisphere of the geometric normal so that no ray starts below the
// surface. Values are linear and stored as sRGB.
const (
	aoRadius   = 0.1  // AO ray length as a fraction of the scene's diagonal
	aoOffset   = 1e-5 // AO rays' TMin as a fraction of the scene's diagonal
	aoSeed     = 0x6b64_6275_696c_6421
	bandPixels = 1 << 18 // primary rays traced per batch
)

// Colours (linear).
var (
	albedo      = mgl32.Vec3{0.80, 0.78, 0.74}
	skyTop      = mgl32.Vec3{0.10, 0.12, 0.16}
	skyBottom   = mgl32.Vec3{0.02, 0.02, 0.03}
	keyStrength = float32(0.65)
	headlight   = float32(0.30)
	ambientBase = float32(0.05)
)

// renderShaded traces the w×h image of camera c through the batch queries
// in bands of rows (progress gets the rows done) and shades it; ao > 0
// adds ambient occlusion with ao rays per pixel. It returns the image and
// the number of rays traced.
func renderShaded(ctx context.Context, tree *kdtree.Tree, c kdtree.Camera, w, h, ao int, progress func(rows int)) (*image.RGBA, int64, error) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fwd, right, up := c.Basis()
	light := up.Mul(0.8).Sub(right.Mul(0.45)).Sub(fwd.Mul(0.5)).Normalize()
	diag := sceneDiagonal(tree.Scene)
	var attr *scenes.Attributes
	if tree.Scene != nil {
		attr = tree.Scene.Attr
	}
	bandRows := max(1, bandPixels/(w*(1+ao))) // AO rays included
	rays := make([]kdtree.Ray, bandRows*w)
	hits := make([]kdtree.Hit, len(rays))
	var aoRays []kdtree.Ray
	var occluded []bool
	var total int64
	for y0 := 0; y0 < h; y0 += bandRows {
		rows := min(bandRows, h-y0)
		n := rows * w
		c.RaysInto(rays[:n], w, h, y0)
		if err := tree.IntersectBatch(ctx, rays[:n], hits[:n]); err != nil {
			return nil, 0, err
		}
		total += int64(n)
		var open []float32 // per pixel of the band: fraction of AO rays that escape
		if ao > 0 {
			aoRays = aoRayBatch(aoRays[:0], rays[:n], hits[:n], y0*w, ao, diag)
			if cap(occluded) < len(aoRays) {
				occluded = make([]bool, len(aoRays))
			}
			occluded = occluded[:len(aoRays)]
			if err := tree.OccludedBatch(ctx, aoRays, occluded); err != nil {
				return nil, 0, err
			}
			total += int64(len(aoRays))
			open = aoFractions(hits[:n], occluded, ao)
		}
		// Shading is independent per pixel: every core takes runs of pixels.
		exec.ParallelFor(runtime.GOMAXPROCS(0), n, 4096, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x, y := i%w, y0+i/w
				var col mgl32.Vec3
				if hits[i].Prim == kdtree.NoHit {
					s := float32(y) / float32(max(h-1, 1))
					col = skyTop.Mul(1 - s).Add(skyBottom.Mul(s))
				} else {
					nrm := facing(shadingNormal(attr, hits[i]), rays[i].Dir)
					lambert := max(0, nrm.Dot(light))
					head := abs32(nrm.Dot(rays[i].Dir))
					lum := ambientBase + keyStrength*lambert + headlight*head
					if open != nil {
						lum = (0.2 + 0.8*lambert) * open[i]
					}
					col = albedo.Mul(lum)
				}
				img.SetRGBA(x, y, srgb(col))
			}
		})
		if progress != nil {
			progress(rows)
		}
	}
	return img, total, nil
}

// shadingNormal returns the normal to shade hit h with: when attr has a
// normal for each corner of the hit triangle, their blend by the hit's
// barycentrics (weights 1−U−V, U, V for corners 0, 1, 2), else (or when the
// blend is zero or not finite) the geometric normal h.N. Neither is
// normalised or turned; facing does both.
func shadingNormal(attr *scenes.Attributes, h kdtree.Hit) mgl32.Vec3 {
	if attr == nil || int64(h.Prim) >= int64(len(attr.NormalIdx)) {
		return h.N
	}
	idx := attr.NormalIdx[h.Prim]
	for _, i := range idx {
		if i == scenes.NoAttr || int64(i) >= int64(len(attr.Normals)) {
			return h.N
		}
	}
	w0 := 1 - h.U - h.V
	n := attr.Normals[idx[0]].Mul(w0).Add(attr.Normals[idx[1]].Mul(h.U)).Add(attr.Normals[idx[2]].Mul(h.V))
	if l := n.Len(); !(l > 0) || math.IsInf(float64(l), 0) {
		return h.N
	}
	return n
}

// facing returns n normalised and turned to face against dir (towards the
// viewer); a zero normal gives −dir.
func facing(n, dir mgl32.Vec3) mgl32.Vec3 {
	l := n.Len()
	if !(l > 0) || math.IsInf(float64(l), 0) {
		return dir.Mul(-1).Normalize()
	}
	n = n.Mul(1 / l)
	if n.Dot(dir) > 0 {
		n = n.Mul(-1)
	}
	return n
}

// aoRayBatch appends ao occlusion rays for every hit of the band (pixels
// first, first+1, ...): from the hit point over the hemisphere of the
// facing normal, cosine-distributed, TMin aoOffset·diag and TMax
// aoRadius·diag. Each pixel's random numbers come from its own splitmix64
// stream seeded by its index, so an image does not depend on its bands.
func aoRayBatch(out []kdtree.Ray, rays []kdtree.Ray, hits []kdtree.Hit, first, ao int, diag float32) []kdtree.Ray {
	tmin, tmax := aoOffset*diag, aoRadius*diag
	for i, h := range hits {
		if h.Prim == kdtree.NoHit {
			continue
		}
		r := rays[i]
		p := r.Org.Add(r.Dir.Mul(h.T))
		n := facing(h.N, r.Dir)
		t1, t2 := orthonormal(n)
		g := pixelRNG(uint64(first + i))
		for k := 0; k < ao; k++ {
			u1, u2 := g.float(), g.float()
			rad := float32(math.Sqrt(u1))
			phi := 2 * math.Pi * u2
			d := t1.Mul(rad * float32(math.Cos(phi))).Add(t2.Mul(rad * float32(math.Sin(phi)))).Add(n.Mul(float32(math.Sqrt(1 - u1))))
			out = append(out, kdtree.Ray{Org: p, Dir: d, TMin: tmin, TMax: tmax})
		}
	}
	return out
}

// aoFractions turns the occlusion results (ao per hit pixel, in order)
// into the escaping fraction per pixel of the band.
func aoFractions(hits []kdtree.Hit, occluded []bool, ao int) []float32 {
	open := make([]float32, len(hits))
	k := 0
	for i, h := range hits {
		if h.Prim == kdtree.NoHit {
			continue
		}
		free := 0
		for _, o := range occluded[k : k+ao] {
			if !o {
				free++
			}
		}
		k += ao
		open[i] = float32(free) / float32(ao)
	}
	return open
}

// orthonormal returns two unit vectors perpendicular to unit n and to
// each other.
func orthonormal(n mgl32.Vec3) (mgl32.Vec3, mgl32.Vec3) {
	a := mgl32.Vec3{1, 0, 0}
	if abs32(n[0]) > 0.9 {
		a = mgl32.Vec3{0, 1, 0}
	}
	t1 := a.Cross(n).Normalize()
	return t1, n.Cross(t1)
}

// pixelRNG is a splitmix64 stream for one pixel.
type pixelRNG uint64

func (g *pixelRNG) next() uint64 {
	*g += 0x9E3779B97F4A7C15
	z := uint64(*g) ^ aoSeed
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// float returns a uniform float64 in [0, 1).
func (g *pixelRNG) float() float64 { return float64(g.next()>>11) * 0x1p-53 }

// sceneDiagonal is the length of the scene box's diagonal (1 for an empty
// or non-finite box).
func sceneDiagonal(s *scenes.Scene) float32 {
	if s == nil || s.Bounds.Empty() {
		return 1
	}
	d := s.Bounds.Max.Sub(s.Bounds.Min).Len()
	if !(d > 0) || math.IsInf(float64(d), 0) {
		return 1
	}
	return d
}

// srgb encodes a linear colour as 8-bit sRGB.
func srgb(c mgl32.Vec3) color.RGBA {
	var out [3]uint8
	for i, v := range c {
		v = min(max(v, 0), 1)
		var s float64
		if v <= 0.0031308 {
			s = 12.92 * float64(v)
		} else {
			s = 1.055*math.Pow(float64(v), 1/2.4) - 0.055
		}
		out[i] = uint8(math.Round(s * 255))
	}
	return color.RGBA{out[0], out[1], out[2], 255}
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }
