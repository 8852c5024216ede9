package kdtree

import (
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/split"
)

// The CUDA path of the large-node phase. The per-reference steps run as
// kernels (kernels/kdtree.cu): boxes, tight bounds, the decision up to the
// binned SAH, histograms, the SAH itself, classification with clipping,
// split.Addresses, scatter, and parking the references of nodes that end.
// The per-node bookkeeping (child boxes, records) runs on the host from the
// decisions read back once per level, with the same code as levelGo, so the
// tree is the Go executor's. The small-node phase and the layout then run in
// Go on the parked references (one download).

const cudaBlock = 256

// devLevel holds the device buffers of a CUDA build; they grow (never
// shrink) and are freed by free.
type devLevel struct {
	ex  exec.Executor
	ctx *cuda.Context

	tv           *exec.Buf[float32] // 9 floats per scene triangle
	kept         *exec.Buf[uint32]
	tri          [2]*exec.Buf[uint32] // current and next references
	box          [2]*exec.Buf[float32]
	flags        *exec.Buf[uint32]
	dstL, dstR   *exec.Buf[uint32]
	clipL, clipR *exec.Buf[float32]
	offsets      *exec.Buf[uint32] // the level's node table (see upload); info is a view of it
	info         *exec.Buf[uint32]
	nboxP        cuda.DevPtr // the table's node boxes (float32)
	nbox, geo    *exec.Buf[float32]
	keys, dec    *exec.Buf[uint32]
	hist         *exec.Buf[uint32]
	parkOff      *exec.Buf[uint32]
	ptri         *exec.Buf[uint32]
	pbox         *exec.Buf[float32]
	parked       int                // references parked so far
	arenaU       *exec.Buf[uint32]  // the views reserve made live here
	arenaF       *exec.Buf[float32] // (freed only by free)
	sc           *split.Scratch
	scRefs, scN  int
}

func (d *devLevel) free() {
	for _, b := range []*exec.Buf[uint32]{d.kept, d.tri[0], d.tri[1], d.flags, d.dstL, d.dstR, d.offsets, d.info,
		d.keys, d.dec, d.hist, d.parkOff, d.ptri, d.arenaU} {
		b.Free()
	}
	for _, b := range []*exec.Buf[float32]{d.tv, d.box[0], d.box[1], d.clipL, d.clipR, d.nbox, d.geo, d.pbox, d.arenaF} {
		b.Free()
	}
	d.sc.Free()
}

// reserve allocates the level buffers up front for n kept triangles, with
// room for the references to grow to 2n per level and the nodes of a level
// to n/16 (the large phase ends at 64 references per node), so that most
// builds allocate nothing more (measured, the bunny's largest level holds
// 1.31n references and n/48 nodes). The level buffers are views of two
// arenas (one of uint32, one of float32: two allocations instead of
// eighteen); ensure
// grows a buffer when a scene needs more, as a buffer of its own (the arena
// slot is then unused until the build ends).
func (d *devLevel) reserve(n, bins int) error {
	refs, nodes := 2*n, max(n/16, 256)
	us := []arenaSlot[uint32]{{&d.tri[0], refs}, {&d.tri[1], refs}, {&d.flags, refs}, {&d.dstL, refs}, {&d.dstR, refs},
		{&d.offsets, tableLen(nodes)}, {&d.keys, 6 * nodes}, {&d.dec, 6 * nodes}, {&d.parkOff, nodes},
		{&d.hist, 6 * bins * nodes}}
	fs := []arenaSlot[float32]{{&d.box[0], 6 * refs}, {&d.box[1], 6 * refs}, {&d.clipL, 6 * refs}, {&d.clipR, 6 * refs},
		{&d.geo, 9 * nodes}}
	if err := carve(d.ex, &d.arenaU, us); err != nil {
		return err
	}
	if err := carve(d.ex, &d.arenaF, fs); err != nil {
		return err
	}
	// The parked references outlive the level buffers (the small phase
	// reads them): buffers of their own.
	if err := ensureN(d.ex, &d.ptri, refs, refs); err != nil {
		return err
	}
	if err := ensureN(d.ex, &d.pbox, 6*refs, 6*refs); err != nil {
		return err
	}
	var err error
	d.scRefs, d.scN = refs, nodes
	d.sc, err = split.NewScratch(d.ex, d.scRefs, d.scN)
	return err
}

