package gpubuild

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/launch"
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
func (b *gpuBuild) largeCUDA(d *devLevel, nodes []refbuild.LNode, n int, rs *refbuild.Records) ([]parkedRange, error) {
	// (roomFunc: room for the records the large phase usually makes.)
	t0 := time.Now()
	// The host's records use the host's cores (the CUDA executor's
	// Workers is 1: its work is the device's).
	workers := b.HostWorkers()
	// The tests' level hooks look at every level's nodes: book inline.
	bk := newBooker(workers, nodes, rs, b.roomFunc(rs, n), b.OnLevel != nil)
	defer bk.finish()
	cnt := []uint32{uint32(n)}       // the level's node reference counts
	bud := []uint32{nodes[0].Budget} // and their budgets
	capRefs := max(64*n, 1<<20)
	if err := b.Ctx.Err(); err != nil {
		return nil, err
	}
	b.LevelProgress(0, len(nodes))
	t0 = b.subPhase("large.alloc", t0)
	if err := b.levelFrontCUDA(d, nodes, len(nodes), n, false); err != nil {
		return nil, err
	}
	b.Levels++
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
			var err error
			if nodes[0].Box, err = d.takeRoot(); err != nil {
				return nil, err
			}
		}
		t0 = b.subPhase("large.device", t0)
		if err := b.levelHook(d, bk, lb, level, nn, n, forceLeaf); err != nil {
			return nil, err
		}
		if err := lb.count(workers, cnt, d.parked); err != nil {
			return nil, err
		}
		b.AddBudgetLeaves(lb.budgets(cnt, bud, func(c, a uint32) bool {
			return !forceLeaf && b.OverBudget(c, a, level)
		}))
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
			b.Limited = refbuild.MemoryGuardText(n, capRefs)
		}
		if err := b.nextLevel(d, level+1, nn2, n, forceLeaf); err != nil {
			return nil, err
		}
		// The level's launches to the driver now (they are queued on the
		// host: cuda.Context.Launch), so the device works while the
		// records are kept.
		if err := d.ctx.Flush(); err != nil {
			return nil, err
		}
		cnt, bud = lb.next, lb.nextB
		bk.give(lb)
		t0 = b.subPhase("large.host", t0)
		if nn2 == 0 {
			parked := bk.finish()
			b.subPhase("large.book", t0)
			return parked, nil
		}
	}
}

// levelHook shows the tests' level hook (onLevel) level's nodes and
// decisions (nn nodes; n references), after checking the node table the
// device made against the host's.
func (b *gpuBuild) levelHook(d *devLevel, bk *booker, lb *levelBook, level, nn, n int, forceLeaf bool) error {
	if b.OnLevel == nil {
		return nil
	}
	nodes := bk.current()
	if level > 0 {
		if err := d.checkTable(nodes, n); err != nil {
			return err
		}
	}
	if !forceLeaf {
		b.OnLevel(nodes, lb.levelDecisions(nn))
	}
	return nil
}

