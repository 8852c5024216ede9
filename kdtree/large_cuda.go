package kdtree

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/scan"
	"github.com/kdbuild/kdbuild/split"
)

// The CUDA path of the large-node phase. The per-reference steps run as
// kernels (kernels/kdtree.cu), four a level: the decisions (empty space,
// then histograms and the binned SAH: kdtree_choose_f32, or three kernels
// for large levels), classification with clipping and the copy counts,
// the addresses (the ranks, the children's bases and the node words:
// kdtree_addresses_u32), and the tail: scatter, parking the references of
// nodes that end, the next level's node table and its nodes' tight bounds.
// The first level's tight bounds come from reduce's segmented box
// reduction, the later levels' from the tail. Two drivers run the levels:
// largeCUDA waits for each level once, at the read-back of its decisions
// and child counts; largeCUDAPipe (large_pipe.go, scenes under a million
// triangles) does not wait for the level it queued. Either way the host
// keeps the records from the read-backs with the same code as levelGo, so
// the tree is the Go executor's.

const cudaBlock = 256

// devLevel holds the device buffers of a CUDA build; they grow (never
// shrink) and are freed by free.
type devLevel struct {
	ex  exec.Executor
	ctx *cuda.Context

	tv           *exec.Buf[float32] // 9 floats per scene triangle
	kept         *exec.Buf[uint32]
	tri          [2]*exec.Buf[uint32] // current and next references
	rnode        [2]*exec.Buf[uint32] // their nodes (rnode in kernels/kdtree.cu)
	box          [2]*exec.Buf[float32]
	flags        *exec.Buf[uint32]
	clipL, clipR *exec.Buf[float32]
	offsets      *exec.Buf[uint32] // the level's node table (see upload); info is a view of it
	info         *exec.Buf[uint32]
	nboxP        cuda.DevPtr // the table's node boxes (float32)
	// rootTight is d.tight's address when it holds the root's tight bounds
	// (rootBox), for the first level's decisions; 0 once they are used.
	rootTight cuda.DevPtr
	// The root box on its way to the host (rootBox): copied into rootPin
	// before rootEv; root once takeRoot has it (rootOK). rootToTable: the
	// first level's table still needs it (levelFrontCUDA writes it there
	// on the device).
	rootPin     *cuda.Pinned
	rootEv      *cuda.Event
	root        aabb
	rootOK      bool
	rootToTable bool
	nbox, geo   *exec.Buf[float32]
	dec         *exec.Buf[uint32]
	hist        *exec.Buf[uint32]
	ptri        *exec.Buf[uint32]
	pbox        *exec.Buf[float32]
	parked      int                // references parked so far
	arenaU      *exec.Buf[uint32]  // the views reserve made live here
	arenaF      *exec.Buf[float32] // (freed only by free)
	sc          *split.Scratch
	scRefs, scN int

	// The large phase's own state: the next level's node table (made on
	// the device by kdtree_tail_f32, then swapped with offsets), the
	// scanned node words (kdtree_addresses_u32) and their look-back
	// state (wstate), the nodes' tight bounds (6 floats each) and the
	// reducer that computes them for a level whose table came from the
	// host, and the tight bounds as keys (key_of in kernels/kdtree.cu, 6
	// words a node) that kdtree_tail_f32 makes for the next level as it
	// scatters its references: tkey[0] the current level's, tkey[1] the
	// next's (readied by the decisions' kernel, then swapped).
	next     *exec.Buf[uint32]
	pre      *exec.Buf[uint32]
	wstate   *exec.Buf[uint32]
	tight    *exec.Buf[float32]
	tkey     [2]*exec.Buf[uint32]
	red      *reduce.Reducer
	tableOK  bool // offsets holds the current level's table, made on the device
	keysOK   bool // with tableOK: tkey[0] holds the current level's tight bounds
	keysNext bool // this level's decide readied tkey[1] for the next level
	inPipe   bool // largeCUDAPipe runs: per-node buffers must not grow
	histZero bool // hist is all zero (see decideCUDA)

	// The levels' sizes on the device, a ring of szSlots slots of szWords
	// words (nodes, references, references parked before the level,
	// overflow, small roots before the level, nodes before the level):
	// level k's in slot k%szSlots, written by level k-1's kdtree_tail_f32
	// (level 0's by setSizes). layout is the node stride of the current
	// table in offsets (see tableLen), nodeCap the most nodes a level
	// may have without growing the per-node buffers (reserve's).
	sz       *exec.Buf[uint32]
	layout   int
	nodeCap  int
	refLimit int // when positive, the most references queueTail lets a level have (largeCUDAPipe's pipeRefCap)

	// The pipelined large phase's: the last level's log (kdtree_tail_f32,
	// szWords + 6·nodeCap words), and what it borrowed, pinned host memory and
	// events (given back by free, after the device is done with them).
	log    *exec.Buf[uint32]
	pins   []*cuda.Pinned
	events []*cuda.Event

	// The small roots the pipelined levels list on the device (room for
	// rootCap) and the small phase startSmallEarly launched from them,
	// which runSmallCUDA finishes (see small_early.go); levelFreed: the
	// level buffers are freed (freeLevel).
	roots      *exec.Buf[uint32]
	rootCap    int
	early      *smallRun
	levelFreed bool

	// A queued prepareCUDA's count of kept triangles and error word on
	// the device (prep), the first level's table still to be completed
	// from them (countPending), and their values once takeRoot brought
	// them home (keptKnown).
	prep         *exec.Buf[uint32]
	countPending bool
	keptKnown    bool
	keptN        int
	keptBad      uint32

	// The device lays out the whole tree (top_cuda.go): deviceTop, the
	// levels' starts in the device's list of large-phase nodes
	// (topLevels, the last entry their count), and topMissed when the
	// lists outgrew their room (the build then goes on level by level).
	deviceTop bool
	topLevels []uint32
	topMissed bool
	topPlan   *exec.Buf[uint32] // kdtree_top_plan_u32's output (queueTopPlan)
}

// szSlots is the number of levels whose sizes the device keeps: a level
// reads its own and writes the next one's (two, so that the launches of
// every second level are the same: see largeCUDAPipe).
const szSlots = 2

// szWords is the number of words of a level's sizes (kSizeWords in
// kernels/kdtree.cu): nodes, references, references parked before the
// level, overflow, small roots before the level (kdtree_tail_f32 lists
// them on the device: see small_early.go), nodes of the levels before it
// (it lists them too: see top_cuda.go).
const szWords = 6