// arenaAlign is the alignment, in elements, of every view carve makes
// (256 bytes for 4-byte elements).
const arenaAlign = 64

// arenaSlot is a buffer carve makes a view of, with its length.
type arenaSlot[T cuda.Elem] struct {
	b **exec.Buf[T]
	n int
}

// carve allocates one arena for every slot and makes each slot's buffer a
// view of it.
func carve[T cuda.Elem](ex exec.Executor, arena **exec.Buf[T], slots []arenaSlot[T]) error {
	total := 0
	for _, s := range slots {
		total += (s.n + arenaAlign - 1) / arenaAlign * arenaAlign
	}
	a, err := exec.Alloc[T](ex, total)
	if err != nil {
		return err
	}
	*arena = a
	off := 0
	for _, s := range slots {
		(*s.b).Free()
		*s.b = a.Slice(off, s.n)
		off += (s.n + arenaAlign - 1) / arenaAlign * arenaAlign
	}
	return nil
}

// ensure makes *b hold at least n elements (contents are not kept),
// growing by half again to make room for what comes next.
func ensure[T cuda.Elem](ex exec.Executor, b **exec.Buf[T], n int) error {
	return ensureN(ex, b, n, max(n+n/2, 256))
}

// ensureN makes *b hold at least n elements, allocating size when it must.
func ensureN[T cuda.Elem](ex exec.Executor, b **exec.Buf[T], n, size int) error {
	if *b != nil && (*b).Len() >= n {
		return nil
	}
	(*b).Free()
	nb, err := exec.Alloc[T](ex, size)
	if err != nil {
		return err
	}
	*b = nb
	return nil
}

// ensureKeep makes *b hold at least n elements, keeping the first used.
func ensureKeep[T cuda.Elem](ex exec.Executor, b **exec.Buf[T], n, used int) error {
	if *b != nil && (*b).Len() >= n {
		return nil
	}
	nb, err := exec.Alloc[T](ex, max(n+n/2, 256))
	if err != nil {
		return err
	}
	if *b != nil && used > 0 {
		if err := nb.Slice(0, used).CopyFrom((*b).Slice(0, used)); err != nil {
			nb.Free()
			return err
		}
	}
	(*b).Free()
	*b = nb
	return nil
}

func (d *devLevel) launch(kernel string, n int, args ...any) error {
	if err := d.ctx.Launch(kernel, cuda.GridFor(n, cudaBlock), cuda.Linear(cudaBlock), 0, args...); err != nil {
		return fmt.Errorf("kdtree: %s: %w", kernel, err)
	}
	return nil
}

// parkedRange is a leaf or small root whose references were parked.
type parkedRange struct {
	rec       int32
	off, cnt  uint32
	small     bool
	box       aabb
	depth     int
	smallSlot int32
}

