package gpubuild

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// freeLevel frees the level buffers once the large phase is over (the
// small phase needs only tv, ptri and pbox, the layout only ptri), so that
// the small phase's and the layout's output do not add to the large
// phase's peak. It waits for the queued kernels first (the last level's
// park kernel reads these buffers) unless wait is false: the device
// memory cache then keeps the blocks for the work queued after (the
// context's one stream runs it after the levels; a block the cache does
// not keep goes back to the driver after the queued work, see
// cuda.Context.FreePtr). Once done, it does nothing.
func (d *devLevel) freeLevel(wait bool) error {
	if d.levelFreed {
		return nil
	}
	if wait {
		if err := d.ctx.Synchronize(); err != nil {
			return err
		}
	}
	d.levelFreed = true
	for _, b := range []*exec.Buf[uint32]{d.kept, d.tri[0], d.tri[1], d.rnode[0], d.rnode[1], d.flags, d.offsets, d.info,
		d.dec, d.hist, d.arenaU} {
		b.Free()
	}
	for _, b := range []*exec.Buf[float32]{d.box[0], d.box[1], d.clipL, d.clipR, d.nbox, d.geo, d.arenaF} {
		b.Free()
	}
	d.sc.Free()
	return nil
}

// layoutCUDA lays out the tree from the device small phase's output (see
// layout_device.go for the steps and their Go references) and downloads the
// node and reference arrays once. It times the phases "layout" (sizes, host
// top layout, emit; ends with the device idle) and "download".
func (b *gpuBuild) layoutCUDA(d *devLevel, rs *refbuild.Records, so *smallDev, plan <-chan planned) ([]refbuild.Node, []uint32, error) {
	if err := b.Enter("layout", b.Levels, 0); err != nil {
		<-plan // done reading rs
		return nil, nil, err
	}
	b.StartPhase()
	t0 := b.Phase
	R := len(rs.Small)
	// The subtrees' sizes: kdtree_small_w_f32 counted them, runSmallCUDA
	// read them back.
	size := so.hostSize
	if len(size) != 2*R {
		return nil, nil, fmt.Errorf("kdtree: %d small subtrees' sizes for %d small roots", len(size)/2, R)
	}
	t0 = b.subPhase("layout.sizes", t0)
	pl := <-plan
	if pl.err != nil {
		return nil, nil, pl.err
	}
	t0 = b.subPhase("layout.plan", t0) // waiting for planTop, made while the small phase ran
	b.Phases["layout.plantop"] += float64(pl.took.Nanoseconds()) / 1e6
	t, err := pl.p.place(size, b.HostWorkers())
	if err != nil {
		return nil, nil, err
	}
	t0 = b.subPhase("layout.top", t0)
	// One upload: the small roots' bases, then the parked leaves' copies.
	// (Through pinned memory, which the context keeps: a pageable copy
	// waits for the device and stages the words first.)
	upBuf, err := d.sendNew(t.up)
	defer upBuf.Free()
	if err != nil {
		return nil, nil, err
	}
	nodesBuf, refsBuf, err := d.treeBufs(t.numNodes, t.numRefs)
	laid := false
	defer b.keepOrFree(d, nodesBuf, refsBuf, &laid)
	if err != nil {
		return nil, nil, err
	}
	b.subPhase("layout.alloc", t0)
	walkErr, err := d.emitSmall(so, upBuf, nodesBuf, refsBuf)
	if err != nil {
		return nil, nil, err
	}
	defer walkErr.Free()
	if err := d.copyRanges(t, upBuf, refsBuf); err != nil {
		return nil, nil, err
	}
	// The large-phase nodes on the host while the device works (the
	// launches above are queued: flushed first).
	if err := d.ctx.Flush(); err != nil {
		return nil, nil, err
	}
	pl.p.placeNodes(b.HostWorkers())
	if err := d.ctx.Synchronize(); err != nil {
		return nil, nil, err
	}
	if err := checkWalk(walkErr); err != nil {
		return nil, nil, err
	}
	b.EndPhase("layout")

	// The one download of the finished tree.
	b.StartPhase()
	nodes, refs, err := downloadTree(nodesBuf, refsBuf, t.numNodes, t.numRefs)
	if err != nil {
		return nil, nil, err
	}
	t.finish(nodes, refs)
	releasePlan(pl.p)
	if b.keep {
		// The large-phase nodes and the host-held leaves' references went
		// into the host copy only: the kept copy gets them from it.
		if err := nodesBuf.Slice(0, 2*t.numNodes).CopyFromHost(treeWords(nodes)); err != nil {
			return nil, nil, err
		}
		if err := refsBuf.Slice(0, t.numRefs).CopyFromHost(refs); err != nil {
			return nil, nil, err
		}
	}
	laid = true
	b.EndPhase("download")
	return nodes, refs, nil
}

// copyRanges queues the copies of the parked leaves' references (t.copies,
// uploaded into up after the small roots' bases) into refs.
func (d *devLevel) copyRanges(t *topLayout, up, refs *exec.Buf[uint32]) error {
	if nc := len(t.copies) / 3; nc > 0 {
		if err := launch.KdtreeCopyRangesU32.Launch(d.ctx, cuda.Linear(nc), cuda.Linear(cudaBlock), 0, launch.KdtreeCopyRangesU32Args{
			Src: d.ptri.Ptr(), C: up.Slice(len(t.base), len(t.copies)).Ptr(), Ranges: uint32(nc),
			Dst: refs.Ptr()}); err != nil {
			return fmt.Errorf("kdtree: kdtree_copy_ranges_u32: %w", err)
		}
	}
	return nil
}

