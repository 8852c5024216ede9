package kdtree

import (
	"sort"
	"sync"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/split"
)

// Node fates decided at each level.
const (
	fateSplit = iota // split at (axis, pos): children in the next level
	fateLeaf         // a leaf of the node's references
	fateSmall        // handed to the small-node phase
)

// flagClipped marks a reference whose child boxes are in clipL/clipR
// (split.Addresses looks only at the Left and Right bits).
const flagClipped = 4

// emptyCutoff is the fraction of a node's extent that must be empty on one
// side of its references' tight bounds for the empty space to be cut off
// before any SAH (Zhou et al. 2008 use 25%).
const emptyCutoff = 0.25

// bigNode is the reference count above which one node's reductions are
// split over the workers.
const bigNode = 1 << 14

// lnode is a node of the large-node phase.
type lnode struct {
	box   aabb
	off   uint32 // first reference in the level's list
	cnt   uint32
	depth int
	rec   int32 // its record
}

// refList holds a level's references: triangle index and box (clipped to
// the node) of each.
type refList struct {
	tri []uint32
	box []aabb
}

func (l *refList) resize(n int) {
	if cap(l.tri) < n {
		l.tri = make([]uint32, n, n+n/4)
		l.box = make([]aabb, n, n+n/4)
	}
	l.tri, l.box = l.tri[:n], l.box[:n]
}

// decision is the outcome of a large node's split search.
type decision struct {
	fate int
	axis int
	pos  float32
}

// levelScratch is reused from level to level.
type levelScratch struct {
	flags, dstL, dstR []uint32
	clipL, clipR      []aabb
	offsets           []uint32
	cl, cr, cb        []uint32
	tight             []aabb // every node's tight bounds (nodeBounds)
}

func growU32(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n, n+n/4)
	}
	return s[:n]
}

func growBox(s []aabb, n int) []aabb {
	if cap(s) < n {
		return make([]aabb, n, n+n/4)
	}
	return s[:n]
}

// tightBounds returns the union of boxes, over the workers when many.
func (b *builder) tightBounds(boxes []aabb) aabb {
	if len(boxes) < bigNode {
		t := emptyBox()
		for i := range boxes {
			t.union(&boxes[i])
		}
		return t
	}
	var mu sync.Mutex
	t := emptyBox()
	exec.ParallelFor(b.ex.Workers(), len(boxes), bigNode/4, func(lo, hi int) {
		p := emptyBox()
		for i := lo; i < hi; i++ {
			p.union(&boxes[i])
		}
		mu.Lock()
		t.union(&p) // min and max: the order does not matter
		mu.Unlock()
	})
	return t
}

// nodeBounds sets tight[s] to the union of boxes[offsets[s]:offsets[s+1]]
// for every node s of a level (len(tight) = len(offsets)-1; an empty node
// gets the empty box), by the segmented box reduction of reduce/ on the
// build's executor: the algorithm the CUDA path runs on the device
// (decideCUDA). Min and max are exact, so any order gives the same bits
// but for the sign of a zero, which decide canonicalises.
func (b *builder) nodeBounds(tight, boxes []aabb, offsets []uint32) error {
	flat, off := boxFloats(boxes), offsets[:len(tight)+1]
	if b.onReduce != nil {
		b.onReduce(flat, off)
	}
	if b.red == nil {
		b.red = reduce.NewReducer(b.ex)
	}
	return b.red.SegmentedBoxesAoS(exec.Wrap(boxFloats(tight)), exec.Wrap(flat), exec.Wrap(off))
}

// boxFloats views boxes as 6 floats each (lo xyz, hi xyz), the layout of
// reduce's AoS boxes and of the CUDA kernels.
func boxFloats(boxes []aabb) []float32 {
	if len(boxes) == 0 {
		return nil
	}
	return unsafe.Slice(&boxes[0].lo[0], 6*len(boxes))
}

// binned fills h with the histogram of boxes, over the workers when many.
func (b *builder) binned(boxes []aabb, geo *[3]binGeom, h *hist) {
	h.clear()
	if len(boxes) < bigNode {
		h.fill(boxes, geo)
		return
	}
	var mu sync.Mutex
	exec.ParallelFor(b.ex.Workers(), len(boxes), bigNode/4, func(lo, hi int) {
		p := newHist(h.nb)
		p.fill(boxes[lo:hi], geo)
		mu.Lock()
		h.add(p) // integer sums: the order does not matter
		mu.Unlock()
	})
}

