package gpubuild

import (
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/consts"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// The CUDA path of the small-node phase: the subtrees of the small roots
// the large phase parked, built on the device (kdtree_small_w_f32), or the
// parked references brought home for the Go small phase.

// smallWarps, smallRecChunk and smallRefChunk are consts.SmallWarps,
// SmallRecChunk and SmallRefChunk: roots per block of
// kdtree_small_w_f32, and the records and (at least) leaf references a warp
// reserves at a time; each warp can leave one chunk of each partly unused
// (fewer than one per root: a warp keeps its chunks from root to root).
const (
	smallWarps    = int(consts.SmallWarps)
	smallCtrs     = 5 // kdtree_small_w_f32's counters: next record, next reference, overflow, next root, places unusable
	smallRecChunk = int(consts.SmallRecChunk)
	smallRefChunk = int(consts.SmallRefChunk)
)

// smallWarpBytes is consts.SmallWarpBytes, sizeof(kd_small::Warp), a warp's shared memory in
// kdtree_small_w_f32 (dynamic shared memory: a block's smallWarps of them
// are more than the 48 KiB of static shared memory a block may have).
const smallWarpBytes = int(consts.SmallWarpBytes)

// smallPlaceLimit is kdtree_small_w_f32's placeLimit: the most nodes and
// leaf references a small subtree may have for the layout to place its
// records with a thread each (kdtree_small_place_u32; else every root's
// records are walked) is Config.SmallPlaceLimit: 0xFFFF, the places'
// 16-bit fields (tests lower it).

// smallDev is the output of the device small phase: the subtrees of every
// small root as small records (see smallRecords) and their leaves'
// references, still on the device.
type smallDev struct {
	rec, refs   *exec.Buf[uint32]
	nrec, nrefs int
	roots       int
	bufs        []*exec.Buf[uint32]
	// size holds the nodes and leaf references of every small root's
	// subtree (2·roots words, kdtree_small_w_f32's; smallSizes is its Go
	// reference); hostSize is its copy on the host (read back with the
	// kernel's counters).
	size     *exec.Buf[uint32]
	hostSize []uint32
	// place and chunkRoot: every record's place in its root's depth-first
	// order and the root of every record chunk, from kdtree_small_w_f32,
	// for kdtree_small_place_u32 (the layout's emit, a thread per record);
	// nil when a subtree was too large for the
	// places' 16-bit fields (the layout then walks each root's records).
	// Both are views of rec's allocation.
	place, chunkRoot *exec.Buf[uint32]
}

func (so *smallDev) free() {
	if so == nil {
		return
	}
	for _, x := range so.bufs {
		x.Free()
	}
}

// runSmallCUDA runs the small-node phase on the device: one warp per small
// root (kdtree_small_w_f32). It
// returns nil (and changes nothing) when the record or reference space
// overflowed even with the largest room it tries; the caller then runs
// the Go small phase. When startSmallEarly launched the phase from the
// roots the device listed, it checks that list against the host's and
// waits for that launch.
func (b *gpuBuild) runSmallCUDA(d *devLevel, rs *refbuild.Records, smallOff, smallCnt []uint32) (*smallDev, error) {
	R := len(rs.Small)
	if run := d.early; run != nil {
		d.early = nil
		b.cfg.Counts.add(CountEarlyRun)
		if err := b.checkEarly(d, run, rs, smallOff, smallCnt); err != nil {
			run.so.free()
			return nil, err
		}
		return b.smallFinish(d, run)
	}
	box := rs.SmallBox
	if len(smallOff) != R || len(smallCnt) != R || len(rs.SmallDepth) != R || len(box) != 6*R {
		return nil, fmt.Errorf("kdtree: %d small roots with %d offsets, %d counts, %d depths and %d box words",
			R, len(smallOff), len(smallCnt), len(rs.SmallDepth), len(box))
	}
	if R == 0 {
		return &smallDev{}, nil
	}
	run, err := b.smallHostWords(d, rs, smallOff, smallCnt)
	if err != nil {
		return nil, err
	}
	if err := b.smallLaunch(d, run); err != nil {
		run.so.free()
		return nil, err
	}
	return b.smallFinish(d, run)
}

// smallRun is the device small phase under way: the roots' words on the
// device, the kernel's arguments and the output room tried.
//
// The words (one buffer, w) are laid out with a stride, the roots' count
// R when the host made them, the device list's room when the levels listed
// the roots (startSmallEarly): offsets at 0, counts at stride, depths at
// 2·stride (the booker's arrays, levelBook.book), the roots' boxes (float
// bits, 6 words each) at 3·stride, then the counters (next record, next
// reference, overflow, next root to take, places unusable), the subtrees'
// sizes (kdtree_small_w_f32's size: read back with the counters) and the
// order in which kdtree_small_w_f32 takes the roots (largest first). See
// smallAt.
type smallRun struct {
	so      *smallDev
	w       *exec.Buf[uint32]
	stride  int
	total   int // the small roots' references, or a bound (the output room's measure)
	attempt int // the Config.SmallCaps entry tried
	// dependent: the first launch is a programmatic dependent launch,
	// which runs beside the kernel queued before it (kdtree_top_plan_u32).
	dependent bool
	grid      cuda.Dim3
	block     cuda.Dim3
	args      *launch.KdtreeSmallWF32Args // kdtree_small_w_f32's, set by the first launch
}

// smallAt is where each part of a smallRun's words starts for the stride
// (the boxes at 3·stride), and end their length.
func smallAt(stride int) (ctrAt, sizeAt, orderAt, end int) {
	ctrAt = 9 * stride
	sizeAt = ctrAt + smallCtrs
	orderAt = sizeAt + 2*stride
	end = orderAt + stride
	return
}

// smallHostWords makes the small roots' words on the host from the
// booker's arrays and sends them.
func (b *gpuBuild) smallHostWords(d *devLevel, rs *refbuild.Records, smallOff, smallCnt []uint32) (*smallRun, error) {
	t0 := time.Now()
	R := len(rs.Small)
	run := &smallRun{so: &smallDev{roots: R}, stride: R}
	ctrAt, _, orderAt, end := smallAt(R)
	boxAt := 3 * R
	box := rs.SmallBox
	boxBits := unsafe.Slice((*uint32)(unsafe.Pointer(&box[0])), len(box))
	fail := func(err error) (*smallRun, error) {
		run.so.free()
		return nil, err
	}
	var w *exec.Buf[uint32]
	var err error
	if R <= b.cfg.SmallPackRoots {
		// Few roots: one array and one upload (each copy costs the bunny
		// about 10 µs with the device idle), made in pinned memory that
		// the context keeps from build to build: no page of it to fault
		// in (on the device machine a fresh array's faults cost the bunny
		// up to 0.5 ms) and no staging copy for the driver.
		n := end
		words, pin := d.hostWords(n)
		copy(words, smallOff)
		copy(words[R:], smallCnt)
		copy(words[2*R:], rs.SmallDepth)
		clear(words[ctrAt:orderAt])
		words[ctrAt] = uint32(R)
		run.total = largestFirstHist(smallCnt, rs.SmallHist, words[orderAt:end])
		copy(words[boxAt:], boxBits)
		if w, err = exec.Alloc[uint32](b.Ex, n); err != nil {
			return fail(err)
		}
		run.so.bufs = append(run.so.bufs, w)
		if pin != nil {
			err = d.ctx.CopyToDeviceAsync(w.Ptr(), pin, 0, uint64(4*n))
		} else {
			err = w.CopyFromHost(words)
		}
		if err != nil {
			return fail(err)
		}
		b.subPhase("small.roots", t0) // the roots' words made and sent
	} else {
		// Many roots: the booker's arrays sent as they are, the order made
		// on other goroutines meanwhile (the grid's 470k roots: the words
		// made in one array took 3.5-4.2 ms on the device machine).
		order := make([]uint32, R)
		ordered := make(chan struct{})
		total := 0
		go func() {
			defer close(ordered)
			largestFirst(smallCnt, order, b.HostWorkers())
			for _, c := range smallCnt {
				total += int(c)
			}
		}()
		if w, err = exec.Alloc[uint32](b.Ex, end); err != nil {
			<-ordered
			return fail(err)
		}
		run.so.bufs = append(run.so.bufs, w)
		for k, a := range [][]uint32{smallOff, smallCnt, rs.SmallDepth} {
			err = errors.Join(err, w.Slice(k*R, R).CopyFromHost(a))
		}
		err = errors.Join(err, w.Slice(boxAt, 6*R).CopyFromHost(boxBits),
			w.Slice(ctrAt, smallCtrs).CopyFromHost([]uint32{uint32(R), 0, 0, 0, 0}))
		t0 = b.subPhase("small.roots", t0) // the roots' arrays sent
		<-ordered
		run.total = total
		if err == nil {
			err = w.Slice(orderAt, R).CopyFromHost(order)
		}
		if err != nil {
			return fail(err)
		}
		b.subPhase("small.words", t0) // the order: made on the host meanwhile, and sent
	}
	run.w = w
	return run, nil
}

// smallLaunch allocates the output room of run's attempt (Config.SmallCaps) and
// launches the small-phase kernel; it waits for nothing.
func (b *gpuBuild) smallLaunch(d *devLevel, run *smallRun) error {
	t0 := time.Now()
	so, w, R := run.so, run.w, run.so.roots
	if run.args == nil {
		ctrAt, sizeAt, orderAt, _ := smallAt(run.stride)
		boxAt := 3 * run.stride
		p := refbuild.NewSAH(&b.Opt)
		run.grid, run.block = cuda.Linear(smallBlocks(R, d.ctx.Info().SMs)), cuda.Linear(32*smallWarps)
		so.size = w.Slice(sizeAt, 2*R)
		// Rec, RecCap, Refs, RefCap, Place and ChunkRoot: set below, for
		// each attempt's room.
		run.args = &launch.KdtreeSmallWF32Args{
			Ptri: d.ptri.Ptr(), Pbox: d.pbox.Ptr(), Tv: d.tv.Ptr(), RootOff: w.Slice(0, R).Ptr(),
			RootCnt: w.Slice(run.stride, R).Ptr(), RootBox: w.Slice(boxAt, 6*R).Ptr(),
			RootDepth: w.Slice(2*run.stride, R).Ptr(), Roots: uint32(R), MaxDepth: int32(b.Opt.MaxDepth),
			Ct: p.Ct, Ci: p.Ci, Keep: p.Keep, Ctr: w.Slice(ctrAt, smallCtrs).Ptr(), Size: so.size.Ptr(),
			Order: w.Slice(orderAt, R).Ptr(), PlaceLimit: b.cfg.SmallPlaceLimit}
	}
	// Output space per reference of the small roots: measured on the shared
	// scenes, at most 3.0 records and 2.8 leaf references (bunny); on
	// overflow the kernel runs again with more room, then the caller falls
	// back to the Go small phase.
	k, total, args := b.cfg.SmallCaps[run.attempt], run.total, run.args
	// Room for the chunks a warp leaves partly unused too: its last ones,
	// and the tails skipped when a leaf does not fit.
	recCap := 2*R + k[0]*total + 1024 + smallRecChunk*R
	refCap := k[1]*total + 1024 + smallRefChunk*R + k[1]*total/4
	so.rec.Free()
	so.refs.Free()
	// The records, then their places and the chunks' roots: one
	// allocation.
	chunkWords := (recCap-R)/smallRecChunk + 1
	recWords := 4*recCap + chunkWords
	var err error
	if so.rec, err = exec.Alloc[uint32](b.Ex, recWords); err != nil {
		return err
	}
	so.bufs = append(so.bufs, so.rec)
	if so.refs, err = exec.Alloc[uint32](b.Ex, refCap); err != nil {
		return err
	}
	so.bufs = append(so.bufs, so.refs)
	args.Rec, args.RecCap, args.Refs, args.RefCap = so.rec.Ptr(), uint32(recCap), so.refs.Ptr(), uint32(refCap)
	so.place, so.chunkRoot = so.rec.Slice(3*recCap, recCap), so.rec.Slice(4*recCap, chunkWords)
	args.Place, args.ChunkRoot = so.place.Ptr(), so.chunkRoot.Ptr()
	b.subPhase("small.alloc", t0) // the output's room (again on a retry)
	shared := uint32(smallWarps * smallWarpBytes)
	kern := launch.KdtreeSmallWF32
	if err := kern.SetMaxDynamicShared(d.ctx, int(shared)); err != nil {
		return err
	}
	start := kern.Launch
	if run.dependent && run.attempt == 0 {
		start = kern.LaunchDependent
	}
	if err := start(d.ctx, run.grid, run.block, shared, *args); err != nil {
		return fmt.Errorf("kdtree: %s: %w", kern.Name(), err)
	}
	return nil
}

// smallFinish waits for run's kernel and reads its counters back: the
// output when it fit, else the launch again with the next room of
// Config.SmallCaps, and nil when none fits.
func (b *gpuBuild) smallFinish(d *devLevel, run *smallRun) (*smallDev, error) {
	so, R := run.so, run.so.roots
	ctrAt, _, _, _ := smallAt(run.stride)
	ctr := run.w.Slice(ctrAt, smallCtrs)
	fail := func(err error) (*smallDev, error) {
		so.free()
		return nil, err
	}
	for {
		// The counters, and after them the sizes, into pinned memory (as
		// the words: no page faults, no staging), which the context keeps
		// until the build ends (d.free).
		nc := smallCtrs + 2*R
		hc, hpin := d.hostWords(nc)
		var err error
		if hpin != nil {
			err = d.ctx.CopyToHostAsync(hpin, 0, ctr.Ptr(), uint64(4*nc))
			if err == nil {
				err = d.ctx.Synchronize()
			}
		} else {
			err = run.w.Slice(ctrAt, nc).CopyToHost(hc)
		}
		if err != nil {
			return fail(err)
		}
		if hc[2] == 0 {
			so.nrec, so.nrefs = int(hc[0]), int(hc[1])
			so.hostSize = hc[smallCtrs:]
			if hc[4] != 0 {
				so.place, so.chunkRoot = nil, nil // views of so.rec
			}
			return so, nil
		}
		if run.attempt+1 >= len(b.cfg.SmallCaps) {
			so.free()
			return nil, nil
		}
		if err := ctr.CopyFromHost([]uint32{uint32(R), 0, 0, 0, 0}); err != nil {
			return fail(err)
		}
		run.attempt++
		if err := b.smallLaunch(d, run); err != nil {
			return fail(err)
		}
	}
}

// hostWords returns n words of host memory for a copy to or from the
// device: pinned memory that the context keeps from build to build (given
// back when the build ends: d.free), and that block, or when there is
// none, an ordinary array and nil. Its contents are whatever the block
// held last.
func (d *devLevel) hostWords(n int) ([]uint32, *cuda.Pinned) {
	if n == 0 {
		return nil, nil
	}
	if pin, err := d.pinned(4 * n); err == nil {
		return pin.U32(n), pin
	}
	return make([]uint32, n), nil
}

// smallBoxes downloads the parked boxes of the small roots for the Go small
// phase.
func (d *devLevel) smallBoxes(rs *refbuild.Records, smallOff []uint32) error {
	if d.parked == 0 {
		return nil
	}
	pbox := make([]float32, 6*d.parked)
	if err := d.pbox.Slice(0, 6*d.parked).CopyToHost(pbox); err != nil {
		return err
	}
	for i := range rs.Small {
		sr := &rs.Small[i]
		sr.Box2 = make([]refbuild.AABB, len(sr.Tri))
		for k := range sr.Box2 {
			o := 6 * (int(smallOff[i]) + k)
			copy(sr.Box2[k].Lo[:], pbox[o:o+3])
			copy(sr.Box2[k].Hi[:], pbox[o+3:o+6])
		}
	}
	return nil
}

// parkedToHost downloads the parked references and gives the records of
// parked leaves and small roots their triangle indices (the host small
// phase and layoutGo need them).
func (d *devLevel) parkedToHost(rs *refbuild.Records, smallOff, smallCnt []uint32) error {
	ptri := make([]uint32, d.parked)
	if d.parked > 0 {
		if err := d.ptri.Slice(0, d.parked).CopyToHost(ptri); err != nil {
			return err
		}
	}
	for i := range rs.Recs {
		if r := &rs.Recs[i]; r.Fate == refbuild.FateLeaf && r.Parked {
			rs.SetLeaf(int32(i), ptri[r.Park:r.Park+r.Pcnt])
		}
	}
	for k := range rs.Small {
		rs.Small[k].Tri = ptri[smallOff[k] : smallOff[k]+smallCnt[k] : smallOff[k]+smallCnt[k]]
	}
	return nil
}

// largestFirst writes to order the indices of cnt (the reference counts
// of the small roots) sorted by decreasing count, equal counts in index
// order: a counting sort, linear in len(cnt) plus the largest count, over
// up to workers chunks of cnt at once (each chunk's histogram, then each
// chunk scatters its indices from its own start within every count).
func largestFirst(cnt []uint32, order []uint32, workers int) {
	const grain = 1 << 16
	chunks := max(1, min(workers, len(cnt)/grain))
	span := func(c int) []uint32 { return cnt[c*len(cnt)/chunks : (c+1)*len(cnt)/chunks] }
	his := make([]uint32, chunks)
	exec.ParallelFor(chunks, chunks, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			for _, v := range span(c) {
				his[c] = max(his[c], v)
			}
		}
	})
	hi := slices.Max(append(his, 0))
	// Rank k = hi - count; start[c][k] is chunk c's first slot of rank k.
	ranks := int(hi) + 1
	start := make([]int, chunks*ranks)
	exec.ParallelFor(chunks, chunks, 1, func(lo, hi2 int) {
		for c := lo; c < hi2; c++ {
			st := start[c*ranks : (c+1)*ranks]
			for _, v := range span(c) {
				st[hi-v]++
			}
		}
	})
	at := 0
	for k := range ranks {
		for c := range chunks {
			n := start[c*ranks+k]
			start[c*ranks+k] = at
			at += n
		}
	}
	exec.ParallelFor(chunks, chunks, 1, func(lo, hi2 int) {
		for c := lo; c < hi2; c++ {
			st := start[c*ranks : (c+1)*ranks]
			base := c * len(cnt) / chunks
			for i, v := range span(c) {
				k := hi - v
				order[st[k]] = uint32(base + i)
				st[k]++
			}
		}
	})
}

