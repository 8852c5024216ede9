// Package consts holds the constants that the Go packages and the CUDA
// kernels share: kernels/gen reads this file and writes
// kernels/consts_gen.cuh, where each constant X is kd_const::kX with the C
// type of its Go type (uint32: unsigned int, int32: int, float32: float).
// Every constant here is typed, so that the kernels' arithmetic on it is
// the same as when it was written in C; the kernels bind their own names
// to these (kernels/kdtree.cuh) and static_assert the sizes of the structs
// whose sizes Go relies on.
package consts

// NodeBytes is the size of a tree node: kdtree.Node, kd_tree::Node.
const NodeBytes uint32 = 8

// A node's fate (kdtree/level.go); FatePending is a node waiting for the
// binned SAH on the device.
const (
	FateSplit   int32 = 0
	FateLeaf    int32 = 1
	FateSmall   int32 = 2
	FatePending int32 = 3
)

// A reference's flags: split.Left, split.Right, and FlagClipped for a
// reference whose child boxes were clipped.
const (
	FlagLeft    int32 = 1
	FlagRight   int32 = 2
	FlagClipped int32 = 4
)

// EmptyCutoff is the fraction of a node's extent that must be empty on one
// side of its tight bounds for an empty-space cut.
const EmptyCutoff float32 = 0.25

// BinTile is the references one block of the binning kernels counts.
const BinTile uint32 = 512

// SizeWords is the words of a level's sizes (kdtree_tail_f32's szOut).
const SizeWords int32 = 6

// TopPlanWords is the device layout's plan words a node.
const TopPlanWords int32 = 6

// The small-node phase's blocks (kdtree_small_w_f32): SmallWarps roots a
// block, a warp each; a warp reserves SmallRecChunk records and at least
// SmallRefChunk leaf references at a time; SmallWarpBytes is a warp's
// dynamic shared memory, sizeof(kd_small::Warp).
const (
	SmallWarps     int32  = 4
	SmallRecChunk  uint32 = 32
	SmallRefChunk  uint32 = 64
	SmallWarpBytes uint32 = 12944
)

// MaskWarps is the warps (chunks) a block of the mask compaction
// (compact_mask_u32, compact_gather_u32) has.
const MaskWarps int32 = 8

// PadBudget is the fourth info word of a padding node in a level's node
// table (kdtree_tail_f32's pad_node); a real node's is its duplication
// budget (refbuild.LNode.Budget), at most PadBudget-1.
const PadBudget uint32 = 0xFFFFFFFF