// nextLevel queues the front of level (nn nodes, n references; nothing
// when nn is 0), all of its nodes leaves when forceLeaf.
func (b *gpuBuild) nextLevel(d *devLevel, level, nn, n int, forceLeaf bool) error {
	if nn == 0 {
		return nil
	}
	if err := b.Ctx.Err(); err != nil {
		return err
	}
	if !forceLeaf {
		b.LevelProgress(level, nn)
	}
	if err := b.levelFrontCUDA(d, nil, nn, n, forceLeaf); err != nil {
		return err
	}
	if !forceLeaf {
		b.Levels++
	}
	return nil
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
func (b *gpuBuild) subPhase(name string, t0 time.Time) time.Time {
	now := time.Now()
	b.Phases[name] += float64(now.Sub(t0).Nanoseconds()) / 1e6
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
// info (off, cnt, depth, budget per node) and boxes (6 float words per node);
// d.offsets holds it, d.info and d.nboxP point into it.
func (d *devLevel) upload(nodes []refbuild.LNode, n int) error {
	nn := len(nodes)
	t, pin := d.hostWords(tableLen(nn))
	offsets, info, nbox := t[:nn+1], t[nn+1:5*nn+1], t[5*nn+1:]
	for i := range nodes {
		x := &nodes[i]
		offsets[i] = x.Off
		info[4*i], info[4*i+1], info[4*i+2], info[4*i+3] = x.Off, x.Cnt, uint32(x.Depth), x.Budget
		for a := 0; a < 3; a++ {
			nbox[6*i+a] = math.Float32bits(x.Box.Lo[a])
			nbox[6*i+3+a] = math.Float32bits(x.Box.Hi[a])
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
	if d.start != nil {
		// A part's root box is its node's box, not its content's bounds.
		b := d.start.Box
		d.setRoot([]float32{b.Lo[0], b.Lo[1], b.Lo[2], b.Hi[0], b.Hi[1], b.Hi[2]})
		return nil
	}
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
func (d *devLevel) takeRoot() (refbuild.AABB, error) {
	if !d.rootOK {
		if d.rootEv == nil {
			return refbuild.AABB{}, errors.New("kdtree: the root box was never queued")
		}
		if err := d.rootEv.Synchronize(); err != nil {
			return refbuild.AABB{}, err
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
	copy(d.root.Lo[:], h[:3])
	copy(d.root.Hi[:], h[3:])
	refbuild.CanonZero(&d.root)
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
func (b *gpuBuild) levelFrontCUDA(d *devLevel, nodes []refbuild.LNode, nn, n int, forceLeaf bool) error {
	keys := d.tableOK && d.keysOK
	d.keysOK, d.keysNext = false, false
	if err := d.levelTable(nodes, nn, n); err != nil {
		return err
	}
	d.tableOK = false
	if d.red == nil {
		d.red = reduce.NewReducer(d.ex)
	}
	if forceLeaf {
		dec := make([]uint32, 5*nn) // the decisions, then CountL and CountR (zero)
		for i := 0; i < nn; i++ {
			dec[3*i] = refbuild.FateLeaf
		}
		if err := d.dec.CopyFromHost(dec); err != nil {
			return err
		}
	} else if err := b.decideCUDA(d, nn, n, keys); err != nil {
		return err
	}
	return d.classifyCUDA(nn, n)
}

// levelTable readies the level's node table: sized for nn nodes when the
// level before made it on the device, else uploaded from nodes (the first
// level, or a level again after a fallback) with the first level's count
// and the root's box from the device.
func (d *devLevel) levelTable(nodes []refbuild.LNode, nn, n int) error {
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
			if err := launch.KdtreeRootBoxF32.Launch(d.ctx, cuda.Linear(1), cuda.Linear(32), 0, launch.KdtreeRootBoxF32Args{
				Tight: d.tight.Ptr(), Nbox: d.nboxP}); err != nil {
				return fmt.Errorf("kdtree: kdtree_root_box_f32: %w", err)
			}
			d.rootToTable = false
		}
	}
	return nil
}

// classifyCUDA queues a decided level's classification and clipping and
// its children's addresses (no read-back).
func (d *devLevel) classifyCUDA(nn, n int) error {
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
	if err := launchDepN(d, launch.KdtreeClassifyF32, max(n, 1), launch.KdtreeClassifyF32Args{
		Box: d.box[0].Ptr(), Tri: d.tri[0].Ptr(), Tv: d.tv.Ptr(), Nbox: d.nboxP, Offsets: d.offsets.Ptr(),
		Nodes: uint32(nn), N: uint32(n), Dec: d.dec.Ptr(), Flags: d.flags.Ptr(), ClipL: d.clipL.Ptr(),
		ClipR: d.clipR.Ptr(), State: d.wstate.Ptr(), StateWords: uint32(nodeWordsState(nn)), Pre: u.Pre,
		SegOff: u.SegOff, Bstate: u.State, BstateWords: u.StateWords, TileSeg: u.TileSeg, Tiles: u.Tiles,
		Sstate: u.ScanState, SstateWords: u.ScanStateWords, Rnode: d.rnode[0].Ptr(), CountL: countL.Ptr(),
		CountR: countR.Ptr()}); err != nil {
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
	if err := launch.KdtreeAddressesU32.LaunchDependent(d.ctx, cuda.Linear(rankBlocks+basesBlocks+nodeWordsState(nn)-1), cuda.Linear(256), 0, launch.KdtreeAddressesU32Args{
		Pre: u.Pre, SegOff: u.SegOff, TileSeg: u.TileSeg, SegEntries: uint64(2*nn + 3), M: uint64(m),
		Sstate: u.ScanState, RankBlocks: uint32(rankBlocks), CountL: countL.Ptr(), CountR: countR.Ptr(),
		Nodes: uint32(nn), Base: d.dec.Slice(5*nn, nn).Ptr(), Bstate: u.State, Total: d.sc.Total().Ptr(),
		BasesBlocks: uint32(basesBlocks), Info: d.info.Ptr(), Dec: d.dec.Ptr(),
		Npre: d.pre.Slice(0, nodeWords(nn)).Ptr(), Wstate: d.wstate.Ptr()}); err != nil {
		return fmt.Errorf("kdtree: kdtree_addresses_u32: %w", err)
	}
	return nil
}

// readBack waits for a level's front and brings its decisions and child
// counts (6 words per node) into lb.h.
func (d *devLevel) readBack(lb *levelBook, nn int) error {
	lb.h = refbuild.GrowU32(lb.h, 6*nn)
	lb.stride = nn
	return d.dec.Slice(0, 6*nn).CopyToHost(lb.h)
}

// levelTailCUDA queues the rest of level `level`, of nn nodes holding n
// references, once lb.count has read its counts: the buffers grown to what
// the count says the level needs, then queueTail. It waits for nothing; the
// level's bookkeeping (lb.book) is independent of it.
func (b *gpuBuild) levelTailCUDA(d *devLevel, nn, n int, lb *levelBook, level int) error {
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
func (b *gpuBuild) queueTail(d *devLevel, nb, nRefs, layout, level int, log cuda.DevPtr) error {
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
	if err := launchDepN(d, launch.KdtreeTailF32, max(nRefs, nb+1, layout+1), launch.KdtreeTailF32Args{
		Tri: d.tri[0].Ptr(), Box: d.box[0].Ptr(), Flags: d.flags.Ptr(), Ranks: d.sc.Ranks().Ptr(),
		ClipL: d.clipL.Ptr(), ClipR: d.clipR.Ptr(), N: uint32(nRefs), Ntri: d.tri[1].Ptr(),
		NboxOut: d.box[1].Ptr(), Offsets: d.offsets.Ptr(), Pre: pre.Ptr(), Nodes: uint32(nb),
		Dec: d.dec.Ptr(), Ptri: d.ptri.Ptr(), Pbox: d.pbox.Ptr(), ParkCap: uint32(parkCap), Nbox: d.nboxP,
		Info: d.info.Ptr(), Cnt: d.dec.Slice(3*nb, 3*nb).Ptr(), Total: d.sc.Total().Ptr(),
		RefCap: uint32(refCap), Layout: uint32(layout), Table: table, SzIn: szIn, SzOut: szOut, Log: log,
		Tkey: tkey, KeyCap: uint32(layout), Rnode: d.rnode[0].Ptr(), Nrnode: d.rnode[1].Ptr(), Sroot: sroot,
		RootCap: uint32(rootCap)}); err != nil {
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