// buildCUDA is the build on the CUDA executor.
func (b *builder) buildCUDA() (*buildResult, error) {
	ctx := b.ex.CUDA()
	ctx.ResetPeak()
	d := &devLevel{ex: b.ex, ctx: ctx}
	defer d.free()

	b.startPhase()
	if err := b.prepare(); err != nil {
		return nil, err
	}
	res := &buildResult{}
	if len(b.kept) == 0 {
		b.endPhase("prepare")
		return res, nil
	}
	// A triangle is 9 packed float32s: upload b.tris as it is.
	tv := unsafe.Slice(&b.tris[0][0][0], 9*len(b.tris))
	var err error
	if d.tv, err = exec.FromHost(b.ex, tv); err != nil {
		return nil, err
	}
	if d.kept, err = exec.FromHost(b.ex, b.kept); err != nil {
		return nil, err
	}
	n := len(b.kept)
	if err := d.reserve(n, b.opt.Bins); err != nil {
		return nil, err
	}
	if err := d.tri[0].CopyFrom(d.kept); err != nil {
		return nil, err
	}
	if err := d.launch("kdtree_boxes_f32", n, d.tv.Ptr(), d.kept.Ptr(), uint32(n), d.box[0].Ptr()); err != nil {
		return nil, err
	}
	// The root box: tight bounds of one node holding every reference.
	rootNodes := []lnode{{off: 0, cnt: uint32(n)}}
	if err := d.upload(rootNodes, n); err != nil {
		return nil, err
	}
	if err := d.bounds(1, n); err != nil {
		return nil, err
	}
	keys := make([]uint32, 6)
	if err := d.keys.Slice(0, 6).CopyToHost(keys); err != nil {
		return nil, err
	}
	var root aabb
	for a := 0; a < 3; a++ {
		root.lo[a], root.hi[a] = floatOfKey(keys[a]), floatOfKey(keys[3+a])
	}
	canonZero(&root)
	res.bounds = toBounds(root)
	b.endPhase("prepare")

	b.startPhase()
	rs := &records{}
	nodes := []lnode{{box: root, off: 0, cnt: uint32(n), depth: 0, rec: rs.add()}}
	var parked []parkedRange
	capRefs := max(64*len(b.kept), 1<<20)
	forceLeaf := false
	for level := 0; len(nodes) > 0; level++ {
		if err := b.ctx.Err(); err != nil {
			return nil, err
		}
		if b.opt.Progress != nil && !forceLeaf {
			b.opt.Progress(level, len(nodes))
		}
		nodes, n, parked, err = b.levelCUDA(d, nodes, n, rs, parked, forceLeaf)
		if err != nil {
			return nil, err
		}
		if !forceLeaf {
			b.levels++
		}
		// Memory guard as in buildGo: past capRefs the next level's nodes
		// all become leaves.
		forceLeaf = n > capRefs
	}
	// The records of the parked ranges: leaves and small roots whose
	// references stay on the device; parkedToHost brings them home when a
	// host step needs them.
	devLayout := cudaSmallOnDevice && cudaLayoutOnDevice()
	var smallOff, smallCnt []uint32
	for _, pr := range parked {
		if !pr.small {
			rs.recs[pr.rec] = record{fate: fateLeaf, parked: true, park: pr.off, pcnt: pr.cnt}
			continue
		}
		smallOff = append(smallOff, pr.off)
		smallCnt = append(smallCnt, pr.cnt)
		rs.setSmall(pr.rec, smallRoot{box: pr.box, depth: pr.depth})
	}
	if !devLayout {
		if err := d.parkedToHost(rs, smallOff, smallCnt); err != nil {
			return nil, err
		}
	}
	b.endPhase("large")
	b.sampleHost()

	b.startPhase()
	if b.opt.Progress != nil && len(rs.small) > 0 {
		b.opt.Progress(b.levels, len(rs.small))
	}
	var so *smallDev
	if devLayout {
		// Nothing but tv, ptri and pbox is needed from here on: free the
		// level buffers before the small phase allocates its output.
		if err := d.freeLevel(); err != nil {
			return nil, err
		}
	}
	if cudaSmallOnDevice {
		if so, err = b.runSmallCUDA(d, rs, smallOff, smallCnt); err != nil {
			return nil, err
		}
		defer so.free()
	}
	if devLayout && so != nil {
		// Small phase and layout on the device, one download at the end.
		d.tv.Free()
		d.pbox.Free()
		b.endPhase("small")
		if res.nodes, res.refs, err = b.layoutCUDA(d, rs, so); err != nil {
			return nil, err
		}
		b.devPeak = ctx.PeakBytes()
		return res, nil
	}
	if devLayout {
		// The device small phase overflowed its output: Go small phase.
		if err := d.parkedToHost(rs, smallOff, smallCnt); err != nil {
			return nil, err
		}
	}
	if so != nil {
		if err := so.toRecords(rs); err != nil {
			return nil, err
		}
	} else {
		if err := d.smallBoxes(rs, smallOff); err != nil {
			return nil, err
		}
		b.smallGo(rs)
	}
	b.devPeak = ctx.PeakBytes()
	b.endPhase("small")
	b.startPhase()
	res.nodes, res.refs, err = layoutGo(rs)
	if err != nil {
		return nil, err
	}
	b.endPhase("layout")
	return res, nil
}

