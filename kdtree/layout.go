package kdtree

import "fmt"

// record is a node of the tree under construction, in creation order.
type record struct {
	fate  uint8 // fateSplit (interior), fateLeaf or fateSmall (a small root)
	axis  uint8
	pos   float32
	left  int32    // interior: the below child's record; the above child is left+1
	small int32    // fateSmall: index of the small root
	refs  []uint32 // leaf: triangle indices, ascending
	// parked (CUDA build, device layout): a leaf whose pcnt references are
	// still on the device, parked from offset park.
	parked     bool
	park, pcnt uint32
}

// records collects the large phase's records and the small roots; each small
// root's subtree comes back as its own record list (indices local to it).
type records struct {
	recs  []record
	small []smallRoot
	// smallOff, smallCnt, smallDepth and smallBox (CUDA large phase):
	// small root i's parked references are smallCnt[i] from smallOff[i]
	// on, its depth smallDepth[i] and its box smallBox[6i..6i+5] (lo,
	// hi), as kdtree_small_w_f32 reads them.
	smallOff, smallCnt, smallDepth []uint32
	smallBox                       []float32
	// smallHist[c]: the small roots of c references (levelBook.book
	// counts them as it books, for largestFirstHist).
	smallHist []int
	smallOut  [][]record
	// shared, when set, holds the subtrees of every small root in one list
	// (the CUDA small phase): root i is record i.
	shared []record
}

// add appends an undecided record and returns its index.
func (rs *records) add() int32 {
	rs.recs = append(rs.recs, record{})
	return int32(len(rs.recs) - 1)
}

func (rs *records) setLeaf(i int32, tri []uint32) {
	rs.recs[i] = record{fate: fateLeaf, refs: append([]uint32(nil), tri...)}
}

func (rs *records) setSmall(i int32, sr smallRoot) {
	rs.recs[i] = record{fate: fateSmall, small: int32(len(rs.small))}
	rs.small = append(rs.small, sr)
}

// setInterior makes record i interior and returns its below child's record
// (the above child's is the next one).
func (rs *records) setInterior(i int32, axis int, pos float32) int32 {
	l := rs.add()
	rs.add()
	rs.recs[i] = record{fate: fateSplit, axis: uint8(axis), pos: pos, left: l}
	return l
}

// layoutGo writes the records depth first: the below child right after its
// parent, then the above child; leaf references in the same order.
func layoutGo(rs *records) ([]Node, []uint32, error) {
	nn, nrefs := 0, 0
	count := func(list []record) {
		for i := range list {
			nn++
			nrefs += len(list[i].refs)
		}
	}
	count(rs.recs)
	for _, l := range rs.smallOut {
		count(l)
	}
	count(rs.shared)
	nn -= len(rs.small) // a small root's record and its subtree's root are one node
	nodes := make([]Node, 0, nn)
	refs := make([]uint32, 0, nrefs)
	var emit func(list []record, i int32) error
	emit = func(list []record, i int32) error {
		r := &list[i]
		switch r.fate {
		case fateSmall:
			if rs.shared != nil {
				return emit(rs.shared, r.small)
			}
			return emit(rs.smallOut[r.small], 0)
		case fateLeaf:
			if len(r.refs) >= MaxChildIndex {
				return fmt.Errorf("kdtree: leaf of %d references exceeds 2^30", len(r.refs))
			}
			nodes = append(nodes, LeafNode(uint32(len(refs)), uint32(len(r.refs))))
			refs = append(refs, r.refs...)
			return nil
		}
		me := len(nodes)
		nodes = append(nodes, Node{})
		if err := emit(list, r.left); err != nil {
			return err
		}
		above := len(nodes)
		if above >= MaxChildIndex {
			return fmt.Errorf("kdtree: tree of more than 2^30 nodes")
		}
		nodes[me] = InteriorNode(int(r.axis), r.pos, uint32(above))
		return emit(list, r.left+1)
	}
	if err := emit(rs.recs, 0); err != nil {
		return nil, nil, err
	}
	return nodes, refs, nil
}