// decide chooses the fate of a large node: the small phase at or below
// SmallNode references, a leaf at MaxDepth, else empty space cut off where a
// side of the tight bounds is more than emptyCutoff empty, else the binned
// SAH plane when it beats a leaf.
//
// t is the tight bounds of the node's reference boxes (nodeBounds); -0 is
// made +0 here.
func (b *builder) decide(n *lnode, t aabb, boxes []aabb, p *sahParams, h *hist) decision {
	if int(n.cnt) <= b.opt.SmallNode {
		return decision{fate: fateSmall}
	}
	if n.depth >= b.opt.MaxDepth {
		return decision{fate: fateLeaf}
	}
	canonZero(&t)
	// Empty space: the widest empty slab, lowest axis and side on ties.
	bestFrac, axis, pos := float32(emptyCutoff), -1, float32(0)
	for a := 0; a < 3; a++ {
		ext := n.box.hi[a] - n.box.lo[a]
		if !(ext > 0) {
			continue
		}
		if f := (t.lo[a] - n.box.lo[a]) / ext; f > bestFrac && t.lo[a] > n.box.lo[a] && t.lo[a] < n.box.hi[a] {
			bestFrac, axis, pos = f, a, t.lo[a]
		}
		if f := (n.box.hi[a] - t.hi[a]) / ext; f > bestFrac && t.hi[a] > n.box.lo[a] && t.hi[a] < n.box.hi[a] {
			bestFrac, axis, pos = f, a, t.hi[a]
		}
	}
	if axis >= 0 {
		return decision{fate: fateSplit, axis: axis, pos: pos}
	}
	var geo [3]binGeom
	for a := 0; a < 3; a++ {
		geo[a] = newBinGeom(t.lo[a], t.hi[a], b.opt.Bins)
	}
	b.binned(boxes, &geo, h)
	c := bestBinned(p, &n.box, n.cnt, h, &geo)
	if c.axis > 2 || !(c.cost < p.leafCost(n.cnt)) {
		return decision{fate: fateLeaf}
	}
	return decision{fate: fateSplit, axis: c.axis, pos: c.pos}
}

// classify returns the split flags of a reference with box bx for the plane
// (a, pos): right when it reaches beyond pos, left when it starts before pos
// or does not go right (a box flat in the plane goes left).
func classify(bx *aabb, a int, pos float32) uint32 {
	f := uint32(0)
	if bx.hi[a] > pos {
		f = split.Right
	}
	if bx.lo[a] < pos || f == 0 {
		f |= split.Left
	}
	return f
}

// childBoxes returns the boxes of the children of box cut at (a, pos).
func childBoxes(box aabb, a int, pos float32) (l, r aabb) {
	l, r = box, box
	l.hi[a], r.lo[a] = pos, pos
	return l, r
}

// forRefs runs body over the references of a level in chunks, with the
// node s of the chunk's first reference (offsets as in split.Addresses).
func (b *builder) forRefs(offsets []uint32, body func(lo, hi, s int)) {
	n := int(offsets[len(offsets)-1])
	exec.ParallelFor(b.ex.Workers(), n, 2048, func(lo, hi int) {
		s := sort.Search(len(offsets)-1, func(i int) bool { return offsets[i+1] > uint32(lo) })
		body(lo, hi, s)
	})
}

