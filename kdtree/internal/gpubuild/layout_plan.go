package gpubuild

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// The large-phase half of layoutTop in two steps, so that the walk over
// the records runs while the device builds the small subtrees, whose sizes
// it does not need: a node's place in the depth-first array is the number
// of large-phase nodes before it plus the sizes of the small subtrees
// before it, and the walk knows the first and which small roots come
// before (the k-th in depth-first order and all before it). planTop walks
// the records and keeps, for each node, those two; topPlan.place adds the
// prefix sums of the subtrees' sizes once they are known: a pass over
// arrays instead of a walk over the records (the grid's layoutTop took 23
// ms on the device machine, after the small phase).

// planNode is a large-phase node of a topPlan: its place is at (large
// nodes before it) plus the sizes of the first k small subtrees in
// depth-first order; an interior node's above child is at child plus
// those of the first kc; a leaf's references start at ref (the large
// leaves' references before it) plus those of the first k small subtrees.
type planNode struct {
	at, child, ref uint64
	k, kc          uint32
	leaf           bool
	axis           uint8
	pos            float32
	cnt            uint32 // leaf: reference count
}

// topPlan is planTop's result.
type topPlan struct {
	nodes []planNode
	// order[k] is the k-th small root in depth-first order; before[k] the
	// large-phase nodes and references before it.
	order            []uint32
	beforeN, beforeR []uint64
	copies           []planCopy
	fills            []planFill
	largeN, largeR   uint64 // the large-phase nodes and leaf references
	roots            int

	// The memory place fills, made (and its pages touched) by planTop,
	// which runs while the device works: place then only computes.
	out    *topLayout
	sn, sr []uint64
}

// planned is planTop's result sent from a goroutine.
type planned struct {
	p    *topPlan
	err  error
	took time.Duration // planTop's host time (the sub-phase layout.plantop)
}

// planCopy: a large-phase leaf parked on the device (parked offset, count),
// its references at ref plus the small subtrees' before the k-th.
type planCopy struct {
	park, cnt uint32
	ref       uint64
	k         uint32
}

type planFill struct {
	ref  uint64
	k    uint32
	refs []uint32
}

// planCache keeps the memory of a topPlan (and its topLayout) from build
// to build: made anew, the arrays cost planTop most of its time (bunny:
// 0.17-0.38 ms on the device machine, on the build's path once the small
// phase got shorter than the booker's last levels plus planTop; a
// benchmark on the bunny's records: 63% of it allocating, zeroing and
// collecting). A plan goes back with releasePlan once its layout is
// downloaded. Plans of more than maxCachedPlan bytes are not kept. (The
// host room, hostRoom, kept the same way made the bunny's booking no
// faster on the device machine: not kept.)
var planCache struct {
	mu sync.Mutex
	p  *topPlan
}

// maxCachedPlan is the most memory of a plan planCache keeps.
const maxCachedPlan = 32 << 20

// capBytes is the memory of s's capacity.
func capBytes[T any](s []T) int {
	var z T
	return cap(s) * int(unsafe.Sizeof(z))
}

// releasePlan gives p's memory back to planCache; p and its topLayout must
// not be used after.
func releasePlan(p *topPlan) {
	if p == nil {
		return
	}
	bytes := capBytes(p.nodes) + capBytes(p.order) + capBytes(p.beforeN) + capBytes(p.beforeR) +
		capBytes(p.copies) + capBytes(p.fills) + capBytes(p.sn) + capBytes(p.sr)
	if t := p.out; t != nil {
		clear(t.fills) // references into the build's records
		bytes += capBytes(t.nodes) + capBytes(t.up) + capBytes(t.fills)
	}
	clear(p.fills)
	if bytes > maxCachedPlan {
		return
	}
	planCache.mu.Lock()
	planCache.p = p
	planCache.mu.Unlock()
}

// grown is s with length n, its memory reused when the capacity allows,
// else new memory (touched: see there). The contents are unspecified.
func grown[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return touched(make([]T, n, n+n/4))
}

// planTop walks rs.recs depth first (as layoutGo) and returns the plan of
// the large-phase nodes (see topPlan).
func planTop(rs *refbuild.Records) (*topPlan, error) {
	roots := len(rs.Small)
	top := max(len(rs.Recs)-roots, 0)
	planCache.mu.Lock()
	p := planCache.p
	planCache.p = nil
	planCache.mu.Unlock()
	if p == nil {
		p = &topPlan{out: &topLayout{}}
	}
	p.nodes, p.order = grown(p.nodes, top)[:0], grown(p.order, roots)[:0]
	p.beforeN, p.beforeR = grown(p.beforeN, roots)[:0], grown(p.beforeR, roots)[:0]
	p.copies, p.fills = grown(p.copies, top/2+1)[:0], p.fills[:0]
	p.roots = roots
	var nn, nr uint64
	// An explicit stack: records left to emit, or (negative) the interior
	// node whose above child comes next (its child index is known then).
	stack := []int64{0}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		k := uint32(len(p.order))
		if e < 0 {
			x := &p.nodes[-e-1]
			x.child, x.kc = nn, k
			continue
		}
		r := &rs.Recs[e]
		switch r.Fate {
		case refbuild.FateSmall:
			p.order = append(p.order, uint32(r.Small))
			p.beforeN = append(p.beforeN, nn)
			p.beforeR = append(p.beforeR, nr)
		case refbuild.FateLeaf:
			cnt := uint64(len(r.Refs))
			if r.Parked {
				cnt = uint64(r.Pcnt)
			}
			if cnt >= refbuild.MaxChildIndex {
				return nil, fmt.Errorf("kdtree: leaf of %d references exceeds 2^30", cnt)
			}
			p.nodes = append(p.nodes, planNode{at: nn, ref: nr, k: k, leaf: true, cnt: uint32(cnt)})
			if r.Parked {
				if cnt > 0 {
					p.copies = append(p.copies, planCopy{park: r.Park, cnt: uint32(cnt), ref: nr, k: k})
				}
			} else if cnt > 0 {
				p.fills = append(p.fills, planFill{ref: nr, k: k, refs: r.Refs})
			}
			nn++
			nr += cnt
		default:
			p.nodes = append(p.nodes, planNode{at: nn, k: k, axis: r.Axis, pos: r.Pos})
			nn++
			// Below child first, then the above child's index, then it.
			stack = append(stack, int64(r.Left+1), -int64(len(p.nodes)), int64(r.Left))
		}
	}
	p.largeN, p.largeR = nn, nr
	// base and copies in one array, which layoutCUDA uploads as it is.
	t := p.out
	t.up = grown(t.up, 2*roots+3*len(p.copies))
	t.base, t.copies = t.up[:2*roots], t.up[2*roots:]
	t.nodes, t.fills = grown(t.nodes, len(p.nodes)), grown(t.fills, len(p.fills))
	t.numNodes, t.numRefs = 0, 0
	p.sn, p.sr = grown(p.sn, roots+1), grown(p.sr, roots+1)
	p.sn[0], p.sr[0] = 0, 0 // the running totals start at 0 (prefixSizes)
	return p, nil
}

