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
//	                   global memory (a work copy of the input)
//	r1       Reduce1   sequential addressing, in place in global memory   reduce_<op>_r1_f32
//	r2       Reduce2   block values copied to shared memory first         reduce_<op>_r2_f32
//	r3       Reduce3   running value in a register                        reduce_<op>_r3_f32
//	r4       Reduce4   unrolled; first step during the load; last warp    reduce_<op>_r4_f32
//	                   with shuffles, no block barrier; last step folded
//	                   into the output
//	r5       —         warp shuffles for the whole tree                   reduce_<op>_r5_f32
//	r6       —         float4 grid-stride loop, grid = SMs × 8 blocks,    reduce_<op>_r6_f32 (twice)
//	                   then one block over the block results
//	r7       —         r6 in one launch: the last block to finish         reduce_<op>_r7_f32
//	                   (threadfence + self-resetting atomic counter)
//	                   reduces the block results
//
// r0–r5 reduce 256 (r4, r5: 512) elements per block and run again over the
// block results until one is left; r0 and r1 first copy each element's key
// into a global work array (the thesis reduces its input in place; ours must
// stay intact), so their time includes writing that copy.
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
// segments run well.
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
// thesis's table (see ThesisTable for the exact workload). The CLI prints
// both (kdbuild bench reduce).
package reduce
