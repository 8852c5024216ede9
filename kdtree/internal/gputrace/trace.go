package gputrace

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// Kernel is a traversal variant: how rays are handed to threads and how a
// ray goes through the nodes. Every variant gives the same results.
type Kernel struct {
	// Block is the threads per block, whole warps (0: 64).
	Block int
	// Dynamic: persistent warps whose idle lanes take new rays whenever
	// fewer than Refill (1 to 32) lanes are still tracing (Aila and Laine's
	// dynamic fetch; kernels/trace_dynamic.cuh), BlocksPerSM blocks per
	// multiprocessor (0: 2048/Block); else one thread per ray.
	Dynamic     bool
	BlocksPerSM int
	Refill      int
	// Walk is the walk's variant, flags of kernels/trace_walk.cuh:
	// WalkShared, WalkLeaves, WalkPrefetch (0, 1, 2, 3, 5 or 7).
	Walk int
	// Regs56: the dynamic-fetch kernel compiled for 56 registers (18
	// blocks of 64 threads per SM) instead of 64; Dynamic with WalkShared
	// only.
	Regs56 bool
}

// Walk flags (Kernel.Walk).
const (
	// WalkShared: a ray's per-axis constants in shared memory, one 16-byte
	// load per interior step, the crossing by one multiply-add; blocks of
	// SharedBlock threads.
	WalkShared = 1
	// WalkLeaves: a ray pops past empty leaves and skipped nodes within
	// its own loop, so that the walk's loop takes only leaves with
	// triangles.
	WalkLeaves = 2
	// WalkPrefetch (with WalkShared): a finite ray's step loads both
	// children's words before it computes which one it takes.
	WalkPrefetch = 4
)

// SharedBlock is the block size of WalkShared kernels (kTraceAxesBlock
// in kernels/trace_walk.cuh).
const SharedBlock = 64

// MaxBlock is the most threads per block of a trace kernel (their launch
// bounds in kernels/trace.cu).
const MaxBlock = 128

// DefaultKernel is the variant used unless a caller sets another: the
// fastest measured on coherent rays, within 7% of the best on incoherent
// ones (docs/performance.md, "GPU tracing").
var DefaultKernel = Kernel{Block: 64, Walk: WalkShared}

// IncoherentKernel is the variant for batches known to be incoherent
// (rays that start and point anywhere: ambient occlusion, diffuse
// bounces): the fastest measured on random rays.
var IncoherentKernel = Kernel{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24, Walk: WalkShared}

// String names the variant for benchmark tables.
func (k Kernel) String() string {
	w := ""
	if k.Walk != 0 {
		w = fmt.Sprintf("-w%d", k.Walk)
	}
	if k.Regs56 {
		w += "-56regs"
	}
	if k.Dynamic {
		return fmt.Sprintf("dynamic-b%d-x%d-r%d%s", k.Block, k.BlocksPerSM, k.Refill, w)
	}
	return fmt.Sprintf("grid-b%d%s", k.Block, w)
}

// check reports a variant the kernels cannot run.
func (k Kernel) check() error {
	if k.Block <= 0 || k.Block > MaxBlock || k.Block%32 != 0 || k.Dynamic && (k.Refill < 1 || k.Refill > 32) ||
		k.BlocksPerSM < 0 || k.Walk < 0 || k.Walk > WalkShared|WalkLeaves|WalkPrefetch ||
		k.Walk&WalkPrefetch != 0 && k.Walk&WalkShared == 0 || k.Regs56 && k.Walk != 1 && k.Walk != 7 ||
		k.Walk&WalkShared != 0 && k.Block != SharedBlock || k.Regs56 && (!k.Dynamic || k.Walk&WalkShared == 0) {
		return fmt.Errorf("gputrace: %v: whole warps, at most %d threads a block, refill 1 to 32, a known walk, "+
			"blocks of %d for the shared walk, 56 registers only for its dynamic kernel", k, MaxBlock, SharedBlock)
	}
	return nil
}