// place lays the plan out with the small subtrees' sizes (size has
// 2·roots entries: nodes, then references of each root's subtree), as
// layoutTop, on up to workers goroutines, all but the large-phase nodes
// (placeNodes). It may be called once.
func (p *topPlan) place(size []uint32, workers int) (*topLayout, error) {
	roots := p.roots
	if len(size) != 2*roots {
		panic(fmt.Sprintf("kdtree: topPlan.place with %d sizes for %d small roots", len(size), roots))
	}
	// sn[k], sr[k]: nodes and references of the first k small subtrees in
	// depth-first order.
	sn, sr := p.sn, p.sr
	prefixSizes(p.order, size, sn, sr, workers)
	nn, nr := p.largeN+sn[roots], p.largeR+sr[roots]
	const refLimit = 1 << 32
	if nn >= refbuild.MaxChildIndex || nr >= refLimit {
		return nil, fmt.Errorf("kdtree: tree of %d nodes and %d references exceeds the node format (2^30 nodes, 2^32 references)", nn, nr)
	}
	t := p.out
	t.numNodes, t.numRefs = int(nn), int(nr)
	// Goroutines only for long loops: each costs a wake-up, tens of
	// microseconds on the device machine, more than 16k items take.
	const grain = 1 << 14
	exec.ParallelFor(workers, roots, grain, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			s := p.order[k]
			t.base[s], t.base[roots+int(s)] = uint32(p.beforeN[k]+sn[k]), uint32(p.beforeR[k]+sr[k])
		}
	})
	exec.ParallelFor(workers, len(p.copies), grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c := &p.copies[i]
			t.copies[3*i], t.copies[3*i+1], t.copies[3*i+2] = c.park, uint32(c.ref+sr[c.k]), c.cnt
		}
	})
	for i, f := range p.fills {
		t.fills[i] = topFill{at: uint32(f.ref + sr[f.k]), refs: f.refs}
	}
	return t, nil
}

// placeNodes lays out the large-phase nodes (t.nodes, which only
// topLayout.finish reads) once place has run, on up to workers goroutines:
// apart from place so that layoutCUDA runs it while the device lays out
// the small subtrees.
func (p *topPlan) placeNodes(workers int) {
	t, sn, sr := p.out, p.sn, p.sr
	const grain = 1 << 14
	exec.ParallelFor(workers, len(p.nodes), grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := &p.nodes[i]
			at := uint32(x.at + sn[x.k])
			if x.leaf {
				t.nodes[i] = topNode{at: at, node: refbuild.LeafNode(uint32(x.ref+sr[x.k]), x.cnt)}
			} else {
				t.nodes[i] = topNode{at: at, node: refbuild.InteriorNode(int(x.axis), x.pos, uint32(x.child+sn[x.kc]))}
			}
		}
	})
}

// prefixSizes writes the running totals of the small subtrees' nodes and
// references in the order of order (size: nodes, then references, of each
// root) into sn and sr (len(order)+1 entries each, from sn[0] and sr[0]):
// sums of chunks on up to workers goroutines, the chunks' starts, then the
// chunks' running totals.
func prefixSizes(order, size []uint32, sn, sr []uint64, workers int) {
	roots := len(order)
	const grain = 1 << 15
	chunks := max(1, min(workers, roots/grain))
	type sums struct{ n, r uint64 }
	part := make([]sums, chunks+1)
	part[0] = sums{sn[0], sr[0]}
	span := func(c int) (int, int) { return c * roots / chunks, (c + 1) * roots / chunks }
	exec.ParallelFor(chunks, chunks, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			a, b := span(c)
			var n, r uint64
			for _, s := range order[a:b] {
				n += uint64(size[s])
				r += uint64(size[roots+int(s)])
			}
			part[c+1] = sums{n, r}
		}
	})
	for c := 1; c <= chunks; c++ {
		part[c].n += part[c-1].n
		part[c].r += part[c-1].r
	}
	exec.ParallelFor(chunks, chunks, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			a, b := span(c)
			n, r := part[c].n, part[c].r
			for k := a; k < b; k++ {
				s := order[k]
				n += uint64(size[s])
				r += uint64(size[roots+int(s)])
				sn[k+1], sr[k+1] = n, r
			}
		}
	})
}
