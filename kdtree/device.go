package kdtree

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kdtree/internal/gputrace"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// deviceCopy is a tree's copy in device memory; mu serialises the batches
// traced on it (they share the device's work counter).
type deviceCopy struct {
	mu   sync.Mutex
	tree *gputrace.Tree
}

// The device kernels read kdtree.Ray's memory as gputrace.Ray's, and write
// kdtree.Hit's as gputrace.HostHit's (the same fields in the same order:
// these fail to compile otherwise).
var (
	_ = [1]struct{}{}[unsafe.Sizeof(Ray{})-unsafe.Sizeof(gputrace.Ray{})]
	_ = [1]struct{}{}[unsafe.Sizeof(Hit{})-unsafe.Sizeof(gputrace.HostHit{})]
	_ = [1]struct{}{}[unsafe.Offsetof(Hit{}.Prim)-unsafe.Offsetof(gputrace.HostHit{}.Prim)]
	_ = [1]struct{}{}[unsafe.Offsetof(Hit{}.N)-unsafe.Offsetof(gputrace.HostHit{}.N)]
)

// Upload copies the tree (nodes, and its triangles in reference order) to
// the device of ex, so that IntersectBatch, OccludedBatch and the Device
// forms run there, with the same hits as Intersect and Occluded. A copy
// already there is replaced. It returns an error for an executor without a
// device, or a tree the kernels cannot trace (deeper than MaxTreeDepth,
// indices out of range). Upload, Close and tracing must not run
// concurrently with each other on one tree.
func (t *Tree) Upload(ex exec.Executor) error {
	if t.Scene == nil && len(t.Nodes) > 0 {
		return fmt.Errorf("kdtree: Upload of a tree without a scene")
	}
	in := t.traceInput()
	d, err := gputrace.Upload(ex, in)
	if err != nil {
		return fmt.Errorf("kdtree: Upload: %w", err)
	}
	if err := t.Close(); err != nil {
		d.Close()
		return err
	}
	t.dev = &deviceCopy{tree: d}
	return nil
}

// keepOnDevice makes the device copy of a tree that Build laid out on
// ex's device from the build's buffers (kept: they stay the caller's; the
// nodes are uploaded in the kernels' layout), or
// by Upload when the build left none (its small phase ran in Go, or no
// triangle was kept).
func (t *Tree) keepOnDevice(ex exec.Executor, kept *gpubuild.Kept) error {
	if kept == nil || len(t.Nodes) == 0 {
		return t.Upload(ex)
	}
	// The triangles are gathered from the build's buffers; the nodes go up
	// in the pair layout, made from the host copy.
	d, err := gputrace.FromDevice(ex.CUDA(), t.traceInput(), kept.Refs.Dev(), kept.Corners.Dev())
	if err != nil {
		return fmt.Errorf("kdtree: KeepOnDevice: %w", err)
	}
	t.dev = &deviceCopy{tree: d}
	return nil
}

// traceInput is the tree as gputrace reads it.
func (t *Tree) traceInput() gputrace.Input {
	in := gputrace.Input{Nodes: nodeWordsOf(t.Nodes), Refs: t.Refs, Box: [6]float32{
		t.Bounds.Min[0], t.Bounds.Min[1], t.Bounds.Min[2], t.Bounds.Max[0], t.Bounds.Max[1], t.Bounds.Max[2]}}
	if s := t.Scene; s != nil {
		in.Tris = len(s.Tris)
		in.Corners = func(prim uint32) [3][3]float32 {
			tri := s.Tris[prim]
			return [3][3]float32{s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]]}
		}
	}
	if len(t.Nodes) == 0 {
		in.Refs = nil
	}
	return in
}

// Close frees the tree's device copy, if any; the host tree stays usable.
// It is idempotent.
func (t *Tree) Close() error {
	d := t.dev
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t.dev = nil
	return d.tree.Close()
}

// OnDevice reports whether the tree has a device copy (Upload).
func (t *Tree) OnDevice() bool { return t.dev != nil }

// RayCoherence says what the rays of the Device calls are like, so that
// the tree's device copy traces them with the kernel that suits them
// (SetDeviceRays). Every choice gives the same hits.
type RayCoherence int

const (
	// CoherentRays (the default): rays next to each other in the buffer
	// start close and point the same way (camera rays, shadow rays towards
	// a light). A thread traces a ray.
	CoherentRays RayCoherence = iota
	// IncoherentRays: rays that start and point anywhere (ambient
	// occlusion, diffuse bounces). Persistent warps whose lanes take new
	// rays as theirs end (Aila and Laine's dynamic fetch): 18-36% faster
	// on such rays, 11-26% slower on camera rays (docs/performance.md,
	// "GPU tracing").
	IncoherentRays
)

