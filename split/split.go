package split

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scan"
)

// Flag bits of a reference: where its copies go.
const (
	Left  = 1 // a copy goes to the node's below (left) child
	Right = 2 // a copy goes to the node's above (right) child
)

// None is the destination of a copy that does not exist.
const None = ^uint32(0)

// Result holds the outputs of Addresses. DstL and DstR have one entry per
// reference; CountL, CountR and ChildBase one per node (segment).
type Result struct {
	DstL, DstR                *exec.Buf[uint32]
	CountL, CountR, ChildBase *exec.Buf[uint32]
}

// Scratch is the executor memory Addresses needs beyond its inputs and
// outputs, allocated once for the largest level (see NewScratch).
type Scratch struct {
	refs, nodes int
	scanRefs    *exec.Buf[uint32] // 2*(refs+1) flags, then their ranks (CUDA only)
	segOff      *exec.Buf[uint32] // 2*nodes+3 segment offsets of the ranks' scan (CUDA only)
	totalDev    *exec.Buf[uint32] // the grand total (CUDA only)
	state       *exec.Buf[uint32] // split_bases_u32's look-back state (CUDA only)
	tileSeg     *exec.Buf[uint32] // the ranks' scan: first segment entry of each tile (CUDA only)
	scanState   *exec.Buf[uint32] // the ranks' scan: look-back state (CUDA only)
	total       []uint32          // host copy of the grand total
}

// NewScratch returns scratch for levels of at most refs references and
// nodes nodes. On the Go executor it holds nothing.
func NewScratch(ex exec.Executor, refs, nodes int) (*Scratch, error) {
	s := &Scratch{refs: refs, nodes: nodes, total: make([]uint32, 1)}
	if ex.CUDA() == nil {
		return s, nil
	}
	var err error
	if s.scanRefs, err = exec.Alloc[uint32](ex, 2*(refs+1)); err != nil {
		return nil, err
	}
	if s.totalDev, err = exec.Alloc[uint32](ex, 1); err != nil {
		s.scanRefs.Free()
		return nil, err
	}
	if s.state, err = exec.Alloc[uint32](ex, 2*basesStateWords(nodes)); err != nil {
		s.Free()
		return nil, err
	}
	if s.segOff, err = exec.Alloc[uint32](ex, 2*nodes+3); err != nil {
		s.Free()
		return nil, err
	}
	items := 2 * (refs + 1)
	if s.tileSeg, err = exec.Alloc[uint32](ex, max(scan.SegOffsetsTiles(items), 1)); err != nil {
		s.Free()
		return nil, err
	}
	if s.scanState, err = exec.Alloc[uint32](ex, scan.SegOffsetsStateWords(items)); err != nil {
		s.Free()
		return nil, err
	}
	return s, nil
}

// Bytes returns the device memory the scratch holds.
func (s *Scratch) Bytes() uint64 {
	if s == nil || s.scanRefs == nil {
		return 0
	}
	return 4 * uint64(s.scanRefs.Len()+s.totalDev.Len()+s.segOff.Len()+s.state.Len()+s.tileSeg.Len()+s.scanState.Len())
}

// Ranks is the device buffer of 2(n+1) words where the CUDA executor
// leaves every reference's rank among its node's left copies (word r) and
// right copies (word n+1+r) after Addresses and AddressesQueued on n
// references (nil on the Go executor).
func (s *Scratch) Ranks() *exec.Buf[uint32] { return s.scanRefs }

// Total is the one-word device buffer where the CUDA executor leaves the
// grand total of Addresses and AddressesQueued (nil on the Go executor).
func (s *Scratch) Total() *exec.Buf[uint32] { return s.totalDev }

// Free releases the scratch; it is idempotent.
func (s *Scratch) Free() error {
	if s == nil {
		return nil
	}
	err := s.scanRefs.Free()
	if e := s.totalDev.Free(); err == nil {
		err = e
	}
	if e := s.segOff.Free(); err == nil {
		err = e
	}
	if e := s.state.Free(); err == nil {
		err = e
	}
	if e := s.tileSeg.Free(); err == nil {
		err = e
	}
	if e := s.scanState.Free(); err == nil {
		err = e
	}
	return err
}

// Addresses computes, for every node of a level at once, where the copies of
// its references go in the next level's reference list. The references of
// node s are flags[offsets[s]:offsets[s+1]] (offsets ascending, len(offsets) =
// nodes+1, offsets[0] = 0, offsets[nodes] = len(flags)); flags[r] holds the
// bits Left and Right (other bits are ignored). The children are laid out node after node, the left
// child's references before the right child's, each in the order of the
// parent's list (a stable partition). The contract, as the reference loop:
//
//	base := uint32(0)
//	for s := 0; s < nodes; s++ {
//		l, r := uint32(0), uint32(0)
//		for i := offsets[s]; i < offsets[s+1]; i++ { if flags[i]&Left != 0 { l++ } ; if flags[i]&Right != 0 { r++ } }
//		CountL[s], CountR[s], ChildBase[s] = l, r, base
//		nl, nr := base, base+l
//		for i := offsets[s]; i < offsets[s+1]; i++ {
//			DstL[i], DstR[i] = None, None
//			if flags[i]&Left != 0 { DstL[i] = nl; nl++ }
//			if flags[i]&Right != 0 { DstR[i] = nr; nr++ }
//		}
//		base += l + r
//	}
//	return base
//
// A node whose references all have zero flags (a leaf) gets no copies.
// Lengths that disagree are programmer errors (panic); the total must fit in
// uint32. On the CUDA executor the work is queued on the default stream and
// the total is read back (one 4-byte copy).
func Addresses(ex exec.Executor, sc *Scratch, flags, offsets *exec.Buf[uint32], res Result) (uint32, error) {
	n, nodes := flags.Len(), offsets.Len()-1
	if nodes < 0 {
		panic("split: Addresses with empty offsets")
	}
	if res.DstL.Len() < n || res.DstR.Len() < n {
		panic(fmt.Sprintf("split: Addresses: %d references but DstL/DstR hold %d/%d", n, res.DstL.Len(), res.DstR.Len()))
	}
	if res.CountL.Len() < nodes || res.CountR.Len() < nodes || res.ChildBase.Len() < nodes {
		panic(fmt.Sprintf("split: Addresses: %d nodes but CountL/CountR/ChildBase hold %d/%d/%d",
			nodes, res.CountL.Len(), res.CountR.Len(), res.ChildBase.Len()))
	}
	if ex.CUDA() != nil {
		return addressesCUDA(ex, sc, flags, offsets, res, n, nodes)
	}
	return addressesGo(ex, flags.Host(), offsets.Host(), res, nodes)
}

