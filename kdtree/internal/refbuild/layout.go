package refbuild

import "fmt"

// Record is a node of the tree under construction, in creation order.
type Record struct {
	Fate  uint8 // fateSplit (interior), fateLeaf or fateSmall (a small root)
	Axis  uint8
	Pos   float32
	Left  int32    // interior: the below child's record; the above child is left+1
	Small int32    // fateSmall: index of the small root
	Refs  []uint32 // leaf: triangle indices, ascending
	// Parked (CUDA build, device layout): a leaf whose pcnt references are
	// still on the device, parked from offset park.
	Parked     bool
	Park, Pcnt uint32
}

// Records collects the large phase's records and the small roots; each small
// root's subtree comes back as its own record list (indices local to it).
type Records struct {
	Recs  []Record
	Small []SmallRoot
	// SmallOff, smallCnt, smallDepth and smallBox (CUDA large phase):
	// small root i's parked references are smallCnt[i] from smallOff[i]
	// on, its depth smallDepth[i] and its box smallBox[6i..6i+5] (lo,
	// hi), as kdtree_small_w_f32 reads them.
	SmallOff, SmallCnt, SmallDepth []uint32
	SmallBox                       []float32
	// SmallHist[c]: the small roots of c references (levelBook.book
	// counts them as it books, for largestFirstHist).
	SmallHist []int
	SmallOut  [][]Record
	// shared, when set, holds the subtrees of every small root in one list
	// (the CUDA small phase): root i is record i.
	shared []Record
}

// Add appends an undecided record and returns its index.
func (rs *Records) Add() int32 {
	rs.Recs = append(rs.Recs, Record{})
	return int32(len(rs.Recs) - 1)
}

func (rs *Records) SetLeaf(i int32, tri []uint32) {
	rs.Recs[i] = Record{Fate: FateLeaf, Refs: append([]uint32(nil), tri...)}
}

func (rs *Records) SetSmall(i int32, sr SmallRoot) {
	rs.Recs[i] = Record{Fate: FateSmall, Small: int32(len(rs.Small))}
	rs.Small = append(rs.Small, sr)
}

// SetInterior makes record i interior and returns its below child's record
// (the above child's is the next one).
func (rs *Records) SetInterior(i int32, axis int, pos float32) int32 {
	l := rs.Add()
	rs.Add()
	rs.Recs[i] = Record{Fate: FateSplit, Axis: uint8(axis), Pos: pos, Left: l}
	return l
}

// LayoutGo writes the records depth first: the below child right after its
// parent, then the above child; leaf references in the same order.
func LayoutGo(rs *Records) ([]Node, []uint32, error) {
	nn, nrefs := 0, 0
	count := func(list []Record) {
		for i := range list {
			nn++
			nrefs += len(list[i].Refs)
		}
	}
	count(rs.Recs)
	for _, l := range rs.SmallOut {
		count(l)
	}
	count(rs.shared)
	nn -= len(rs.Small) // a small root's record and its subtree's root are one node
	nodes := make([]Node, 0, nn)
	refs := make([]uint32, 0, nrefs)
	var emit func(list []Record, i int32) error
	emit = func(list []Record, i int32) error {
		r := &list[i]
		switch r.Fate {
		case FateSmall:
			if rs.shared != nil {
				return emit(rs.shared, r.Small)
			}
			return emit(rs.SmallOut[r.Small], 0)
		case FateLeaf:
			if len(r.Refs) >= MaxChildIndex {
				return fmt.Errorf("kdtree: leaf of %d references exceeds 2^30", len(r.Refs))
			}
			nodes = append(nodes, LeafNode(uint32(len(refs)), uint32(len(r.Refs))))
			refs = append(refs, r.Refs...)
			return nil
		}
		me := len(nodes)
		nodes = append(nodes, Node{})
		if err := emit(list, r.Left); err != nil {
			return err
		}
		above := len(nodes)
		if above >= MaxChildIndex {
			return fmt.Errorf("kdtree: tree of more than 2^30 nodes")
		}
		nodes[me] = InteriorNode(int(r.Axis), r.Pos, uint32(above))
		return emit(list, r.Left+1)
	}
	if err := emit(rs.Recs, 0); err != nil {
		return nil, nil, err
	}
	return nodes, refs, nil
}
