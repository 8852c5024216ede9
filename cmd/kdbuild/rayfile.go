package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
)

// rayRecordBytes is the size of one ray in a ray file: six little-endian
// float32, ox oy oz dx dy dz.
const rayRecordBytes = 24

// maxRayFileRays bounds a ray file (2^28 rays, 6 GiB of input), so that a
// wrong file is refused before it fills the memory.
const maxRayFileRays = 1 << 28

// traceRays returns the rays named by spec: "primary" (kdtree.PrimaryRays),
// "random" (kdtree.RandomRays, n of them, 1,000,000 when n is 0) or a ray
// file; for primary and a file, the first n rays when n > 0.
func traceRays(spec string, n int, b scenes.Bounds) ([]kdtree.Ray, error) {
	var rays []kdtree.Ray
	switch spec {
	case "primary":
		rays = kdtree.PrimaryRays(b)
	case "random":
		if n == 0 {
			n = defaultRandomRays
		}
		return kdtree.RandomRays(b, n), nil
	default:
		f, err := os.Open(spec)
		if err != nil {
			return nil, fmt.Errorf("--rays: %w (want primary, random or a ray file)", err)
		}
		defer f.Close()
		if rays, err = readRays(f, spec, n); err != nil {
			return nil, err
		}
	}
	if n > 0 && n < len(rays) {
		rays = rays[:n]
	}
	return rays, nil
}

// readRays reads a raw ray file: rayRecordBytes per ray, TMin 0 and TMax
// +Inf. It reads at most limit rays when limit > 0. Every component must
// be finite; a size that is not a whole number of rays, an empty file and
// a non-finite component are errors naming the file and the ray.
func readRays(r io.Reader, name string, limit int) ([]kdtree.Ray, error) {
	want := maxRayFileRays
	if limit > 0 {
		want = min(limit, want)
	}
	var rays []kdtree.Ray
	var rec [rayRecordBytes]byte
	for len(rays) < want {
		k, err := io.ReadFull(r, rec[:])
		if err == io.EOF {
			break
		}
		if err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%s: %d bytes after ray %d: not a whole ray (a ray is %d bytes: float32 ox oy oz dx dy dz, little-endian)",
				name, k, len(rays), rayRecordBytes)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var v [6]float32
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[4*i:]))
			if math.IsNaN(float64(v[i])) || math.IsInf(float64(v[i]), 0) {
				return nil, fmt.Errorf("%s: ray %d (byte %d): component %d (%s) is %v, want a finite number",
					name, len(rays), len(rays)*rayRecordBytes+4*i, i, [6]string{"ox", "oy", "oz", "dx", "dy", "dz"}[i], v[i])
			}
		}
		rays = append(rays, kdtree.NewRay([3]float32{v[0], v[1], v[2]}, [3]float32{v[3], v[4], v[5]}))
	}
	if limit == 0 && len(rays) == maxRayFileRays {
		if k, _ := r.Read(rec[:1]); k > 0 {
			return nil, fmt.Errorf("%s: more than %d rays; pass --n to read the first ones", name, maxRayFileRays)
		}
	}
	if len(rays) == 0 {
		return nil, fmt.Errorf("%s: no rays (a ray is %d bytes: float32 ox oy oz dx dy dz, little-endian)", name, rayRecordBytes)
	}
	return rays, nil
}
