package gputrace

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// Kernel is a traversal variant: how rays are handed to threads. Every
// variant gives the same results.
type Kernel struct {
	// Persistent: a grid that fills the device once, each warp taking the
	// next 32 rays from a global counter (Aila and Laine 2009); else one
	// thread per ray.
	Persistent bool
	// Block is the threads per block.
	Block int
	// BlocksPerSM is the blocks per multiprocessor of a persistent or
	// dynamic grid (0: 2048/Block).
	BlocksPerSM int
	// Dynamic: persistent warps whose idle lanes take new rays whenever
	// fewer than Refill (1 to 32) lanes are still tracing (Aila and Laine's
	// dynamic fetch; kernels/trace.cu trace_dynamic). Persistent is then
	// ignored.
	Dynamic bool
	Refill  int
	// Sort, unless NoSort: before the trace, bucket the rays by origin
	// cell and direction with this key (kernels/trace.cu kd_trace_key) and
	// trace them in that order, so that a warp's rays start close and
	// point the same way; the bucketing is part of the call's time, and
	// the results are unchanged. Slower than NoSort on every row measured
	// (docs/performance.md, "GPU tracing"): kept to measure against.
	Sort SortKey
}

// SortKey is the bucket key of a sorted trace: six 3-bit cell
// coordinates, the direction's (over its largest |component|) and the
// origin's (in the root box), in one of three orders.
type SortKey uint32

const (
	NoSort        SortKey = iota
	SortMorton            // all six interleaved bit by bit
	SortDirection         // the direction's three interleaved, then the origin's
	SortOrigin            // the origin's three interleaved, then the direction's
)

var sortNames = [...]string{"", "sorted", "sorted-dir", "sorted-org"}

// MaxBlock is the most threads per block of a trace kernel (their launch
// bounds in kernels/trace.cu).
const MaxBlock = 128

// sortBins is the number of buckets of a sorted trace (kernels/trace.cu
// kBins).
const sortBins = 1 << 18

// DefaultKernel is the variant used unless a caller sets another: the
// fastest measured on coherent rays, within 7% of the best on incoherent
// ones (docs/performance.md, "GPU tracing").
var DefaultKernel = Kernel{Block: 64}

// String names the variant for benchmark tables.
func (k Kernel) String() string {
	if k.Sort != NoSort && int(k.Sort) < len(sortNames) {
		name := sortNames[k.Sort]
		k.Sort = NoSort
		return name + "-" + k.String()
	}
	switch {
	case k.Dynamic:
		return fmt.Sprintf("dynamic-b%d-x%d-r%d", k.Block, k.BlocksPerSM, k.Refill)
	case k.Persistent:
		return fmt.Sprintf("persistent-b%d-x%d", k.Block, k.BlocksPerSM)
	}
	return fmt.Sprintf("grid-b%d", k.Block)
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
	return t.launch(false, rays.Ptr(), hits.Ptr(), n)
}

