package gpubuild

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// levelBook is the host's side of a CUDA level: the read-back (h:
// decisions, 3 words a node, then CountL, CountR and ChildBase, nn words
// each), what count finds in it, the next level's node reference counts
// and the chunks of nodes over which count and book run in parallel. Two
// of them alternate (see booker): count fills one while book reads the
// other.
type levelBook struct {
	h      []uint32
	stride int // the nodes h is laid out for (a bound past the level's, see parts); 0: the level's

	// Pipelined (largeCUDAPipe): h lives in pin, copied there before ev;
	// want is what the device computed for the next level (nodes,
	// references, references parked), which count must find too.
	pin    *cuda.Pinned
	ev     *cuda.Event
	want   [3]int
	refs   atomic.Int32 // the booker's users of it (runPipe)
	skip   bool         // not to be booked (an earlier level failed)
	chunks []bookChunk
	next   []uint32 // the next level's node reference counts, in node order
	nextB  []uint32 // and their budgets (budgets)

	nsplit, npark int    // nodes that split, nodes parked (leaves and small roots)
	nsmall        int    // nodes parked as small roots
	park          int    // references parked once the level is done
	total         uint32 // references of the next level
}

// parts returns the level's decisions (3 words a node), CountL, CountR and
// ChildBase from h, a level of nn nodes laid out for lb.stride nodes (d.dec's
// layout when the level ran on a bound of lb.stride nodes).
func (lb *levelBook) parts(nn int) (dec, cl, cr, cb []uint32) {
	st := lb.stride
	if st == 0 {
		st = nn
	}
	h := lb.h
	return h[:3*nn], h[3*st : 3*st+nn], h[4*st : 4*st+nn], h[5*st : 5*st+nn]
}

// bookChunk is one chunk of bookGrain nodes: count's counts, then their
// exclusive prefix (the chunk's first split rank, parked rank and parking
// offset).
type bookChunk struct {
	split, npark, nsmall int
	refs                 uint64
	err                  error
}

// bookGrain is the number of nodes of a bookChunk.
const bookGrain = 4096

// count checks a level's read-back for its nodes, whose reference counts
// are cnt (the children laid out node after node: ChildBase is the running
// sum of the counts; every fate a split, a leaf or a small root), counts
// what the device work after it needs: splits, parked nodes and references
// (parked0 parked before), the next level's references; and lists the next
// level's node reference counts in lb.next (CountL and CountR of each
// split, in node order), so that the next level is counted without its
// nodes: book makes those later, on another goroutine.
func (lb *levelBook) count(workers int, cnt []uint32, parked0 int) error {
	nn := len(cnt)
	dec, cl, cr, cb := lb.parts(nn)
	nch := (nn + bookGrain - 1) / bookGrain
	if cap(lb.chunks) < nch {
		lb.chunks = make([]bookChunk, nch, nch+nch/4)
	}
	lb.chunks = lb.chunks[:nch]
	exec.ParallelFor(workers, nch, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			var k bookChunk
			for i := c * bookGrain; i < min((c+1)*bookGrain, nn); i++ {
				want := uint64(0)
				if i > 0 {
					want = uint64(cb[i-1]) + uint64(cl[i-1]) + uint64(cr[i-1])
				}
				if uint64(cb[i]) != want {
					k.err = fmt.Errorf("kdtree: level node %d: child base %d, want %d", i, cb[i], want)
					break
				}
				f := dec[3*i]
				if f == refbuild.FateSplit {
					k.split++
				} else if f == refbuild.FateLeaf || f == refbuild.FateSmall {
					k.npark++
					k.refs += uint64(cnt[i])
					if f == refbuild.FateSmall {
						k.nsmall++
					}
				} else {
					k.err = fmt.Errorf("kdtree: node %d of level has fate %d after the SAH", i, f)
					break
				}
			}
			lb.chunks[c] = k
		}
	})
	split, npark, nsmall, refs := 0, 0, 0, uint64(parked0)
	for c := range lb.chunks {
		k := &lb.chunks[c]
		if k.err != nil {
			return k.err
		}
		k.split, k.npark, k.refs, split, npark, refs = split, npark, refs, split+k.split, npark+k.npark, refs+k.refs
		k.nsmall, nsmall = nsmall, nsmall+k.nsmall
	}
	sum := uint64(cb[nn-1]) + uint64(cl[nn-1]) + uint64(cr[nn-1])
	if sum > math.MaxUint32 || refs > math.MaxUint32 {
		return fmt.Errorf("kdtree: %d references in a level (%d parked) overflow uint32", sum, refs)
	}
	lb.nsplit, lb.npark, lb.nsmall, lb.park, lb.total = split, npark, nsmall, int(refs), uint32(sum)
	lb.next = refbuild.GrowU32(lb.next, 2*split)
	exec.ParallelFor(workers, nch, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			s := lb.chunks[c].split
			for i := c * bookGrain; i < min((c+1)*bookGrain, nn); i++ {
				if dec[3*i] == refbuild.FateSplit {
					lb.next[2*s], lb.next[2*s+1] = cl[i], cr[i]
					s++
				}
			}
		}
	})
	return nil
}

