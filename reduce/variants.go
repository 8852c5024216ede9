package reduce

import (
	"fmt"
	"strings"
)

// Variant describes one reduction design. Its kernels are named
// reduce_<op>_<Name>_f32 with op one of min, max, minmax (for example
// reduce_min_r4_f32).
//
//	Name  Thesis   Idea                                                         Launches
//	r0    Reduce0  interleaved addressing with the modulo test, in place in a    levels
//	               global work array (the first step reads the input and
//	               writes there: the input stays intact, no copy pass)
//	r1    Reduce1  sequential addressing (coalesced), in place in global memory  levels
//	               (first step as r0's)
//	r2    Reduce2  the block's values copied into shared memory first            levels
//	r3    Reduce3  each thread keeps its running value in a register; shared     levels
//	               memory only publishes it
//	r4    Reduce4  unrolled (block size fixed at compile time, 256 threads):     levels
//	               the first step done while loading (2 elements per thread at
//	               block-size stride, half the shared memory), the last warp
//	               without block barriers (shuffles), the last step folded
//	               into the output
//	r5    —        r4's load, then warp shuffles for the whole tree             levels
//	r6    —        many elements per thread, float4 loads, a grid of            2
//	               SMs × 8 blocks, then one block over the block results
//	r7    —        r6's loop in one pass: the last block to finish (threadfence  1
//	               + atomic counter that resets itself) reduces the block
//	               results and writes the answer
//
// Levels (r0–r5): a level is one launch in which each block reduces PerBlock
// inputs to one result. As soon as the remaining inputs give each of
// FinalThreads threads at most finalPerThread of them, one block reduces
// them all (the final level: each thread first folds its column of the
// inputs, then the design's tree runs unchanged). So n = 69,451 (a
// bunny-sized reduction) takes 2 launches in every multi-pass design, n =
// 2^24 takes 3 in r0–r3 (65,536, 256, 1 blocks) and 2 in r4, r5 (32,768
// blocks, then one of 1024 threads), n = 2^28 takes 3.
// Partial last blocks are padded with the identity, so any n works.
//
// TuningVariants (tuning.go) lists the same designs at other block sizes (see there);
// a tuning variant is named <design>-t<threads>, for example r4-t128.
type Variant struct {
	Name     string // r0 … r7, or a tuning variant's r<k>-t<threads>
	Thesis   string // Reduce0 … Reduce4, or "" for the designs beyond the thesis
	Idea     string
	Threads  int // threads per block
	PerBlock int // elements one block reduces per level; 0 = grid-stride (r6, r7)
	// FinalThreads is the block size of the final one-block level (r0–r5):
	// Threads, except r4 and r5 (and their tuning variants), whose
	// unrolled tree is also compiled for 1024 threads (kernel
	// reduce_<op>_r4final_f32, r5final) so that the final level takes up to
	// 32·1024 inputs.
	FinalThreads int
}

// design is the name of the design v runs: its Name up to a "-t" block
// size suffix (r4 for r4-t128).
func (v Variant) design() string {
	d, _, _ := strings.Cut(v.Name, "-")
	return d
}

// finalKernel is the kernel of the final one-block level of a multi-pass
// design for op: the design's 1024-thread kernel where FinalThreads differs
// from Threads (one block reduces all its inputs whatever the block size of
// the earlier levels, so tuning variants share it), else Kernel.
func (v Variant) finalKernel(op string) string {
	if v.FinalThreads != v.Threads {
		return fmt.Sprintf("reduce_%s_%sfinal_f32", op, v.design())
	}
	return v.Kernel(op)
}

// Kernel returns the kernel name of the variant for op (min, max, minmax):
// reduce_<op>_<Name>_f32 with the Name's '-' written '_' (reduce_min_r4_f32,
// reduce_min_r4_t128_f32).
func (v Variant) Kernel(op string) string {
	return fmt.Sprintf("reduce_%s_%s_f32", op, strings.ReplaceAll(v.Name, "-", "_"))
}

// Label is "Reduce" followed by the Name without its "r": the thesis name
// where there is one (Reduce0 … Reduce4), Reduce5 … Reduce7 beyond it and
// Reduce4-t128 for a tuning variant.
func (v Variant) Label() string { return "Reduce" + v.Name[1:] }

// DefaultVariant is the design Min, Max and MinMax use on a GPU.
const DefaultVariant = "r7"

// blockSize is the thread count of r0–r3, r6, r7 and the segmented kernels
// (reduce.cuh's kBlock and kThreads03).
const blockSize = 256

// wideBlock is the thread count of r4 and r5 (reduce.cuh's kThreads45).
const wideBlock = 256

// finalBlock45 is the thread count of r4's and r5's final level
// (reduce.cuh's kFinal45).
const finalBlock45 = 1024

// finalPerThread bounds the inputs per thread of a multi-pass design's final
// one-block level: up to it, folding a column (four loads in flight, from
// L2) costs less than one more launch. A variable so that tests can force
// the multi-level path on small inputs; the kernels take any value.
var finalPerThread = 32

// blocksPerSM sizes the grids of the grid-stride designs.
const blocksPerSM = 8

var variants = []Variant{
	{"r0", "Reduce0", "interleaved addressing, modulo test, global memory (in place in a work array)", blockSize, blockSize, blockSize},
	{"r1", "Reduce1", "sequential addressing, global memory (in place in a work array)", blockSize, blockSize, blockSize},
	{"r2", "Reduce2", "block values copied to shared memory first", blockSize, blockSize, blockSize},
	{"r3", "Reduce3", "running value in a register, shared memory to publish it", blockSize, blockSize, blockSize},
	{"r4", "Reduce4", "unrolled, 256 threads; first step during the load; last warp by shuffles; last step folded into the output", wideBlock, 2 * wideBlock, finalBlock45},
	{"r5", "", "r4's load, then warp shuffles for the whole tree", wideBlock, 2 * wideBlock, finalBlock45},
	{"r6", "", "many elements per thread, float4 loads, grid = SMs x 8 blocks, second tiny pass", blockSize, 0, blockSize},
	{"r7", "", "one pass: float4 grid-stride loop, last block done (threadfence + self-resetting counter)", blockSize, 0, blockSize},
}

// Variants returns the reduction designs, Reduce0 first.
func Variants() []Variant { return append([]Variant(nil), variants...) }

// lookup returns the variant called name (r0 … r7, Reduce0 … Reduce7, or a
// tuning variant's name or label).
func lookup(name string) (Variant, error) {
	for _, vs := range [][]Variant{variants, tuning} {
		for _, v := range vs {
			if v.Name == name || v.Label() == name {
				return v, nil
			}
		}
	}
	return Variant{}, fmt.Errorf("reduce: unknown variant %q (want r0 … r7 or a tuning variant such as r4-t128)", name)
}
