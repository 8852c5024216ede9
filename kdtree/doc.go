// Package kdtree builds SAH kd-trees over triangle scenes, breadth first and
// data parallel, on either executor, and traverses them for ray tracers.
//
// Coordinate range: the float32 watertight ray-triangle test (intersect.go)
// multiplies up to three coordinate differences, so its hits are exact
// (a scene scaled by a power of two has the same hits, T scaled alike) for
// coordinates up to scenes.MaxExactCoordinate (2^40 ≈ 1.1e12) in magnitude
// and scene extents down to scenes.MinExactExtent (2^-32 ≈ 2.3e-10); beyond,
// products over- or underflow and hits are lost. scenes documents the
// arithmetic and warns at load time.
package kdtree
