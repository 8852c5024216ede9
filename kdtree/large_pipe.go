package kdtree

import (
	"fmt"
	"time"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/reduce"
)

// The pipelined CUDA large phase. largeCUDA waits for every level's
// read-back before it queues the next level, because the next level's
// launches need its sizes; the device then idles while the host counts and
// queues (about half of each of the bunny's levels). Here the host never
// waits for the level it has just queued: the next level runs on bounds
// (twice the nodes and references of the level before, which the host
// knows by then), the padding past the real sizes is empty (pad_node in
// kernels/kdtree.cu: empty nodes, references no kernel counts), the
// kernels read the real sizes from the device, and each level's sizes and
// decisions reach the host by an asynchronous copy that the booker waits
// for on its own goroutine. The records are the same as largeCUDA's (the
// booker counts each level with the same code and checks its counts
// against the sizes the device computed).
//
// A level that would outgrow the buffers reserve made (more references or
// parked references than they hold) is not written: its sizes say
// overflow, and buildCUDA builds again with largeCUDA, which grows them.
// Scenes of gpuConfig.pipeMaxTris triangles or more, the tests' level
// hooks and KDBUILD_GPU_OFF=pipeline build with largeCUDA from the start.

// largeCUDAPipe runs the levels of the CUDA large phase from nodes (the
// root, n references, its table and sizes made by startLevels) without a
// wait per level and returns the parked ranges, or overflow = true when a
// level did not fit or there is no pinned host memory for the logs (the
// caller then builds with largeCUDA; see restart).
//
// Each level's tail writes a log (kdtree_tail_f32: the next level's sizes,
// then the level's decisions and child counts), copied to the host in one
// asynchronous copy into the level's levelBook; the host waits for level
// k-1's copy (its sizes) while the device runs level k, and the booker
// waits for it on its own goroutine.
func (b *gpuBuild) largeCUDAPipe(d *devLevel, nodes []lnode, n int, rs *records) (parked []parkedRange, overflow bool, err error) {
	ctx := d.ctx
	refCap, nodeCap := d.scRefs, d.nodeCap
	if c := b.cfg.pipeRefCap; c > 0 {
		refCap = min(refCap, c)
		d.refLimit = refCap
	}
	if err := d.ensurePipe(refCap, nodeCap, b.opt.Bins); err != nil {
		return nil, false, err
	}
	if err := d.ensureRoots(n); err != nil {
		return nil, false, err
	}
	d.inPipe = true
	defer func() { d.inPipe = false }()
	if d.red == nil {
		d.red = reduce.NewReducer(d.ex)
	}
	if err := d.red.ReserveBoxesAoS(refCap); err != nil {
		return nil, false, err
	}
	t0 := time.Now()
	bk := newPipeBooker(b.hostWorkers(), nodes, rs, b.roomFunc(rs, n))
	// When the device lays the tree out, the host's records are not
	// needed: the booker only counts and checks each level.
	bk.count = d.deviceTop
	defer bk.finish()
	d.topLevels = append(d.topLevels[:0], 0, 1) // level 0: the root
	// Pinned memory for the levelBooks' logs (they grow with the levels):
	// without it, the level-synchronous phase, which needs none.
	for _, lb := range bk.all {
		if lb.pin, err = d.pinned(4 * (szWords + 6*min(nodeCap, 256))); err != nil {
			return nil, true, nil
		}
	}

	// A level's front runs on nb nodes and nRefs references (bounds or
	// the level's sizes); tail queues its tail, the next level's table
	// laid out for twice nb nodes, and the copy of its log (at most
	// logNodes nodes) into lb.
	tail := func(k, nb, nRefs, logNodes int, lb *levelBook) error {
		log, direct, err := d.logDest(lb, logNodes)
		if err != nil {
			return err
		}
		if err := b.queueTail(d, nb, nRefs, min(2*nb, nodeCap), k, log); err != nil {
			return err
		}
		if err := d.fetch(lb, logNodes, direct); err != nil {
			return err
		}
		return ctx.Flush()
	}
	// sizes waits for lb's copy and returns the sizes it holds (the next
	// level's: nodes, references, parked before it, overflow), and sets
	// roots to the small roots before it.
	roots := 0
	sizes := func(lb *levelBook) (nn, nr, pk int, over bool, err error) {
		if err := lb.wait(); err != nil {
			return 0, 0, 0, false, err
		}
		h := lb.pin.U32(szWords)
		roots = int(h[4])
		return int(h[0]), int(h[1]), int(h[2]), h[3] != 0, nil
	}
	t0 = b.subPhase("large.alloc", t0)
	b.levelProgress(0, 1)
	last := bk.take() // level k-1's levelBook
	if err := b.levelFrontCUDA(d, nodes, 1, n, false); err != nil {
		return nil, false, err
	}
	if err := tail(0, 1, n, 1, last); err != nil {
		return nil, false, err
	}
	b.levels++
	t0 = b.subPhase("large.upload", t0)
	// Level k-1's real sizes and the references parked before it.
	lastNN, lastN, lastPK := 1, n, 0
	for k := 1; ; k++ {
		if err := b.ctx.Err(); err != nil {
			return nil, false, err
		}
		// Level k's bounds: twice level k-1's nodes and references (what
		// its splits can make), or, after a level of pipeExactRefs
		// references or more (its device time dwarfs the host's queueing,
		// and padding would cost more than waiting), level k's own sizes.
		// (The buffers' capacity as the bounds, the same every level, let
		// every second level queue the same launches, which the launch
		// graphs of kernels/cuda then run without setting a parameter; but
		// the padding cost the device more than that saved the host:
		// bunny 2.71 -> 2.91 ms of kernels, conference 0.5 ms slower.)
		known := lastN >= b.cfg.pipeExactRefs
		nn, nr, pk, over := 0, 0, 0, false
		if known {
			if nn, nr, pk, over, err = sizes(last); err != nil {
				return nil, false, err
			}
		}
		nb, nRefs := min(2*lastNN, d.layout), min(2*lastN, refCap)
		if known {
			nb, nRefs = nn, nr
		}
		if !known || (nn > 0 && !over) {
			if err := b.levelFrontCUDA(d, nil, nb, nRefs, false); err != nil {
				return nil, false, err
			}
		}
		// Room to park what levels k-1 and k may park: at most 2·lastN
		// (a reference of level k-1 parks, or its copies go to level k and
		// park there). When that may not fit, wait for level k's sizes
		// (level k-1 done; the device runs level k's front meanwhile) and
		// grow the buffers to what is parked then plus all of level k's
		// references, those parked kept, before level k's tail.
		if !known && lastPK+2*lastN > d.parkCap() {
			if err := ctx.Flush(); err != nil {
				return nil, false, err
			}
			t0 = b.subPhase("large.host", t0)
			if nn, nr, pk, over, err = sizes(last); err != nil {
				return nil, false, err
			}
			t0 = b.subPhase("large.park", t0) // waiting for the sizes to make room to park
			known = true
		}
		if known && !over && nn > 0 && pk+nr > d.parkCap() {
			if err := d.growParked(pk+nr, pk); err != nil {
				return nil, false, err
			}
		}
		var lb *levelBook
		if !known || (nn > 0 && !over) {
			t0 = b.subPhase("large.host", t0)
			lb = bk.take()
			t0 = b.subPhase("large.booker", t0) // waiting for a levelBook: the booker is behind
			if err := tail(k, nb, nRefs, min(nb, 2*lastNN), lb); err != nil {
				return nil, false, err
			}
		}
		t0 = b.subPhase("large.host", t0)
		// Level k's sizes, which level k-1's tail wrote: the device is
		// busy with level k meanwhile.
		if !known {
			if nn, nr, pk, over, err = sizes(last); err != nil {
				return nil, false, err
			}
		}
		t0 = b.subPhase("large.device", t0)
		// Level k-1's decisions (its log after the sizes) to the booker,
		// the root's box first (rootBox queued it before level 0: home by
		// now).
		if k == 1 {
			if nodes[0].box, err = d.takeRoot(); err != nil {
				return nil, false, err
			}
			if d.prep != nil {
				// The first level ran on a bound: its count comes with
				// the root box (prepareCUDA's queued count).
				kept, err := b.keptCount(d)
				if err != nil {
					return nil, false, err
				}
				nodes[0].cnt = uint32(kept)
			}
		}
		last.h, last.stride = last.pin.U32(szWords + 6*lastNN)[szWords:], lastNN
		last.want = [3]int{nn, nr, pk}
		bk.give(last)
		last = lb
		if !over && nn == 0 && d.deviceTop && !d.topFits(roots) {
			// The device's lists outgrew their room: level by level, with
			// the host's records (buildCUDA), as after an overflow.
			d.topMissed, over = true, true
		}
		if over || nn == 0 {
			if !over {
				// The large phase is done on the device: the small phase
				// is queued now, from the small roots the levels listed,
				// and runs while the booker finishes the host's records.
				d.parked = pk
				if err := b.startSmallEarly(d, roots, pk); err != nil {
					return nil, false, err
				}
			}
			if lb != nil {
				lb.ev.Synchronize() // its copy is done before the booker takes it again
				bk.drop(lb)
			}
			if over {
				bk.finish()
				return nil, true, nil
			}
			break
		}
		b.levels++
		b.levelProgress(k, nn)
		d.topLevels = append(d.topLevels, d.topLevels[len(d.topLevels)-1]+uint32(nn))
		lastNN, lastN, lastPK = nn, nr, pk
	}
	parked = bk.finish()
	b.subPhase("large.book", t0)
	// The booker's own time, overlapped with the levels (not part of
	// large's time but what it must keep up with).
	b.phases["large.count"] += float64(bk.countTime.Nanoseconds()) / 1e6
	b.phases["large.records"] += float64(bk.bookTime.Nanoseconds()) / 1e6
	return parked, false, bk.failed()
}

