// Package reduce owns min/max reductions: the thesis kernels Reduce0–Reduce4
// and faster ones beyond them, box reductions over triangles and segmented
// (per-node) reductions, each on the Go and the CUDA executor.
//
// # Order and NaN policy
//
// Every path compares float32 values through an order-preserving integer
// key (see Min2): the usual order, with -0 < +0 and -Inf/+Inf at the ends.
// NaNs are ignored. The minimum of an empty or all-NaN range is +Inf, the
// maximum -Inf, so results are never NaN. Since integer min and max are
// exact, associative and commutative, the Go executor and every kernel
// return the same bits whatever order they combine in (min(-0, +0) = -0,
// max(-0, +0) = +0, denormals kept). Kernels never loop on data values, so
// NaN cannot make them hang.
//
// # Designs
//
// Min, Max and MinMax use DefaultVariant (r7). MinVariant, MaxVariant and
// MinMaxVariant select a design by name; Variants lists them:
//
//	Design   Thesis    Idea                                               Kernel (op = min, max, minmax)
//	r0       Reduce0   interleaved addressing, modulo test, in place in   reduce_<op>_r0_f32
//	                   global memory (a work array: see below)
//	r1       Reduce1   sequential addressing, in place in global memory   reduce_<op>_r1_f32
//	r2       Reduce2   block values copied to shared memory first         reduce_<op>_r2_f32
//	r3       Reduce3   running value in a register                        reduce_<op>_r3_f32
//	r4       Reduce4   unrolled, 256 threads; first step during the load  reduce_<op>_r4_f32
//	                   (the element pair 2t, 2t+1 of thread t in one      (final level:
//	                   8-byte load); last warp with shuffles, no block    reduce_<op>_r4final_f32)
//	                   barrier; last step folded into the output
//	r5       —         r4's load, warp shuffles for the whole tree        reduce_<op>_r5_f32
//	r6       —         float4 grid-stride loop, grid = SMs × 8 blocks,    reduce_<op>_r6_f32 (twice)
//	                   then one block over the block results
//	r7       —         r6 in one launch: the last block to finish         reduce_<op>_r7_f32
//	                   (threadfence + self-resetting atomic counter)
//	                   reduces the block results
//
// Tuning variants (TuningVariants, not defaults, not in Variants or the
// thesis table): the same designs at other block sizes, so that each design
// is measured at its best block size; Bench (kdbuild bench reduce) times
// them after the designs above, against the defaults:
//
//	Variant  Design at    Kernel (op = min, max, minmax)   Final level
//	r0-t128  r0, 128 thr  reduce_<op>_r0_t128_f32          itself, one block
//	r0-t512  r0, 512 thr  reduce_<op>_r0_t512_f32          itself, one block
//	r4-t64   r4, 64 thr   reduce_<op>_r4_t64_f32           reduce_<op>_r4final_f32
//	r4-t128  r4, 128 thr  reduce_<op>_r4_t128_f32          reduce_<op>_r4final_f32
//	r4-t512  r4, 512 thr  reduce_<op>_r4_t512_f32          reduce_<op>_r4final_f32
//	r5-t128  r5, 128 thr  reduce_<op>_r5_t128_f32          reduce_<op>_r5final_f32
//
// r0–r3 reduce 256 elements per block (256 threads), r4 and r5 512 (256
// threads), and run again over the block results, level after level; once
// the remaining values give each thread of the final block at most 32, a
// single block takes them all (each thread first folds its column, then the
// design's tree), so no launch is spent on a few hundred values. Launches
// per reduction (Variant.Launches):
//
//	n            r0–r3  r4, r5  r6  r7
//	69,451       2      2       2   1
//	2^24         3      2       2   1
//	2^28         3      3       2   1
//
// Two details of r4 and r5 stay inside the thesis's definition (the block
// size a compile-time constant of the unrolled tree, two elements a thread
// reduced during the load):
//   - Their final one-block level runs the same unrolled design
//     instantiated for 1024 threads (reduce_<op>_r4final_f32), so it takes
//     up to 32·1024 partial results: 2^24 inputs need 2 launches, not 3.
//   - Thread t of a full block loads its element pair as one 8-byte __ldg
//     (elements 2t and 2t+1 of the block's 512, coalesced). An input not
//     8-byte aligned (a Slice at an odd offset) takes two scalar loads (a
//     uniform test per block).
//
// Two elements a thread leave at most 16 KB in flight per SM, about half of
// what the memory needs to stream at full rate, so Reduce4's floor is near
// 0.04 ms at 2^24 whatever the block size: 4.8–5.4× faster than Reduce0 on
// an H200, where the thesis measured 6.8× on its GPU (docs/performance.md).
//
// The final one-block level of every multi-pass design (and tuning
// variant) reads each thread's column of up to 32 partial results in
// rounds of eight loads issued together (a load past the column's end
// rereads its last input, which leaves a min or max unchanged): at most 4
// dependent memory round trips per thread instead of 8 or more.
//
// The thesis reduces its input in place; ours must stay intact, so r0 and
// r1 do their first tree step (offset 1, resp. half the block) reading the
// input and writing the step's results into a global work array (half a
// word per element), where the remaining steps run in place. There is no
// copy pass: their memory traffic is the thesis's.
//
// # Builder reductions
//
// Bounds gives the per-axis min and max of an interleaved xyz array in one
// launch (scene bounds). SegmentedMin, SegmentedMax and SegmentedMinMax
// reduce every segment of an array given segment offsets (kd-tree nodes),
// SegmentedBoxes reduces six SoA arrays of boxes per segment. Empty segments
// give +Inf (min) and -Inf (max). On a GPU, segments of up to 4096 elements
// (2048 for boxes) take one warp each, longer ones are shared by blocks of a
// grid sized to the GPU (see segmented.go), so both few huge and many tiny
// segments run well. No kernel waits for another block: blocks combine
// through atomics and the last one to finish (a counter) writes the
// results, so they never depend on being resident together. The counters
// are set to 0 by a memset before every segmented call.
//
// Interleaved boxes (the builder's layout): SegmentedBoxesAoS reduces
// boxes of 6 floats (lo xyz, hi xyz) per segment. One warp reduces a segment
// of up to 256 boxes with 8-byte loads (thread t of a group of T threads
// reads pairs t, t+T, t+2T of 3T consecutive pairs: one pair of each of the
// three kinds, routed by selects); longer segments are listed and cut into
// tiles of 512 boxes (so that a level's few long segments still give every
// SM work), and the second launch gives every block an equal,
// contiguous run of tiles, folding a segment's tiles in registers and
// adding them to the segment's key words with atomics once per segment. So
// one root segment of millions of boxes and 10^5 segments of a hundred both
// run near bandwidth, in two launches, with no read-back.
//
// # Segmented forms of the designs (the thesis table)
//
// ThesisTable times Reduce0 … Reduce7 on the builder's node-bounds
// reductions (a list of BoxLevel), so every design has a segmented box form
// (reduce_box_r<k>_f32, the design's own block code templated on a box
// operator): per level, a block list built on the host before timing gives
// every block one span of one segment, at most the design's span (256
// boxes for r0–r3, 512 for r4 and r5, 4096 for r6 and r7), and every
// segment at least one block (an empty one writes the empty box). Each
// block writes one box. The same design then runs again over each
// segment's block boxes (consecutive, so they are the next pass's
// segments) with the next list, until a pass has one block per segment,
// whose block b writes segment b's result: ⌈log_span(longest segment)⌉
// passes per level. r7 needs one pass: the block of a segment that counts
// last on the segment's counter reduces the segment's block boxes. The
// results are checked against SegmentedBoxesAoS on the Go executor.
//
// # Scratch
//
// The CUDA paths need device scratch (partial results, the r0/r1 work
// array, the long-segment list, counters, a result slot). A Reducer holds
// it, grows it to the largest input seen and reuses it, so hot loops do not
// allocate. The package-level functions use one Reducer per CUDA context,
// created on first use; Release frees it. Calls on one Reducer are
// serialised; scalar results (Min, Bounds, ...) are read back (a
// synchronisation), segmented results stay on the device and the calls
// return without waiting.
//
// # Benchmarks
//
// Bench times every design over a ladder of sizes and reports GB/s against
// the device copy bandwidth; ThesisTable and FormatThesisTable reproduce the
// thesis's table on the builder's own reductions (see ThesisTable). The CLI prints
// both (kdbuild bench reduce): one row per design and size, noting the
// thesis label and the launches.
package reduce
