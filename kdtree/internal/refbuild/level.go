package refbuild

import (
	"sort"
	"sync"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/consts"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/split"
)

// Node fates decided at each level.
const (
	FateSplit = iota // split at (axis, pos): children in the next level
	FateLeaf         // a leaf of the node's references
	FateSmall        // handed to the small-node phase
)

// flagClipped (consts.FlagClipped) marks a reference whose child boxes are
// in clipL/clipR (split.Addresses looks only at the Left and Right bits).
const flagClipped = uint32(consts.FlagClipped)

// emptyCutoff is the fraction of a node's extent that must be empty on one
// side of its references' tight bounds for the empty space to be cut off
// before any SAH (Zhou et al. 2008 use 25%): consts.EmptyCutoff.
const emptyCutoff = consts.EmptyCutoff

// bigNode is the reference count above which one node's reductions are
// split over the workers.
const bigNode = 1 << 14

// LNode is a node of the large-node phase.
type LNode struct {
	Box   AABB
	Off   uint32 // first reference in the level's list
	Cnt   uint32
	Depth int
	Rec   int32 // its record
	// Budget is the references the node may hold and still split (the
	// duplication budget, budget.go): a large node holding more becomes a
	// leaf.
	Budget uint32
}

// refList holds a level's references: triangle index and box (clipped to
// the node) of each.
type refList struct {
	tri []uint32
	box []AABB
}

func (l *refList) resize(n int) {
	if cap(l.tri) < n {
		l.tri = make([]uint32, n, n+n/4)
		l.box = make([]AABB, n, n+n/4)
	}
	l.tri, l.box = l.tri[:n], l.box[:n]
}

// Decision is the outcome of a large node's split search.
type Decision struct {
	Fate int
	Axis int
	Pos  float32
}

// levelScratch is reused from level to level.
type levelScratch struct {
	flags, dstL, dstR []uint32
	clipL, clipR      []AABB
	offsets           []uint32
	cl, cr, cb        []uint32
	tight             []AABB // every node's tight bounds (nodeBounds)
}

func GrowU32(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n, n+n/4)
	}
	return s[:n]
}

func growBox(s []AABB, n int) []AABB {
	if cap(s) < n {
		return make([]AABB, n, n+n/4)
	}
	return s[:n]
}