// largestFirstHist is largestFirst(cnt, order, 1) with the counts'
// histogram already made (hist[c]: how many of cnt are c, as
// levelBook.book counts them): one pass over cnt instead of three. It
// returns the sum of cnt. When hist does not match cnt (it always should),
// it runs largestFirst.
func largestFirstHist(cnt []uint32, hist []int, order []uint32) int {
	n, total := 0, 0
	for c, h := range hist {
		n += h
		total += c * h
	}
	if n == len(cnt) && len(order) >= n {
		// next[c]: the next slot of count c, the largest counts first;
		// end[c]: where count c's slots end.
		next, end := make([]int, len(hist)), make([]int, len(hist))
		at := 0
		for c := len(hist) - 1; c >= 0; c-- {
			next[c] = at
			at += hist[c]
			end[c] = at
		}
		ok := true
		for i, c := range cnt {
			if int(c) >= len(hist) || next[c] == end[c] {
				ok = false
				break
			}
			order[next[c]] = uint32(i)
			next[c]++
		}
		// Every count's slots filled exactly: each slot written once.
		if ok && slices.Equal(next, end) {
			return total
		}
	}
	largestFirst(cnt, order, 1)
	total = 0
	for _, c := range cnt {
		total += int(c)
	}
	return total
}

// smallBlocks is the grid of kdtree_small_w_f32 for R roots on a device of
// sms multiprocessors: a warp per root while that is at most 8 blocks per
// SM (about one wave: sm_90 holds 5), else 8 blocks per SM whose warps take
// the roots from a counter until none is left (see the kernel).
func smallBlocks(R, sms int) int {
	g := (R + smallWarps - 1) / smallWarps
	if sms > 0 {
		g = min(g, 8*sms)
	}
	return max(g, 1)
}
