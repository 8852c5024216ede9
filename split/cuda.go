package split

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scan"
)

const block = 256

// addressesCUDA runs Addresses on the device: the left and right flags
// unpacked into one array of 2(n+1) entries (left flags, a zero, right
// flags, a zero) by a kernel that also prepares the scan (its tiles' first
// segments, its zeroed state), one segmented exclusive scan over it whose
// segments are the nodes' left flags and then their right flags (scan's
// offsets form: shared-memory tiles, decoupled look-back) for every
// reference's ranks in its node, then one single-pass scan over the nodes
// that makes their counts as it loads them and leaves the child bases, and
// the destinations (kernels/split.cu).
func addressesCUDA(ex exec.Executor, sc *Scratch, flags, offsets *exec.Buf[uint32], res Result, n, nodes int) (uint32, error) {
	if err := queueCUDA(ex, sc, flags, offsets, res, n, nodes); err != nil {
		return 0, err
	}
	if err := sc.totalDev.Slice(0, 1).CopyToHost(sc.total); err != nil {
		return 0, err
	}
	return sc.total[0], nil
}

// basesStateWords is the look-back state of split_bases_u32 for nodes
// nodes (a scan of nodes+1 items), in 8-byte words.
func basesStateWords(nodes int) int { return scan.MadeStateWords(nodes + 1) }

// queueCUDA queues the kernels of addressesCUDA; the grand total ends in
// sc.totalDev[0].
func queueCUDA(ex exec.Executor, sc *Scratch, flags, offsets *exec.Buf[uint32], res Result, n, nodes int) error {
	if sc == nil || sc.refs < n || sc.nodes < nodes {
		return fmt.Errorf("split: scratch for %d references and %d nodes is too small", n, nodes)
	}
	ctx := ex.CUDA()
	pre := sc.scanRefs.Slice(0, 2*(n+1))
	segOff := sc.segOff.Slice(0, 2*nodes+3)
	words := basesStateWords(nodes)
	// The unpacking also prepares the ranks' scan (its tiles' first
	// segments and its zeroed state): one launch less a level.
	tiles, sWords := scan.SegOffsetsTiles(pre.Len()), scan.SegOffsetsStateWords(pre.Len())
	if err := ctx.Launch("split_unpack_u32", cuda.GridFor(max(n+1, 2*nodes+3, words, sWords/2), block), cuda.Linear(block), 0,
		flags.Ptr(), uint32(n), pre.Ptr(), offsets.Ptr(), uint32(nodes), segOff.Ptr(), sc.state.Ptr(), uint32(words),
		sc.tileSeg.Ptr(), uint32(tiles), sc.scanState.Ptr(), uint32(sWords/2)); err != nil {
		return err
	}
	if err := scan.SegmentedExclusivePrepared(ex, pre, pre, segOff, sc.tileSeg.Slice(0, tiles), sc.scanState.Slice(0, sWords)); err != nil {
		return err
	}
	if err := ctx.Launch("split_bases_u32", cuda.Linear(words-1), cuda.Linear(256), 0,
		offsets.Ptr(), uint32(nodes), pre.Ptr(), uint32(n), flags.Ptr(), res.CountL.Ptr(), res.CountR.Ptr(),
		res.ChildBase.Ptr(), sc.state.Ptr(), sc.totalDev.Ptr()); err != nil {
		return err
	}
	if n == 0 || (res.DstL == nil && res.DstR == nil) {
		return nil
	}
	return ctx.Launch("split_dest_u32", cuda.GridFor(n, block), cuda.Linear(block), 0,
		flags.Ptr(), offsets.Ptr(), uint32(n), uint32(nodes), pre.Ptr(), res.ChildBase.Ptr(), res.CountL.Ptr(),
		res.DstL.Ptr(), res.DstR.Ptr())
}
