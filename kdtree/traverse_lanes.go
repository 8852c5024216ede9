package kdtree

import (
	"fmt"
	"math"
)

// laneCount is the number of rays traceLanes walks at once. With the nodes
// and triangles prefetched a turn ahead, 8 lanes beat 4 on the bunny's
// random rays and tie on conference's, which more lanes do not speed up
// (docs/performance.md, "CPU tracing").
const laneCount = 8

// lane is one ray of traceLanes in flight: descendFinite's state, kept in
// memory between the lane's turns.
type lane struct {
	ray int // index in the batch; -1 when the lane is idle (park)
	// node is the node of the lane's next turn; laneOver when the walk is
	// over or the lane idle; with laneFetched, a leaf on its last turn.
	node       uint32
	tmin, tmax float32
	sp         int
	best       Hit
	ax         rayAxes
	pre        rayPre
	stack      [MaxTreeDepth + 1]stackEntry
}

// park makes l idle: no ray, its walk over.
func (l *lane) park() {
	l.ray, l.node, l.sp = -1, laneOver, 0
}

// laneOver and laneFetched are the lane.node values besides a node index
// (below MaxChildIndex): a walk over, and a leaf's mark for its second
// turn (lanesRunGo).
const (
	laneOver    = ^uint32(0)
	laneFetched = uint32(1) << 31
)

// lanes is the state of traceLanes, one per goroutine of a batch, reused
// from chunk to chunk.
type lanes [laneCount]lane

// laneData is what the lanes' run reads besides the lanes: the tree's
// nodes and references, the triangles (traceData.tris) and the query.
type laneData struct {
	nodes  []Node
	refs   []uint32
	tris   []triVerts
	anyHit bool
}

// traceLanes traces rays[lo:hi] and sets out's answer for each ray i,
// in no particular order, with the hit trace would return: the closest hit
// with its normal, or with anyHit the first hit found (no normal).
//
// The rays that descendFinite takes are walked laneCount at a time, one
// step of each in turn, with an interior step that has no branch: the
// memory latency of one ray's next node and the arithmetic of its step
// overlap the other rays' work, where a lone ray waits for each node and
// pays a mispredicted branch at about every second node of an incoherent
// walk. Each lane takes descendFinite's nodes, order and intervals, so
// the hits are the same. Other rays go through trace one by one. The
// steps, the leaves' triangle tests and the pops run in lanesRunAsm
// (amd64) or lanesRunGo, which come back here at a walk's end, or for a
// leaf with a triangle whose edge function is exactly 0.
func (t *Tree) traceLanes(ls *lanes, rays []Ray, lo, hi int, anyHit bool, out *answers) {
	if len(t.Nodes) == 0 {
		missAll(lo, hi, out)
		return
	}
	d := t.traceData()
	f := laneFeed{t: t, d: d, rays: rays, next: lo, hi: hi, anyHit: anyHit, out: out}
	active := 0
	for k := range ls {
		if f.fill(&ls[k]) {
			active++
		}
	}
	ld := laneData{nodes: t.Nodes, refs: t.Refs, tris: d.tris, anyHit: anyHit}
	for k := 0; active > 0; k = (k + 1) % laneCount {
		if packetAVX2 {
			k = lanesRunAsm(ls, &ld, k)
		} else {
			k = lanesRunGo(ls, &ld, k)
		}
		l := &ls[k]
		if l.node != laneOver {
			if int(l.node) >= len(t.Nodes) {
				panic(fmt.Sprintf("kdtree: node %d of %d reached in a walk: the tree is not valid", l.node, len(t.Nodes)))
			}
			if !l.leafThenPop(&ld, t.Nodes[l.node]) {
				continue // a leaf the run left to testLeaf
			}
		}
		out.put(l.ray, l.best)
		if !f.fill(l) {
			active--
		}
	}
}

