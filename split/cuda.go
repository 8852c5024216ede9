package split

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
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
	if err := queueCUDA(ex, sc, flags, offsets, res, n, nodes, false); err != nil {
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

// queueCUDA queues the kernels of addressesCUDA (without the unpacking
// when unpacked: the caller's kernel did it, see Unpacking); the grand
// total ends in sc.totalDev[0].
func queueCUDA(ex exec.Executor, sc *Scratch, flags, offsets *exec.Buf[uint32], res Result, n, nodes int, unpacked bool) error {
	u, err := sc.Unpacking(n, nodes)
	if err != nil {
		return err
	}
	ctx := ex.CUDA()
	pre := sc.scanRefs.Slice(0, 2*(n+1))
	segOff := sc.segOff.Slice(0, 2*nodes+3)
	words := basesStateWords(nodes)
	// The unpacking also prepares the ranks' scan (its tiles' first
	// segments and its zeroed state): one launch less a level.
	if !unpacked {
		if err := launch.SplitUnpackU32.Launch(ctx, cuda.GridFor(max(n+1, 2*nodes+3, words, int(u.ScanStateWords)), block),
			cuda.Linear(block), 0, u.Kernel(flags.Ptr(), uint32(n), offsets.Ptr(), uint32(nodes))); err != nil {
			return err
		}
	}
	tiles, sWords := int(u.Tiles), scan.SegOffsetsStateWords(pre.Len())
	if err := scan.SegmentedExclusivePrepared(ex, pre, pre, segOff, sc.tileSeg.Slice(0, tiles), sc.scanState.Slice(0, sWords)); err != nil {
		return err
	}
	if err := launch.SplitBasesU32.Launch(ctx, cuda.Linear(words-1), cuda.Linear(256), 0, launch.SplitBasesU32Args{
		Offsets: offsets.Ptr(), Nodes: uint32(nodes), Pre: pre.Ptr(), N: uint32(n), Flags: flags.Ptr(),
		CountL: res.CountL.Ptr(), CountR: res.CountR.Ptr(), Base: res.ChildBase.Ptr(), State: sc.state.Ptr(),
		Total: sc.totalDev.Ptr()}); err != nil {
		return err
	}
	if n == 0 || (res.DstL == nil && res.DstR == nil) {
		return nil
	}
	return launch.SplitDestU32.Launch(ctx, cuda.GridFor(n, block), cuda.Linear(block), 0, launch.SplitDestU32Args{
		Flags: flags.Ptr(), Offsets: offsets.Ptr(), N: uint32(n), Nodes: uint32(nodes), Pre: pre.Ptr(),
		Base: res.ChildBase.Ptr(), CountL: res.CountL.Ptr(), DstL: res.DstL.Ptr(), DstR: res.DstR.Ptr()})
}

// Unpacking is what a kernel of the caller's needs to unpack a level's
// flags itself, in the launch that computes them, so that
// AddressesUnpacked can skip split_unpack_u32 (kdtree's classification
// unpacks them, then runs the scans in a kernel of its own,
// kdtree_addresses_u32): the ranks' array, the segment offsets,
// the look-back states and the ranks' scan's tile starts of sc for n
// references and nodes nodes. The kernel calls kd_split::unpack_flag for
// every reference r < n with its flags and kd_split::unpack_rest once per
// thread of its launch (kernels/split.cuh), whose parameters after n are
// Args.
type Unpacking struct {
	Pre, SegOff, State cuda.DevPtr
	StateWords         uint32
	TileSeg            cuda.DevPtr
	Tiles              uint32
	ScanState          cuda.DevPtr
	ScanStateWords     uint32
}

// Args returns unpack_rest's parameters after n: pre, offsets, nodes,
// segOff, state, stateWords, tileSeg, tiles, sstate, sstateWords.
func (u Unpacking) Args(offsets cuda.DevPtr, nodes uint32) []any {
	return []any{u.Pre, offsets, nodes, u.SegOff, u.State, u.StateWords, u.TileSeg, u.Tiles, u.ScanState,
		u.ScanStateWords}
}

// Kernel returns split_unpack_u32's arguments: flags and n, then Args.
func (u Unpacking) Kernel(flags cuda.DevPtr, n uint32, offsets cuda.DevPtr, nodes uint32) launch.SplitUnpackU32Args {
	return launch.SplitUnpackU32Args{Flags: flags, N: n, Pre: u.Pre, Offsets: offsets, Nodes: nodes, SegOff: u.SegOff,
		State: u.State, StateWords: u.StateWords, TileSeg: u.TileSeg, Tiles: u.Tiles, Sstate: u.ScanState,
		SstateWords: u.ScanStateWords}
}

// Unpacking returns sc's Unpacking for a level of n references and nodes
// nodes (CUDA executor only), or an error when sc is too small for it.
func (sc *Scratch) Unpacking(n, nodes int) (Unpacking, error) {
	if sc == nil || sc.refs < n || sc.nodes < nodes || sc.scanRefs == nil {
		return Unpacking{}, fmt.Errorf("split: scratch for %d references and %d nodes is too small", n, nodes)
	}
	m := 2 * (n + 1)
	return Unpacking{Pre: sc.scanRefs.Ptr(), SegOff: sc.segOff.Ptr(), State: sc.state.Ptr(),
		StateWords: uint32(basesStateWords(nodes)), TileSeg: sc.tileSeg.Ptr(), Tiles: uint32(scan.SegOffsetsTiles(m)),
		ScanState: sc.scanState.Ptr(), ScanStateWords: uint32(scan.SegOffsetsStateWords(m) / 2)}, nil
}