func (d *devLevel) free() {
	for _, b := range []*exec.Buf[uint32]{d.kept, d.tri[0], d.tri[1], d.rnode[0], d.rnode[1], d.flags, d.offsets, d.info,
		d.dec, d.hist, d.ptri, d.arenaU, d.next, d.pre, d.wstate, d.sz, d.log, d.tkey[0], d.tkey[1], d.roots, d.prep,
		d.topPlan} {
		b.Free()
	}
	if d.early != nil {
		d.early.so.free()
		d.early = nil
	}
	for _, b := range []*exec.Buf[float32]{d.tv, d.box[0], d.box[1], d.clipL, d.clipR, d.nbox, d.geo, d.pbox, d.arenaF,
		d.tight} {
		b.Free()
	}
	d.sc.Free()
	if d.red != nil {
		d.red.Free()
	}
	if len(d.pins) > 0 || len(d.events) > 0 {
		d.ctx.Synchronize() // no copy may still write into the pinned memory
		for _, p := range d.pins {
			d.ctx.PutPinned(p)
		}
		for _, e := range d.events {
			d.ctx.PutEvent(e)
		}
		d.pins, d.events = nil, nil
	}
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
	us := []arenaSlot[uint32]{{&d.tri[0], refs}, {&d.tri[1], refs}, {&d.rnode[0], refs}, {&d.rnode[1], refs}, {&d.flags, refs},
		{&d.offsets, tableLen(nodes)}, {&d.dec, 6 * nodes},
		{&d.hist, histLen(bins, nodes)}, {&d.next, tableLen(nodes)}, {&d.pre, nodeWords(nodes)},
		{&d.wstate, 2 * nodeWordsState(nodes)}, {&d.sz, szWords * szSlots}, {&d.tkey[0], 6 * nodes}, {&d.tkey[1], 6 * nodes}}
	fs := []arenaSlot[float32]{{&d.box[0], 6 * refs}, {&d.box[1], 6 * refs}, {&d.clipL, 6 * refs}, {&d.clipR, 6 * refs},
		{&d.geo, 9 * nodes}, {&d.tight, 6 * nodes}}
	if err := carve(d.ex, &d.arenaU, us); err != nil {
		return err
	}
	if err := carve(d.ex, &d.arenaF, fs); err != nil {
		return err
	}
	// The parked references outlive the level buffers (the small phase
	// reads them): buffers of their own, for 3n references. The shared
	// scenes park 1.5-1.95n in all, but the pipelined phase makes room for
	// what two levels may park at most (parked so far plus twice the last
	// level's references: up to 2.2-2.72n there) and, when that is more
	// than the buffers hold, waits for the level's sizes before it queues
	// the level's tail: with 2n, at most of the bunny's levels, which put
	// the host and the device in lockstep.
	park := parkReserve * n
	if err := ensureN(d.ex, &d.ptri, park, park); err != nil {
		return err
	}
	if err := ensureN(d.ex, &d.pbox, 6*park, 6*park); err != nil {
		return err
	}
	var err error
	d.nodeCap = nodes
	d.scRefs, d.scN = refs, nodes
	d.sc, err = split.NewScratch(d.ex, d.scRefs, d.scN)
	return err
}

// parkReserve is the parked references reserve makes room for, per kept
// triangle (a variable for the tests: 1 makes the pipelined phase grow
// the buffers).
var parkReserve = 3

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

// launchDep is launch as a dependent launch (cuda.Context.LaunchDependent):
// for the level's kernels, which start with kd_pdl_enter
// (kernels/scan.cuh), so that each may be scheduled before the kernel
// before it ends (a level is seven kernels of a few microseconds each,
// with about 2 µs between two on an H200). After anything but a kernel
// (the decisions after a copy and an event) the dependency is an ordinary
// one.
func (d *devLevel) launchDep(kernel string, n int, args ...any) error {
	if err := d.ctx.LaunchDependent(kernel, cuda.GridFor(n, cudaBlock), cuda.Linear(cudaBlock), 0, args...); err != nil {
		return fmt.Errorf("kdtree: %s: %w", kernel, err)
	}
	return nil
}

// startLevels makes the first level of the large phase: the n kept
// triangles as its references (tri[0], their boxes in box[0]), its table
// (one node holding them all, box not yet known) and its sizes (slot 0).
func (d *devLevel) startLevels(n int) error {
	if err := d.tri[0].CopyFrom(d.kept.Slice(0, n)); err != nil {
		return err
	}
	if err := ensure(d.ex, &d.rnode[0], n); err != nil {
		return err
	}
	if err := d.rnode[0].Slice(0, n).Dev().Memset32(0); err != nil { // one node: the root
		return err
	}
	var count cuda.DevPtr
	if d.countPending {
		count = d.prep.Ptr()
	}
	if err := d.launch("kdtree_boxes_f32", n, d.tv.Ptr(), d.kept.Ptr(), uint32(n), d.box[0].Ptr(), count); err != nil {
		return err
	}
	if err := d.upload([]lnode{{off: 0, cnt: uint32(n)}}, n); err != nil {
		return err
	}
	if err := d.setSizes(0, 1, n); err != nil {
		return err
	}
	return d.firstLevelCount(d.sz.Slice(0, szWords).Ptr())
}

// firstLevelCount, when prepareCUDA left the count of kept triangles on
// the device, writes it into the first level's table (just uploaded for a
// bound) and, when sz is not 0, its sizes (kdtree_first_level_u32).
func (d *devLevel) firstLevelCount(sz cuda.DevPtr) error {
	if !d.countPending {
		return nil
	}
	if err := d.ctx.Launch("kdtree_first_level_u32", cuda.Linear(1), cuda.Linear(32), 0, d.prep.Ptr(), d.offsets.Ptr(),
		uint32(d.layout), sz); err != nil {
		return fmt.Errorf("kdtree: kdtree_first_level_u32: %w", err)
	}
	return nil
}

// setSizes writes level k's sizes on the device: nn nodes, n references,
// none parked before it, no overflow.
func (d *devLevel) setSizes(k, nn, n int) error {
	w, pin := d.hostWords(szWords)
	clear(w)
	w[0], w[1] = uint32(nn), uint32(n)
	return d.send(d.sz.Slice(szWords*(k%szSlots), szWords), w, pin)
}

// send copies words to dst: from pin (hostWords' block holding words)
// without waiting, or, when pin is nil, from ordinary memory (a copy that
// waits for the device: the driver stages pageable memory after a
// synchronisation, which would drain the device between the steps it
// separates).
func (d *devLevel) send(dst *exec.Buf[uint32], words []uint32, pin *cuda.Pinned) error {
	if pin == nil {
		return dst.CopyFromHost(words)
	}
	if dst.Len() < len(words) {
		return fmt.Errorf("kdtree: sending %d words into a buffer of %d", len(words), dst.Len())
	}
	return d.ctx.CopyToDeviceAsync(dst.Ptr(), pin, 0, uint64(4*len(words)))
}

