// Package split moves the triangle references of every node of a kd-tree
// level to their left and right children at once.
//
// A level's references form one list, node after node (segments given by
// offsets). The builder flags each reference Left, Right or both (a
// triangle that straddles the split plane goes to both children); Addresses
// then computes, for all nodes together, where each copy goes in the next
// level's list: the children are laid out node after node, left child
// before right child, each a stable partition of its parent's references.
// On the Go executor this is a loop per node; on the CUDA executor one
// exclusive scan of the unpacked flags (package scan) stands in for a
// segmented scan (a reference's rank in its node is its global prefix minus
// the prefix at the node's start), plus three small kernels
// (kernels/split.cu) and a 4-byte read-back of the total.
package split
