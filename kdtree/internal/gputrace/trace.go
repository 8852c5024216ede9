package gputrace

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// Kernel is a traversal variant: how rays are handed to threads. Every
// variant gives the same results.
type Kernel struct {
	// Block is the threads per block: Block (0 means Block too; the
	// kernels keep a ray's per-axis constants in a shared array of that
	// many threads).
	Block int
	// Dynamic: persistent warps whose idle lanes take new rays whenever
	// fewer than Refill (1 to 32) lanes are still tracing (Aila and Laine's
	// dynamic fetch; kernels/trace_dynamic.cuh), BlocksPerSM blocks per
	// multiprocessor (0: 2048/Block); else one thread per ray.
	Dynamic     bool
	BlocksPerSM int
	Refill      int
	// AnyBlocksPerSM is BlocksPerSM for the any-hit kernel (0: BlocksPerSM),
	// which keeps fewer registers, so that more blocks fit.
	AnyBlocksPerSM int
}

// Block is the threads per block of every trace kernel (kTraceBlock in
// kernels/trace_test.cuh).
const Block = 64

// DefaultKernel is the variant used unless a caller sets another: the
// fastest measured on coherent rays (docs/performance.md, "GPU tracing").
var DefaultKernel = Kernel{Block: Block}

// IncoherentKernel is the variant for batches known to be incoherent
// (rays that start and point anywhere: ambient occlusion, diffuse
// bounces): the fastest measured on random rays. Its kernels keep 56
// registers for closest hit and 48 for any hit, so that 18 and 20 blocks
// fit an SM (kernels/trace_test.cuh).
var IncoherentKernel = Kernel{Dynamic: true, Block: Block, BlocksPerSM: 18, AnyBlocksPerSM: 20, Refill: 24}

// String names the variant for benchmark tables.
func (k Kernel) String() string {
	if k.Dynamic {
		if k.AnyBlocksPerSM != 0 {
			return fmt.Sprintf("dynamic-b%d-x%d-a%d-r%d", k.Block, k.BlocksPerSM, k.AnyBlocksPerSM, k.Refill)
		}
		return fmt.Sprintf("dynamic-b%d-x%d-r%d", k.Block, k.BlocksPerSM, k.Refill)
	}
	return fmt.Sprintf("grid-b%d", k.Block)
}

// check reports a variant the kernels cannot run.
func (k Kernel) check() error {
	if k.Block != Block || k.Dynamic && (k.Refill < 1 || k.Refill > 32) || k.BlocksPerSM < 0 || k.AnyBlocksPerSM < 0 {
		return fmt.Errorf("gputrace: %v: blocks of %d threads, refill 1 to 32", k, Block)
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
		k.Block = Block
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
	if anyHit && k.AnyBlocksPerSM > 0 {
		per = k.AnyBlocksPerSM
	}
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
	return name
}

// Variants are the kernels that BenchmarkDeviceTrace measures.
var Variants = []Kernel{DefaultKernel, IncoherentKernel}