// restart undoes a pipelined large phase that overflowed (see
// largeCUDAPipe) so that largeCUDA can build from the first level again:
// the device is waited for, the first level made again, nothing parked,
// the histograms and the reducer's counters (which the abandoned levels
// may have left in use) made new.
func (d *devLevel) restart(n int) error {
	if err := d.ctx.Synchronize(); err != nil {
		return err
	}
	d.parked = 0
	d.refLimit = 0
	d.tableOK, d.keysOK, d.keysNext = false, false, false
	d.histZero = false
	if d.red != nil {
		d.red.Free()
		d.red = nil
	}
	return d.startLevels(n)
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

	// Pipelined levels for scenes under pipeMaxTris triangles: a larger
	// scene's levels keep the device busier than the host (8.9M-triangle
	// grid on an H100: 239-281 ms on the device pipelined, 208-230 level by
	// level, where the host books each level while the device runs the
	// next). A pipelined build does not wait for the count of kept
	// triangles: its first level runs on the scene's count as a bound.
	pipe := cudaPipeline && b.onLevel == nil && len(b.scene.Tris) < pipeMaxTris
	queued := pipe && cudaQueuedPrepare
	// A pipelined build lays its tree out on the device (top_cuda.go):
	// the host keeps no records of the levels, unless the device's lists
	// outgrow their room (then level by level, with records).
	d.deviceTop = pipe && deviceTopOn() && !b.noDeviceTop
	if !d.deviceTop {
		b.room = startHostRoom(len(b.scene.Tris))
	}

	// The scene to the device ("upload"), then triangles gathered, tested
	// and listed there (prepareCUDA), their boxes and the root box.
	b.startPhase()
	n, err := b.prepareCUDA(d, queued)
	if err != nil {
		return nil, err
	}
	res := &buildResult{}
	if n == 0 {
		b.endPhase("prepare")
		return res, nil
	}
	t0 := b.subPhase("prepare.kept", b.phase) // gather, test and compact (the count read back unless queued)
	if err := d.reserve(n, b.opt.Bins); err != nil {
		return nil, err
	}
	if err := d.startLevels(n); err != nil {
		return nil, err
	}
	t0 = b.subPhase("prepare.levels", t0) // the level buffers, the first level queued
	// The root box: tight bounds of one node holding every reference
	// (queued; the first level's bookkeeping waits for it: takeRoot).
	if err := d.rootBox(n); err != nil {
		return nil, err
	}
	b.subPhase("prepare.root", t0) // its reduction queued
	b.endPhase("prepare")

	b.startPhase()
	rs := &records{}
	// The root's box is filled in by takeRoot before the level is booked.
	nodes := []lnode{{off: 0, cnt: uint32(n), depth: 0, rec: rs.add()}}
	over := false
	if pipe {
		// (The parked ranges' records are in rs: see levelBook.book.)
		_, over, err = b.largeCUDAPipe(d, nodes, n, rs)
		if err != nil {
			return nil, err
		}
	}
	if queued {
		// The count the levels ran on (home with the root box).
		if n, err = b.keptCount(d); err != nil {
			return nil, err
		}
		if n == 0 {
			// Every triangle dropped: the empty tree, as when the count
			// is read back (the levels ran on an empty root).
			b.endPhase("large")
			return &buildResult{}, nil
		}
	}
	if over {
		if d.topMissed {
			topFallbacks.Add(1)
		} else {
			pipeFallbacks.Add(1)
		}
		d.deviceTop = false
		b.phases["large.retry"] += float64(time.Since(b.phase).Nanoseconds()) / 1e6
		// A level outgrew the buffers reserved for the pipeline: the
		// level-synchronous phase, which grows them, builds again.
		root, err := d.takeRoot()
		if err != nil {
			return nil, err
		}
		if err := d.restart(n); err != nil {
			return nil, err
		}
		b.levels = 0
		rs = &records{}
		nodes = []lnode{{box: root, off: 0, cnt: uint32(n), depth: 0, rec: rs.add()}}
	}
	if !pipe || over {
		if _, err = b.largeCUDA(d, nodes, n, rs); err != nil {
			return nil, err
		}
	}
	root, err := d.takeRoot()
	if err != nil {
		return nil, err
	}
	res.bounds = toBounds(root)
	if d.deviceTop {
		out, ok, err := b.finishDeviceTop(d, res)
		if err != nil || ok {
			return out, err
		}
		// The small phase's output overflowed every room: build again
		// with the host's records (the Go small phase needs them).
		d.free()
		b.noDeviceTop = true
		b.phases["small.retry"] += float64(time.Since(b.phase).Nanoseconds()) / 1e6
		return b.buildCUDA()
	}
	// The records of the parked ranges (leaves and small roots whose
	// references stay on the device) were made as they were booked;
	// parkedToHost brings the references home when a host step needs them.
	t0 = time.Now()
	devLayout := cudaSmallOnDevice && cudaLayoutOnDevice()
	smallOff, smallCnt := rs.smallOff, rs.smallCnt
	if !devLayout {
		if err := d.parkedToHost(rs, smallOff, smallCnt); err != nil {
			return nil, err
		}
	}
	b.subPhase("large.parked", t0)
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
		t0 := time.Now()
		if err := d.freeLevel(true); err != nil {
			return nil, err
		}
		b.subPhase("small.free", t0) // the last level's wait and the frees
	}
	// The large-phase half of the layout is planned on the host while the
	// device builds the small subtrees (it reads rs, which nothing changes
	// until it is done).
	var plan chan planned
	if devLayout && cudaSmallOnDevice {
		plan = make(chan planned, 1)
		go func() {
			t0 := time.Now()
			p, err := planTop(rs)
			plan <- planned{p, err, time.Since(t0)}
		}()
	}
	if cudaSmallOnDevice {
		so, err = b.runSmallCUDA(d, rs, smallOff, smallCnt)
		if err != nil {
			if plan != nil {
				<-plan
			}
			return nil, err
		}
		defer so.free()
	}
	if devLayout && so != nil {
		// Small phase and layout on the device, one download at the end.
		d.tv.Free()
		d.pbox.Free()
		b.endPhase("small")
		if res.nodes, res.refs, err = b.layoutCUDA(d, rs, so, plan); err != nil {
			return nil, err
		}
		b.devPeak = ctx.PeakBytes()
		return res, nil
	}
	if plan != nil {
		<-plan // done reading rs
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
		b.gatherTris() // the Go small phase clips the triangles
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

// largeCUDA runs the levels of the CUDA large phase from nodes (the root,
// n references) and returns the parked ranges. A level waits for the
// device once, at the read-back of its decisions and child counts; from
// it the host counts what the device work after it needs (lb.count: the
// next level's nodes and references, the references parked), queues the
// rest of the level (levelTailCUDA) and the next level up to its read-back
// (levelFrontCUDA), and hands the read-back to a booker, which keeps the
// level's records (lb.book) on another goroutine while this one goes on to
// the next level: the records are off the path of the levels (they cost
// the bunny about 45 µs a level, the 8.9M-triangle grid 60 ms a build).
// The records are levelGo's, made level after level in order.
func (b *builder) largeCUDA(d *devLevel, nodes []lnode, n int, rs *records) ([]parkedRange, error) {
	// Room for the records and parked ranges the large phase usually makes
	// (the bunny parks about n/19 small roots; a split makes two records),
	// so that book rarely grows them: growing copies every record made so
	// far, and the records hold pointers (the grid's growth cost 80 ms of
	// host time per build on the device machine).
	t0 := time.Now()
	// The host's records use the host's cores (the CUDA executor's
	// Workers is 1: its work is the device's).
	workers := b.hostWorkers()
	// The tests' level hooks look at every level's nodes: book inline.
	bk := newBooker(workers, nodes, rs, b.roomFunc(rs, n), b.onLevel != nil)
	defer bk.finish()
	cnt := []uint32{uint32(n)} // the level's node reference counts
	capRefs := max(64*n, 1<<20)
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	b.levelProgress(0, len(nodes))
	t0 = b.subPhase("large.alloc", t0)
	if err := b.levelFrontCUDA(d, nodes, len(nodes), n, false); err != nil {
		return nil, err
	}
	b.levels++
	t0 = b.subPhase("large.upload", t0)
	forceLeaf := false
	for level := 0; ; level++ {
		nn := len(cnt)
		lb := bk.take()
		t0 = b.subPhase("large.booker", t0) // waiting for a levelBook: the booker is behind
		if err := d.readBack(lb, nn); err != nil {
			return nil, err
		}
		if level == 0 {
			// The root's box, queued before this level: home by now.
			root, err := d.takeRoot()
			if err != nil {
				return nil, err
			}
			nodes[0].box = root
		}
		t0 = b.subPhase("large.device", t0)
		if b.onLevel != nil {
			nodes := bk.current()
			if level > 0 {
				// Tests: the table made on the device is the host's nodes.
				if err := d.checkTable(nodes, n); err != nil {
					return nil, err
				}
			}
			if !forceLeaf {
				b.onLevel(nodes, lb.levelDecisions(nn))
			}
		}
		if err := lb.count(workers, cnt, d.parked); err != nil {
			return nil, err
		}
		if err := b.levelTailCUDA(d, nn, n, lb, level); err != nil {
			return nil, err
		}
		// The tail's few launches to the driver now: the device runs them
		// while the host queues the next level's front.
		if err := d.ctx.Flush(); err != nil {
			return nil, err
		}
		n = int(lb.total)
		nn2 := 2 * lb.nsplit
		// Memory guard as in buildGo: past capRefs the next level's nodes
		// all become leaves.
		forceLeaf = n > capRefs
		if forceLeaf {
			b.limited = memoryGuardText(n, capRefs)
		}
		if nn2 > 0 {
			if err := b.ctx.Err(); err != nil {
				return nil, err
			}
			if !forceLeaf {
				b.levelProgress(level+1, nn2)
			}
			if err := b.levelFrontCUDA(d, nil, nn2, n, forceLeaf); err != nil {
				return nil, err
			}
			if !forceLeaf {
				b.levels++
			}
		}
		// The level's launches to the driver now (they are queued on the
		// host: cuda.Context.Launch), so the device works while the
		// records are kept.
		if err := d.ctx.Flush(); err != nil {
			return nil, err
		}
		cnt = lb.next
		bk.give(lb)
		t0 = b.subPhase("large.host", t0)
		if nn2 == 0 {
			parked := bk.finish()
			b.subPhase("large.book", t0)
			return parked, nil
		}
	}
}

// levelProgress reports large-phase level `level` of nodes nodes to the
// progress callback, once: a build that starts its large phase again (the
// pipelined phase's fallback) does not report the levels it reported.
func (b *builder) levelProgress(level, nodes int) {
	if b.opt.Progress == nil || level < b.reported {
		return
	}
	b.reported = level + 1
	b.opt.Progress(level, nodes)
}

// subPhase adds the time since t0 to phase name and returns now. The
// CUDA large phase is split this way into sub-phases (their sum is about
// "large"): large.alloc (the host's records and parked ranges made room
// for), large.upload (the first level's node table built and sent,
// its work up to the read-back queued), large.device (waiting for a
// level's read-back: the device time the host did not hide), large.host
// (the read-back counted, the rest of the level and the next level up to
// its read-back queued and flushed), large.booker (waiting for a free
// levelBook: the booker is behind) and large.book (after the last level,
// the wait for the booker, which keeps the records on its own goroutine
// meanwhile; with the tests' level hooks it keeps them inline, within
// large.host). The pipelined phase (largeCUDAPipe) uses the same names:
// large.device is its wait for a level's sizes, large.host its queueing,
// large.booker its wait for a free levelBook, large.park its wait for a
// level's sizes when the parked buffers may be too small for the next
// (see reserve), and large.book the booker's work after the device's. Then large.parked:
// what the host does with the parked ranges after the last level (their
// records are the booker's; their references are brought home only when
// a host step needs them).
func (b *builder) subPhase(name string, t0 time.Time) time.Time {
	now := time.Now()
	b.phases[name] += float64(now.Sub(t0).Nanoseconds()) / 1e6
	return now
}

// nodeWords is the length of the node-words scan of a level of nn nodes
// (NodeWords in kernels/kdtree.cu: splits, parked counts, small roots).
func nodeWords(nn int) int { return 3*nn + 3 }

// nodeWordsState is the look-back state of the node-words scan for a
// level of nn nodes, in 8-byte words.
func nodeWordsState(nn int) int { return scan.MadeStateWords(nodeWords(nn)) }

// tableLen is the number of words of a level's node table for nn nodes.
func tableLen(nn int) int { return 11*nn + 1 }

// upload sends a level's node table in one copy: offsets (nn+1 words),
// info (off, cnt, depth, 0 per node) and boxes (6 float words per node);
// d.offsets holds it, d.info and d.nboxP point into it.
func (d *devLevel) upload(nodes []lnode, n int) error {
	nn := len(nodes)
	t, pin := d.hostWords(tableLen(nn))
	offsets, info, nbox := t[:nn+1], t[nn+1:5*nn+1], t[5*nn+1:]
	for i := range nodes {
		x := &nodes[i]
		offsets[i] = x.off
		info[4*i], info[4*i+1], info[4*i+2], info[4*i+3] = x.off, x.cnt, uint32(x.depth), 0
		for a := 0; a < 3; a++ {
			nbox[6*i+a] = math.Float32bits(x.box.lo[a])
			nbox[6*i+3+a] = math.Float32bits(x.box.hi[a])
		}
	}
	offsets[nn] = uint32(n)
	if err := ensure(d.ex, &d.offsets, len(t)); err != nil {
		return err
	}
	if err := d.send(d.offsets.Slice(0, len(t)), t, pin); err != nil {
		return err
	}
	d.layout = nn
	return d.sizeNodes(nn)
}

// sizeNodes makes the per-node buffers hold a level of nn nodes (a bound
// at most the table's layout) and points d.info and d.nboxP into the node
// table in d.offsets.
func (d *devLevel) sizeNodes(nn int) error {
	if nn > d.layout {
		return fmt.Errorf("kdtree: a level of %d nodes in a table laid out for %d", nn, d.layout)
	}
	for _, e := range []error{ensure(d.ex, &d.dec, 6*nn), ensure(d.ex, &d.geo, 9*nn),
		ensure(d.ex, &d.tight, 6*nn), ensure(d.ex, &d.pre, nodeWords(nn)), ensure(d.ex, &d.wstate, 2*nodeWordsState(nn))} {
		if e != nil {
			return e
		}
	}
	d.info = d.offsets.Slice(d.layout+1, 4*nn)
	d.nboxP = d.offsets.Slice(5*d.layout+1, 6*nn).Ptr()
	return nil
}

// rootBox queues the root box: the tight bounds of the n references in
// box[0] (the level table's first segment, see startLevels), into d.tight
// (the first level's decisions use it: rootTight) and on its way to the
// host, which takeRoot waits for. Meanwhile the host readies the large
// phase and queues the first level, whose table gets the box on the device
// (rootToTable): no wait for the device between prepare and the first
// level. Without pinned memory it reads the box back at once.
func (d *devLevel) rootBox(n int) error {
	if d.red == nil {
		d.red = reduce.NewReducer(d.ex)
	}
	if err := ensure(d.ex, &d.tight, 6); err != nil {
		return err
	}
	if err := d.red.SegmentedBoxesAoS(d.tight.Slice(0, 6), d.box[0].Slice(0, 6*n), d.offsets.Slice(0, 2)); err != nil {
		return err
	}
	d.rootTight = d.tight.Ptr()
	d.rootOK, d.rootToTable = false, false
	if pin, err := d.pinned(4 * 8); err == nil {
		if ev, err := d.event(); err == nil {
			if err := d.ctx.CopyToHostAsync(pin, 0, d.tight.Ptr(), 4*6); err != nil {
				return err
			}
			// A queued prepareCUDA's count and error word come with it.
			if d.prep != nil {
				if err := d.ctx.CopyToHostAsync(pin, 4*6, d.prep.Ptr(), 4*2); err != nil {
					return err
				}
			}
			if err := ev.Record(); err != nil {
				return err
			}
			d.rootPin, d.rootEv, d.rootToTable = pin, ev, true
			return nil
		}
	}
	h := make([]float32, 6)
	if err := d.tight.Slice(0, 6).CopyToHost(h); err != nil {
		return err
	}
	d.setRoot(h)
	if d.prep != nil {
		var w [2]uint32
		if err := d.prep.CopyToHost(w[:]); err != nil {
			return err
		}
		d.setKept(w[0], w[1])
	}
	return nil
}

// setKept keeps a queued prepareCUDA's count and error word.
func (d *devLevel) setKept(count, bad uint32) {
	d.keptN, d.keptBad, d.keptKnown = int(count), bad, true
}

// takeRoot waits for the root box that rootBox queued (when it is not
// home yet) and returns it.
func (d *devLevel) takeRoot() (aabb, error) {
	if !d.rootOK {
		if d.rootEv == nil {
			return aabb{}, errors.New("kdtree: the root box was never queued")
		}
		if err := d.rootEv.Synchronize(); err != nil {
			return aabb{}, err
		}
		var h [6]float32
		w := d.rootPin.U32(8)
		for i := range h {
			h[i] = math.Float32frombits(w[i])
		}
		d.setRoot(h[:])
		if d.prep != nil {
			d.setKept(w[6], w[7])
		}
	}
	return d.root, nil
}

// setRoot keeps the root box h (lo, then hi), -0 made +0 (canonZero).
func (d *devLevel) setRoot(h []float32) {
	copy(d.root.lo[:], h[:3])
	copy(d.root.hi[:], h[3:])
	canonZero(&d.root)
	d.rootOK = true
}

// levelFrontCUDA queues a level's device work up to its read-back: the
// node table (uploaded from nodes for the first level, else made on the
// device by the previous level's kdtree_tail_f32), the decisions (all
// leaves when forceLeaf), classification with clipping and the copy
// counts, and the addresses: the ranks, the children's bases and the scan
// of the node words (kdtree_addresses_u32). It waits for nothing: the launches are asynchronous on the one stream,
// so buildCUDA queues a level's front before it does the previous level's
// bookkeeping, which then runs while the device works.
func (b *builder) levelFrontCUDA(d *devLevel, nodes []lnode, nn, n int, forceLeaf bool) error {
	keys := d.tableOK && d.keysOK
	d.keysOK, d.keysNext = false, false
	if d.tableOK {
		if err := d.sizeNodes(nn); err != nil {
			return err
		}
	} else {
		if len(nodes) != nn {
			return fmt.Errorf("kdtree: level of %d nodes has no node table", nn)
		}
		if err := d.upload(nodes, n); err != nil {
			return err
		}
		// The first level laid out for a bound: the count from the device.
		if err := d.firstLevelCount(0); err != nil {
			return err
		}
		d.countPending = false
		if d.rootToTable {
			// The root's box is not home yet: the device writes it into
			// the table from d.tight (rootBox).
			if err := d.ctx.Launch("kdtree_root_box_f32", cuda.Linear(1), cuda.Linear(32), 0, d.tight.Ptr(),
				d.nboxP); err != nil {
				return fmt.Errorf("kdtree: kdtree_root_box_f32: %w", err)
			}
			d.rootToTable = false
		}
	}
	d.tableOK = false
	if d.red == nil {
		d.red = reduce.NewReducer(d.ex)
	}
	if forceLeaf {
		dec := make([]uint32, 5*nn) // the decisions, then CountL and CountR (zero)
		for i := 0; i < nn; i++ {
			dec[3*i] = fateLeaf
		}
		if err := d.dec.CopyFromHost(dec); err != nil {
			return err
		}
	} else if err := b.decideCUDA(d, nn, n, keys); err != nil {
		return err
	}
	// Classify and clip, addresses (queued, no read-back).
	for _, e := range []error{ensure(d.ex, &d.flags, n),
		ensure(d.ex, &d.clipL, 6*n), ensure(d.ex, &d.clipR, 6*n)} {
		if e != nil {
			return e
		}
	}
	if d.sc == nil || d.scRefs < n || d.scN < nn {
		d.sc.Free()
		d.scRefs, d.scN = max(n+n/2, 1024), max(nn+nn/2, 256)
		var err error
		if d.sc, err = split.NewScratch(d.ex, d.scRefs, d.scN); err != nil {
			return err
		}
	}
	// Classification also unpacks the flags for the ranks' scan (one
	// launch less a level) and counts each node's copies into CountL and
	// CountR (d.dec after the decisions; cleared by the decisions' kernel).
	u, err := d.sc.Unpacking(n, nn)
	if err != nil {
		return err
	}
	countL, countR := d.dec.Slice(3*nn, nn), d.dec.Slice(4*nn, nn)
	if err := d.launchDep("kdtree_classify_f32", max(n, 1), d.box[0].Ptr(), d.tri[0].Ptr(), d.tv.Ptr(), d.nboxP,
		d.offsets.Ptr(), uint32(nn), uint32(n), d.dec.Ptr(), d.flags.Ptr(), d.clipL.Ptr(), d.clipR.Ptr(),
		d.wstate.Ptr(), uint32(nodeWordsState(nn)), u.Pre, u.SegOff, u.State, u.StateWords, u.TileSeg, u.Tiles,
		u.ScanState, u.ScanStateWords, d.rnode[0].Ptr(), countL.Ptr(), countR.Ptr()); err != nil {
		return err
	}
	// The split's addresses without destinations (kdtree_tail_f32
	// computes each copy's from the ranks, d.sc.Ranks(), as it scatters):
	// the ranks' segmented scan (split.AddressesQueued's), the
	// children's bases from the counts classification made, and the scan
	// of the node words that place the children and the parked references
	// (d.pre, read by kdtree_tail_f32), in one launch. d.dec then holds
	// the decisions (3 words per node), CountL, CountR and ChildBase (nn
	// words each): one read-back brings all of them.
	m := 2 * (n + 1)
	rankBlocks, basesBlocks := int(u.Tiles), scan.MadeStateWords(nn+1)-1
	const k = "kdtree_addresses_u32"
	if err := d.ctx.LaunchDependent(k, cuda.Linear(rankBlocks+basesBlocks+nodeWordsState(nn)-1), cuda.Linear(256), 0,
		u.Pre, u.SegOff, u.TileSeg, uint64(2*nn+3), uint64(m), u.ScanState, uint32(rankBlocks),
		countL.Ptr(), countR.Ptr(), uint32(nn), d.dec.Slice(5*nn, nn).Ptr(), u.State, d.sc.Total().Ptr(),
		uint32(basesBlocks), d.info.Ptr(), d.dec.Ptr(), d.pre.Slice(0, nodeWords(nn)).Ptr(), d.wstate.Ptr()); err != nil {
		return fmt.Errorf("kdtree: %s: %w", k, err)
	}
	return nil
}

// readBack waits for a level's front and brings its decisions and child
// counts (6 words per node) into lb.h.
func (d *devLevel) readBack(lb *levelBook, nn int) error {
	lb.h = growU32(lb.h, 6*nn)
	lb.stride = nn
	return d.dec.Slice(0, 6*nn).CopyToHost(lb.h)
}

// levelTailCUDA queues the rest of level `level`, of nn nodes holding n
// references, once lb.count has read its counts: the buffers grown to what
// the count says the level needs, then queueTail. It waits for nothing; the
// level's bookkeeping (lb.book) is independent of it.
func (b *builder) levelTailCUDA(d *devLevel, nn, n int, lb *levelBook, level int) error {
	total, park := lb.total, lb.park
	if err := ensure(d.ex, &d.tri[1], int(total)); err != nil {
		return err
	}
	if err := ensure(d.ex, &d.rnode[1], int(total)); err != nil {
		return err
	}
	if err := ensure(d.ex, &d.box[1], 6*int(total)); err != nil {
		return err
	}
	if err := d.growParked(park, d.parked); err != nil {
		return err
	}
	if err := b.queueTail(d, nn, n, 2*lb.nsplit, level, 0); err != nil {
		return err
	}
	d.parked = park
	return nil
}

// queueTail queues the rest of level `level` run on nb nodes and nRefs
// references (the level's own counts, or bounds past them: see pad_node in
// kernels/kdtree.cu), whose node words the level's front scanned
// (kdtree_addresses_u32): one kernel (kdtree_tail_f32) for the scatter, the parking, the next level's node
// table laid out for layout nodes (made on the device into d.next, then
// swapped in; none when layout is 0) and the next level's sizes (slot
// level+1 of d.sz), and when log is not 0 the level's log there (see
// kdtree_tail_f32). It waits for nothing.
func (b *builder) queueTail(d *devLevel, nb, nRefs, layout, level int, log cuda.DevPtr) error {
	// Where the children and the parked references go: the scan of the
	// node words, made by the level's front (kdtree_addresses_u32).
	pre := d.pre.Slice(0, nodeWords(nb))
	var table cuda.DevPtr
	if layout > 0 {
		if err := ensure(d.ex, &d.next, tableLen(layout)); err != nil {
			return err
		}
		table = d.next.Ptr()
	}
	refCap := min(d.tri[1].Len(), d.box[1].Len()/6, d.rnode[1].Len())
	if d.refLimit > 0 {
		refCap = min(refCap, d.refLimit)
	}
	parkCap := d.parkCap()
	szIn := d.sz.Slice(szWords*(level%szSlots), szWords).Ptr()
	szOut := d.sz.Slice(szWords*((level+1)%szSlots), szWords).Ptr()
	// The small roots listed on the device (pipelined levels only: see
	// small_early.go).
	var sroot cuda.DevPtr
	rootCap := 0
	if d.inPipe && d.roots != nil {
		sroot, rootCap = d.roots.Ptr(), d.rootCap
	}
	// The next level's tight bounds, made as the references are scattered,
	// when this level's decide readied their keys for all its nodes.
	var tkey cuda.DevPtr
	keys := layout > 0 && d.keysNext && d.tkey[1].Len() >= 6*layout
	if keys {
		tkey = d.tkey[1].Ptr()
	}
	if err := d.launchDep("kdtree_tail_f32", max(nRefs, nb+1, layout+1), d.tri[0].Ptr(), d.box[0].Ptr(), d.flags.Ptr(),
		d.sc.Ranks().Ptr(), d.clipL.Ptr(), d.clipR.Ptr(), uint32(nRefs), d.tri[1].Ptr(), d.box[1].Ptr(),
		d.offsets.Ptr(), pre.Ptr(), uint32(nb), d.dec.Ptr(), d.ptri.Ptr(), d.pbox.Ptr(), uint32(parkCap),
		d.nboxP, d.info.Ptr(), d.dec.Slice(3*nb, 3*nb).Ptr(), d.sc.Total().Ptr(), uint32(refCap),
		uint32(layout), table, szIn, szOut, log, tkey, uint32(layout), d.rnode[0].Ptr(), d.rnode[1].Ptr(),
		sroot, uint32(rootCap)); err != nil {
		return err
	}
	if layout > 0 {
		d.offsets, d.next = d.next, d.offsets
		d.tableOK = true
		d.layout = layout
	}
	if keys {
		d.tkey[0], d.tkey[1] = d.tkey[1], d.tkey[0]
		d.keysOK = true
	}
	d.keysNext = false
	d.tri[0], d.tri[1] = d.tri[1], d.tri[0]
	d.rnode[0], d.rnode[1] = d.rnode[1], d.rnode[0]
	d.box[0], d.box[1] = d.box[1], d.box[0]
	return nil
}

// levelBook is the host's side of a CUDA level: the read-back (h:
// decisions, 3 words a node, then CountL, CountR and ChildBase, nn words
// each), what count finds in it, the next level's node reference counts
// and the chunks of nodes over which count and book run in parallel. Two
// of them alternate (see booker): count fills one while book reads the
// other.
type levelBook struct {
	h      []uint32
	stride int // the nodes h is laid out for (a bound past the level's, see parts); 0: the level's

	// Pipelined (largeCUDAPipe): h lives in pin, copied there before ev;
	// want is what the device computed for the next level (nodes,
	// references, references parked), which count must find too.
	pin    *cuda.Pinned
	ev     *cuda.Event
	want   [3]int
	refs   atomic.Int32 // the booker's users of it (runPipe)
	skip   bool         // not to be booked (an earlier level failed)
	chunks []bookChunk
	next   []uint32 // the next level's node reference counts, in node order

	nsplit, npark int    // nodes that split, nodes parked (leaves and small roots)
	nsmall        int    // nodes parked as small roots
	park          int    // references parked once the level is done
	total         uint32 // references of the next level
}

// parts returns the level's decisions (3 words a node), CountL, CountR and
// ChildBase from h, a level of nn nodes laid out for lb.stride nodes (d.dec's
// layout when the level ran on a bound of lb.stride nodes).
func (lb *levelBook) parts(nn int) (dec, cl, cr, cb []uint32) {
	st := lb.stride
	if st == 0 {
		st = nn
	}
	h := lb.h
	return h[:3*nn], h[3*st : 3*st+nn], h[4*st : 4*st+nn], h[5*st : 5*st+nn]
}

// bookChunk is one chunk of bookGrain nodes: count's counts, then their
// exclusive prefix (the chunk's first split rank, parked rank and parking
// offset).
type bookChunk struct {
	split, npark, nsmall int
	refs                 uint64
	err                  error
}

// bookGrain is the number of nodes of a bookChunk.
const bookGrain = 4096

// count checks a level's read-back for its nodes, whose reference counts
// are cnt (the children laid out node after node: ChildBase is the running
// sum of the counts; every fate a split, a leaf or a small root), counts
// what the device work after it needs: splits, parked nodes and references
// (parked0 parked before), the next level's references; and lists the next
// level's node reference counts in lb.next (CountL and CountR of each
// split, in node order), so that the next level is counted without its
// nodes: book makes those later, on another goroutine.
func (lb *levelBook) count(workers int, cnt []uint32, parked0 int) error {
	nn := len(cnt)
	dec, cl, cr, cb := lb.parts(nn)
	nch := (nn + bookGrain - 1) / bookGrain
	if cap(lb.chunks) < nch {
		lb.chunks = make([]bookChunk, nch, nch+nch/4)
	}
	lb.chunks = lb.chunks[:nch]
	exec.ParallelFor(workers, nch, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			var k bookChunk
			for i := c * bookGrain; i < min((c+1)*bookGrain, nn); i++ {
				want := uint64(0)
				if i > 0 {
					want = uint64(cb[i-1]) + uint64(cl[i-1]) + uint64(cr[i-1])
				}
				if uint64(cb[i]) != want {
					k.err = fmt.Errorf("kdtree: level node %d: child base %d, want %d", i, cb[i], want)
					break
				}
				f := dec[3*i]
				if f == fateSplit {
					k.split++
				} else if f == fateLeaf || f == fateSmall {
					k.npark++
					k.refs += uint64(cnt[i])
					if f == fateSmall {
						k.nsmall++
					}
				} else {
					k.err = fmt.Errorf("kdtree: node %d of level has fate %d after the SAH", i, f)
					break
				}
			}
			lb.chunks[c] = k
		}
	})
	split, npark, nsmall, refs := 0, 0, 0, uint64(parked0)
	for c := range lb.chunks {
		k := &lb.chunks[c]
		if k.err != nil {
			return k.err
		}
		k.split, k.npark, k.refs, split, npark, refs = split, npark, refs, split+k.split, npark+k.npark, refs+k.refs
		k.nsmall, nsmall = nsmall, nsmall+k.nsmall
	}
	sum := uint64(cb[nn-1]) + uint64(cl[nn-1]) + uint64(cr[nn-1])
	if sum > math.MaxUint32 || refs > math.MaxUint32 {
		return fmt.Errorf("kdtree: %d references in a level (%d parked) overflow uint32", sum, refs)
	}
	lb.nsplit, lb.npark, lb.nsmall, lb.park, lb.total = split, npark, nsmall, int(refs), uint32(sum)
	lb.next = growU32(lb.next, 2*split)
	exec.ParallelFor(workers, nch, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			s := lb.chunks[c].split
			for i := c * bookGrain; i < min((c+1)*bookGrain, nn); i++ {
				if dec[3*i] == fateSplit {
					lb.next[2*s], lb.next[2*s+1] = cl[i], cr[i]
					s++
				}
			}
		}
	})
	return nil
}

