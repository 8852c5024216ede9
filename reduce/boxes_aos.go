package reduce

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// BoxLevel is one interleaved-box segmented reduction (SegmentedBoxesAoS):
// the boxes of a kd-tree level, 6 floats per element (lo x, y, z, hi x, y,
// z), and the segment offsets (one segment per node, len(Offsets) = nodes+1).
// The thesis workload (ThesisTable) is a list of them.
type BoxLevel struct {
	Boxes   []float32
	Offsets []uint32
}

// Elements is the number of boxes of the level.
func (l BoxLevel) Elements() int { return len(l.Boxes) / 6 }

// Segments is the number of segments of the level.
func (l BoxLevel) Segments() int { return max(0, len(l.Offsets)-1) }

// aosWarpLimit is the longest segment one warp reduces in SegmentedBoxesAoS;
// longer ones are cut into tiles of aosTile elements shared by the blocks of
// the second launch. 256, not more: a warp keeps six 8-byte loads per lane
// in flight, so a longer segment costs one memory latency per 64 boxes on
// a single warp; with 1024 the middle levels of a bunny build (a few
// hundred segments of a few hundred boxes) took about 10 us a level on an
// H200, latency-bound on a few hundred warps.
const aosWarpLimit = 256

// aosTile is reduce.cuh's kAosTile.
const aosTile = 512

// SegmentedBoxesAoS reduces interleaved boxes per segment: element i is
// boxes[6i:6i+6] = lo x, lo y, lo z, hi x, hi y, hi z, and for segment s
// (len(out) = 6·(len(offsets)-1))
//
//	out[6s+a]   = min over i in [offsets[s], offsets[s+1]) of boxes[6i+a]    (a = 0, 1, 2)
//	out[6s+3+a] = max over the same i of boxes[6i+3+a]
//
// in Min's and Max's order (NaN skipped, min(-0, +0) = -0); an empty
// segment gives (+Inf, +Inf, +Inf, -Inf, -Inf, -Inf). len(boxes) must be a
// multiple of 6 (programmer error otherwise). Offsets are handled as in
// SegmentedMin. On a GPU the call is queued (no synchronisation, no read-back)
// and allocates only when the Reducer's scratch must grow.
func SegmentedBoxesAoS(ex exec.Executor, out, boxes *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return reducerFor(ex).SegmentedBoxesAoS(out, boxes, offsets)
}

