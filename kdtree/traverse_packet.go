package kdtree

import (
	"math"
	"math/bits"
)

// packetSize is the number of coherent rays tracePackets walks together:
// two AVX2 registers of float32 (16 rays ran 6-10% faster than 8 on the
// shared scenes' camera rays).
const packetSize = 16

// packetStepGo is one interior step for the rays of a packet on the node's
// axis: each ray's crossing tp = (split − o)·inv widened by w, and its
// parts of the two children, [tmin, fmax] for the one entered first with
// fmax = min(tp+w, tmax), and [smin, tmax] for the other with
// smin = max(tp−w, tmin). Bit k of first (second) is set when ray k's
// first (second) part is not empty. A ray with nothing to do at the node
// has tmin > tmax (+Inf and −Inf), and both its parts stay empty. stmax
// gets a copy of tmax (the second part's end, where a push keeps it), and
// tmin a copy of smin when no ray has a first part (the walk goes on to
// the second child).
func packetStepGo(split float32, o, inv, w, tmin, tmax, fmax, smin, stmax *[packetSize]float32) (first, second uint32) {
	for k := range packetSize {
		tp := (split - o[k]) * inv[k]
		fmax[k] = min(tp+w[k], tmax[k])
		smin[k] = max(tp-w[k], tmin[k])
		if tmin[k] <= fmax[k] {
			first |= 1 << k
		}
		if smin[k] <= tmax[k] {
			second |= 1 << k
		}
	}
	*stmax = *tmax
	if first == 0 {
		*tmin = *smin
	}
	return first, second
}

// packetMin is the fewest rays of a group that walk as a packet; fewer
// (most of a group missing the box, or pointing other ways) go one by one,
// which is faster for them.
const packetMin = 4

// packetEntry is a node left for later with each ray's part of it. Bit k
// of direct is set when ray k's own walk would have gone to the node at
// once (the other child held nothing for it) rather than pushed it, so it
// does not check the node against its best hit.
type packetEntry struct {
	node       uint32
	live       uint32 // rays with a part of the node
	direct     uint32
	tmin, tmax [packetSize]float32
}

// packet is the state of tracePackets, one per goroutine of a batch: the
// rays' axes in the layout packetStep reads (per axis, one float per ray).
type packet struct {
	packetClip
	// spre, kperm and sameKz: the lanes that test a leaf's triangles
	// together (shareAxes, testLeafPacket).
	spre   packetPre
	kperm  [4]uint32
	sameKz uint32
	flip   [3]uint32
	ray    [packetSize]int // batch index; -1 for an empty lane
	pre    [packetSize]rayPre
	best   [packetSize]Hit
	stack  [MaxTreeDepth + 1]packetEntry
}

// tracePackets traces rays[lo:hi] like traceLanes (out's answer for each
// ray, the hit trace returns), packetSize consecutive rays at a time. The
// rays of a group that descendFinite takes and that point the same way
// along every axis as the group's first such ray walk the tree together,
// each with its own interval; the others walk one by one.
//
// At an interior node each ray's parts of the two children are
// descendFinite's (packetStep). The packet visits a child where some ray's
// part is not empty, the first before the second, so each ray meets the
// (node, interval) pairs of its own walk in the same order, and a ray
// leaves a popped node where its own walk would skip it (the node starts
// after its best hit). Each ray thus tests the triangles its own walk
// tests and gets the same hit, while the packet shares the node fetches,
// the branches and, with AVX2, the arithmetic of sixteen rays.
func (t *Tree) tracePackets(p *packet, rays []Ray, lo, hi int, anyHit bool, out *answers) {
	if len(t.Nodes) == 0 {
		missAll(lo, hi, out)
		return
	}
	d := t.traceData()
	for i := lo; i < hi; i += packetSize {
		n := t.fillPacket(p, d, rays, i, min(i+packetSize, hi), anyHit, out)
		if n == 0 {
			continue
		}
		if n < packetMin {
			// Too few rays to share a walk: each walks alone. (Keeping
			// every lane's rayAxes to spare trace's setup here made the
			// packet larger and the whole walk 10% slower.)
			for k := range packetSize {
				if j := p.ray[k]; j >= 0 {
					out.put(j, t.trace(&rays[j], anyHit, nil, true))
				}
			}
			continue
		}
		var live uint32
		for k := range packetSize {
			if p.ray[k] >= 0 {
				live |= 1 << k
			}
		}
		if packetAVX2 {
			p.shareAxes(live)
		}
		t.walkPacket(p, d, live, anyHit)
		for k := range packetSize {
			if p.ray[k] < 0 {
				continue
			}
			out.put(p.ray[k], p.best[k]) // with its normal (testOne, testLeafPacket)
		}
	}
}

