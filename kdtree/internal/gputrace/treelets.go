package gputrace

import "fmt"

// treeletBlock is the nodes of a treelet's block: the children of the
// three levels below a treelet's root, as pairs (1 + 2 + 4 pairs, 14
// nodes), in one aligned block of 16 nodes, 128 bytes (a GPU cache line),
// so that a ray that steps three levels down reads one line.
const treeletBlock = 16

// treeletLevels is the levels of a treelet below its root.
const treeletLevels = 3

// treelets lays the node words of kdtree's depth-first layout (the below
// child next to its parent, word 1 the above child's index) out as the
// trace kernels' treelet layout (the Kernel.Treelet variants): the root
// at 0; an interior node's word 1 holds its axis and the index of its
// below child, the above child right after it; the children of a treelet's
// three levels in its block, a node three levels down the root of a new
// treelet. Leaves keep their words. Slots no node uses are zero. The tree
// must be valid (check).
func treelets(words []uint32) ([]uint32, error) {
	n := len(words) / 2
	if n == 0 {
		return nil, nil
	}
	type item struct {
		src, dst, level uint32
		block           uint32 // the treelet's block: its first slot
		used            *uint32
	}
	out := make([]uint32, 2*treeletBlock, 2*(n+n/4+2*treeletBlock))
	next := uint32(treeletBlock) // the next free block
	newBlock := func() (uint32, *uint32) {
		b := next
		next += treeletBlock
		for len(out) < 2*int(next) {
			out = append(out, 0)
		}
		return b, new(uint32)
	}
	b0, u0 := newBlock()
	stack := []item{{src: 0, dst: 0, level: 0, block: b0, used: u0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		w0, w1 := words[2*it.src], words[2*it.src+1]
		if w1&3 == 3 {
			out[2*it.dst], out[2*it.dst+1] = w0, w1
			continue
		}
		if it.level == treeletLevels {
			// A new treelet: this node's children start its block.
			it.block, it.used = newBlock()
			it.level = 0
		}
		c := it.block + *it.used
		*it.used += 2
		if c>>30 != 0 {
			return nil, fmt.Errorf("gputrace: the treelet layout of %d nodes needs more than 2^30 slots", n)
		}
		out[2*it.dst], out[2*it.dst+1] = w0, c<<2|w1&3
		above := w1 >> 2
		stack = append(stack,
			item{src: above, dst: c + 1, level: it.level + 1, block: it.block, used: it.used},
			item{src: it.src + 1, dst: c, level: it.level + 1, block: it.block, used: it.used})
	}
	return out[:2*next], nil
}
