package kdtree

import (
	"fmt"
	"math"

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

	tv            *exec.Buf[float32] // 9 floats per scene triangle
	kept          *exec.Buf[uint32]
	tri           [2]*exec.Buf[uint32] // current and next references
	box           [2]*exec.Buf[float32]
	flags         *exec.Buf[uint32]
	dstL, dstR    *exec.Buf[uint32]
	clipL, clipR  *exec.Buf[float32]
	offsets, info *exec.Buf[uint32]
	nbox, geo     *exec.Buf[float32]
	keys, dec     *exec.Buf[uint32]
	hist          *exec.Buf[uint32]
	counts        *exec.Buf[uint32] // CountL, CountR, ChildBase of split.Addresses, nn each
	parkOff       *exec.Buf[uint32]
	ptri          *exec.Buf[uint32]
	pbox          *exec.Buf[float32]
	parked        int // references parked so far
	sc            *split.Scratch
	scRefs, scN   int
}

func (d *devLevel) free() {
	for _, b := range []*exec.Buf[uint32]{d.kept, d.tri[0], d.tri[1], d.flags, d.dstL, d.dstR, d.offsets, d.info,
		d.keys, d.dec, d.hist, d.counts, d.parkOff, d.ptri} {
		b.Free()
	}
	for _, b := range []*exec.Buf[float32]{d.tv, d.box[0], d.box[1], d.clipL, d.clipR, d.nbox, d.geo, d.pbox} {
		b.Free()
	}
	d.sc.Free()
}