// budgets follows the duplication budget through a level counted by
// count whose nodes hold cnt references with budgets bud (node order): it
// lists the next level's budgets in lb.nextB (as lb.next lists its
// counts) and returns the nodes over returns true for (the nodes the
// budget made leaves, Builder.OverBudget) and their references. A
// pipelined build keeps no nodes on the host: this is how the host learns
// what the budget did without them.
func (lb *levelBook) budgets(cnt, bud []uint32, over func(cnt, budget uint32) bool) (leaves, refs int64) {
	nn := len(cnt)
	dec, cl, cr, _ := lb.parts(nn)
	lb.nextB = refbuild.GrowU32(lb.nextB, 2*lb.nsplit)
	s := 0
	for i := 0; i < nn; i++ {
		switch dec[3*i] {
		case refbuild.FateSplit:
			sum := cl[i] + cr[i]
			lb.nextB[2*s], lb.nextB[2*s+1] = refbuild.ChildBudget(bud[i], cl[i], sum), refbuild.ChildBudget(bud[i], cr[i], sum)
			s++
		case refbuild.FateLeaf:
			if over(cnt[i], bud[i]) {
				leaves++
				refs += int64(cnt[i])
			}
		}
	}
	return leaves, refs
}

// book keeps the host's records of a level counted by count, by the rules
// of levelGo: a split node's record becomes interior with its children's
// records appended in node order (what records.setInterior does node
// after node: the children of the s-th split are records base+2s and
// base+2s+1), its children become the next level's nodes (returned, in
// lb.spare's memory), and a leaf or small root gets a parked range, its
// references parked after those of the nodes before it, and its record: a
// leaf of parked references, or a small root (the next of rs.small, with
// rs.smallOff, smallCnt, smallDepth and smallBox).
// Each chunk writes at the indices count's prefix gives it, so the chunks
// run in parallel and the result is the sequential one. The next level's
// nodes are made in spare's memory when it is large enough.
func (lb *levelBook) book(workers int, nodes []refbuild.LNode, rs *refbuild.Records, parked []parkedRange, spare []refbuild.LNode) ([]refbuild.LNode, []parkedRange) {
	nn := len(nodes)
	dec, cl, cr, cb := lb.parts(nn)
	out := spare
	if cap(out) < 2*lb.nsplit {
		out = make([]refbuild.LNode, 2*lb.nsplit, 2*lb.nsplit+lb.nsplit/2)
	}
	out = out[:2*lb.nsplit]
	recBase := len(rs.Recs)
	rs.Recs = slices.Grow(rs.Recs, 2*lb.nsplit)[:recBase+2*lb.nsplit]
	clear(rs.Recs[recBase:])
	pBase := len(parked)
	parked = slices.Grow(parked, lb.npark)[:pBase+lb.npark]
	sBase := len(rs.Small)
	rs.Small = slices.Grow(rs.Small, lb.nsmall)[:sBase+lb.nsmall]
	rs.SmallOff = slices.Grow(rs.SmallOff, lb.nsmall)[:sBase+lb.nsmall]
	rs.SmallCnt = slices.Grow(rs.SmallCnt, lb.nsmall)[:sBase+lb.nsmall]
	rs.SmallDepth = slices.Grow(rs.SmallDepth, lb.nsmall)[:sBase+lb.nsmall]
	rs.SmallBox = slices.Grow(rs.SmallBox, 6*lb.nsmall)[:6*(sBase+lb.nsmall)]
	recs, small, smallOff, smallCnt, smallDepth, smallBox := rs.Recs, rs.Small, rs.SmallOff, rs.SmallCnt, rs.SmallDepth, rs.SmallBox
	exec.ParallelFor(workers, len(lb.chunks), 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			k := &lb.chunks[c]
			s, p, q, off := k.split, pBase+k.npark, sBase+k.nsmall, uint32(k.refs)
			for i := c * bookGrain; i < min((c+1)*bookGrain, nn); i++ {
				x := &nodes[i]
				if fate := dec[3*i]; fate != refbuild.FateSplit {
					parked[p] = parkedRange{rec: x.Rec, off: off, cnt: x.Cnt, small: fate == refbuild.FateSmall,
						box: x.Box, depth: x.Depth}
					if fate == refbuild.FateSmall {
						recs[x.Rec] = refbuild.Record{Fate: refbuild.FateSmall, Small: int32(q)}
						small[q] = refbuild.SmallRoot{Box: x.Box, Depth: x.Depth}
						smallOff[q], smallCnt[q], smallDepth[q] = off, x.Cnt, uint32(x.Depth)
						copy(smallBox[6*q:6*q+3], x.Box.Lo[:])
						copy(smallBox[6*q+3:6*q+6], x.Box.Hi[:])
						q++
					} else {
						recs[x.Rec] = refbuild.Record{Fate: refbuild.FateLeaf, Parked: true, Park: off, Pcnt: x.Cnt}
					}
					p++
					off += x.Cnt
					continue
				}
				axis, pos := int(dec[3*i+1]), math.Float32frombits(dec[3*i+2])
				left := int32(recBase + 2*s)
				recs[x.Rec] = refbuild.Record{Fate: refbuild.FateSplit, Axis: uint8(axis), Pos: pos, Left: left}
				lbox, rbox := refbuild.ChildBoxes(x.Box, axis, pos)
				c0, c1, base := cl[i], cr[i], cb[i]
				out[2*s] = refbuild.LNode{Box: lbox, Off: base, Cnt: c0, Depth: x.Depth + 1, Rec: left,
					Budget: refbuild.ChildBudget(x.Budget, c0, c0+c1)}
				out[2*s+1] = refbuild.LNode{Box: rbox, Off: base + c0, Cnt: c1, Depth: x.Depth + 1, Rec: left + 1,
					Budget: refbuild.ChildBudget(x.Budget, c1, c0+c1)}
				s++
			}
		}
	})
	for _, c := range smallCnt[sBase:] {
		if int(c) >= len(rs.SmallHist) {
			rs.SmallHist = append(rs.SmallHist, make([]int, int(c)+1-len(rs.SmallHist))...)
		}
		rs.SmallHist[c]++
	}
	return out, parked
}

// levelDecisions returns a level's decisions from lb.h as levelGo makes
// them (the onLevel hook of tests).
func (lb *levelBook) levelDecisions(nn int) []refbuild.Decision {
	dec := lb.h[:3*nn]
	dd := make([]refbuild.Decision, nn)
	for i := range dd {
		dd[i] = refbuild.Decision{Fate: int(dec[3*i]), Axis: int(dec[3*i+1]), Pos: math.Float32frombits(dec[3*i+2])}
		if dd[i].Fate != refbuild.FateSplit {
			dd[i].Axis, dd[i].Pos = 0, 0
		}
	}
	return dd
}
