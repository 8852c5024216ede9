package gputrace

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// Kernel is a traversal variant: how rays are handed to threads and where
// each ray's stack lives. Every variant gives the same results.
type Kernel struct {
	// Persistent: a grid that fills the device once, each warp taking the
	// next 32 rays from a global counter (Aila and Laine 2009); else one
	// thread per ray.
	Persistent bool
	// Block is the threads per block, whole warps (0: 64).
	Block int
	// BlocksPerSM is the blocks per multiprocessor of a persistent or
	// dynamic grid (0: 2048/Block).
	BlocksPerSM int
	// Dynamic: persistent warps whose idle lanes take new rays whenever
	// fewer than Refill (1 to 32) lanes are still tracing (Aila and Laine's
	// dynamic fetch; kernels/trace_dynamic.cu). Persistent is then ignored.
	Dynamic bool
	Refill  int
	// Ring: the top RingEntries entries of each ray's stack in shared
	// memory, the older ones in local memory (kernels/trace_walk.cuh
	// RingStack), instead of the whole stack in local memory. Not with
	// Persistent.
	Ring bool
	// Treelet: the nodes in the treelet layout (treelets.go: children
	// pairs three levels deep in one 128-byte line), made from the host
	// copy and uploaded on first use. Not with Ring or Persistent.
	Treelet bool
}

// RingEntries is the stack entries a Ring kernel keeps in shared memory
// per thread (kernels/trace.cu kRing, trace_dynamic.cu kDynRing), 12 bytes
// each.
const RingEntries = 8

// MaxBlock is the most threads per block of a trace kernel (their launch
// bounds in kernels/trace.cu).
const MaxBlock = 128

// DefaultKernel is the variant used unless a caller sets another: the
// fastest measured on coherent rays, within 7% of the best on incoherent
// ones (docs/performance.md, "GPU tracing").
var DefaultKernel = Kernel{Block: 64}

// IncoherentKernel is the variant for batches known to be incoherent
// (rays that start and point anywhere: ambient occlusion, diffuse
// bounces): the fastest measured on random rays.
var IncoherentKernel = Kernel{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24}

// String names the variant for benchmark tables.
func (k Kernel) String() string {
	ring := ""
	if k.Ring {
		ring = "ring-"
	}
	if k.Treelet {
		ring += "tl-"
	}
	switch {
	case k.Dynamic:
		return fmt.Sprintf("dynamic-%sb%d-x%d-r%d", ring, k.Block, k.BlocksPerSM, k.Refill)
	case k.Persistent:
		return fmt.Sprintf("persistent-%sb%d-x%d", ring, k.Block, k.BlocksPerSM)
	}
	return fmt.Sprintf("grid-%sb%d", ring, k.Block)
}

// check reports a variant the kernels cannot run.
func (k Kernel) check() error {
	if k.Block <= 0 || k.Block > MaxBlock || k.Block%32 != 0 || k.Dynamic && (k.Refill < 1 || k.Refill > 32) ||
		k.Ring && k.Persistent && !k.Dynamic || k.BlocksPerSM < 0 || k.Treelet && (k.Ring || k.Persistent && !k.Dynamic) {
		return fmt.Errorf("gputrace: %v: whole warps, at most %d threads a block, refill 1 to 32, no ring with persistent warps", k, MaxBlock)
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
	block := cuda.Linear(k.Block)
	shared := uint32(0)
	if k.Ring {
		shared = uint32(RingEntries * 12 * k.Block)
	}
	a := traceArgs{t: t, nodes: t.nodes.Ptr(), rays: rays, out: out, words: words, n: uint32(n)}
	if k.Treelet {
		tn, err := t.treeletNodes()
		if err != nil {
			return err
		}
		a.nodes = tn.Ptr()
	}
	if !k.Persistent && !k.Dynamic {
		return a.grid(k, anyHit, cuda.GridFor(n, k.Block), block, shared)
	}
	if err := t.counter.Memset32(0); err != nil {
		return err
	}
	per := k.BlocksPerSM
	if per <= 0 {
		per = 2048 / k.Block
	}
	blocks := min(t.ctx.Info().SMs*per, (n+k.Block-1)/k.Block)
	return a.persistent(k, anyHit, cuda.Linear(max(blocks, 1)), block, shared)
}

// traceArgs are a launch's rays and results.
type traceArgs struct {
	t                *Tree
	nodes, rays, out cuda.DevPtr
	words, n         uint32
}

// grid launches a thread a ray: kd_trace_closest (hits into out) or, for
// anyHit, kd_trace_any (occlusion bytes), or their _sh forms for k.Ring.
func (a traceArgs) grid(k Kernel, anyHit bool, grid, block cuda.Dim3, shared uint32) error {
	t := a.t
	nodes, tris, box := a.nodes, t.tris.Ptr(), t.box.Ptr()
	switch {
	case anyHit && k.Treelet:
		return launch.KdTraceAnyTl.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyTlArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Occluded: a.out, N: a.n})
	case k.Treelet:
		return launch.KdTraceClosestTl.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestTlArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Hits: a.out, HitWords: a.words, N: a.n})
	case anyHit && k.Ring:
		return launch.KdTraceAnySh.Launch(t.ctx, grid, block, shared, launch.KdTraceAnyShArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Occluded: a.out, N: a.n})
	case anyHit:
		return launch.KdTraceAny.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Occluded: a.out, N: a.n})
	case k.Ring:
		return launch.KdTraceClosestSh.Launch(t.ctx, grid, block, shared, launch.KdTraceClosestShArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Hits: a.out, HitWords: a.words, N: a.n})
	}
	return launch.KdTraceClosest.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestArgs{Nodes: nodes,
		Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Hits: a.out, HitWords: a.words, N: a.n})
}