// reserve allocates the level buffers up front for n kept triangles, with
// room for the references to grow to 2n per level and the nodes of a level
// to n/16 (the large phase ends at 64 references per node), so that most
// builds allocate nothing more; ensure grows a buffer when a scene needs more.
func (d *devLevel) reserve(n, bins int) error {
	refs, nodes := 2*n, max(n/16, 256)
	u := func(b **exec.Buf[uint32], k int) error { return ensureN(d.ex, b, k, k) }
	f := func(b **exec.Buf[float32], k int) error { return ensureN(d.ex, b, k, k) }
	errs := []error{
		u(&d.tri[0], refs), u(&d.tri[1], refs), f(&d.box[0], 6*refs), f(&d.box[1], 6*refs),
		u(&d.flags, refs), u(&d.dstL, refs), u(&d.dstR, refs), f(&d.clipL, 6*refs), f(&d.clipR, 6*refs),
		u(&d.offsets, nodes+1), u(&d.info, 4*nodes), f(&d.nbox, 6*nodes), u(&d.keys, 6*nodes),
		u(&d.dec, 3*nodes), f(&d.geo, 9*nodes), u(&d.counts, 3*nodes), u(&d.parkOff, nodes),
		u(&d.hist, 6*bins*nodes), u(&d.ptri, refs), f(&d.pbox, 6*refs),
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	var err error
	d.scRefs, d.scN = refs, nodes
	d.sc, err = split.NewScratch(d.ex, d.scRefs, d.scN)
	return err
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
	tv := make([]float32, 9*len(b.tris))
	for i := range b.tris {
		for k := 0; k < 3; k++ {
			copy(tv[9*i+3*k:9*i+3*k+3], b.tris[i][k][:])
		}
	}
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
	// Bring the parked triangle indices home and finish the records; the
	// parked boxes come home only if the small phase must run in Go.
	ptri := make([]uint32, d.parked)
	if d.parked > 0 {
		if err := d.ptri.Slice(0, d.parked).CopyToHost(ptri); err != nil {
			return nil, err
		}
	}
	var smallOff []uint32
	for _, pr := range parked {
		tri := ptri[pr.off : pr.off+pr.cnt]
		if !pr.small {
			rs.setLeaf(pr.rec, tri)
			continue
		}
		smallOff = append(smallOff, pr.off)
		rs.setSmall(pr.rec, smallRoot{box: pr.box, depth: pr.depth, tri: tri})
	}
	b.endPhase("large")
	b.sampleHost()

	b.startPhase()
	if b.opt.Progress != nil && len(rs.small) > 0 {
		b.opt.Progress(b.levels, len(rs.small))
	}
	done := false
	if cudaSmallOnDevice {
		if done, err = b.smallCUDA(d, rs, smallOff); err != nil {
			return nil, err
		}
	}
	if !done {
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

// floatOfKey inverts the order-preserving key of kd_tree::key_of.
func floatOfKey(k uint32) float32 {
	if k&0x80000000 != 0 {
		return math.Float32frombits(k & 0x7FFFFFFF)
	}
	return math.Float32frombits(^k)
}

// upload sends a level's node table: offsets, info (off, cnt, depth, 0) and
// boxes.
func (d *devLevel) upload(nodes []lnode, n int) error {
	nn := len(nodes)
	offsets := make([]uint32, nn+1)
	info := make([]uint32, 4*nn)
	nbox := make([]float32, 6*nn)
	for i := range nodes {
		x := &nodes[i]
		offsets[i] = x.off
		info[4*i], info[4*i+1], info[4*i+2] = x.off, x.cnt, uint32(x.depth)
		copy(nbox[6*i:6*i+3], x.box.lo[:])
		copy(nbox[6*i+3:6*i+6], x.box.hi[:])
	}
	offsets[nn] = uint32(n)
	for _, e := range []error{ensure(d.ex, &d.offsets, nn+1), ensure(d.ex, &d.info, 4*nn), ensure(d.ex, &d.nbox, 6*nn),
		ensure(d.ex, &d.keys, 6*nn), ensure(d.ex, &d.dec, 3*nn), ensure(d.ex, &d.geo, 9*nn),
		ensure(d.ex, &d.counts, 3*nn), ensure(d.ex, &d.parkOff, nn)} {
		if e != nil {
			return e
		}
	}
	if err := d.offsets.CopyFromHost(offsets); err != nil {
		return err
	}
	if err := d.info.CopyFromHost(info); err != nil {
		return err
	}
	return d.nbox.CopyFromHost(nbox)
}

// bounds computes the nodes' tight bounds keys (kernels kdtree_bounds_*).
func (d *devLevel) bounds(nn, n int) error {
	if err := d.launch("kdtree_bounds_init_u32", 6*nn, d.keys.Ptr(), uint32(nn)); err != nil {
		return err
	}
	return d.launch("kdtree_bounds_u32", n, d.box[0].Ptr(), d.offsets.Ptr(), uint32(nn), uint32(n), d.keys.Ptr())
}

// levelCUDA is levelGo on the device: it returns the next level's nodes and
// reference count.
func (b *builder) levelCUDA(d *devLevel, nodes []lnode, n int, rs *records, parked []parkedRange, forceLeaf bool) ([]lnode, int, []parkedRange, error) {
	nn := len(nodes)
	if err := d.upload(nodes, n); err != nil {
		return nil, 0, nil, err
	}
	dec := make([]uint32, 3*nn)
	if forceLeaf {
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
		if err := d.launch("kdtree_decide_f32", nn, d.nbox.Ptr(), d.info.Ptr(), uint32(nn), d.keys.Ptr(),
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
		if err := d.launch("kdtree_sah_f32", nn, d.nbox.Ptr(), d.info.Ptr(), uint32(nn), d.geo.Ptr(), d.hist.Ptr(),
			int32(nb), p.ct, p.ci, p.keep, d.dec.Ptr()); err != nil {
			return nil, 0, nil, err
		}
		if err := d.dec.Slice(0, 3*nn).CopyToHost(dec); err != nil {
			return nil, 0, nil, err
		}
	}
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
	// Classify and clip, addresses, scatter.
	for _, e := range []error{ensure(d.ex, &d.flags, n), ensure(d.ex, &d.dstL, n), ensure(d.ex, &d.dstR, n),
		ensure(d.ex, &d.clipL, 6*n), ensure(d.ex, &d.clipR, 6*n)} {
		if e != nil {
			return nil, 0, nil, e
		}
	}
	if err := d.launch("kdtree_classify_f32", n, d.box[0].Ptr(), d.tri[0].Ptr(), d.tv.Ptr(), d.nbox.Ptr(),
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
	total, err := split.Addresses(d.ex, d.sc, d.flags.Slice(0, n), d.offsets.Slice(0, nn+1), split.Result{
		DstL: d.dstL, DstR: d.dstR,
		CountL: d.counts.Slice(0, nn), CountR: d.counts.Slice(nn, nn), ChildBase: d.counts.Slice(2*nn, nn)})
	if err != nil {
		return nil, 0, nil, err
	}
	cnt := make([]uint32, 3*nn)
	if err := d.counts.Slice(0, 3*nn).CopyToHost(cnt); err != nil {
		return nil, 0, nil, err
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

// smallCUDA runs the small-node phase on the device: one warp per small
// root. It returns false (and changes nothing) when the record or
// reference space overflowed.
func (b *builder) smallCUDA(d *devLevel, rs *records, smallOff []uint32) (bool, error) {
	R := len(rs.small)
	if R == 0 {
		return true, nil
	}
	cnt := make([]uint32, R)
	depth := make([]uint32, R)
	box := make([]float32, 6*R)
	total := 0
	for i := range rs.small {
		sr := &rs.small[i]
		cnt[i], depth[i] = uint32(len(sr.tri)), uint32(sr.depth)
		copy(box[6*i:6*i+3], sr.box.lo[:])
		copy(box[6*i+3:6*i+6], sr.box.hi[:])
		total += len(sr.tri)
	}
	recCap := 2*R + 16*total + 1024
	refCap := 8*total + 1024
	var bufs []*exec.Buf[uint32]
	defer func() {
		for _, x := range bufs {
			x.Free()
		}
	}()
	up := func(s []uint32) (*exec.Buf[uint32], error) {
		x, err := exec.FromHost(b.ex, s)
		if err == nil {
			bufs = append(bufs, x)
		}
		return x, err
	}
	al := func(n int) (*exec.Buf[uint32], error) {
		x, err := exec.Alloc[uint32](b.ex, n)
		if err == nil {
			bufs = append(bufs, x)
		}
		return x, err
	}
	dOff, err := up(smallOff)
	if err != nil {
		return false, err
	}
	dCnt, err := up(cnt)
	if err != nil {
		return false, err
	}
	dDepth, err := up(depth)
	if err != nil {
		return false, err
	}
	dBox, err := exec.FromHost(b.ex, box)
	if err != nil {
		return false, err
	}
	defer dBox.Free()
	rec, err := al(3 * recCap)
	if err != nil {
		return false, err
	}
	refs, err := al(refCap)
	if err != nil {
		return false, err
	}
	ctr, err := up([]uint32{uint32(R), 0, 0})
	if err != nil {
		return false, err
	}
	p := newSAH(&b.opt)
	if err := d.ctx.Launch("kdtree_small_f32", cuda.Linear(R), cuda.Linear(32), 0,
		d.ptri.Ptr(), d.pbox.Ptr(), d.tv.Ptr(), dOff.Ptr(), dCnt.Ptr(), dBox.Ptr(), dDepth.Ptr(), uint32(R),
		int32(b.opt.MaxDepth), p.ct, p.ci, p.keep, rec.Ptr(), uint32(recCap), refs.Ptr(), uint32(refCap),
		ctr.Ptr()); err != nil {
		return false, fmt.Errorf("kdtree: kdtree_small_f32: %w", err)
	}
	hc := make([]uint32, 3)
	if err := ctr.CopyToHost(hc); err != nil {
		return false, err
	}
	if hc[2] != 0 {
		return false, nil
	}
	hrec := make([]uint32, 3*int(hc[0]))
	if err := rec.Slice(0, len(hrec)).CopyToHost(hrec); err != nil {
		return false, err
	}
	hrefs := make([]uint32, hc[1])
	if err := refs.Slice(0, len(hrefs)).CopyToHost(hrefs); err != nil {
		return false, err
	}
	list := make([]record, hc[0])
	for i := range list {
		w0, w1, w2 := hrec[3*i], hrec[3*i+1], hrec[3*i+2]
		if w0&0xFF == 1 {
			if uint64(w1)+uint64(w2) > uint64(len(hrefs)) {
				return false, fmt.Errorf("kdtree: small-phase leaf %d refers to [%d, %d+%d) of %d references", i, w1, w1, w2, len(hrefs))
			}
			list[i] = record{fate: fateLeaf, refs: hrefs[w1 : w1+w2 : w1+w2]}
			continue
		}
		if w2+1 >= uint32(len(list)) || w0>>8 > 2 {
			return false, fmt.Errorf("kdtree: small-phase record %d is corrupt (%d %d %d)", i, w0, w1, w2)
		}
		list[i] = record{fate: fateSplit, axis: uint8(w0 >> 8), pos: math.Float32frombits(w1), left: int32(w2)}
	}
	rs.shared = list
	return true, nil
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