// Intersect enqueues the closest-hit trace of the rays in rays (RayWords
// floats each, Ray's layout) into hits (HitWords words each, Hit's layout)
// on the device's default stream; errors of the kernel's run come back from
// the next synchronising call. The buffers' lengths must match.
func (t *Tree) Intersect(rays, hits *cuda.Buffer[float32]) error {
	n := rays.Len() / RayWords
	if err := t.lengths(rays.Len(), RayWords, hits.Len(), HitWords, n); err != nil {
		return err
	}
	return t.launch(t.Kernel, false, rays.Ptr(), hits.Ptr(), uint32(HitWords), n)
}

// Occluded enqueues the any-hit trace of the rays in rays into occluded,
// one byte per ray: 1 when a triangle meets the ray within [TMin, TMax],
// else 0.
func (t *Tree) Occluded(rays *cuda.Buffer[float32], occluded *cuda.Buffer[uint8]) error {
	n := rays.Len() / RayWords
	if err := t.lengths(rays.Len(), RayWords, occluded.Len(), 1, n); err != nil {
		return err
	}
	return t.launch(t.Kernel, true, rays.Ptr(), occluded.Ptr(), 0, n)
}

func (t *Tree) lengths(rays, rw, out, ow, n int) error {
	if t.nodes == nil {
		return fmt.Errorf("gputrace: tree is closed")
	}
	if n < 0 || rays != n*rw || out != n*ow {
		return fmt.Errorf("gputrace: %d rays need %d ray words and %d result elements, have %d and %d", n, n*rw, n*ow, rays, out)
	}
	if uint64(n) >= 1<<31 {
		return fmt.Errorf("gputrace: %d rays in one launch, at most 2^31-1", n)
	}
	return nil
}

// launch enqueues kernel k over n rays at rays (device addresses, or
// mapped host memory) into out: hit records of words words (HitWords, or
// HostHitWords) or, for anyHit, occlusion bytes.
func (t *Tree) launch(k Kernel, anyHit bool, rays, out cuda.DevPtr, words uint32, n int) error {
	if n == 0 {
		return nil
	}
	if k.Block == 0 {
		k.Block = 64
	}
	if err := k.check(); err != nil {
		return err
	}
	kern, err := launch.Named[launch.KdTraceClosestArgs](kernelName(k, anyHit))
	if err != nil {
		return err
	}
	a := launch.KdTraceClosestArgs{Nodes: t.nodes.Ptr(), Nnodes: t.nnodes, Tris: t.tris.Ptr(), Box: t.box.Ptr(),
		Rays: rays, Out: out, HitWords: words, N: uint32(n), Counter: t.counter.Ptr(), Refill: uint32(k.Refill)}
	if !k.Dynamic {
		return kern.Launch(t.ctx, cuda.GridFor(n, k.Block), cuda.Linear(k.Block), 0, a)
	}
	if err := t.counter.Memset32(0); err != nil {
		return err
	}
	per := k.BlocksPerSM
	if per <= 0 {
		per = 2048 / k.Block
	}
	blocks := min(t.ctx.Info().SMs*per, (n+k.Block-1)/k.Block)
	return kern.Launch(t.ctx, cuda.Linear(max(blocks, 1)), cuda.Linear(k.Block), 0, a)
}

// kernelName is the kernel of kernels/trace.cu that runs k for closest or
// any hit.
func kernelName(k Kernel, anyHit bool) string {
	name := "kd_trace_closest"
	if anyHit {
		name = "kd_trace_any"
	}
	if k.Dynamic {
		name += "_dyn"
	}
	if k.Regs56 {
		name += "_r56"
	}
	if k.Walk != 0 {
		name += fmt.Sprintf("_w%d", k.Walk)
	}
	return name
}

// Variants are the kernels that BenchmarkDeviceTrace measures.
var Variants = []Kernel{
	{Block: 64}, {Block: 64, Walk: 1}, {Block: 64, Walk: 3}, {Block: 64, Walk: 5}, {Block: 64, Walk: 7},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24, Walk: 1},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24, Walk: 3},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24, Walk: 5},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24, Walk: 7},
	{Dynamic: true, Block: 64, BlocksPerSM: 18, Refill: 24, Walk: 1, Regs56: true},
	{Dynamic: true, Block: 64, BlocksPerSM: 18, Refill: 24, Walk: 7, Regs56: true},
}