// lanesRunGo runs the lanes' walks one turn each in turn, from lane start,
// until one of them is over or at a leaf it leaves to the caller, and
// returns that lane, or −1 when every lane is idle. A turn at an interior
// node is a step; at an empty leaf, a pop (as descendFinite pops: the next
// entry that may still hold a closer hit); at a leaf with triangles, a
// turn that only marks it (laneFetched), then on the lane's next turn its
// triangles tested as testLeaf tests them, and a pop. lanesRunAsm
// prefetches the triangles on the first of the two: tested when first
// reached, they were up to a third of the time on random rays, two levels
// of loads (references, then triangles) that no other lane's work covered.
// (Returning to Go for each leaf cost 5-14%.) A walk is over when its
// stack holds no entry to pop (a closest hit then gets its normal,
// lane.over), or at an any-hit query's first hit: node is then laneOver
// and sp 0. The run leaves to the caller's leafThenPop a
// leaf (node its index) at a triangle with an edge function of exactly 0,
// the triangles before it tested: testing them again changes nothing, and
// testLeaf computes that triangle's edges in float64. A turn at a node
// index past len(ld.nodes) returns the lane, node that index (the caller
// panics). (lanesRunAsm in lanes_run_amd64.s is the same in assembly; it
// also leaves a leaf whose references or triangles lie past the slices'
// ends, where this panics.)
//
// The interior step is descendFinite's without a branch: the far child
// and its part of the interval are always written above the stack's top,
// and kept (sp incremented) only when both children are visited. The
// three cases are told apart by the signs of hi − tmin (negative: the
// plane's reach ends before the interval, second child only) and
// tmax − lo (negative: the interval ends before the plane, first child
// only): differences of finite floats (rayAxes.finite, a box-clipped
// interval) whose sign is the comparison's, since tmin ≥ +0, tmax > 0
// and hi = tp + slack is never −0; the interval is never empty, so at
// most one is negative. lanesRunAsm prefetches the next node at once and
// reads it on the lane's next turn: by then the load has landed, and
// neither the wait nor the leaf test on it stalls the other lanes.
func lanesRunGo(ls *lanes, ld *laneData, start int) int {
	nodes := ld.nodes
	idle := 0
	for k := start; ; k = (k + 1) % laneCount {
		l := &ls[k]
		node := l.node
		if uint64(node) >= uint64(len(nodes)) {
			switch {
			case node == laneOver && l.ray >= 0:
				return k
			case node == laneOver:
				if idle++; idle == laneCount {
					return -1
				}
				continue
			case node&laneFetched == 0 || uint64(node&^laneFetched) >= uint64(len(nodes)):
				return k
			}
			idle = 0
			l.node = node &^ laneFetched
			n := nodes[l.node]
			cnt := n.W1 >> 2
			if uint64(n.W0)+uint64(cnt) > uint64(len(ld.refs)) {
				return k
			}
			_, done, stopped := testLeaf(ld.refs[n.W0:n.W0+cnt], ld.tris, &l.pre, &l.best, ld.anyHit, true)
			if stopped {
				return k
			}
			if done {
				l.node, l.sp = laneOver, 0
				return k
			}
			if !l.pop() {
				l.over(ld)
				return k
			}
			continue
		}
		idle = 0
		n := nodes[node]
		if w1 := n.W1; w1&3 != leafTag {
			a, ax := w1&3, &l.ax
			tp := (math.Float32frombits(n.W0) - ax.org[a]) * ax.inv[a]
			lo, hi := tp-ax.wide[a], tp+ax.wide[a]
			below := node + 1
			swap := (below ^ w1>>2) & ax.flip[a]
			first, second := below^swap, w1>>2^swap
			tmin, tmax, sp := l.tmin, l.tmax, l.sp
			// sp < MaxTreeDepth here: an interior node is at most
			// MaxTreeDepth−1 deep (Validate) and the stack holds at
			// most one entry per level above it.
			l.stack[sp&(MaxTreeDepth-1)] = stackEntry{second, max(lo, tmin), tmax}
			onlySecond := uint32(int32(math.Float32bits(hi-tmin)) >> 31)
			onlyFirst := uint32(int32(math.Float32bits(tmax-lo)) >> 31)
			kept := math.Float32bits(min(hi, tmax))
			kept ^= (kept ^ math.Float32bits(tmax)) & onlySecond
			l.sp = sp + int(^(onlyFirst|onlySecond)&1)
			l.node = first ^ ((first ^ second) & onlySecond)
			l.tmax = math.Float32frombits(kept)
			continue
		}
		if n.W1>>2 != 0 {
			l.node = node | laneFetched
			continue
		}
		if !l.pop() {
			l.over(ld)
			return k
		}
	}
}

// pop sets l at the next entry of its stack that may still hold a closer
// hit, as descendFinite pops; with none left it reports false and the
// walk is over (node laneOver, sp 0).
func (l *lane) pop() bool {
	for l.sp != 0 {
		l.sp--
		e := &l.stack[l.sp&(MaxTreeDepth-1)]
		if e.tmin <= l.best.T {
			l.node, l.tmin, l.tmax = e.node, e.tmin, e.tmax
			return true
		}
	}
	l.node = laneOver
	return false
}

// over ends l's walk after its last pop: with a closest hit, it sets the
// hit's normal (the run's walks end here, so that traceLanes does not call
// back for it).
func (l *lane) over(ld *laneData) {
	if !ld.anyHit && int(l.best.Prim) < len(ld.tris) {
		v := &ld.tris[l.best.Prim]
		l.best.N = geometricNormal(v[0], v[1], v[2])
	}
}

// leafThenPop tests the triangles of leaf n for lane l, then pops the next
// entry that may still hold a closer hit (as descendFinite's loop does);
// true when the lane's walk is over: a hit with anyHit, or an empty stack
// (a closest hit then has its normal, lane.over).
func (l *lane) leafThenPop(ld *laneData, n Node) bool {
	if cnt := n.W1 >> 2; cnt != 0 {
		if _, found, _ := testLeaf(ld.refs[n.W0:n.W0+cnt], ld.tris, &l.pre, &l.best, ld.anyHit, false); found {
			return true
		}
	}
	if l.pop() {
		return false
	}
	l.over(ld)
	return true
}

// answers is where a group walk puts each ray's answer: hits[i] (the hit
// trace returns) or, when hits is nil, occluded[i] (whether there is one).
type answers struct {
	hits     []Hit
	occluded []bool
}

// put sets ray i's answer to h. (A method the compiler inlines: a
// function value called per ray cost 8% of a camera-ray batch.)
func (a *answers) put(i int, h Hit) {
	if a.hits != nil {
		a.hits[i] = h
		return
	}
	a.occluded[i] = h.Prim != NoHit
}

// missRun answers rays lo to hi−1 (at most packetSize) with a miss: one
// copy, for a group of camera rays that all miss the box.
func (a *answers) missRun(lo, hi int) {
	if a.hits != nil {
		copy(a.hits[lo:hi], missHits[:])
		return
	}
	clear(a.occluded[lo:hi])
}

// missHits is packetSize misses.
var missHits = func() (m [packetSize]Hit) {
	for i := range m {
		m[i] = missHit()
	}
	return m
}()

// missAll answers rays lo to hi−1 with a miss (a tree with no nodes).
func missAll(lo, hi int, out *answers) {
	for i := lo; i < hi; i++ {
		out.put(i, missHit())
	}
}