// Occluded enqueues the any-hit trace of the rays in rays into occluded,
// one byte per ray: 1 when a triangle meets the ray within [TMin, TMax],
// else 0.
func (t *Tree) Occluded(rays *cuda.Buffer[float32], occluded *cuda.Buffer[uint8]) error {
	n := rays.Len() / RayWords
	if err := t.lengths(rays.Len(), RayWords, occluded.Len(), 1, n); err != nil {
		return err
	}
	return t.launch(true, rays.Ptr(), occluded.Ptr(), n)
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

func (t *Tree) launch(anyHit bool, rays, out cuda.DevPtr, n int) error {
	if n == 0 {
		return nil
	}
	k := t.Kernel
	if k.Block <= 0 {
		k.Block = 128
	}
	block := cuda.Linear(k.Block)
	if k.Block > MaxBlock || (k.Dynamic || k.Persistent) && k.Block%32 != 0 || k.Dynamic && (k.Refill < 1 || k.Refill > 32) ||
		k.Sort > SortOrigin {
		return fmt.Errorf("gputrace: %v: at most %d threads a block, whole warps for persistent blocks, refill 1 to 32, sort key 0 to 3", k, MaxBlock)
	}
	order := cuda.DevPtr(0)
	if k.Sort != NoSort {
		var err error
		if order, err = t.sortRays(rays, n, k.Sort); err != nil {
			return err
		}
	}
	if !k.Persistent && !k.Dynamic {
		return t.launchGrid(anyHit, cuda.GridFor(n, k.Block), block, rays, out, uint32(n), order)
	}
	if err := t.counter.Memset32(0); err != nil {
		return err
	}
	per := k.BlocksPerSM
	if per <= 0 {
		per = 2048 / k.Block
	}
	blocks := min(t.ctx.Info().SMs*per, (n+k.Block-1)/k.Block)
	return t.launchPersistent(anyHit, k, cuda.Linear(max(blocks, 1)), block, rays, out, uint32(n), order)
}

// launchGrid launches kd_trace_closest (hits into out) or, for anyHit,
// kd_trace_any (occlusion bytes into out): a thread a ray.
func (t *Tree) launchGrid(anyHit bool, grid, block cuda.Dim3, rays, out cuda.DevPtr, n uint32, order cuda.DevPtr) error {
	if anyHit {
		return launch.KdTraceAny.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyArgs{Nodes: t.nodes.Ptr(),
			Nnodes: t.nnodes, Tris: t.tris.Ptr(), Box: t.box.Ptr(), Rays: rays, Occluded: out, N: n, Order: order})
	}
	return launch.KdTraceClosest.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestArgs{Nodes: t.nodes.Ptr(),
		Nnodes: t.nnodes, Tris: t.tris.Ptr(), Box: t.box.Ptr(), Rays: rays, Hits: out, N: n, Order: order})
}

// launchPersistent launches the persistent blocks of k (grid blocks taking
// rays from t.counter, zeroed by the caller): the _dyn kernels, which take
// k.Refill rays a warp at a time, when k.Dynamic, else the _pt kernels.
func (t *Tree) launchPersistent(anyHit bool, k Kernel, grid, block cuda.Dim3, rays, out cuda.DevPtr, n uint32, order cuda.DevPtr) error {
	nodes, tris, box, ctr := t.nodes.Ptr(), t.tris.Ptr(), t.box.Ptr(), t.counter.Ptr()
	switch {
	case k.Dynamic && anyHit:
		return launch.KdTraceAnyDyn.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyDynArgs{Nodes: nodes, Nnodes: t.nnodes,
			Tris: tris, Box: box, Rays: rays, Occluded: out, N: n, Order: order, Counter: ctr, Refill: uint32(k.Refill)})
	case k.Dynamic:
		return launch.KdTraceClosestDyn.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestDynArgs{Nodes: nodes, Nnodes: t.nnodes,
			Tris: tris, Box: box, Rays: rays, Hits: out, N: n, Order: order, Counter: ctr, Refill: uint32(k.Refill)})
	case anyHit:
		return launch.KdTraceAnyPt.Launch(t.ctx, grid, block, 0, launch.KdTraceAnyPtArgs{Nodes: nodes, Nnodes: t.nnodes,
			Tris: tris, Box: box, Rays: rays, Occluded: out, N: n, Order: order, Counter: ctr})
	}
	return launch.KdTraceClosestPt.Launch(t.ctx, grid, block, 0, launch.KdTraceClosestPtArgs{Nodes: nodes, Nnodes: t.nnodes,
		Tris: tris, Box: box, Rays: rays, Hits: out, N: n, Order: order, Counter: ctr})
}

// sortRays enqueues the bucketing of the n rays at rays by key and returns the
// device address of their order (n indices), growing the scratch buffers
// when n is more than they hold.
func (t *Tree) sortRays(rays cuda.DevPtr, n int, key SortKey) (cuda.DevPtr, error) {
	if t.keys == nil || t.keys.Len() < n {
		t.keys.Free()
		t.order.Free()
		t.keys, t.order = nil, nil
		var err error
		if t.keys, err = cuda.NewBuffer[uint32](t.ctx, n); err != nil {
			return 0, err
		}
		if t.order, err = cuda.NewBuffer[uint32](t.ctx, n); err != nil {
			return 0, err
		}
	}
	if t.hist == nil {
		var err error
		if t.hist, err = cuda.NewBuffer[uint32](t.ctx, sortBins); err != nil {
			return 0, err
		}
	}
	if err := t.hist.Memset32(0); err != nil {
		return 0, err
	}
	const block = 256
	if err := launch.KdTraceKey.Launch(t.ctx, cuda.GridFor(n, block), cuda.Linear(block), 0, launch.KdTraceKeyArgs{
		Rays: rays, Box: t.box.Ptr(), N: uint32(n), Mode: uint32(key), Keys: t.keys.Ptr(), Hist: t.hist.Ptr()}); err != nil {
		return 0, err
	}
	if err := launch.KdTraceBins.Launch(t.ctx, cuda.Linear(1), cuda.Linear(1024), 0, launch.KdTraceBinsArgs{Hist: t.hist.Ptr()}); err != nil {
		return 0, err
	}
	if err := launch.KdTraceOrder.Launch(t.ctx, cuda.GridFor(n, block), cuda.Linear(block), 0, launch.KdTraceOrderArgs{
		Keys: t.keys.Ptr(), N: uint32(n), Hist: t.hist.Ptr(), Order: t.order.Ptr()}); err != nil {
		return 0, err
	}
	return t.order.Ptr(), nil
}