// parkedToHost downloads the parked references and gives the records of
// parked leaves and small roots their triangle indices (the host small
// phase and layoutGo need them).
func (d *devLevel) parkedToHost(rs *records, smallOff, smallCnt []uint32) error {
	ptri := make([]uint32, d.parked)
	if d.parked > 0 {
		if err := d.ptri.Slice(0, d.parked).CopyToHost(ptri); err != nil {
			return err
		}
	}
	for i := range rs.recs {
		if r := &rs.recs[i]; r.fate == fateLeaf && r.parked {
			rs.setLeaf(int32(i), ptri[r.park:r.park+r.pcnt])
		}
	}
	for k := range rs.small {
		rs.small[k].tri = ptri[smallOff[k] : smallOff[k]+smallCnt[k] : smallOff[k]+smallCnt[k]]
	}
	return nil
}

// subPhase adds the time since t0 to phase name and returns now. The
// CUDA large phase is split this way into sub-phases (their sum is about
// "large"): large.upload (a level's node table built and sent),
// large.device (decisions, classification and addresses queued, until the
// one read-back returns, so mostly device time) and large.host (the host's
// bookkeeping, the scatter and park launches and the parking upload).
func (b *builder) subPhase(name string, t0 time.Time) time.Time {
	now := time.Now()
	b.phases[name] += float64(now.Sub(t0).Nanoseconds()) / 1e6
	return now
}

// floatOfKey inverts the order-preserving key of kd_tree::key_of.
func floatOfKey(k uint32) float32 {
	if k&0x80000000 != 0 {
		return math.Float32frombits(k & 0x7FFFFFFF)
	}
	return math.Float32frombits(^k)
}

// tableLen is the number of words of a level's node table for nn nodes.
func tableLen(nn int) int { return 11*nn + 1 }

// upload sends a level's node table in one copy: offsets (nn+1 words),
// info (off, cnt, depth, 0 per node) and boxes (6 float words per node);
// d.offsets holds it, d.info and d.nboxP point into it.
func (d *devLevel) upload(nodes []lnode, n int) error {
	nn := len(nodes)
	t := make([]uint32, tableLen(nn))
	offsets, info, nbox := t[:nn+1], t[nn+1:5*nn+1], t[5*nn+1:]
	for i := range nodes {
		x := &nodes[i]
		offsets[i] = x.off
		info[4*i], info[4*i+1], info[4*i+2] = x.off, x.cnt, uint32(x.depth)
		for a := 0; a < 3; a++ {
			nbox[6*i+a] = math.Float32bits(x.box.lo[a])
			nbox[6*i+3+a] = math.Float32bits(x.box.hi[a])
		}
	}
	offsets[nn] = uint32(n)
	for _, e := range []error{ensure(d.ex, &d.offsets, len(t)), ensure(d.ex, &d.keys, 6*nn),
		ensure(d.ex, &d.dec, 6*nn), ensure(d.ex, &d.geo, 9*nn), ensure(d.ex, &d.parkOff, nn)} {
		if e != nil {
			return e
		}
	}
	if err := d.offsets.CopyFromHost(t); err != nil {
		return err
	}
	d.info = d.offsets.Slice(nn+1, 4*nn)
	d.nboxP = d.offsets.Slice(5*nn+1, 6*nn).Ptr()
	return nil
}