// parkCap is the number of references the parked buffers hold.
func (d *devLevel) parkCap() int { return min(d.ptri.Len(), d.pbox.Len()/6) }

// growParked makes the parked references' buffers hold at least n, the
// first used kept (copied on the stream, after the work that wrote them).
func (d *devLevel) growParked(n, used int) error {
	if d.parkCap() >= n {
		return nil
	}
	if err := ensureKeep(d.ex, &d.ptri, n, used); err != nil {
		return err
	}
	return ensureKeep(d.ex, &d.pbox, 6*n, 6*used)
}

// ensurePipe makes the level buffers hold levels of refs references and
// nodes nodes (reserve's sizes: nothing is allocated after it), so that
// any level up to those bounds runs without the host growing a buffer.
func (d *devLevel) ensurePipe(refs, nodes, bins int) error {
	for _, e := range []error{ensure(d.ex, &d.flags, refs),
		ensure(d.ex, &d.clipL, 6*refs), ensure(d.ex, &d.clipR, 6*refs), ensure(d.ex, &d.dec, 6*nodes),
		ensure(d.ex, &d.geo, 9*nodes), ensure(d.ex, &d.tight, 6*nodes), ensure(d.ex, &d.pre, nodeWords(nodes)),
		ensure(d.ex, &d.wstate, 2*nodeWordsState(nodes)), ensure(d.ex, &d.next, tableLen(nodes)),
		ensure(d.ex, &d.log, szWords+6*nodes), ensure(d.ex, &d.tkey[0], 6*nodes), ensure(d.ex, &d.tkey[1], 6*nodes)} {
		if e != nil {
			return e
		}
	}
	for i := range 2 {
		if d.tri[i].Len() < refs || d.box[i].Len() < 6*refs || d.rnode[i].Len() < refs {
			return fmt.Errorf("kdtree: level buffers of %d references, want %d",
				min(d.tri[i].Len(), d.box[i].Len()/6, d.rnode[i].Len()), refs)
		}
	}
	if d.offsets.Len() < tableLen(nodes) || d.sc == nil || d.scRefs < refs || d.scN < nodes {
		return fmt.Errorf("kdtree: level buffers for fewer than %d nodes", nodes)
	}
	if d.hist == nil || d.hist.Len() < histLen(bins, nodes) {
		if err := ensure(d.ex, &d.hist, histLen(bins, nodes)); err != nil {
			return err
		}
		d.histZero = false
	}
	return nil
}

