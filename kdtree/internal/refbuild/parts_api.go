package refbuild

// The pieces of a large-phase decision that kdtree.BuildParts uses to split
// a scene by the builder's own top decisions (kdtree/parts_split.go).

// Bounds is the triangle's bounding box.
func (t *Triangle) Bounds() AABB { return t.bounds() }

// Bin is the bin of coordinate x (the same rule as the large phase's).
func (g BinGeom) Bin(x float32) int { return g.bin(x) }

// CountBox counts a reference whose box starts in bin lo and ends in bin hi
// on axis a.
func (h *hist) CountBox(a, lo, hi int) {
	h.lo[a][lo]++
	h.hi[a][hi]++
}

// Add adds o's counts to h's.
func (h *hist) Add(o *hist) { h.add(o) }

// Split is the chosen plane: its axis and position, ok false when the
// node is best left a leaf.
func (c choice) Split() (axis int, pos float32, ok bool) {
	return c.axis, c.pos, c.axis <= 2
}