// bounds computes the nodes' tight bounds keys (kernels kdtree_bounds_*).
func (d *devLevel) bounds(nn, n int) error {
	if err := d.launch("kdtree_bounds_init_u32", 6*nn, d.keys.Ptr(), uint32(nn)); err != nil {
		return err
	}
	return d.launch("kdtree_bounds_u32", n, d.box[0].Ptr(), d.offsets.Ptr(), uint32(nn), uint32(n), d.keys.Ptr())
}

// levelCUDA is levelGo on the device: it returns the next level's nodes and
// reference count. A level costs two host synchronisations: the upload of
// its node table and one read-back of the decisions with the child counts
// (plus an upload of the parking offsets when nodes end here).
func (b *builder) levelCUDA(d *devLevel, nodes []lnode, n int, rs *records, parked []parkedRange, forceLeaf bool) ([]lnode, int, []parkedRange, error) {
	nn := len(nodes)
	t0 := time.Now()
	if err := d.upload(nodes, n); err != nil {
		return nil, 0, nil, err
	}
	t0 = b.subPhase("large.upload", t0)
	if forceLeaf {
		dec := make([]uint32, 3*nn)
		for i := 0; i < nn; i++ {
			dec[3*i] = fateLeaf
		}
		if err := d.dec.CopyFromHost(dec); err != nil {
			return nil, 0, nil, err
		}
	} else {
		// Decide: bounds, empty space, histograms, SAH.
		o := &b.opt
		p := newSAH(o)
		nb := o.Bins
		if err := d.bounds(nn, n); err != nil {
			return nil, 0, nil, err
		}
		if err := d.launch("kdtree_decide_f32", nn, d.nboxP, d.info.Ptr(), uint32(nn), d.keys.Ptr(),
			int32(o.SmallNode), int32(o.MaxDepth), int32(nb), d.dec.Ptr(), d.geo.Ptr()); err != nil {
			return nil, 0, nil, err
		}
		if err := ensure(d.ex, &d.hist, 6*nb*nn); err != nil {
			return nil, 0, nil, err
		}
		if err := d.hist.Dev().Slice(0, 6*nb*nn).Memset32(0); err != nil {
			return nil, 0, nil, err
		}
		if err := d.launch("kdtree_bin_u32", n, d.box[0].Ptr(), d.offsets.Ptr(), uint32(nn), uint32(n), d.dec.Ptr(),
			d.geo.Ptr(), int32(nb), d.hist.Ptr()); err != nil {
			return nil, 0, nil, err
		}
		if err := d.launch("kdtree_sah_f32", nn, d.nboxP, d.info.Ptr(), uint32(nn), d.geo.Ptr(), d.hist.Ptr(),
			int32(nb), p.ct, p.ci, p.keep, d.dec.Ptr()); err != nil {
			return nil, 0, nil, err
		}
	}
	// Classify and clip, addresses (queued, no read-back).
	for _, e := range []error{ensure(d.ex, &d.flags, n), ensure(d.ex, &d.dstL, n), ensure(d.ex, &d.dstR, n),
		ensure(d.ex, &d.clipL, 6*n), ensure(d.ex, &d.clipR, 6*n)} {
		if e != nil {
			return nil, 0, nil, e
		}
	}
	if err := d.launch("kdtree_classify_f32", n, d.box[0].Ptr(), d.tri[0].Ptr(), d.tv.Ptr(), d.nboxP,
		d.offsets.Ptr(), uint32(nn), uint32(n), d.dec.Ptr(), d.flags.Ptr(), d.clipL.Ptr(), d.clipR.Ptr()); err != nil {
		return nil, 0, nil, err
	}
	if d.sc == nil || d.scRefs < n || d.scN < nn {
		d.sc.Free()
		d.scRefs, d.scN = max(n+n/2, 1024), max(nn+nn/2, 256)
		var err error
		if d.sc, err = split.NewScratch(d.ex, d.scRefs, d.scN); err != nil {
			return nil, 0, nil, err
		}
	}
	// d.dec holds the decisions (3 words per node), then CountL, CountR and
	// ChildBase (nn words each): one read-back brings all of them.
	if err := split.AddressesQueued(d.ex, d.sc, d.flags.Slice(0, n), d.offsets.Slice(0, nn+1), split.Result{
		DstL: d.dstL, DstR: d.dstR,
		CountL: d.dec.Slice(3*nn, nn), CountR: d.dec.Slice(4*nn, nn), ChildBase: d.dec.Slice(5*nn, nn)}); err != nil {
		return nil, 0, nil, err
	}
	h := make([]uint32, 6*nn)
	if err := d.dec.Slice(0, 6*nn).CopyToHost(h); err != nil {
		return nil, 0, nil, err
	}
	dec, cnt := h[:3*nn], h[3*nn:]
	b.subPhase("large.device", t0)
	defer b.subPhase("large.host", time.Now())
	// The children are laid out node after node: ChildBase is the running
	// sum of the counts, and the last node's end is the total.
	var sum uint64
	for i := 0; i < nn; i++ {
		if uint64(cnt[2*nn+i]) != sum {
			return nil, 0, nil, fmt.Errorf("kdtree: level node %d: child base %d, want %d", i, cnt[2*nn+i], sum)
		}
		sum += uint64(cnt[i]) + uint64(cnt[nn+i])
	}
	if sum > math.MaxUint32 {
		return nil, 0, nil, fmt.Errorf("kdtree: %d references in a level overflow uint32", sum)
	}
	total := uint32(sum)
	if b.onLevel != nil && !forceLeaf {
		dd := make([]decision, nn)
		for i := range dd {
			dd[i] = decision{fate: int(dec[3*i]), axis: int(dec[3*i+1]), pos: math.Float32frombits(dec[3*i+2])}
			if dd[i].fate != fateSplit {
				dd[i].axis, dd[i].pos = 0, 0
			}
		}
		b.onLevel(nodes, dd)
	}
	if err := ensure(d.ex, &d.tri[1], int(total)); err != nil {
		return nil, 0, nil, err
	}
	if err := ensure(d.ex, &d.box[1], 6*int(total)); err != nil {
		return nil, 0, nil, err
	}
	if err := d.launch("kdtree_scatter_f32", n, d.tri[0].Ptr(), d.box[0].Ptr(), d.flags.Ptr(), d.dstL.Ptr(),
		d.dstR.Ptr(), d.clipL.Ptr(), d.clipR.Ptr(), uint32(n), d.tri[1].Ptr(), d.box[1].Ptr()); err != nil {
		return nil, 0, nil, err
	}
	// Park the references of leaves and small roots; records and children.
	parkOff := make([]uint32, nn)
	park := d.parked
	var out []lnode
	for i := range nodes {
		x := &nodes[i]
		switch fate := int(dec[3*i]); fate {
		case fateLeaf, fateSmall:
			parkOff[i] = uint32(park)
			parked = append(parked, parkedRange{rec: x.rec, off: uint32(park), cnt: x.cnt, small: fate == fateSmall,
				box: x.box, depth: x.depth})
			park += int(x.cnt)
		case fateSplit:
			axis, pos := int(dec[3*i+1]), math.Float32frombits(dec[3*i+2])
			left := rs.setInterior(x.rec, axis, pos)
			lb, rb := childBoxes(x.box, axis, pos)
			cl, cr, cb := cnt[i], cnt[nn+i], cnt[2*nn+i]
			out = append(out,
				lnode{box: lb, off: cb, cnt: cl, depth: x.depth + 1, rec: left},
				lnode{box: rb, off: cb + cl, cnt: cr, depth: x.depth + 1, rec: left + 1})
		default:
			return nil, 0, nil, fmt.Errorf("kdtree: node %d of level has fate %d after the SAH", i, fate)
		}
	}
	if park > d.parked {
		if err := ensureKeep(d.ex, &d.ptri, park, d.parked); err != nil {
			return nil, 0, nil, err
		}
		if err := ensureKeep(d.ex, &d.pbox, 6*park, 6*d.parked); err != nil {
			return nil, 0, nil, err
		}
		if err := d.parkOff.CopyFromHost(parkOff); err != nil {
			return nil, 0, nil, err
		}
		if err := d.launch("kdtree_park_f32", n, d.tri[0].Ptr(), d.box[0].Ptr(), d.offsets.Ptr(), d.parkOff.Ptr(),
			uint32(nn), uint32(n), d.dec.Ptr(), d.ptri.Ptr(), d.pbox.Ptr()); err != nil {
			return nil, 0, nil, err
		}
		d.parked = park
	}
	d.tri[0], d.tri[1] = d.tri[1], d.tri[0]
	d.box[0], d.box[1] = d.box[1], d.box[0]
	return out, int(total), parked, nil
}