// fillPacket lays out rays[lo:hi] (at most packetSize) in p's lanes, their
// intervals in p.tmin and p.tmax, and returns how many lanes are in use
// (p.ray is set only when that is not 0). A ray that
// misses the box, or that the packet cannot take, is answered at once
// (a finite ray pointing another way by descendFinite, other rays through
// trace), and its lane left empty.
func (t *Tree) fillPacket(p *packet, d *traceData, rays []Ray, lo, hi int, anyHit bool, out *answers) int {
	if packetAVX2 {
		return t.fillPacketClip(p, d, rays, lo, hi, anyHit, out)
	}
	return t.fillPacketGo(p, d, rays, lo, hi, anyHit, out)
}

// fillPacketGo is fillPacket one ray at a time.
func (t *Tree) fillPacketGo(p *packet, d *traceData, rays []Ray, lo, hi int, anyHit bool, out *answers) (n int) {
	inf := float32(math.Inf(1))
	tmin, tmax := &p.tmin, &p.tmax
	var ax rayAxes
	for k := range packetSize {
		p.ray[k] = -1
		tmin[k], tmax[k] = inf, -inf
		for a := range 3 {
			p.org[a][k], p.inv[a][k], p.wide[a][k] = 0, 0, 0
		}
		i := lo + k
		if i >= hi {
			continue
		}
		r := &rays[i]
		if unusable(r) {
			out.put(i, missHit())
			continue
		}
		t0, t1, in := ax.start(d, r)
		if !in || !(t1 > 0) {
			out.put(i, missHit()) // no hit: outside the box, or no t above 0
			continue
		}
		if n == 0 {
			p.flip = [3]uint32(ax.flip[:3])
		}
		if !ax.finite() {
			out.put(i, t.trace(r, anyHit, nil, true))
			continue
		}
		if [3]uint32(ax.flip[:3]) != p.flip {
			pre := prepare(r)
			h := t.descendFinite(d, &ax, &pre, t0, t1, anyHit)
			if !anyHit && h.Prim != NoHit {
				d.setNormal(&h)
			}
			out.put(i, h)
			continue
		}
		for a := range 3 {
			p.org[a][k], p.inv[a][k], p.wide[a][k] = ax.org[a], ax.inv[a], ax.wide[a]
		}
		p.ray[k], p.pre[k], p.best[k] = i, prepare(r), missHit()
		tmin[k], tmax[k] = t0, t1
		n++
	}
	return n
}

