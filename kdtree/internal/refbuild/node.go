package refbuild

import (
	"fmt"
	"math"
)

// Node is a kd-tree node as the builders write it: the 8-byte layout of
// kdtree.Node (see its doc and kernels/kdtree.cuh), which has the same
// fields; kdtree converts the finished arrays without a copy.
type Node struct {
	W0, W1 uint32
}

// LeafTag is the value of the low two bits of W1 that marks a leaf.
const LeafTag = 3

// MaxChildIndex bounds an above-child index and a leaf's reference count
// (kdtree.MaxChildIndex).
const MaxChildIndex = 1 << 30

// MaxTreeDepth is kdtree.MaxTreeDepth, the deepest tree the builders make
// (the traversal's stack).
const MaxTreeDepth = 64

// InteriorNode returns an interior node splitting axis (0, 1, 2) at split,
// whose above child is node number above. It panics if axis is not 0, 1 or
// 2 or above >= MaxChildIndex (programmer errors).
func InteriorNode(axis int, split float32, above uint32) Node {
	if axis < 0 || axis > 2 {
		panic(fmt.Sprintf("kdtree: InteriorNode axis %d not in 0..2", axis))
	}
	if above >= MaxChildIndex {
		panic(fmt.Sprintf("kdtree: InteriorNode above child %d >= 2^30", above))
	}
	return Node{W0: math.Float32bits(split), W1: above<<2 | uint32(axis)}
}

// LeafNode returns a leaf holding Refs[first : first+count]. It panics if
// count >= MaxChildIndex (programmer error).
func LeafNode(first, count uint32) Node {
	if count >= MaxChildIndex {
		panic(fmt.Sprintf("kdtree: LeafNode count %d >= 2^30", count))
	}
	return Node{W0: first, W1: count<<2 | LeafTag}
}

// IsLeaf reports whether n is a leaf.
func (n Node) IsLeaf() bool { return n.W1&3 == LeafTag }