// book keeps the host's records of a level counted by count, by the rules
// of levelGo: a split node's record becomes interior with its children's
// records appended in node order (what records.setInterior does node
// after node: the children of the s-th split are records base+2s and
// base+2s+1), its children become the next level's nodes (returned, in
// lb.spare's memory), and a leaf or small root gets a parked range, its
// references parked after those of the nodes before it, and its record: a
// leaf of parked references, or a small root (the next of rs.small, with
// rs.smallOff, smallCnt, smallDepth and smallBox).
// Each chunk writes at the indices count's prefix gives it, so the chunks
// run in parallel and the result is the sequential one. The next level's
// nodes are made in spare's memory when it is large enough.
func (lb *levelBook) book(workers int, nodes []lnode, rs *records, parked []parkedRange, spare []lnode) ([]lnode, []parkedRange) {
	nn := len(nodes)
	dec, cl, cr, cb := lb.parts(nn)
	out := spare
	if cap(out) < 2*lb.nsplit {
		out = make([]lnode, 2*lb.nsplit, 2*lb.nsplit+lb.nsplit/2)
	}
	out = out[:2*lb.nsplit]
	recBase := len(rs.recs)
	rs.recs = slices.Grow(rs.recs, 2*lb.nsplit)[:recBase+2*lb.nsplit]
	clear(rs.recs[recBase:])
	pBase := len(parked)
	parked = slices.Grow(parked, lb.npark)[:pBase+lb.npark]
	sBase := len(rs.small)
	rs.small = slices.Grow(rs.small, lb.nsmall)[:sBase+lb.nsmall]
	rs.smallOff = slices.Grow(rs.smallOff, lb.nsmall)[:sBase+lb.nsmall]
	rs.smallCnt = slices.Grow(rs.smallCnt, lb.nsmall)[:sBase+lb.nsmall]
	rs.smallDepth = slices.Grow(rs.smallDepth, lb.nsmall)[:sBase+lb.nsmall]
	rs.smallBox = slices.Grow(rs.smallBox, 6*lb.nsmall)[:6*(sBase+lb.nsmall)]
	recs, small, smallOff, smallCnt, smallDepth, smallBox := rs.recs, rs.small, rs.smallOff, rs.smallCnt, rs.smallDepth, rs.smallBox
	exec.ParallelFor(workers, len(lb.chunks), 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			k := &lb.chunks[c]
			s, p, q, off := k.split, pBase+k.npark, sBase+k.nsmall, uint32(k.refs)
			for i := c * bookGrain; i < min((c+1)*bookGrain, nn); i++ {
				x := &nodes[i]
				if fate := dec[3*i]; fate != fateSplit {
					parked[p] = parkedRange{rec: x.rec, off: off, cnt: x.cnt, small: fate == fateSmall,
						box: x.box, depth: x.depth}
					if fate == fateSmall {
						recs[x.rec] = record{fate: fateSmall, small: int32(q)}
						small[q] = smallRoot{box: x.box, depth: x.depth}
						smallOff[q], smallCnt[q], smallDepth[q] = off, x.cnt, uint32(x.depth)
						copy(smallBox[6*q:6*q+3], x.box.lo[:])
						copy(smallBox[6*q+3:6*q+6], x.box.hi[:])
						q++
					} else {
						recs[x.rec] = record{fate: fateLeaf, parked: true, park: off, pcnt: x.cnt}
					}
					p++
					off += x.cnt
					continue
				}
				axis, pos := int(dec[3*i+1]), math.Float32frombits(dec[3*i+2])
				left := int32(recBase + 2*s)
				recs[x.rec] = record{fate: fateSplit, axis: uint8(axis), pos: pos, left: left}
				lbox, rbox := childBoxes(x.box, axis, pos)
				c0, c1, base := cl[i], cr[i], cb[i]
				out[2*s] = lnode{box: lbox, off: base, cnt: c0, depth: x.depth + 1, rec: left}
				out[2*s+1] = lnode{box: rbox, off: base + c0, cnt: c1, depth: x.depth + 1, rec: left + 1}
				s++
			}
		}
	})
	for _, c := range smallCnt[sBase:] {
		if int(c) >= len(rs.smallHist) {
			rs.smallHist = append(rs.smallHist, make([]int, int(c)+1-len(rs.smallHist))...)
		}
		rs.smallHist[c]++
	}
	return out, parked
}