// cudaSmallOnDevice selects the CUDA small-node phase (kdtree_small_f32) on
// the CUDA executor; when false, or when the kernel's output space
// overflows, the small phase runs in Go on the parked references (the same
// tree either way). Tests flip it to check both.
var cudaSmallOnDevice = true

// smallCaps are the output room of the device small phase's attempts, in
// records and leaf references per reference of the small roots (tests
// shrink it to force a retry or the Go fallback).
var smallCaps = [][2]int{{6, 4}, {16, 8}, {64, 32}}

// smallDev is the output of the device small phase: the subtrees of every
// small root as small records (see smallRecords) and their leaves'
// references, still on the device.
type smallDev struct {
	rec, refs   *exec.Buf[uint32]
	nrec, nrefs int
	roots       int
	bufs        []*exec.Buf[uint32]
	box         *exec.Buf[float32]
}

func (so *smallDev) free() {
	if so == nil {
		return
	}
	for _, x := range so.bufs {
		x.Free()
	}
	so.box.Free()
}

// runSmallCUDA runs the small-node phase on the device: one warp per small
// root (kdtree_small_f32). It returns nil (and changes nothing) when the
// record or reference space overflowed even with the largest room it
// tries; the caller then runs the Go small phase.
func (b *builder) runSmallCUDA(d *devLevel, rs *records, smallOff, smallCnt []uint32) (*smallDev, error) {
	R := len(rs.small)
	so := &smallDev{roots: R}
	// One upload for the per-root words: offsets, counts, depths, then the
	// counters (next record, next reference, overflow).
	words := make([]uint32, 3*R+3)
	box := make([]float32, 6*max(R, 1))
	total := 0
	for i := range rs.small {
		sr := &rs.small[i]
		words[i], words[R+i], words[2*R+i] = smallOff[i], smallCnt[i], uint32(sr.depth)
		copy(box[6*i:6*i+3], sr.box.lo[:])
		copy(box[6*i+3:6*i+6], sr.box.hi[:])
		total += int(smallCnt[i])
	}
	words[3*R] = uint32(R)
	if R == 0 {
		return so, nil
	}
	fail := func(err error) (*smallDev, error) {
		so.free()
		return nil, err
	}
	w, err := exec.FromHost(b.ex, words)
	if err != nil {
		return fail(err)
	}
	so.bufs = append(so.bufs, w)
	if so.box, err = exec.FromHost(b.ex, box); err != nil {
		return fail(err)
	}
	ctr := w.Slice(3*R, 3)
	p := newSAH(&b.opt)
	// Output space per reference of the small roots: measured on the shared
	// scenes, at most 3.0 records and 2.8 leaf references (bunny); on
	// overflow the kernel runs again with more room, then the caller falls
	// back to the Go small phase.
	for _, k := range smallCaps {
		recCap := 2*R + k[0]*total + 1024
		refCap := k[1]*total + 1024
		so.rec.Free()
		so.refs.Free()
		if so.rec, err = exec.Alloc[uint32](b.ex, 3*recCap); err != nil {
			return fail(err)
		}
		so.bufs = append(so.bufs, so.rec)
		if so.refs, err = exec.Alloc[uint32](b.ex, refCap); err != nil {
			return fail(err)
		}
		so.bufs = append(so.bufs, so.refs)
		if err := d.ctx.Launch("kdtree_small_f32", cuda.Linear(R), cuda.Linear(32), 0,
			d.ptri.Ptr(), d.pbox.Ptr(), d.tv.Ptr(), w.Slice(0, R).Ptr(), w.Slice(R, R).Ptr(), so.box.Ptr(),
			w.Slice(2*R, R).Ptr(), uint32(R), int32(b.opt.MaxDepth), p.ct, p.ci, p.keep, so.rec.Ptr(), uint32(recCap),
			so.refs.Ptr(), uint32(refCap), ctr.Ptr()); err != nil {
			return fail(fmt.Errorf("kdtree: kdtree_small_f32: %w", err))
		}
		hc := make([]uint32, 3)
		if err := ctr.CopyToHost(hc); err != nil {
			return fail(err)
		}
		if hc[2] == 0 {
			so.nrec, so.nrefs = int(hc[0]), int(hc[1])
			return so, nil
		}
		if err := ctr.CopyFromHost([]uint32{uint32(R), 0, 0}); err != nil {
			return fail(err)
		}
	}
	so.free()
	return nil, nil
}