// persistent launches the persistent blocks of k (taking rays from
// t.counter, zeroed by the caller): the _dyn kernels (_dyn_sh for k.Ring),
// which take k.Refill rays a warp at a time, when k.Dynamic, else the _pt
// kernels.
func (a traceArgs) persistent(k Kernel, anyHit bool, grid, block cuda.Dim3, shared uint32) error {
	t := a.t
	nodes, tris, box, ctr, refill := a.nodes, t.tris.Ptr(), t.box.Ptr(), t.counter.Ptr(), uint32(k.Refill)
	switch {
	case k.Dynamic && anyHit && k.Treelet:
		return launch.KdTraceAnyDynTl.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyDynTlArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Occluded: a.out, N: a.n, Counter: ctr, Refill: refill})
	case k.Dynamic && k.Treelet:
		return launch.KdTraceClosestDynTl.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestDynTlArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Hits: a.out, HitWords: a.words, N: a.n,
			Counter: ctr, Refill: refill})
	case k.Dynamic && anyHit && k.Ring:
		return launch.KdTraceAnyDynSh.Launch(t.ctx, grid, block, shared, launch.KdTraceAnyDynShArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Occluded: a.out, N: a.n, Counter: ctr, Refill: refill})
	case k.Dynamic && anyHit:
		return launch.KdTraceAnyDyn.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyDynArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Occluded: a.out, N: a.n, Counter: ctr, Refill: refill})
	case k.Dynamic && k.Ring:
		return launch.KdTraceClosestDynSh.Launch(t.ctx, grid, block, shared, launch.KdTraceClosestDynShArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Hits: a.out, HitWords: a.words, N: a.n,
			Counter: ctr, Refill: refill})
	case k.Dynamic:
		return launch.KdTraceClosestDyn.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestDynArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Hits: a.out, HitWords: a.words, N: a.n,
			Counter: ctr, Refill: refill})
	case anyHit:
		return launch.KdTraceAnyPt.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyPtArgs{Nodes: nodes,
			Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Occluded: a.out, N: a.n, Counter: ctr})
	}
	return launch.KdTraceClosestPt.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestPtArgs{Nodes: nodes,
		Nnodes: t.nnodes, Tris: tris, Box: box, Rays: a.rays, Hits: a.out, HitWords: a.words, N: a.n, Counter: ctr})
}

// Variants are the kernels that BenchmarkDeviceTrace measures.
var Variants = []Kernel{
	{Block: 64}, {Block: 128},
	{Ring: true, Block: 64}, {Ring: true, Block: 128},
	{Persistent: true, Block: 64, BlocksPerSM: 16},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 16},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24},
	{Dynamic: true, Block: 128, BlocksPerSM: 8, Refill: 24},
	{Dynamic: true, Ring: true, Block: 64, BlocksPerSM: 16, Refill: 24},
	{Dynamic: true, Ring: true, Block: 128, BlocksPerSM: 8, Refill: 24},
	{Treelet: true, Block: 64},
	{Dynamic: true, Treelet: true, Block: 64, BlocksPerSM: 16, Refill: 24},
}
