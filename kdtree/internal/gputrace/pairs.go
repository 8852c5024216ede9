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
	// A node whose children's slot is still to come, and its place.
	type item struct{ node, place uint32 }
	// Slot s is out[4s : 4s+4], appended in slot order; slot 0 holds the
	// root and an empty leaf. An interior node's w1 is set when its
	// children get their slot.
	out := make([]uint32, 4, 4*(n/2+2))
	out[0], out[1], out[3] = nodes[0], nodes[1], 3
	// pending: the nodes whose slots start a later line, the next one
	// last; queue: the current line's breadth-first queue (at most one
	// pull from pending and two children per slot of the line).
	var pending []item
	var queue [3 * PairLineSlots]item
	if interior(0) {
		pending = append(pending, item{0, 0})
	}
	for len(pending) > 0 {
		slots := uint32(len(out) / 4)
		end := (slots/PairLineSlots + 1) * PairLineSlots
		head, tail := 0, 0
		for ; slots < end; slots++ {
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
			w1 := nodes[2*x.node+1]
			out[2*x.place+1] = slots<<2 | w1&3
			below, above := x.node+1, w1>>2
			out = append(out, nodes[2*below], nodes[2*below+1], nodes[2*above], nodes[2*above+1])
			if interior(below) {
				queue[tail] = item{below, 2 * slots}
				tail++
			}
			if interior(above) {
				queue[tail] = item{above, 2*slots + 1}
				tail++
			}
		}
		// The rest starts the next lines, the first of it first.
		for i := tail - 1; i >= head; i-- {
			pending = append(pending, queue[i])
		}
	}
	return out, nil
}
