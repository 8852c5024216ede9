package gpubuild

import (
	"fmt"
	"math"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
)

// The layout of a CUDA build, split between host and device. The small
// phase (kdtree_small_w_f32) leaves every small root's subtree on the device
// as records in the small record format (see smallRecords); the large
// phase's records (a few thousand for a scene of 10^5 triangles) are on the
// host. The layout then runs in four steps, all but the second on the
// device:
//
//  1. smallSizes: the node and reference count of every small subtree
//     (counted by kdtree_small_w_f32), read back with its counters;
//  2. layoutTop: the large-phase records depth first on the host, which
//     gives each small root the index of its first node and first reference
//     in the final arrays (an exclusive scan of the sizes in depth-first
//     order), and each large-phase leaf its reference range;
//  3. smallEmit: every small subtree written depth first at its base
//     (kdtree_small_place_u32, a thread per record, from the places in
//     depth-first order that the small kernel recorded as it popped the
//     nodes; kdtree_small_emit_u32, a walk per root, when a subtree was too
//     large for the places), the large-phase leaves' references
//     copied from where they were parked (kdtree_copy_ranges_u32);
//  4. one download of the node and reference arrays, into which the host
//     writes the large-phase nodes.
//
// The result is layoutGo's, node for node: the same depth-first order (below
// child next, then the above child), leaf references in the same order.

// smallRecords documents the small record format shared with the kernels:
// record i is rec[3i], rec[3i+1], rec[3i+2]; small root r is record r.
//
//	interior: {axis << 8, float bits of the split, index of the below child
//	          record (the above child is the next record)}
//	leaf:     {1, offset of its first reference in srefs, reference count}
const smallLeafFate = 1

// smallSizes is the reference of kdtree_small_w_f32's sizes: size[r] = nodes of
// small root r's subtree, size[roots+r] = its leaves' references.
func smallSizes(rec []uint32, roots int) ([]uint32, error) {
	size := make([]uint32, 2*roots)
	var st []uint32
	for r := 0; r < roots; r++ {
		st = append(st[:0], uint32(r))
		var nodes, refs uint32
		for len(st) > 0 {
			i := st[len(st)-1]
			st = st[:len(st)-1]
			if 3*int(i)+2 >= len(rec) {
				return nil, fmt.Errorf("kdtree: small record %d of %d", i, len(rec)/3)
			}
			nodes++
			if rec[3*i]&0xFF == smallLeafFate {
				refs += rec[3*i+2]
				continue
			}
			left := rec[3*i+2]
			st = append(st, left+1, left)
		}
		size[r], size[roots+r] = nodes, refs
	}
	return size, nil
}

// smallEmit is the reference of kdtree_small_emit_u32: small root r's
// subtree written depth first from nodes[base[r]] with its references from
// refs[base[roots+r]], copied in order from srefs.
func smallEmit(rec, srefs []uint32, roots int, base []uint32, nodes []refbuild.Node, refs []uint32) {
	type entry struct{ rec, parent uint32 }
	const none = math.MaxUint32
	var st []entry
	for r := 0; r < roots; r++ {
		at, ref := base[r], base[roots+r]
		st = append(st[:0], entry{uint32(r), none})
		for len(st) > 0 {
			e := st[len(st)-1]
			st = st[:len(st)-1]
			me := at
			at++
			if e.parent != none {
				nodes[e.parent].W1 |= me << 2
			}
			w0, w1, w2 := rec[3*e.rec], rec[3*e.rec+1], rec[3*e.rec+2]
			if w0&0xFF == smallLeafFate {
				nodes[me] = refbuild.Node{W0: ref, W1: w2<<2 | refbuild.LeafTag}
				copy(refs[ref:ref+w2], srefs[w1:w1+w2])
				ref += w2
				continue
			}
			nodes[me] = refbuild.Node{W0: w1, W1: w0 >> 8 & 3}
			st = append(st, entry{w2 + 1, me}, entry{w2, none})
		}
	}
}

// topNode is a large-phase node of the final array.
type topNode struct {
	at   uint32
	node refbuild.Node
}

// topLayout is the host half of the layout: the large-phase nodes and where
// everything else goes.
type topLayout struct {
	nodes []topNode
	// base[r] and base[roots+r]: first node and first reference of small
	// root r's subtree.
	base []uint32
	// copies: for each large-phase leaf parked on the device, (parked
	// offset, reference offset in the tree, count).
	copies []uint32
	// up is base then copies, one array (they are views of it): what
	// layoutCUDA uploads.
	up []uint32
	// fills: large-phase leaves whose references are on the host.
	fills []topFill
	// Totals of the tree.
	numNodes, numRefs int
}

type topFill struct {
	at   uint32
	refs []uint32
}

// layoutTop lays out rs.recs depth first (as layoutGo) with the small
// subtrees' sizes from smallSizes (size has 2·len(rs.small) entries):
// planTop, then topPlan.place and placeNodes on up to workers goroutines.
// The plan is returned too, for releasePlan once t is done with.
func layoutTop(rs *refbuild.Records, size []uint32, workers int) (*topLayout, *topPlan, error) {
	if len(size) != 2*len(rs.Small) {
		panic(fmt.Sprintf("kdtree: layoutTop with %d sizes for %d small roots", len(size), len(rs.Small)))
	}
	p, err := planTop(rs)
	if err != nil {
		return nil, nil, err
	}
	t, err := p.place(size, workers)
	if err != nil {
		return nil, nil, err
	}
	p.placeNodes(workers)
	return t, p, nil
}

// finish writes the large-phase nodes and host-held references into the
// downloaded arrays.
func (t *topLayout) finish(nodes []refbuild.Node, refs []uint32) {
	for _, x := range t.nodes {
		nodes[x.at] = x.node
	}
	for _, f := range t.fills {
		copy(refs[f.at:], f.refs)
	}
}

// layoutSmallHost is the whole split layout run on the host with the
// reference loops (tests compare it with layoutGo; the CUDA build runs the
// same steps with kernels). srefs and parked are the small records'
// references and the parked references of large-phase leaves.
func layoutSmallHost(rs *refbuild.Records, rec, srefs, parked []uint32) ([]refbuild.Node, []uint32, error) {
	size, err := smallSizes(rec, len(rs.Small))
	if err != nil {
		return nil, nil, err
	}
	t, p, err := layoutTop(rs, size, 4) // 4: place's parallel chunks in the tests
	if err != nil {
		return nil, nil, err
	}
	// The plan's memory goes back to planPool (the tests' next layouts
	// reuse it, as builds do).
	defer releasePlan(p)
	nodes := make([]refbuild.Node, t.numNodes)
	refs := make([]uint32, t.numRefs)
	// What layoutCUDA uploads: the bases, then the copies, in t.up.
	base, copies := t.up[:2*len(rs.Small)], t.up[2*len(rs.Small):]
	smallEmit(rec, srefs, len(rs.Small), base, nodes, refs)
	for k := 0; k+2 < len(copies); k += 3 {
		from, to, n := copies[k], copies[k+1], copies[k+2]
		copy(refs[to:to+n], parked[from:from+n])
	}
	t.finish(nodes, refs)
	return nodes, refs, nil
}
