package kdtree

import (
	"math"
	"testing"
	"unsafe"
)

func TestNodeSize(t *testing.T) {
	// The CUDA side shares the layout: 8 bytes, W0 then W1.
	expectEqual(t, unsafe.Sizeof(Node{}), uintptr(8), "Sizeof(Node)")
	expectEqual(t, unsafe.Offsetof(Node{}.W1), uintptr(4), "Offsetof(W1)")
}

func TestInteriorNodeLayout(t *testing.T) {
	splits := []float32{0, float32(math.Copysign(0, -1)), 1.5, -3.25, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(-1))}
	aboves := []uint32{0, 1, 2, 31, 32, 33, 1<<16 - 1, 1 << 16, 1<<16 + 1, MaxChildIndex - 1}
	for axis := 0; axis < 3; axis++ {
		for _, s := range splits {
			for _, above := range aboves {
				n := InteriorNode(axis, s, above)
				// The layout itself, as the CUDA side reads it.
				expectEqual(t, n.W0, math.Float32bits(s), "W0 of (%d, %v, %d)", axis, s, above)
				expectEqual(t, n.W1, above<<2|uint32(axis), "W1 of (%d, %v, %d)", axis, s, above)
				expectEqual(t, n.IsLeaf(), false, "IsLeaf")
				expectEqual(t, n.Axis(), axis, "Axis")
				expectEqual(t, math.Float32bits(n.Split()), math.Float32bits(s), "Split bits")
				expectEqual(t, n.AboveChild(), above, "AboveChild")
			}
		}
	}
}

func TestLeafNodeLayout(t *testing.T) {
	firsts := []uint32{0, 1, 31, 32, 33, 1<<31 - 1, 1 << 31, math.MaxUint32}
	counts := []uint32{0, 1, 2, 63, 64, 65, MaxChildIndex - 1}
	for _, f := range firsts {
		for _, c := range counts {
			n := LeafNode(f, c)
			expectEqual(t, n.W0, f, "W0 of leaf (%d, %d)", f, c)
			expectEqual(t, n.W1, c<<2|3, "W1 of leaf (%d, %d)", f, c)
			expectEqual(t, n.IsLeaf(), true, "IsLeaf")
			expectEqual(t, n.Axis(), 3, "Axis of a leaf")
			expectEqual(t, n.FirstRef(), f, "FirstRef")
			expectEqual(t, n.RefCount(), c, "RefCount")
		}
	}
}

func TestNodeLimitsPanic(t *testing.T) {
	expectPanic(t, func() { InteriorNode(3, 0, 1) }, "axis 3")
	expectPanic(t, func() { InteriorNode(-1, 0, 1) }, "axis -1")
	expectPanic(t, func() { InteriorNode(0, 0, MaxChildIndex) }, "above 2^30")
	expectPanic(t, func() { LeafNode(0, MaxChildIndex) }, "count 2^30")
	LeafNode(math.MaxUint32, MaxChildIndex-1) // the largest leaf: no panic
}

func TestNodeString(t *testing.T) {
	expectEqual(t, LeafNode(7, 3).String(), "leaf{first 7, count 3}", "leaf String")
	expectEqual(t, InteriorNode(1, 0.5, 9).String(), "interior{axis 1, split 0.5, above 9}", "interior String")
}
