// Package refbuild is kdtree's Go reference builder and the types the
// CUDA builder (gpubuild) shares with it: Builder (one build's state:
// scene, resolved Options, phases, progress, peaks), the large phase's
// nodes and decisions (LNode, Decision), the records of the tree under
// construction (Records, Record, SmallRoot), boxes and triangles (AABB,
// Triangle), and the node encoding (Node, the layout of kdtree.Node).
//
// Builder.BuildGo runs the whole build on the Go executor: prepare (drop
// degenerate triangles), the large-node levels (levelGo: decide by binned
// SAH after the empty-space cut-off, classify, clip), the small roots'
// subtrees (smallBuilder: exact SAH over 64-bit reference masks) and the
// layout (LayoutGo). Every CUDA kernel of the build computes what its
// reference here computes, in the same float32 operations; kdtree's doc
// has the table of references, kernels and tests.
package refbuild