// Chunk is the most rays a host-slice call sends to the device at once;
// cancellation is checked between chunks.
const Chunk = 1 << 20

// IntersectHost traces rays (host memory) into hits, Chunk rays at a time,
// checking ctx before each chunk.
func (t *Tree) IntersectHost(ctx context.Context, rays []Ray, hits []Hit) error {
	if len(rays) != len(hits) {
		return fmt.Errorf("gputrace: %d rays and %d hits", len(rays), len(hits))
	}
	return chunks(ctx, t, rays, HitWords, func(rb, hb *cuda.Buffer[float32], lo, m int) error {
		if err := t.Intersect(rb, hb); err != nil {
			return err
		}
		return hb.CopyToHost(words(hits[lo : lo+m]))
	})
}

// OccludedHost traces rays (host memory) for any hit into occluded, Chunk
// rays at a time, checking ctx before each chunk.
func (t *Tree) OccludedHost(ctx context.Context, rays []Ray, occluded []bool) error {
	if len(rays) != len(occluded) {
		return fmt.Errorf("gputrace: %d rays and %d answers", len(rays), len(occluded))
	}
	return chunks(ctx, t, rays, 1, func(rb *cuda.Buffer[float32], ob *cuda.Buffer[uint8], lo, m int) error {
		if err := t.Occluded(rb, ob); err != nil {
			return err
		}
		// The kernel writes only 0 and 1: valid bools.
		return ob.CopyToHost(unsafe.Slice((*uint8)(unsafe.Pointer(&occluded[lo])), m))
	})
}

// chunks runs fn over the rays Chunk at a time, with the chunk's rays
// copied into a device buffer and outPer elements of device output per ray.
func chunks[O cuda.Elem](ctx context.Context, t *Tree, rays []Ray, outPer int, fn func(rb *cuda.Buffer[float32], ob *cuda.Buffer[O], lo, m int) error) error {
	if t.nodes == nil {
		return fmt.Errorf("gputrace: tree is closed")
	}
	if len(rays) == 0 {
		return ctx.Err()
	}
	m := min(len(rays), Chunk)
	rb, err := cuda.NewBuffer[float32](t.ctx, m*RayWords)
	if err != nil {
		return err
	}
	defer rb.Free()
	ob, err := cuda.NewBuffer[O](t.ctx, m*outPer)
	if err != nil {
		return err
	}
	defer ob.Free()
	for lo := 0; lo < len(rays); lo += m {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(m, len(rays)-lo)
		if err := rb.CopyFromHost(words(rays[lo : lo+k])); err != nil {
			return err
		}
		if err := fn(rb.Slice(0, k*RayWords), ob.Slice(0, k*outPer), lo, k); err != nil {
			return err
		}
	}
	return nil
}

// words views rays or hits as their float32 words.
func words[T Ray | Hit](s []T) []float32 {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*float32)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z))/4)
}

// Variants are the kernels that BenchmarkDeviceTrace measures.
var Variants = []Kernel{
	{Block: 64}, {Block: 128},
	{Persistent: true, Block: 64, BlocksPerSM: 16},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 16},
	{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24},
	{Dynamic: true, Block: 128, BlocksPerSM: 8, Refill: 24},
	{Sort: SortMorton, Block: 64},
	{Sort: SortDirection, Block: 64},
}