// levelDecisions returns a level's decisions from lb.h as levelGo makes
// them (the onLevel hook of tests).
func (lb *levelBook) levelDecisions(nn int) []decision {
	dec := lb.h[:3*nn]
	dd := make([]decision, nn)
	for i := range dd {
		dd[i] = decision{fate: int(dec[3*i]), axis: int(dec[3*i+1]), pos: math.Float32frombits(dec[3*i+2])}
		if dd[i].fate != fateSplit {
			dd[i].axis, dd[i].pos = 0, 0
		}
	}
	return dd
}

// decideCUDA queues the decisions of a level's nn nodes holding n
// references (builder.decide) into d.dec: the nodes' tight bounds (keys:
// made by the level before's kdtree_tail_f32 in d.tkey[0], else by
// reduce's segmented box reduction), empty space, then for the nodes still pending the binned SAH
// over histograms. With cudaFusedChoose, one launch (kdtree_choose_f32);
// else three: kdtree_decide_f32, the histograms (kdtree_bin_u32,
// shared-memory tiles) and the binned SAH (kdtree_sah_f32, a warp per
// node). It readies d.tkey[1] for the next level's tight bounds (nodes up
// to 2·nn, or the most it holds in the pipelined phase, whose levels are
// laid out for at most nodeCap nodes).
func (b *builder) decideCUDA(d *devLevel, nn, n int, keys bool) error {
	o := &b.opt
	p := newSAH(o)
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
	if cudaFusedChoose && n <= fusedChooseMaxRefs {
		const k = "kdtree_choose_f32"
		if err := d.ctx.LaunchDependent(k, cuda.GridFor(max(n, 1), binTile), cuda.Linear(cudaBlock), shared,
			d.nboxP, d.info.Ptr(), d.offsets.Ptr(), uint32(nn), uint32(n), d.tight.Ptr(), tkey,
			int32(o.SmallNode), int32(o.MaxDepth), int32(nb), d.dec.Ptr(), d.tkey[1].Ptr(), uint32(nextCap),
			d.box[0].Ptr(), d.hist.Ptr(), d.hist.Slice(6*nb*nn, nn).Ptr(), p.ct, p.ci, p.keep, d.rnode[0].Ptr()); err != nil {
			return fmt.Errorf("kdtree: %s: %w", k, err)
		}
		return nil
	}
	if err := d.launchDep("kdtree_decide_f32", nn, d.nboxP, d.info.Ptr(), uint32(nn), d.tight.Ptr(), tkey,
		int32(o.SmallNode), int32(o.MaxDepth), int32(nb), d.dec.Ptr(), d.geo.Ptr(), d.tkey[1].Ptr(),
		uint32(nextCap)); err != nil {
		return err
	}
	const k1, k2 = "kdtree_bin_u32", "kdtree_sah_f32"
	if err := d.ctx.LaunchDependent(k1, cuda.GridFor(n, binTile), cuda.Linear(cudaBlock), shared,
		d.box[0].Ptr(), d.offsets.Ptr(), uint32(nn), uint32(n), d.dec.Ptr(), d.geo.Ptr(), int32(nb), d.hist.Ptr(),
		d.rnode[0].Ptr()); err != nil {
		return fmt.Errorf("kdtree: %s: %w", k1, err)
	}
	if err := d.launchDep(k2, 32*nn, d.nboxP, d.info.Ptr(), uint32(nn), d.geo.Ptr(), d.hist.Ptr(),
		int32(nb), p.ct, p.ci, p.keep, d.dec.Ptr()); err != nil {
		return err
	}
	return nil
}

