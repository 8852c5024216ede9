package gpubuild

import (
	"fmt"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/consts"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// The whole tree laid out on the device. The host's part of the layout
// (planTop: the large-phase nodes in depth-first order, and where each
// small subtree goes) needs the booker's records of every level, and the
// booker lags the device's levels (its work, 0.4-1.1 ms a bunny build on
// the device machine, is about the large phase's time): on the device
// machine its last levels and planTop were the path of the slow builds
// (bunny 2.0-2.1 ms, large.book 0.3-0.8 ms). Instead every pipelined
// level lists its nodes on the device as well (kdtree_tail_f32: split,
// leaf or small root, after the small roots in the same words, see
// ensureRoots). One block plans their layout beside the small phase
// (kdtree_top_plan_u32: each subtree's large-phase nodes, small roots and
// large leaves' references bottom up, what comes before each node top
// down, the small roots in depth-first order; the small phase is a
// programmatic dependent launch after it, so that it starts at once), and
// once the small subtrees' sizes are known their running totals
// (kdtree_top_run_u32, one block) and a thread a node
// (kdtree_top_place_u32) write the large-phase nodes and give each
// small subtree its place; kdtree_copy_ranges_u32 copies the large
// leaves' references and the subtrees go where the host's plan put them
// before (kdtree_small_place_u32). (One block doing all of it after the
// small phase took the bunny about 40 us and conference 122 us.) The
// booker only counts and checks the levels (the device's sizes against
// the host's counts). The tree on the device is complete: the host writes
// nothing into it.

// topAt is where the list of large-phase nodes starts in the small-root
// words of room rootCap (past them: smallAt's end; top_list in
// kernels/kdtree.cu), topCap its room in nodes (3 words each).
func topAt(rootCap int) int {
	_, _, _, end := smallAt(rootCap)
	return end
}

func topCap(rootCap int) int { return 4 * rootCap }

// topFits is whether the levels' lists held roots small roots and every
// large-phase node (d.topLevels' last entry), and there is a small root
// (the early small phase, whose sizes the layout needs, then runs).
func (d *devLevel) topFits(roots int) bool {
	nodes := int(d.topLevels[len(d.topLevels)-1])
	return d.roots != nil && roots > 0 && roots <= d.rootCap && nodes <= topCap(d.rootCap)
}

// topPlanWords is the plan's words a node (consts.TopPlanWords).
const topPlanWords = int(consts.TopPlanWords)

// queueTopPlan queues kdtree_top_plan_u32 on the levels' list of
// large-phase nodes (d.topLevels) for roots small roots: its plan, 6 words
// a node, then the small roots in depth-first order, in d.topPlan (a
// programmatic dependent launch of the small phase after it runs beside
// it: startSmallEarly).
func (d *devLevel) queueTopPlan(roots int) error {
	levels := d.topLevels
	top := int(levels[len(levels)-1])
	var err error
	if d.topPlan, err = exec.Alloc[uint32](d.ex, topPlanWords*top+roots+len(levels)); err != nil {
		return err
	}
	lv := d.topPlan.Slice(topPlanWords*top+roots, len(levels))
	words, pin := d.hostWords(len(levels))
	copy(words, levels)
	if err := d.send(lv, words, pin); err != nil {
		return err
	}
	if err := launch.KdtreeTopPlanU32.Launch(d.ctx, cuda.Linear(1), cuda.Linear(1024), 0, launch.KdtreeTopPlanU32Args{
		Top: d.roots.Slice(topAt(d.rootCap), 3*top).Ptr(), Levels: lv.Ptr(), Nlevels: uint32(len(levels) - 1),
		Plan: d.topPlan.Slice(0, topPlanWords*top).Ptr(),
		Dfs:  d.topPlan.Slice(topPlanWords*top, roots).Ptr()}); err != nil {
		return fmt.Errorf("kdtree: kdtree_top_plan_u32: %w", err)
	}
	return nil
}

// finishDeviceTop is buildCUDA after a pipelined large phase whose tree
// the device lays out: the small phase started early is waited for, then
// the layout (layoutTopCUDA). ok is false when the small phase's output
// overflowed every room it tries (the caller builds again without the
// device layout: the host has no records to run the Go small phase on).
func (b *gpuBuild) finishDeviceTop(d *devLevel, res *refbuild.BuildResult) (_ *refbuild.BuildResult, ok bool, err error) {
	run := d.early
	if run == nil {
		return nil, false, fmt.Errorf("kdtree: the device layout without a small phase")
	}
	b.EndPhase("large")
	b.SampleHost()
	b.StartPhase()
	if err := b.Enter("small", b.Levels, run.so.roots); err != nil {
		return nil, false, err // (d.free frees d.early)
	}
	d.early = nil
	b.cfg.Counts.add(CountEarlyRun)
	so, err := b.smallFinish(d, run)
	if err != nil || so == nil {
		return nil, false, err
	}
	defer so.free()
	b.freeCorners(d)
	d.pbox.Free()
	b.EndPhase("small")
	if res.Nodes, res.Refs, err = b.layoutTopCUDA(d, so); err != nil {
		return nil, false, err
	}
	b.DevPeak = d.ctx.PeakBytes()
	return res, true, nil
}

// layoutTopCUDA lays the tree out on the device (kdtree_top_layout_u32,
// then the small subtrees) and downloads it. It times the phases "layout"
// and "download".
func (b *gpuBuild) layoutTopCUDA(d *devLevel, so *smallDev) ([]refbuild.Node, []uint32, error) {
	if err := b.Enter("layout", b.Levels, 0); err != nil {
		return nil, nil, err
	}
	b.StartPhase()
	t0 := b.Phase
	R := so.roots
	top, numNodes, refBound, err := d.topSizes(so)
	if err != nil {
		return nil, nil, err
	}
	// Scratch: the running totals (2 words a small root, and 2) and the
	// large leaves' copies (3 words a node); the small roots' places (2R)
	// and the totals (2).
	if d.topPlan == nil {
		return nil, nil, fmt.Errorf("kdtree: the device layout without its plan")
	}
	work, err := exec.Alloc[uint32](b.Ex, 2*(R+1)+3*top+2*R+2)
	if err != nil {
		return nil, nil, err
	}
	defer work.Free()
	run, copies := work.Slice(0, 2*(R+1)), work.Slice(2*(R+1), 3*top)
	base, totals := work.Slice(2*(R+1)+3*top, 2*R), work.Slice(2*(R+1)+3*top+2*R, 2)
	nodesBuf, refsBuf, err := d.treeBufs(int(numNodes), int(refBound))
	laid := false
	defer b.keepOrFree(d, nodesBuf, refsBuf, &laid)
	if err != nil {
		return nil, nil, err
	}
	t0 = b.subPhase("layout.alloc", t0)
	plan, dfs := d.topPlan.Slice(0, topPlanWords*top), d.topPlan.Slice(topPlanWords*top, R)
	// The running totals (one block), then a thread a node (one block for
	// both took conference 70 us, the bunny 23).
	if err := launch.KdtreeTopRunU32.Launch(d.ctx, cuda.Linear(1), cuda.Linear(1024), 0, launch.KdtreeTopRunU32Args{
		Ntop: uint32(top), Plan: plan.Ptr(), Dfs: dfs.Ptr(), Size: so.size.Ptr(), Roots: uint32(R),
		Run: run.Ptr(), Totals: totals.Ptr()}); err != nil {
		return nil, nil, fmt.Errorf("kdtree: kdtree_top_run_u32: %w", err)
	}
	if err := launchN(d, launch.KdtreeTopPlaceU32, top, launch.KdtreeTopPlaceU32Args{
		Top: d.roots.Slice(topAt(d.rootCap), 3*top).Ptr(), Ntop: uint32(top), Plan: plan.Ptr(),
		Run: run.Ptr(), Roots: uint32(R), Base: base.Ptr(), Copies: copies.Ptr(), Nodes: nodesBuf.Ptr()}); err != nil {
		return nil, nil, err
	}
	// The large leaves' parked references (a block a node; the nodes that
	// are no leaves copy nothing).
	if err := launch.KdtreeCopyRangesU32.Launch(d.ctx, cuda.Linear(top), cuda.Linear(64), 0, launch.KdtreeCopyRangesU32Args{
		Src: d.ptri.Ptr(), C: copies.Ptr(), Ranges: uint32(top), Dst: refsBuf.Ptr()}); err != nil {
		return nil, nil, fmt.Errorf("kdtree: kdtree_copy_ranges_u32: %w", err)
	}
	walkErr, err := d.emitSmall(so, base, nodesBuf, refsBuf)
	if err != nil {
		return nil, nil, err
	}
	defer walkErr.Free()
	hw, err := d.totalsHome(totals, walkErr)
	if err != nil {
		return nil, nil, err
	}
	if walkErr != nil && hw[2] != 0 {
		return nil, nil, fmt.Errorf("kdtree: small-phase records nest deeper than %d levels", refbuild.MaxTreeDepth)
	}
	b.subPhase("layout.device", t0)
	if uint64(hw[0]) != numNodes || uint64(hw[1]) > refBound {
		return nil, nil, fmt.Errorf("kdtree: the device laid out %d nodes and %d references, want %d and at most %d",
			hw[0], hw[1], numNodes, refBound)
	}
	numRefs := int(hw[1])
	b.EndPhase("layout")

	// The one download of the finished tree.
	b.StartPhase()
	nodes, refs, err := downloadTree(nodesBuf, refsBuf, int(numNodes), numRefs)
	if err != nil {
		return nil, nil, err
	}
	laid = true
	b.EndPhase("download")
	return nodes, refs, nil
}

// topSizes returns the large-phase nodes (top) and the tree's nodes and a
// bound on its references: the large-phase nodes less the small roots,
// which their subtrees count; at most the parked references (the large
// leaves' and the small roots') and the subtrees' leaves'.
func (d *devLevel) topSizes(so *smallDev) (top int, numNodes, refBound uint64, err error) {
	R, size := so.roots, so.hostSize
	if len(size) != 2*R {
		return 0, 0, 0, fmt.Errorf("kdtree: %d subtree sizes for %d small roots", len(size), R)
	}
	top = int(d.topLevels[len(d.topLevels)-1])
	var sn, sr uint64
	for q := range R {
		sn += uint64(size[q])
		sr += uint64(size[R+q])
	}
	numNodes = uint64(top-R) + sn
	refBound = uint64(d.parked) + sr
	if numNodes >= refbuild.MaxChildIndex || refBound >= 1<<32 {
		return 0, 0, 0, fmt.Errorf("kdtree: tree of %d nodes and up to %d references exceeds the node format (2^30 nodes, 2^32 references)", numNodes, refBound)
	}
	return top, numNodes, refBound, nil
}

// totalsHome waits for the device and returns the layout's totals (nodes
// and references, 2 words of totals) and, when walkErr is not nil, the
// walk's overflow word after them.
func (d *devLevel) totalsHome(totals, walkErr *exec.Buf[uint32]) ([]uint32, error) {
	hw, hpin := d.hostWords(3)
	var err error
	if hpin != nil {
		err = d.ctx.CopyToHostAsync(hpin, 0, totals.Ptr(), 8)
		if err == nil && walkErr != nil {
			err = d.ctx.CopyToHostAsync(hpin, 8, walkErr.Ptr(), 4)
		}
		if err == nil {
			err = d.ctx.Synchronize()
		}
	} else {
		err = totals.CopyToHost(hw[:2])
		if err == nil && walkErr != nil {
			err = walkErr.CopyToHost(hw[2:])
		}
	}
	return hw, err
}

// treeWords views nodes as their words, W0 then W1 of each.
func treeWords(nodes []refbuild.Node) []uint32 {
	if len(nodes) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&nodes[0])), 2*len(nodes))
}

// downloadTree copies the first numNodes nodes (2 words each) and numRefs
// references of a tree laid out on the device to the host.
func downloadTree(nodesBuf, refsBuf *exec.Buf[uint32], numNodes, numRefs int) ([]refbuild.Node, []uint32, error) {
	nodes := make([]refbuild.Node, numNodes)
	refs := make([]uint32, numRefs)
	if len(nodes) > 0 {
		w := treeWords(nodes)
		if err := nodesBuf.Slice(0, len(w)).CopyToHost(w); err != nil {
			return nil, nil, err
		}
	}
	if len(refs) > 0 {
		if err := refsBuf.Slice(0, len(refs)).CopyToHost(refs); err != nil {
			return nil, nil, err
		}
	}
	return nodes, refs, nil
}