// SetDeviceRays sets what the rays of later IntersectDevice and
// OccludedDevice calls are like (CoherentRays until set); the host-slice
// batches always trace a thread a ray. It does nothing without a device
// copy (Upload, or Options.KeepOnDevice makes one with CoherentRays).
func (t *Tree) SetDeviceRays(c RayCoherence) {
	d := t.dev
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tree.Kernel = gputrace.DefaultKernel
	if c == IncoherentRays {
		d.tree.Kernel = gputrace.IncoherentKernel
	}
}

// DeviceRayWords and DeviceHitWords are the float32 words per ray and per
// hit in the buffers of IntersectDevice and OccludedDevice: a ray is Ray's
// memory (Org, Dir, TMin, TMax), a hit T, U, V, Prim (its bits), N, and a
// zero word. A miss is T = +Inf, Prim = NoHit, the rest zero.
const (
	DeviceRayWords = gputrace.RayWords
	DeviceHitWords = gputrace.HitWords
)

// IntersectDevice traces the rays in device buffer rays (DeviceRayWords
// each) into hits (DeviceHitWords each) on the tree's device copy: the
// work is queued on the device and this returns without waiting, so a
// caller that generates rays and consumes hits on the device never copies
// them to the host. The lengths must match; ctx is checked once before.
func (t *Tree) IntersectDevice(ctx context.Context, rays, hits *exec.Buf[float32]) error {
	d, err := t.device(ctx, rays)
	if err != nil {
		return err
	}
	defer d.mu.Unlock()
	if !hits.OnDevice() {
		return fmt.Errorf("kdtree: IntersectDevice: hits not in device memory")
	}
	return d.tree.Intersect(rays.Dev(), hits.Dev())
}

// OccludedDevice is IntersectDevice for any hit: occluded gets one byte per
// ray, 1 when a triangle meets the ray within [TMin, TMax], else 0.
func (t *Tree) OccludedDevice(ctx context.Context, rays *exec.Buf[float32], occluded *exec.Buf[uint8]) error {
	d, err := t.device(ctx, rays)
	if err != nil {
		return err
	}
	defer d.mu.Unlock()
	if !occluded.OnDevice() {
		return fmt.Errorf("kdtree: OccludedDevice: results not in device memory")
	}
	return d.tree.Occluded(rays.Dev(), occluded.Dev())
}

// device returns the locked device copy for a Device call.
func (t *Tree) device(ctx context.Context, rays *exec.Buf[float32]) (*deviceCopy, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := t.dev
	if d == nil {
		return nil, fmt.Errorf("kdtree: the tree has no device copy (Upload)")
	}
	if !rays.OnDevice() {
		return nil, fmt.Errorf("kdtree: rays not in device memory")
	}
	d.mu.Lock()
	return d, nil
}

// intersectOnDevice runs a closest-hit batch on the device copy when there
// is one (handled false otherwise): the batch API's hook.
func (t *Tree) intersectOnDevice(ctx context.Context, rays []Ray, hits []Hit) (handled bool, err error) {
	d := t.dev
	if d == nil {
		return false, nil
	}
	if len(rays) != len(hits) {
		return true, fmt.Errorf("kdtree: %d rays and %d hits", len(rays), len(hits))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return true, d.tree.IntersectHost(ctx, gpuRays(rays), gpuHits(hits))
}

// occludedOnDevice is intersectOnDevice for any-hit batches.
func (t *Tree) occludedOnDevice(ctx context.Context, rays []Ray, occluded []bool) (handled bool, err error) {
	d := t.dev
	if d == nil {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return true, d.tree.OccludedHost(ctx, gpuRays(rays), occluded)
}

// gpuHits views hits as the host-slice kernels' records (the same memory).
func gpuHits(hits []Hit) []gputrace.HostHit {
	if len(hits) == 0 {
		return nil
	}
	return unsafe.Slice((*gputrace.HostHit)(unsafe.Pointer(&hits[0])), len(hits))
}

// gpuRays views rays as the device's ray records (the same memory).
func gpuRays(rays []Ray) []gputrace.Ray {
	if len(rays) == 0 {
		return nil
	}
	return unsafe.Slice((*gputrace.Ray)(unsafe.Pointer(&rays[0])), len(rays))
}

// nodeWordsOf views nodes as their words, W0 then W1 of each.
func nodeWordsOf(nodes []Node) []uint32 {
	if len(nodes) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&nodes[0])), 2*len(nodes))
}
