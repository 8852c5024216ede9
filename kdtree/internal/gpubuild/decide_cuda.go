package gpubuild

import (
	"fmt"
	"math"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/consts"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// decideCUDA queues the decisions of a level's nn nodes holding n
// references (Builder.decide) into d.dec: the nodes' tight bounds (keys:
// made by the level before's kdtree_tail_f32 in d.tkey[0], else by
// reduce's segmented box reduction), empty space, then for the nodes still pending the binned SAH
// over histograms. With cudaFusedChoose, one launch (kdtree_choose_f32);
// else three: kdtree_decide_f32, the histograms (kdtree_bin_u32,
// shared-memory tiles) and the binned SAH (kdtree_sah_f32, a warp per
// node). It readies d.tkey[1] for the next level's tight bounds (nodes up
// to 2·nn, or the most it holds in the pipelined phase, whose levels are
// laid out for at most nodeCap nodes).
func (b *gpuBuild) decideCUDA(d *devLevel, nn, n int, keys bool) error {
	o := &b.Opt
	p := refbuild.NewSAH(o)
	nb := o.Bins
	var tkey cuda.DevPtr
	rootTight := d.rootTight
	d.rootTight = 0
	if keys {
		tkey = d.tkey[0].Ptr()
	} else if nn == 1 && rootTight != 0 && rootTight == d.tight.Ptr() {
		// The first level's one node is the root, whose tight bounds
		// rootBox left in d.tight.
	} else if err := d.red.SegmentedBoxesAoS(d.tight.Slice(0, 6*nn), d.box[0].Slice(0, 6*n), d.offsets.Slice(0, nn+1)); err != nil {
		return err
	}
	nextCap := 2 * nn
	if d.inPipe {
		nextCap = min(nextCap, d.tkey[1].Len()/6)
	} else if err := ensure(d.ex, &d.tkey[1], 6*nextCap); err != nil {
		return err
	}
	d.keysNext = true
	// The histograms (and kdtree_choose_f32's arrival counts after them)
	// are zero between levels (the binned SAH clears what it read):
	// cleared here only when (re)allocated.
	if d.hist == nil || d.hist.Len() < histLen(nb, nn) {
		if err := ensure(d.ex, &d.hist, histLen(nb, nn)); err != nil {
			return err
		}
		d.histZero = false
	}
	if !d.histZero {
		if err := d.hist.Dev().Memset32(0); err != nil {
			return err
		}
		d.histZero = true
	}
	shared := uint32(4 * 6 * nb)
	// kdtree_choose_f32 (decisions, histograms and binned SAH in one
	// launch) for levels of at most fusedChooseMaxRefs references: it
	// saves two launches, which matter where a level takes a few
	// microseconds, but runs 3 blocks an SM where kdtree_bin_u32 runs 8,
	// which matters where the binning fills the device several times over
	// (H200, the 8.9M-triangle grid's large phase on the device: 35 ms
	// fused against 29 with the three launches). 2^19 references are about
	// two waves of its blocks on an H200.
	if b.cfg.on(pathFusedChoose) && n <= b.cfg.fusedChooseMaxRefs {
		if err := launch.KdtreeChooseF32.LaunchDependent(d.ctx, cuda.GridFor(max(n, 1), binTile), cuda.Linear(cudaBlock), shared, launch.KdtreeChooseF32Args{
			Nbox: d.nboxP, Info: d.info.Ptr(), Offsets: d.offsets.Ptr(), Nodes: uint32(nn), N: uint32(n),
			Tight: d.tight.Ptr(), Tkey: tkey, SmallNode: int32(o.SmallNode), MaxDepth: int32(o.MaxDepth),
			Bins: int32(nb), Dec: d.dec.Ptr(), TkeyNext: d.tkey[1].Ptr(), NextCap: uint32(nextCap),
			Box: d.box[0].Ptr(), Hist: d.hist.Ptr(), Arrive: d.hist.Slice(6*nb*nn, nn).Ptr(), Ct: p.Ct, Ci: p.Ci,
			Keep: p.Keep, Rnode: d.rnode[0].Ptr()}); err != nil {
			return fmt.Errorf("kdtree: kdtree_choose_f32: %w", err)
		}
		return nil
	}
	if err := launchDepN(d, launch.KdtreeDecideF32, nn, launch.KdtreeDecideF32Args{
		Nbox: d.nboxP, Info: d.info.Ptr(), Nodes: uint32(nn), Tight: d.tight.Ptr(), Tkey: tkey,
		SmallNode: int32(o.SmallNode), MaxDepth: int32(o.MaxDepth), Bins: int32(nb), Dec: d.dec.Ptr(),
		Geo: d.geo.Ptr(), TkeyNext: d.tkey[1].Ptr(), NextCap: uint32(nextCap)}); err != nil {
		return err
	}
	if err := launch.KdtreeBinU32.LaunchDependent(d.ctx, cuda.GridFor(n, binTile), cuda.Linear(cudaBlock), shared, launch.KdtreeBinU32Args{
		Box: d.box[0].Ptr(), Offsets: d.offsets.Ptr(), Nodes: uint32(nn), N: uint32(n), Dec: d.dec.Ptr(),
		Geo: d.geo.Ptr(), Bins: int32(nb), Hist: d.hist.Ptr(), Rnode: d.rnode[0].Ptr()}); err != nil {
		return fmt.Errorf("kdtree: kdtree_bin_u32: %w", err)
	}
	if err := launchDepN(d, launch.KdtreeSahF32, 32*nn, launch.KdtreeSahF32Args{
		Nbox: d.nboxP, Info: d.info.Ptr(), Nodes: uint32(nn), Geo: d.geo.Ptr(), Hist: d.hist.Ptr(),
		Bins: int32(nb), Ct: p.Ct, Ci: p.Ci, Keep: p.Keep, Dec: d.dec.Ptr()}); err != nil {
		return err
	}
	return nil
}

// histLen is the length of d.hist for levels of up to nodes nodes: the
// histograms (6·bins words a node), then kdtree_choose_f32's arrival
// counts (a word a node).
func histLen(bins, nodes int) int { return (6*bins + 1) * nodes }

// binTile is consts.BinTile: the references one block of kdtree_bin_u32
// counts.
const binTile = int(consts.BinTile)

// checkTable compares the node table made on the device with the host's
// nodes (tests only: one more read-back per level).
func (d *devLevel) checkTable(nodes []refbuild.LNode, n int) error {
	nn := len(nodes)
	t := make([]uint32, tableLen(nn))
	if err := d.offsets.Slice(0, len(t)).CopyToHost(t); err != nil {
		return err
	}
	if t[nn] != uint32(n) {
		return fmt.Errorf("kdtree: device node table ends at %d, want %d", t[nn], n)
	}
	for i := range nodes {
		x := &nodes[i]
		info := t[nn+1+4*i : nn+5+4*i]
		var box refbuild.AABB
		for a := 0; a < 3; a++ {
			box.Lo[a] = math.Float32frombits(t[5*nn+1+6*i+a])
			box.Hi[a] = math.Float32frombits(t[5*nn+1+6*i+3+a])
		}
		if t[i] != x.Off || info[0] != x.Off || info[1] != x.Cnt || info[2] != uint32(x.Depth) || info[3] != x.Budget || box != x.Box {
			return fmt.Errorf("kdtree: device node table, node %d: offset %d, info %v, box %v; host %+v",
				i, t[i], info, box, *x)
		}
	}
	return nil
}