// SegmentedBoxesAoS is the package-level SegmentedBoxesAoS on r's scratch.
func (r *Reducer) SegmentedBoxesAoS(out, boxes *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	if out.Len()%6 != 0 {
		panic(fmt.Sprintf("reduce: SegmentedBoxesAoS output of %d floats, not 6 per segment", out.Len()))
	}
	if boxes.Len()%6 != 0 {
		panic(fmt.Sprintf("reduce: SegmentedBoxesAoS input of %d floats, not 6 per box", boxes.Len()))
	}
	ns := numSegments(out.Len()/6, offsets)
	if ns == 0 {
		return nil
	}
	n := boxes.Len() / 6
	if r.ctx == nil {
		off := offsets.Host()
		if err := checkOffsets(off, n); err != nil {
			return err
		}
		goBoxesAoS(r.ex, out.Host(), boxes.Host(), off)
		return nil
	}
	if boxes.Len() > maxLen || ns > maxLen/32 {
		return fmt.Errorf("reduce: SegmentedBoxesAoS input too large (%d boxes, %d segments)", n, ns)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.boxesAoSLaunch(out, boxes, offsets, ns)
}

// ReserveBoxesAoS allocates the scratch SegmentedBoxesAoS needs for inputs
// of up to boxes boxes now, so that later calls allocate nothing: growing
// the scratch waits for the device (the queued kernels may still use the
// old one), which a caller that queues ahead of the device (kdtree's
// pipelined levels) must not have happen in the middle of its work. On the
// Go executor it does nothing.
func (r *Reducer) ReserveBoxesAoS(boxes int) error {
	if r.ctx == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _, _, _, _, _, err := r.aosScratch(boxes)
	return err
}

// aosScratch lays out the AoS kernels' scratch in r.work: the list of long
// segments (entries), their 6 key words, their first tiles, and the tile
// owners (tiles). r.mu must be held.
func (r *Reducer) aosScratch(n int) (list, keys, tileBase, owners cuda.DevPtr, entries, tiles int, err error) {
	if err := r.fixed(); err != nil {
		return 0, 0, 0, 0, 0, 0, err
	}
	entries = n/aosWarpLimit + 1
	tiles = n/aosTile + entries // every listed segment adds at most one partial tile
	if err := ensureU32(r.ex, &r.work, 8*entries+tiles); err != nil {
		return 0, 0, 0, 0, 0, 0, err
	}
	list = r.work.Ptr()
	keys = list + cuda.DevPtr(4*entries)
	tileBase = keys + cuda.DevPtr(4*6*entries)
	owners = tileBase + cuda.DevPtr(4*entries)
	return list, keys, tileBase, owners, entries, tiles, nil
}

// boxesAoSLaunch enqueues the two AoS box kernels. r.mu must be held.
func (r *Reducer) boxesAoSLaunch(out, boxes *exec.Buf[float32], offsets *exec.Buf[uint32], ns int) error {
	n := boxes.Len() / 6
	list, keys, tileBase, owners, capacity, tileCap, err := r.aosScratch(n)
	if err != nil {
		return err
	}
	k1, k2 := launch.ReduceSegwarpBoxaosF32, launch.ReduceSegbigBoxaosF32
	// No memset of the counters: fixed() zeroes them when the Reducer is
	// new or dirty, and reduce_segbig_boxaos_f32 leaves them at zero (its
	// last block, or block 0 when nothing was listed), saving a driver call
	// per level of a build.
	in := cuda.DevPtr(0)
	if n > 0 {
		in = boxes.Ptr()
	}
	big := r.counter.Slice(ctrSegCount, 3).Ptr()
	block := cuda.Linear(blockSize)
	if err := launchTyped(r, k1, cuda.GridFor(ns*32, blockSize), block, launch.ReduceSegwarpBoxaosF32Args{
		Boxes: in, Offsets: offsets.Ptr(), Out: out.Ptr(), BigList: list, BigKeys: keys, TileBase: tileBase,
		TileOwner: owners, Big: big, Nseg: uint32(ns), N: uint32(n), Limit: uint32(aosWarpLimit), Cap: uint32(capacity),
		TileCap: uint32(tileCap)}); err != nil {
		return r.segFailed(k1.Name(), ns, err)
	}
	if err := launchTyped(r, k2, cuda.Linear(r.sms*blocksPerSM), block, launch.ReduceSegbigBoxaosF32Args{
		Boxes: in, Offsets: offsets.Ptr(), Out: out.Ptr(), BigList: list, BigKeys: keys, TileBase: tileBase,
		TileOwner: owners, Big: big, N: uint32(n), Cap: uint32(capacity), TileCap: uint32(tileCap)}); err != nil {
		return r.segFailed(k2.Name(), ns, err)
	}
	return nil
}

// aosKeys folds boxes b (6 floats each) into six keys.
func aosKeys(k *[6]uint32, b []float32) {
	for i := 0; i+6 <= len(b); i += 6 {
		k[0] = min(k[0], minKey(b[i]))
		k[1] = min(k[1], minKey(b[i+1]))
		k[2] = min(k[2], minKey(b[i+2]))
		k[3] = max(k[3], maxKey(b[i+3]))
		k[4] = max(k[4], maxKey(b[i+4]))
		k[5] = max(k[5], maxKey(b[i+5]))
	}
}

var aosIdentity = [6]uint32{minIdentity, minIdentity, minIdentity, maxIdentity, maxIdentity, maxIdentity}

func aosStore(o []float32, k [6]uint32) {
	for a := range 3 {
		o[a] = minResult(k[a])
		o[3+a] = maxResult(k[3+a])
	}
}

// goBoxesAoS is the Go executor's SegmentedBoxesAoS (offsets checked).
func goBoxesAoS(ex exec.Executor, o, b []float32, off []uint32) {
	ns := len(off) - 1
	n := len(b) / 6
	if ns < ex.Workers() && n >= goGrain { // few segments: parallel inside each
		for s := range ns {
			k := aosIdentity
			var mu chunkMerge
			seg := b[6*int(off[s]) : 6*int(off[s+1])]
			exec.ParallelFor(ex.Workers(), len(seg)/6, goGrain/6, func(p0, p1 int) {
				c := aosIdentity
				aosKeys(&c, seg[6*p0:6*p1])
				mu.mergeBox(&k, c)
			})
			aosStore(o[6*s:6*s+6], k)
		}
		return
	}
	grain := max(1, ns*goGrain/max(6*n, 1))
	exec.ParallelFor(ex.Workers(), ns, grain, func(a, c int) {
		for s := a; s < c; s++ {
			k := aosIdentity
			aosKeys(&k, b[6*int(off[s]):6*int(off[s+1])])
			aosStore(o[6*s:6*s+6], k)
		}
	})
}

func (c *chunkMerge) mergeBox(k *[6]uint32, l [6]uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a := range 3 {
		k[a] = min(k[a], l[a])
		k[3+a] = max(k[3+a], l[3+a])
	}
}
