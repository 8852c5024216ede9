package gpubuild

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/consts"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/split"
)

// cudaBlock is the threads per block of the level kernels.
const cudaBlock = 256

// devLevel holds the device buffers and state of a CUDA build, by phase
// in the structs it embeds; the buffers grow (never shrink) and are freed
// by free.
type devLevel struct {
	ex     exec.Executor
	ctx    *cuda.Context
	cfg    *Config
	maxDup int // Options.MaxDuplication: the root's budget (refbuild.RootBudget)

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
	sc           *split.Scratch
	scRefs, scN  int
	nbox, geo    *exec.Buf[float32]
	dec          *exec.Buf[uint32]
	hist         *exec.Buf[uint32]
	ptri         *exec.Buf[uint32]
	pbox         *exec.Buf[float32]
	parked       int                // references parked so far
	arenaU       *exec.Buf[uint32]  // the views reserve made live here
	arenaF       *exec.Buf[float32] // (freed only by free)

	devRoot
	devLevels
	devPipe
	devEarly
	devPrep
	devTop
}

// devRoot is the root box's part of devLevel.
type devRoot struct {
	// rootTight is d.tight's address when it holds the root's tight bounds
	// (rootBox), for the first level's decisions; 0 once they are used.
	rootTight cuda.DevPtr
	// The root box on its way to the host (rootBox): copied into rootPin
	// before rootEv; root once takeRoot has it (rootOK). rootToTable: the
	// first level's table still needs it (levelFrontCUDA writes it there
	// on the device).
	rootPin     *cuda.Pinned
	rootEv      *cuda.Event
	root        refbuild.AABB
	rootOK      bool
	rootToTable bool
	// start, when set, is a part's start (refbuild.Start): the first
	// level's boxes and the root box come from it.
	start *refbuild.Start
}

// devLevels is the large phase's part of devLevel.
type devLevels struct {
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
}

// devPipe is the pipelined large phase's part of devLevel.
type devPipe struct {
	// The pipelined large phase's: the last level's log (kdtree_tail_f32,
	// szWords + 6·nodeCap words), and what it borrowed, pinned host memory and
	// events (given back by free, after the device is done with them).
	log    *exec.Buf[uint32]
	pins   []*cuda.Pinned
	events []*cuda.Event
}

// devEarly is the early small phase's part of devLevel (small_early.go).
type devEarly struct {
	// The small roots the pipelined levels list on the device (room for
	// rootCap) and the small phase startSmallEarly launched from them,
	// which runSmallCUDA finishes (see small_early.go); levelFreed: the
	// level buffers are freed (freeLevel).
	roots      *exec.Buf[uint32]
	rootCap    int
	early      *smallRun
	levelFreed bool
}

// devPrep is a queued prepareCUDA's part of devLevel.
type devPrep struct {
	// A queued prepareCUDA's count of kept triangles and error word on
	// the device (prep), the first level's table still to be completed
	// from them (countPending), and their values once takeRoot brought
	// them home (keptKnown).
	prep         *exec.Buf[uint32]
	countPending bool
	keptKnown    bool
	keptN        int
	keptBad      uint32
}

// devTop is the device layout's part of devLevel (top_cuda.go).
type devTop struct {
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

// szWords is the number of words of a level's sizes (consts.SizeWords): nodes, references, references parked before the
// level, overflow, small roots before the level (kdtree_tail_f32 lists
// them on the device: see small_early.go), nodes of the levels before it
// (it lists them too: see top_cuda.go).
const szWords = int(consts.SizeWords)

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
	park := d.cfg.ParkReserve * n
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

// launchN launches k over n threads in blocks of cudaBlock.
func launchN[A launch.Args](d *devLevel, k launch.Kernel[A], n int, a A) error {
	if err := k.Launch(d.ctx, cuda.GridFor(n, cudaBlock), cuda.Linear(cudaBlock), 0, a); err != nil {
		return fmt.Errorf("kdtree: %s: %w", k.Name(), err)
	}
	return nil
}

// launchDepN is launchN as a dependent launch (cuda.Context.LaunchDependent):
// for the level's kernels, which start with kd_pdl_enter
// (kernels/scan.cuh), so that each may be scheduled before the kernel
// before it ends (a level is seven kernels of a few microseconds each,
// with about 2 µs between two on an H200). After anything but a kernel
// (the decisions after a copy and an event) the dependency is an ordinary
// one.
func launchDepN[A launch.Args](d *devLevel, k launch.Kernel[A], n int, a A) error {
	if err := k.LaunchDependent(d.ctx, cuda.GridFor(n, cudaBlock), cuda.Linear(cudaBlock), 0, a); err != nil {
		return fmt.Errorf("kdtree: %s: %w", k.Name(), err)
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
	if d.start != nil {
		if err := d.box[0].CopyFromHost(refbuild.BoxFloats(d.start.Boxes)); err != nil {
			return err
		}
	} else if err := launchN(d, launch.KdtreeBoxesF32, n, launch.KdtreeBoxesF32Args{
		Tv: d.tv.Ptr(), Kept: d.kept.Ptr(), N: uint32(n), Box: d.box[0].Ptr(), Count: count}); err != nil {
		return err
	}
	if err := d.upload([]refbuild.LNode{{Off: 0, Cnt: uint32(n), Budget: refbuild.RootBudget(n, d.maxDup)}}, n); err != nil {
		return err
	}
	if err := d.setSizes(0, 1, n); err != nil {
		return err
	}
	return d.firstLevelCount(d.sz.Slice(0, szWords).Ptr())
}

// firstLevelCount, when prepareCUDA left the count of kept triangles on
// the device, writes it and the root's budget into the first level's
// table (just uploaded for a bound) and, when sz is not 0, its sizes
// (kdtree_first_level_u32).
func (d *devLevel) firstLevelCount(sz cuda.DevPtr) error {
	if !d.countPending {
		return nil
	}
	if err := launch.KdtreeFirstLevelU32.Launch(d.ctx, cuda.Linear(1), cuda.Linear(32), 0, launch.KdtreeFirstLevelU32Args{
		Count: d.prep.Ptr(), Table: d.offsets.Ptr(), Layout: uint32(d.layout), MaxDup: int32(max(d.maxDup, -1)), Sz: sz}); err != nil {
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
	rec      int32
	off, cnt uint32
	small    bool
	box      refbuild.AABB
	depth    int
}
