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
// segmented exclusive scan (package scan's offsets form: shared-memory
// tiles with decoupled look-back) over the unpacked left and right flags,
// the nodes' left flags and then their right flags as its segments, gives
// every reference its ranks in its node for all nodes at once; then one
// single-pass scan over the nodes, whose items (each node's left and right
// copy counts) are made as they are loaded, gives the child bases, and a
// kernel per reference the destinations (kernels/split.cu: five launches
// in all). Addresses reads back
// the 4-byte total. A caller whose own kernel computes the flags can unpack
// them there (Scratch.Unpacking, kernels/split.cuh) and queue the rest with
// AddressesUnpacked, one launch fewer.
package split
