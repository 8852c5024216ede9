package gputrace

import "fmt"

// Pair layout of the node words (what the _pair kernels of
// kernels/trace.cu read). Nodes are the same 8-byte words as
// kdtree.Node's, at other places: the two children of an interior node
// sit next to each other in a 16-byte slot (below child first), so one
// 16-byte load brings both, and the interior node's w1 holds the slot's
// index (slot<<2 | axis) instead of the above child's. A node's place is
// its index among 8-byte words: 2·slot for a below child, 2·slot + 1 for
// an above child; the root is place 0 and place 1 an empty leaf. Leaves
// keep their words (first reference, count<<2 | 3). Slots fill 128-byte
// lines (PairLineSlots a line) as treelets: a line takes a slot, then its
// children's slots, then their children's, breadth first (three levels of
// descent in one line); what does not fit starts the next line, and a
// line whose subtree runs out takes the next waiting subtree.

// PairLineSlots is the number of 16-byte slots in a 128-byte line.
const PairLineSlots = 8

// maxPairSlots bounds the slots: a slot index must fit w1's 30 bits.
const maxPairSlots = 1 << 30

// PairLayout returns nodes (two words per node, kdtree.Node's layout in
// depth-first order, as check accepts them) in the pair layout: four words
// a slot, a whole number of slots. It returns nil for no nodes, and an
// error for a tree whose slots do not fit w1.
func PairLayout(nodes []uint32) ([]uint32, error) {
	n := len(nodes) / 2
	if n == 0 {
		return nil, nil
	}
	interior := func(i uint32) bool { return nodes[2*i+1]&3 != 3 }
	// slot[i]: the slot of interior node i's children.
	slot := make([]uint32, n)
	slots := uint32(1) // slot 0: the root and an empty leaf
	// pending: the nodes whose slots start a later line, the next one
	// last; queue: the current line's breadth-first queue (at most one
	// pull from pending and two children per slot of the line).
	var pending []uint32
	var queue [3 * PairLineSlots]uint32
	if interior(0) {
		pending = append(pending, 0)
	}
	for len(pending) > 0 {
		end := (slots/PairLineSlots + 1) * PairLineSlots
		head, tail := 0, 0
		for slots < end {
			if head == tail {
				if len(pending) == 0 {
					break
				}
				queue[tail] = pending[len(pending)-1]
				tail++
				pending = pending[:len(pending)-1]
			}
			x := queue[head]
			head++
			if slots >= maxPairSlots {
				return nil, fmt.Errorf("gputrace: %d nodes need more than %d node pairs", n, maxPairSlots)
			}
			slot[x] = slots
			slots++
			if below := x + 1; interior(below) {
				queue[tail] = below
				tail++
			}
			if above := nodes[2*x+1] >> 2; interior(above) {
				queue[tail] = above
				tail++
			}
		}
		// The rest starts the next lines, the first of it first.
		for i := tail - 1; i >= head; i-- {
			pending = append(pending, queue[i])
		}
	}
	out := make([]uint32, 4*slots)
	out[3] = 3 // place 1: an empty leaf
	// place[i] of node i, set before i is visited (depth-first order puts
	// every parent before its children).
	place := make([]uint32, n)
	for i := uint32(0); i < uint32(n); i++ {
		w0, w1 := nodes[2*i], nodes[2*i+1]
		p := place[i]
		if w1&3 != 3 {
			s := slot[i]
			place[i+1], place[w1>>2] = 2*s, 2*s+1
			w1 = s<<2 | w1&3
		}
		out[2*p], out[2*p+1] = w0, w1
	}
	return out, nil
}