// checkWalk reads kdtree_small_emit_u32's walk error word (walkErr, nil
// when the emit has none): not 0 when small-phase records nest deeper than
// the walk's stack.
func checkWalk(walkErr *exec.Buf[uint32]) error {
	if walkErr == nil {
		return nil
	}
	var w [1]uint32
	if err := walkErr.CopyToHost(w[:]); err != nil {
		return err
	}
	if w[0] != 0 {
		return fmt.Errorf("kdtree: small-phase records nest deeper than %d levels", refbuild.MaxTreeDepth)
	}
	return nil
}

// The node words the kernels write are kdtree.Node's fields in order.
var _ = [1]struct{}{}[unsafe.Sizeof(refbuild.Node{})-8]

// smallAndLayoutCUDA runs the small phase and the layout on the device and
// sets res's nodes and references; it returns false (res unchanged) when
// the small phase's output overflowed every room it tried.
func (b *gpuBuild) smallAndLayoutCUDA(d *devLevel, rs *refbuild.Records, res *refbuild.BuildResult, smallOff, smallCnt []uint32) (bool, error) {
	// Nothing but tv, ptri and pbox is needed from here on: free the
	// level buffers before the small phase allocates its output.
	t0 := time.Now()
	if err := d.freeLevel(true); err != nil {
		return false, err
	}
	b.subPhase("small.free", t0) // the last level's wait and the frees
	// The large-phase half of the layout is planned on the host while the
	// device builds the small subtrees (it reads rs, which nothing changes
	// until it is done).
	plan := make(chan planned, 1)
	go func() {
		t0 := time.Now()
		p, err := planTop(rs)
		plan <- planned{p, err, time.Since(t0)}
	}()
	so, err := b.runSmallCUDA(d, rs, smallOff, smallCnt)
	if err != nil || so == nil {
		<-plan // done reading rs
		return false, err
	}
	defer so.free()
	b.freeCorners(d)
	d.pbox.Free()
	b.EndPhase("small")
	if res.Nodes, res.Refs, err = b.layoutCUDA(d, rs, so, plan); err != nil {
		return false, err
	}
	b.DevPeak = d.ctx.PeakBytes()
	return true, nil
}

// emitSmall queues the layout of the small subtrees at their bases (2
// words a small root in base: node and reference index): a thread per
// record (kdtree_small_place_u32) when the small kernel left their places,
// else a walk per root (kdtree_small_emit_u32), whose stack overflow word
// it returns (nil otherwise) for the caller to read after the wait and
// free.
func (d *devLevel) emitSmall(so *smallDev, base, nodes, refs *exec.Buf[uint32]) (*exec.Buf[uint32], error) {
	R := so.roots
	if R == 0 {
		return nil, nil
	}
	if so.place != nil {
		return nil, launchN(d, launch.KdtreeSmallPlaceU32, so.nrec, launch.KdtreeSmallPlaceU32Args{
			Rec: so.rec.Ptr(), Srefs: so.refs.Ptr(), Place: so.place.Ptr(), ChunkRoot: so.chunkRoot.Ptr(),
			Nrec: uint32(so.nrec), Roots: uint32(R), Base: base.Ptr(), Nodes: nodes.Ptr(), Refs: refs.Ptr()})
	}
	walkErr, err := exec.Alloc[uint32](d.ex, 1)
	if err != nil {
		return nil, err
	}
	if err = walkErr.Dev().Memset32(0); err == nil {
		err = launchN(d, launch.KdtreeSmallEmitU32, R, launch.KdtreeSmallEmitU32Args{
			Rec: so.rec.Ptr(), Srefs: so.refs.Ptr(), Roots: uint32(R), Base: base.Ptr(), Nodes: nodes.Ptr(),
			Refs: refs.Ptr(), Err: walkErr.Ptr()})
	}
	if err != nil {
		walkErr.Free()
		return nil, err
	}
	return walkErr, nil
}

// sendNew copies words into a new buffer (nil for none; the caller frees
// it, also on error) through pinned memory, which the context keeps: a
// pageable copy waits for the device and stages the words first.
func (d *devLevel) sendNew(words []uint32) (*exec.Buf[uint32], error) {
	if len(words) == 0 {
		return nil, nil
	}
	buf, err := exec.Alloc[uint32](d.ex, len(words))
	if err != nil {
		return nil, err
	}
	h, pin := d.hostWords(len(words))
	copy(h, words)
	return buf, d.send(buf, h, pin)
}

// treeBufs allocates the output arrays of a tree of numNodes nodes (as
// pairs of words: kdtree.Node) and numRefs references; the caller frees
// both (nil on error), also on error.
func (d *devLevel) treeBufs(numNodes, numRefs int) (nodes, refs *exec.Buf[uint32], err error) {
	if nodes, err = exec.Alloc[uint32](d.ex, max(2*numNodes, 1)); err != nil {
		return nil, nil, err
	}
	if refs, err = exec.Alloc[uint32](d.ex, max(numRefs, 1)); err != nil {
		return nodes, nil, err
	}
	return nodes, refs, nil
}