// tightBounds returns the union of boxes, over the workers when many.
func (b *Builder) tightBounds(boxes []AABB) AABB {
	if len(boxes) < bigNode {
		t := EmptyBox()
		for i := range boxes {
			t.Union(&boxes[i])
		}
		return t
	}
	var mu sync.Mutex
	t := EmptyBox()
	exec.ParallelFor(b.Ex.Workers(), len(boxes), bigNode/4, func(lo, hi int) {
		p := EmptyBox()
		for i := lo; i < hi; i++ {
			p.Union(&boxes[i])
		}
		mu.Lock()
		t.Union(&p) // min and max: the order does not matter
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
func (b *Builder) nodeBounds(tight, boxes []AABB, offsets []uint32) error {
	flat, off := boxFloats(boxes), offsets[:len(tight)+1]
	if b.OnReduce != nil {
		b.OnReduce(flat, off)
	}
	if b.red == nil {
		b.red = reduce.NewReducer(b.Ex)
	}
	return b.red.SegmentedBoxesAoS(exec.Wrap(boxFloats(tight)), exec.Wrap(flat), exec.Wrap(off))
}

// boxFloats views boxes as 6 floats each (lo xyz, hi xyz), the layout of
// reduce's AoS boxes and of the CUDA kernels.
func boxFloats(boxes []AABB) []float32 {
	if len(boxes) == 0 {
		return nil
	}
	return unsafe.Slice(&boxes[0].Lo[0], 6*len(boxes))
}

// binned fills h with the histogram of boxes, over the workers when many.
func (b *Builder) binned(boxes []AABB, geo *[3]BinGeom, h *hist) {
	h.clear()
	if len(boxes) < bigNode {
		h.fill(boxes, geo)
		return
	}
	var mu sync.Mutex
	exec.ParallelFor(b.Ex.Workers(), len(boxes), bigNode/4, func(lo, hi int) {
		p := NewHist(h.nb)
		p.fill(boxes[lo:hi], geo)
		mu.Lock()
		h.add(p) // integer sums: the order does not matter
		mu.Unlock()
	})
}

// decide chooses the fate of a large node: the small phase at or below
// SmallNode references, a leaf at MaxDepth or above its budget, else empty
// space cut off where a side of the tight bounds is more than emptyCutoff
// empty, else the binned SAH plane when it beats a leaf.
//
// t is the tight bounds of the node's reference boxes (nodeBounds); -0 is
// made +0 here.
func (b *Builder) decide(n *LNode, t AABB, boxes []AABB, p *SAHParams, h *hist) Decision {
	if int(n.Cnt) <= b.Opt.SmallNode {
		return Decision{Fate: FateSmall}
	}
	if n.Depth >= b.Opt.MaxDepth || n.Cnt > n.Budget {
		return Decision{Fate: FateLeaf}
	}
	CanonZero(&t)
	if axis, pos, ok := EmptyCut(&n.Box, &t); ok {
		return Decision{Fate: FateSplit, Axis: axis, Pos: pos}
	}
	var geo [3]BinGeom
	for a := 0; a < 3; a++ {
		geo[a] = NewBinGeom(t.Lo[a], t.Hi[a], b.Opt.Bins)
	}
	b.binned(boxes, &geo, h)
	c := BestBinned(p, &n.Box, n.Cnt, h, &geo)
	if c.axis > 2 || !(c.cost < p.leafCost(n.Cnt)) {
		return Decision{Fate: FateLeaf}
	}
	return Decision{Fate: FateSplit, Axis: c.axis, Pos: c.pos}
}

// classify returns the split flags of a reference with box bx for the plane
// (a, pos): right when it reaches beyond pos, left when it starts before pos
// or does not go right (a box flat in the plane goes left).
func classify(bx *AABB, a int, pos float32) uint32 {
	f := uint32(0)
	if bx.Hi[a] > pos {
		f = split.Right
	}
	if bx.Lo[a] < pos || f == 0 {
		f |= split.Left
	}
	return f
}

// ChildBoxes returns the boxes of the children of box cut at (a, pos).
func ChildBoxes(box AABB, a int, pos float32) (l, r AABB) {
	l, r = box, box
	l.Hi[a], r.Lo[a] = pos, pos
	return l, r
}

// forRefs runs body over the references of a level in chunks, with the
// node s of the chunk's first reference (offsets as in split.Addresses).
func (b *Builder) forRefs(offsets []uint32, body func(lo, hi, s int)) {
	n := int(offsets[len(offsets)-1])
	exec.ParallelFor(b.Ex.Workers(), n, 2048, func(lo, hi int) {
		s := sort.Search(len(offsets)-1, func(i int) bool { return offsets[i+1] > uint32(lo) })
		body(lo, hi, s)
	})
}

// levelGo runs one level of the large-node phase on the Go executor: it
// decides every node's fate, classifies and clips the references of the
// nodes that split, and moves them to the next level's list with
// split.Addresses. It appends records and small roots to rs.
func (b *Builder) levelGo(nodes []LNode, cur *refList, next *refList, sc *levelScratch, rs *Records) ([]LNode, error) {
	p := NewSAH(&b.Opt)
	dec := make([]Decision, len(nodes))
	nr := len(cur.tri)
	sc.offsets = GrowU32(sc.offsets, len(nodes)+1)
	for i := range nodes {
		sc.offsets[i] = nodes[i].Off
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
		if nodes[i].Cnt >= bigNode {
			n := &nodes[i]
			dec[i] = b.decide(n, sc.tight[i], cur.box[n.Off:n.Off+n.Cnt], &p, NewHist(b.Opt.Bins))
		} else {
			small = append(small, i)
		}
	}
	dynamicFor(b.Ex.Workers(), len(small), 4, func() func(lo, hi int) {
		h := NewHist(b.Opt.Bins)
		return func(lo, hi int) {
			for _, i := range small[lo:hi] {
				n := &nodes[i]
				dec[i] = b.decide(n, sc.tight[i], cur.box[n.Off:n.Off+n.Cnt], &p, h)
			}
		}
	})
	b.CountBudget(nodes)
	if b.OnLevel != nil {
		b.OnLevel(nodes, dec)
	}
	// (A large level's passes take a large scene tens of milliseconds
	// each: ctx is looked at between them.)
	if err := b.Ctx.Err(); err != nil {
		return nil, err
	}
	// Flags, with straddling triangles clipped to both children.
	sc.flags = GrowU32(sc.flags, nr)
	sc.dstL, sc.dstR = GrowU32(sc.dstL, nr), GrowU32(sc.dstR, nr)
	sc.clipL, sc.clipR = growBox(sc.clipL, nr), growBox(sc.clipR, nr)
	b.forRefs(sc.offsets, func(lo, hi, s int) {
		for r := lo; r < hi; r++ {
			for uint32(r) >= sc.offsets[s+1] {
				s++
			}
			d := &dec[s]
			if d.Fate != FateSplit {
				sc.flags[r] = 0
				continue
			}
			f := classify(&cur.box[r], d.Axis, d.Pos)
			if f == split.Left|split.Right {
				f = b.clipBoth(r, cur, &nodes[s].Box, d, sc)
			}
			sc.flags[r] = f
		}
	})
	if err := b.Ctx.Err(); err != nil {
		return nil, err
	}
	// Addresses of the copies.
	sc.cl, sc.cr, sc.cb = GrowU32(sc.cl, len(nodes)), GrowU32(sc.cr, len(nodes)), GrowU32(sc.cb, len(nodes))
	total, err := split.Addresses(b.Ex, nil, exec.Wrap(sc.flags), exec.Wrap(sc.offsets), split.Result{
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
	var out []LNode
	for i := range nodes {
		n := &nodes[i]
		d := &dec[i]
		switch d.Fate {
		case FateLeaf:
			rs.SetLeaf(n.Rec, cur.tri[n.Off:n.Off+n.Cnt])
		case FateSmall:
			rs.SetSmall(n.Rec, SmallRoot{Box: n.Box, Depth: n.Depth,
				Tri:  append([]uint32(nil), cur.tri[n.Off:n.Off+n.Cnt]...),
				Box2: append([]AABB(nil), cur.box[n.Off:n.Off+n.Cnt]...)})
		default:
			left := rs.SetInterior(n.Rec, d.Axis, d.Pos)
			lb, rb := ChildBoxes(n.Box, d.Axis, d.Pos)
			cl, cr := sc.cl[i], sc.cr[i]
			out = append(out,
				LNode{Box: lb, Off: sc.cb[i], Cnt: cl, Depth: n.Depth + 1, Rec: left, Budget: ChildBudget(n.Budget, cl, cl+cr)},
				LNode{Box: rb, Off: sc.cb[i] + cl, Cnt: cr, Depth: n.Depth + 1, Rec: left + 1, Budget: ChildBudget(n.Budget, cr, cl+cr)})
		}
	}
	return out, nil
}

// clipBoth clips the triangle of straddling reference r to both children
// of box cut at d, storing the boxes in sc.clipL/clipR, and returns the
// flags of the sides it really reaches (with flagClipped). Should rounding
// lose it on both sides it keeps both with its current box cut at the plane.
func (b *Builder) clipBoth(r int, cur *refList, box *AABB, d *Decision, sc *levelScratch) uint32 {
	t := &b.Tris[cur.tri[r]]
	bl, br, okL, okR := ClipSplit(t, box, &cur.box[r], d.Axis, d.Pos)
	if !okL && !okR {
		bl, br = cur.box[r], cur.box[r]
		bl.Hi[d.Axis], br.Lo[d.Axis] = d.Pos, d.Pos
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

// EmptyCut returns the plane that cuts empty space off a node of box
// whose content has the tight bounds t (CanonZero'd): the widest empty
// slab over emptyCutoff of the extent, lowest axis and the low side first
// on ties, strictly inside the box; ok is false when there is none.
func EmptyCut(box, t *AABB) (axis int, pos float32, ok bool) {
	bestFrac := float32(emptyCutoff)
	axis = -1
	for a := 0; a < 3; a++ {
		ext := box.Hi[a] - box.Lo[a]
		if !(ext > 0) {
			continue
		}
		if f := (t.Lo[a] - box.Lo[a]) / ext; f > bestFrac && t.Lo[a] > box.Lo[a] && t.Lo[a] < box.Hi[a] {
			bestFrac, axis, pos = f, a, t.Lo[a]
		}
		if f := (box.Hi[a] - t.Hi[a]) / ext; f > bestFrac && t.Hi[a] > box.Lo[a] && t.Hi[a] < box.Hi[a] {
			bestFrac, axis, pos = f, a, t.Hi[a]
		}
	}
	return axis, pos, axis >= 0
}

// CanonZero replaces -0 by +0 in a box, so that a bound reached by several
// references whose coordinates are -0 and +0 has one bit pattern whatever
// the order of the reduction (the CUDA keys map both zeros to +0).
func CanonZero(b *AABB) {
	for a := 0; a < 3; a++ {
		if b.Lo[a] == 0 {
			b.Lo[a] = 0
		}
		if b.Hi[a] == 0 {
			b.Hi[a] = 0
		}
	}
}