// pinned returns pinned host memory of at least bytes, given back to the
// context by free.
func (d *devLevel) pinned(bytes int) (*cuda.Pinned, error) {
	p, err := d.ctx.Pinned(uint64(bytes))
	if err != nil {
		return nil, err
	}
	d.pins = append(d.pins, p)
	return p, nil
}

// event returns an event to wait for (no timing, one the context kept
// from an earlier build when it can: see cuda.Context.SyncEvent), given
// back by free.
func (d *devLevel) event() (*cuda.Event, error) {
	e, err := d.ctx.SyncEvent()
	if err != nil {
		return nil, err
	}
	d.events = append(d.events, e)
	return e, nil
}

// logDest readies lb's pinned memory for the log of a level run on a
// bound of nb nodes (the next level's 4 sizes, then at most nb nodes'
// decisions and child counts, see kdtree_tail_f32) and returns where the
// level's tail writes it: that memory itself (direct) when the driver
// mapped it, else d.log, which fetch copies into it.
func (d *devLevel) logDest(lb *levelBook, nb int) (log cuda.DevPtr, direct bool, err error) {
	words := szWords + 6*nb
	if lb.pin == nil || lb.pin.Bytes() < uint64(4*words) {
		p, err := d.pinned(4 * words)
		if err != nil {
			return 0, false, err
		}
		lb.pin = p
	}
	// The tail writes the log straight into the levelBook's pinned memory
	// (mapped into the device's address space) rather than d.log, copied
	// there by fetch: a copy less a level (2-4 µs of the bunny's stream
	// each).
	if dev := lb.pin.Dev(); dev != 0 && d.cfg.on(pathMappedLog) {
		return dev, true, nil
	}
	return d.log.Ptr(), false, nil
}

// fetch queues, after the last queued level's tail (run on a bound of nb
// nodes; logDest readied lb), the copy of its log from d.log into lb's
// pinned memory unless the tail wrote it there (direct), and records lb's
// event after it.
func (d *devLevel) fetch(lb *levelBook, nb int, direct bool) error {
	if lb.ev == nil {
		e, err := d.event()
		if err != nil {
			return err
		}
		lb.ev = e
	}
	if !direct {
		if err := d.ctx.CopyToHostAsync(lb.pin, 0, d.log.Ptr(), uint64(4*(szWords+6*nb))); err != nil {
			return err
		}
	}
	return lb.ev.Record()
}

// wait waits for fetch's copy.
func (lb *levelBook) wait() error { return lb.ev.Synchronize() }

// check compares what count found with the sizes the device computed for
// the next level (want: nodes, references, references parked).
func (lb *levelBook) check() error {
	if got := [3]int{2 * lb.nsplit, int(lb.total), lb.park}; got != lb.want {
		return fmt.Errorf("kdtree: a level's counts (nodes, references, parked) %v, the device's %v", got, lb.want)
	}
	return nil
}
