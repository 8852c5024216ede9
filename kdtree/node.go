package kdtree

import (
	"fmt"
	"math"
)

// Node is one kd-tree node packed into 8 bytes, the layout shared by the Go
// code and the CUDA kernels (see kernels/kdtree.cuh):
//
//	W1 & 3:  split axis 0, 1 or 2 for an interior node; 3 for a leaf.
//	W1 >> 2: interior: index of the above child (coordinates >= split);
//	         the below child is always the next node (depth-first order).
//	         leaf: number of references.
//	W0:      interior: math.Float32bits(split position);
//	         leaf: offset of the leaf's first reference in Tree.Refs.
//
// Limits: a child index and a leaf's reference count must be below
// MaxChildIndex (2^30); reference offsets are full uint32.
type Node struct {
	W0, W1 uint32
}

// leafTag is the value of the low two bits of W1 that marks a leaf.
const leafTag = 3

// MaxChildIndex bounds the above-child index of an interior node and the
// reference count of a leaf: both live in the upper 30 bits of W1.
const MaxChildIndex = 1 << 30

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
	return Node{W0: first, W1: count<<2 | leafTag}
}

// IsLeaf reports whether n is a leaf.
func (n Node) IsLeaf() bool { return n.W1&3 == leafTag }

// Axis returns the split axis of an interior node (3 for a leaf).
func (n Node) Axis() int { return int(n.W1 & 3) }

// Split returns the split position of an interior node.
func (n Node) Split() float32 { return math.Float32frombits(n.W0) }

// AboveChild returns the index of the above child of an interior node; the
// below child of node i is node i+1.
func (n Node) AboveChild() uint32 { return n.W1 >> 2 }

// FirstRef returns the offset in Tree.Refs of a leaf's first reference.
func (n Node) FirstRef() uint32 { return n.W0 }

// RefCount returns the number of references of a leaf.
func (n Node) RefCount() uint32 { return n.W1 >> 2 }

// String formats n for error messages and debugging.
func (n Node) String() string {
	if n.IsLeaf() {
		return fmt.Sprintf("leaf{first %d, count %d}", n.FirstRef(), n.RefCount())
	}
	return fmt.Sprintf("interior{axis %d, split %v, above %d}", n.Axis(), n.Split(), n.AboveChild())
}