// levelGo runs one level of the large-node phase on the Go executor: it
// decides every node's fate, classifies and clips the references of the
// nodes that split, and moves them to the next level's list with
// split.Addresses. It appends records and small roots to rs.
func (b *builder) levelGo(nodes []lnode, cur *refList, next *refList, sc *levelScratch, rs *records) ([]lnode, error) {
	p := newSAH(&b.opt)
	dec := make([]decision, len(nodes))
	nr := len(cur.tri)
	sc.offsets = growU32(sc.offsets, len(nodes)+1)
	for i := range nodes {
		sc.offsets[i] = nodes[i].off
	}
	sc.offsets[len(nodes)] = uint32(nr)
	sc.tight = growBox(sc.tight, len(nodes))
	if err := b.nodeBounds(sc.tight, cur.box, sc.offsets); err != nil {
		return nil, err
	}
	// Decide, the biggest nodes one at a time over all workers, the others
	// in parallel over nodes.
	var small []int
	for i := range nodes {
		if nodes[i].cnt >= bigNode {
			n := &nodes[i]
			dec[i] = b.decide(n, sc.tight[i], cur.box[n.off:n.off+n.cnt], &p, newHist(b.opt.Bins))
		} else {
			small = append(small, i)
		}
	}
	dynamicFor(b.ex.Workers(), len(small), 4, func() func(lo, hi int) {
		h := newHist(b.opt.Bins)
		return func(lo, hi int) {
			for _, i := range small[lo:hi] {
				n := &nodes[i]
				dec[i] = b.decide(n, sc.tight[i], cur.box[n.off:n.off+n.cnt], &p, h)
			}
		}
	})
	if b.onLevel != nil {
		b.onLevel(nodes, dec)
	}
	// (A large level's passes take a large scene tens of milliseconds
	// each: ctx is looked at between them.)
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	// Flags, with straddling triangles clipped to both children.
	sc.flags = growU32(sc.flags, nr)
	sc.dstL, sc.dstR = growU32(sc.dstL, nr), growU32(sc.dstR, nr)
	sc.clipL, sc.clipR = growBox(sc.clipL, nr), growBox(sc.clipR, nr)
	b.forRefs(sc.offsets, func(lo, hi, s int) {
		for r := lo; r < hi; r++ {
			for uint32(r) >= sc.offsets[s+1] {
				s++
			}
			d := &dec[s]
			if d.fate != fateSplit {
				sc.flags[r] = 0
				continue
			}
			f := classify(&cur.box[r], d.axis, d.pos)
			if f == split.Left|split.Right {
				f = b.clipBoth(r, cur, &nodes[s].box, d, sc)
			}
			sc.flags[r] = f
		}
	})
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	// Addresses of the copies.
	sc.cl, sc.cr, sc.cb = growU32(sc.cl, len(nodes)), growU32(sc.cr, len(nodes)), growU32(sc.cb, len(nodes))
	total, err := split.Addresses(b.ex, nil, exec.Wrap(sc.flags), exec.Wrap(sc.offsets), split.Result{
		DstL: exec.Wrap(sc.dstL), DstR: exec.Wrap(sc.dstR),
		CountL: exec.Wrap(sc.cl), CountR: exec.Wrap(sc.cr), ChildBase: exec.Wrap(sc.cb),
	})
	if err != nil {
		return nil, err
	}
	// Scatter.
	next.resize(int(total))
	b.forRefs(sc.offsets, func(lo, hi, s int) {
		for r := lo; r < hi; r++ {
			f := sc.flags[r]
			if f == 0 {
				continue
			}
			t := cur.tri[r]
			bl, br := &cur.box[r], &cur.box[r]
			if f&flagClipped != 0 {
				bl, br = &sc.clipL[r], &sc.clipR[r]
			}
			if f&split.Left != 0 {
				next.tri[sc.dstL[r]], next.box[sc.dstL[r]] = t, *bl
			}
			if f&split.Right != 0 {
				next.tri[sc.dstR[r]], next.box[sc.dstR[r]] = t, *br
			}
		}
	})
	// Records and the next level's nodes.
	var out []lnode
	for i := range nodes {
		n := &nodes[i]
		d := &dec[i]
		switch d.fate {
		case fateLeaf:
			rs.setLeaf(n.rec, cur.tri[n.off:n.off+n.cnt])
		case fateSmall:
			rs.setSmall(n.rec, smallRoot{box: n.box, depth: n.depth,
				tri:  append([]uint32(nil), cur.tri[n.off:n.off+n.cnt]...),
				box2: append([]aabb(nil), cur.box[n.off:n.off+n.cnt]...)})
		default:
			left := rs.setInterior(n.rec, d.axis, d.pos)
			lb, rb := childBoxes(n.box, d.axis, d.pos)
			out = append(out,
				lnode{box: lb, off: sc.cb[i], cnt: sc.cl[i], depth: n.depth + 1, rec: left},
				lnode{box: rb, off: sc.cb[i] + sc.cl[i], cnt: sc.cr[i], depth: n.depth + 1, rec: left + 1})
		}
	}
	return out, nil
}

// clipBoth clips the triangle of straddling reference r to both children
// of box cut at d, storing the boxes in sc.clipL/clipR, and returns the
// flags of the sides it really reaches (with flagClipped). Should rounding
// lose it on both sides it keeps both with its current box cut at the plane.
func (b *builder) clipBoth(r int, cur *refList, box *aabb, d *decision, sc *levelScratch) uint32 {
	t := &b.tris[cur.tri[r]]
	bl, br, okL, okR := clipSplit(t, box, &cur.box[r], d.axis, d.pos)
	if !okL && !okR {
		bl, br = cur.box[r], cur.box[r]
		bl.hi[d.axis], br.lo[d.axis] = d.pos, d.pos
		okL, okR = true, true
	}
	sc.clipL[r], sc.clipR[r] = bl, br
	f := uint32(flagClipped)
	if okL {
		f |= split.Left
	}
	if okR {
		f |= split.Right
	}
	return f
}

// canonZero replaces -0 by +0 in a box, so that a bound reached by several
// references whose coordinates are -0 and +0 has one bit pattern whatever
// the order of the reduction (the CUDA keys map both zeros to +0).
func canonZero(b *aabb) {
	for a := 0; a < 3; a++ {
		if b.lo[a] == 0 {
			b.lo[a] = 0
		}
		if b.hi[a] == 0 {
			b.hi[a] = 0
		}
	}
}