// AddressesQueued is Addresses without the total: on the CUDA executor the
// work is only queued (no read-back, no wait). The total is
// ChildBase[nodes-1] + CountL[nodes-1] + CountR[nodes-1] (0 for no nodes),
// which a caller that reads the counts back anyway gets for free, and it
// is left on the device in sc.Total(). On the CUDA executor offsets[nodes]
// may also be less than len(flags) when the references past it have zero
// flags (a level padded to sizes the host chose before the device knew the
// real ones): they get no copies. On the CUDA executor DstL and DstR may
// both be nil: the destinations are then not written, and a caller that
// scatters computes them itself from the ranks sc.Ranks() holds (reference
// r's is ChildBase[s] + ranks[r] on the left and ChildBase[s] + CountL[s] +
// ranks[n+1+r] on the right, s its node, n = len(flags)), which saves the
// destinations' writes and reads. The Go executor needs them.
func AddressesQueued(ex exec.Executor, sc *Scratch, flags, offsets *exec.Buf[uint32], res Result) error {
	return addressesQueued(ex, sc, flags, offsets, res, false)
}

// AddressesUnpacked is AddressesQueued for a caller whose kernel, the one
// that computed flags, also unpacked them into sc (see Scratch.Unpacking;
// kernels/split.cuh): on the CUDA executor it queues the rest, one launch
// fewer. On the Go executor it is AddressesQueued.
func AddressesUnpacked(ex exec.Executor, sc *Scratch, flags, offsets *exec.Buf[uint32], res Result) error {
	return addressesQueued(ex, sc, flags, offsets, res, true)
}

func addressesQueued(ex exec.Executor, sc *Scratch, flags, offsets *exec.Buf[uint32], res Result, unpacked bool) error {
	n, nodes := flags.Len(), offsets.Len()-1
	if nodes < 0 {
		panic("split: AddressesQueued with empty offsets")
	}
	if ex.CUDA() == nil {
		_, err := Addresses(ex, sc, flags, offsets, res)
		return err
	}
	noDst := res.DstL == nil && res.DstR == nil
	if (!noDst && (res.DstL.Len() < n || res.DstR.Len() < n)) || res.CountL.Len() < nodes || res.CountR.Len() < nodes ||
		res.ChildBase.Len() < nodes {
		panic(fmt.Sprintf("split: AddressesQueued: outputs too short for %d references and %d nodes", n, nodes))
	}
	return queueCUDA(ex, sc, flags, offsets, res, n, nodes, unpacked)
}

func addressesGo(ex exec.Executor, flags, offsets []uint32, res Result, nodes int) (uint32, error) {
	if int(offsets[nodes]) != len(flags) || offsets[0] != 0 {
		return 0, fmt.Errorf("split: offsets span [%d, %d), want [0, %d)", offsets[0], offsets[nodes], len(flags))
	}
	cl, cr, cb := res.CountL.Host(), res.CountR.Host(), res.ChildBase.Host()
	dl, dr := res.DstL.Host(), res.DstR.Host()
	// Count each node's copies (parallel over nodes).
	exec.ParallelFor(ex.Workers(), nodes, 64, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			l, r := uint32(0), uint32(0)
			for _, f := range flags[offsets[s]:offsets[s+1]] {
				l += f & Left
				r += (f & Right) >> 1
			}
			cl[s], cr[s] = l, r
		}
	})
	// Children start where the previous nodes' children end.
	base := uint64(0)
	for s := 0; s < nodes; s++ {
		cb[s] = uint32(base)
		base += uint64(cl[s]) + uint64(cr[s])
	}
	if base > uint64(^uint32(0)) {
		return 0, fmt.Errorf("split: %d reference copies overflow uint32", base)
	}
	// Stable partition addresses within each node.
	exec.ParallelFor(ex.Workers(), nodes, 64, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			nl, nr := cb[s], cb[s]+cl[s]
			for i := offsets[s]; i < offsets[s+1]; i++ {
				f := flags[i]
				dl[i], dr[i] = None, None
				if f&Left != 0 {
					dl[i] = nl
					nl++
				}
				if f&Right != 0 {
					dr[i] = nr
					nr++
				}
			}
		}
	})
	return uint32(base), nil
}