// toRecords downloads the small records into rs.shared (the host layout).
func (so *smallDev) toRecords(rs *records) error {
	if so.roots == 0 {
		return nil
	}
	hrec := make([]uint32, 3*so.nrec)
	if err := so.rec.Slice(0, len(hrec)).CopyToHost(hrec); err != nil {
		return err
	}
	hrefs := make([]uint32, so.nrefs)
	if err := so.refs.Slice(0, len(hrefs)).CopyToHost(hrefs); err != nil {
		return err
	}
	list := make([]record, so.nrec)
	for i := range list {
		w0, w1, w2 := hrec[3*i], hrec[3*i+1], hrec[3*i+2]
		if w0&0xFF == smallLeafFate {
			if uint64(w1)+uint64(w2) > uint64(len(hrefs)) {
				return fmt.Errorf("kdtree: small-phase leaf %d refers to [%d, %d+%d) of %d references", i, w1, w1, w2, len(hrefs))
			}
			list[i] = record{fate: fateLeaf, refs: hrefs[w1 : w1+w2 : w1+w2]}
			continue
		}
		if w2+1 >= uint32(len(list)) || w0>>8 > 2 {
			return fmt.Errorf("kdtree: small-phase record %d is corrupt (%d %d %d)", i, w0, w1, w2)
		}
		list[i] = record{fate: fateSplit, axis: uint8(w0 >> 8), pos: math.Float32frombits(w1), left: int32(w2)}
	}
	rs.shared = list
	return nil
}

// smallBoxes downloads the parked boxes of the small roots for the Go small
// phase.
func (d *devLevel) smallBoxes(rs *records, smallOff []uint32) error {
	if d.parked == 0 {
		return nil
	}
	pbox := make([]float32, 6*d.parked)
	if err := d.pbox.Slice(0, 6*d.parked).CopyToHost(pbox); err != nil {
		return err
	}
	for i := range rs.small {
		sr := &rs.small[i]
		sr.box2 = make([]aabb, len(sr.tri))
		for k := range sr.box2 {
			o := 6 * (int(smallOff[i]) + k)
			copy(sr.box2[k].lo[:], pbox[o:o+3])
			copy(sr.box2[k].hi[:], pbox[o+3:o+6])
		}
	}
	return nil
}