// walkPacket walks the tree for the packet's rays from the root with their
// intervals in p.tmin and p.tmax (tracePackets; the walk uses them as its
// own), leaving each ray's hit in p.best.
func (t *Tree) walkPacket(p *packet, d *traceData, live uint32, anyHit bool) {
	nodes, refs := t.Nodes, t.Refs
	tmin, tmax := &p.tmin, &p.tmax
	var finished uint32
	sp := 0
	node := uint32(0)
	if packetAVX2 {
		node, live = packetWalkAVX2(&nodes[0], p, node, &sp, tmin, tmax, live, 0, false)
	} else {
		node, live = p.descendGo(nodes, node, &sp, tmin, tmax, live)
	}
	for {
		if n := nodes[node]; n.W1>>2 != 0 {
			leaf := refs[n.W0 : n.W0+n.W1>>2]
			todo := live &^ finished
			if vec := todo & p.sameKz; packetAVX2 && bits.OnesCount32(vec) >= packetTriMin {
				todo &^= vec
				finished |= p.testLeafPacket(leaf, d.tris, vec, anyHit)
			}
			for m := todo; m != 0; m &= m - 1 {
				k := bits.TrailingZeros32(m) % packetSize
				if p.testOne(leaf, d.tris, k, anyHit) {
					finished |= 1 << k
				}
			}
		}
		if packetAVX2 {
			node, live = packetWalkAVX2(&nodes[0], p, node, &sp, tmin, tmax, 0, finished, true)
		} else if live = p.popPacketGo(&sp, &node, tmin, tmax, finished); live != 0 {
			node, live = p.descendGo(nodes, node, &sp, tmin, tmax, live)
		}
		if live == 0 && sp == 0 {
			// The stack ran out. (A descent that leaves no ray at its
			// leaf, with entries left, goes on to the next pop.)
			return
		}
	}
}

// descendGo takes the packet from node, with the rays' intervals in tmin
// and tmax and live the rays with a part of it, down to a leaf, and
// returns the leaf and the rays with a part of it, their intervals left in
// tmin and tmax. At each interior node the rays' parts of the two children
// are packetStepGo's; the packet goes on to the first child where some ray
// has a part of it, pushing the second (at p.stack[*sp], with the rays
// whose own walk goes there at once marked direct) where some ray has a
// part of that too, and otherwise to the second. *sp stays below
// MaxTreeDepth on a tree that Validate accepts.
func (p *packet) descendGo(nodes []Node, node uint32, sp *int, tmin, tmax *[packetSize]float32, live uint32) (uint32, uint32) {
	// tmax and the crossing's fmax live in two buffers that trade places
	// when the walk goes on to the first child, copied back once at the
	// leaf; smin and tmax's copy go straight into the stack slot above the
	// top, where a push leaves them.
	var spare [packetSize]float32
	cur, other := tmax, &spare
	for n := nodes[node]; n.W1&3 != leafTag; n = nodes[node] {
		a := n.W1 & 3 % 3
		below := node + 1
		swap := (below ^ n.W1>>2) & p.flip[a]
		first, second := below^swap, n.W1>>2^swap
		slot := &p.stack[*sp%MaxTreeDepth]
		in1, in2 := packetStepGo(math.Float32frombits(n.W0), &p.org[a], &p.inv[a], &p.wide[a], tmin, cur, other, &slot.tmin, &slot.tmax)
		switch {
		case in1 != 0 && in2 != 0:
			slot.node, slot.live, slot.direct = second, in2, in2&^in1
			*sp++
			node, live = first, in1
			cur, other = other, cur
		case in1 != 0:
			node, live = first, in1
			cur, other = other, cur
		default: // packetStepGo has set tmin to the second part's
			node, live = second, in2
		}
	}
	if cur != tmax {
		*tmax = *cur
	}
	return node, live
}

// popPacketGo pops the next entry where some ray is still to go, setting
// the node and the rays' intervals (a ray that is finished, or whose own
// walk would skip the node, gets an empty one: tmin +Inf), and returns the
// mask of the rays with a part of the node; 0 when the stack runs out.
func (p *packet) popPacketGo(sp *int, node *uint32, tmin, tmax *[packetSize]float32, finished uint32) uint32 {
	inf := float32(math.Inf(1))
	for *sp > 0 {
		*sp--
		e := &p.stack[*sp]
		*tmin, *tmax = e.tmin, e.tmax
		live := e.live
		for m := live; m != 0; m &= m - 1 {
			k := bits.TrailingZeros32(m) % packetSize
			if finished>>k&1 != 0 || (e.direct>>k&1 == 0 && !(tmin[k] <= p.best[k].T)) {
				tmin[k] = inf
				live &^= 1 << k
			}
		}
		if live != 0 {
			*node = e.node
			return live
		}
	}
	return 0
}