// cudaFusedChoose selects kdtree_choose_f32 (decisions, histograms and
// binned SAH in one launch) over the three launches it fuses for levels of
// at most fusedChooseMaxRefs references; KDBUILD_FUSED_CHOOSE=0 turns it
// off (to compare the two on a device).
var cudaFusedChoose = os.Getenv("KDBUILD_FUSED_CHOOSE") != "0"

// fusedChooseMaxRefs is the largest level (in references, or the bound a
// pipelined level runs on) that kdtree_choose_f32 decides: it saves two
// launches, which matter where a level takes a few microseconds, but runs
// 3 blocks an SM where kdtree_bin_u32 runs 8, which matters where the
// binning fills the device several times over (H200, the 8.9M-triangle
// grid's large phase on the device: 35 ms fused against 29 with the three
// launches). 2^19 references are about two waves of its blocks on an
// H200. KDBUILD_FUSED_CHOOSE_MAX_REFS sets it.
var fusedChooseMaxRefs = envInt("KDBUILD_FUSED_CHOOSE_MAX_REFS", 1<<19)

// histLen is the length of d.hist for levels of up to nodes nodes: the
// histograms (6·bins words a node), then kdtree_choose_f32's arrival
// counts (a word a node).
func histLen(bins, nodes int) int { return (6*bins + 1) * nodes }

// binTile is kd_tree::kBinTile: the references one block of
// kdtree_bin_u32 counts.
const binTile = 512

// checkTable compares the node table made on the device with the host's
// nodes (tests only: one more read-back per level).
func (d *devLevel) checkTable(nodes []lnode, n int) error {
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
		var box aabb
		for a := 0; a < 3; a++ {
			box.lo[a] = math.Float32frombits(t[5*nn+1+6*i+a])
			box.hi[a] = math.Float32frombits(t[5*nn+1+6*i+3+a])
		}
		if t[i] != x.off || info[0] != x.off || info[1] != x.cnt || info[2] != uint32(x.depth) || box != x.box {
			return fmt.Errorf("kdtree: device node table, node %d: offset %d, info %v, box %v; host %+v",
				i, t[i], info, box, *x)
		}
	}
	return nil
}

// bufPtr is b's device address, 0 for a nil buffer.
func bufPtr[T cuda.Elem](b *exec.Buf[T]) cuda.DevPtr {
	if b == nil {
		return 0
	}
	return b.Ptr()
}

// b2u is 1 for true, 0 for false (a kernel's flag argument).
func b2u(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}
