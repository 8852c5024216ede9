package gputrace

import "github.com/kdbuild/kdbuild/kernels/cuda"

// MaxElided is the node count from which a tree keeps kdtree's plain node
// layout on the device: the elided layout has 27 bits for a child index.
const MaxElided = 1 << 27

// Bits of an interior node's word 1 in the elided layout: above<<5 |
// eb<<4 | ea<<3 | eb<<2 | axis (kernels/trace_walk.cuh: eb twice, so that
// shifting the word right by one when the ray visits the above child
// first puts the first child's flag at bit 2 and the second's at bit 3).
const (
	emptyBelow = 1<<2 | 1<<4 // the below child is an empty leaf
	emptyAbove = 1 << 3      // the above child is an empty leaf
	aboveShift = 5
)

// emptyLeafW1 is word 1 of an empty leaf (no references, the leaf tag).
const emptyLeafW1 = 3

// elide returns the elided layout of node words in kdtree's layout (the
// Go reference of kernels/trace.cu kd_trace_elide): leaves keep their
// words; an interior node's word 1 becomes above<<5 | eb<<4 | ea<<3 |
// eb<<2 | axis, eb (ea) set when its below (above) child is an empty leaf, so the
// trace never visits nor pushes those. It returns nil for trees of
// MaxElided nodes or more. The tree must be valid (check).
func elide(words []uint32) []uint32 { return elideBelow(words, MaxElided) }

// elideBelow is elide with the node limit as a parameter (limit at most
// MaxElided).
func elideBelow(words []uint32, limit int) []uint32 {
	n := len(words) / 2
	if n >= limit {
		return nil
	}
	out := make([]uint32, len(words))
	for i := 0; i < n; i++ {
		w0, w1 := words[2*i], words[2*i+1]
		if w1&3 != 3 {
			above := w1 >> 2
			flags := uint32(0)
			if words[2*(i+1)+1] == emptyLeafW1 {
				flags |= emptyBelow
			}
			if words[2*above+1] == emptyLeafW1 {
				flags |= emptyAbove
			}
			w1 = above<<aboveShift | flags | w1&3
		}
		out[2*i], out[2*i+1] = w0, w1
	}
	return out
}

// plainNodes returns the nodes in kdtree's layout on the device for a tree
// whose own copy is elided, uploaded from the host copy on the first call
// (Kernel.Plain).
func (t *Tree) plainNodes() (*cuda.Buffer[uint32], error) {
	if t.pnodes != nil {
		return t.pnodes, nil
	}
	b, err := cuda.NewBuffer[uint32](t.ctx, max(len(t.hostNodes), 2))
	if err == nil {
		err = b.CopyFromHost(t.hostNodes)
	}
	if err != nil {
		b.Free()
		return nil, err
	}
	t.pnodes = b
	return b, nil
}

// NodeWords downloads the node words the kernels read (the elided layout
// unless the tree is too large for it): for tests that compare a kept
// tree's layout, made on the device, with an uploaded one's.
func (t *Tree) NodeWords() ([]uint32, error) {
	w := make([]uint32, len(t.hostNodes))
	if len(w) == 0 {
		return w, nil
	}
	return w, t.nodes.Slice(0, len(w)).CopyToHost(w)
}
