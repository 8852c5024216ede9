package gpubuild

import (
	"fmt"
	"time"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
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
// Scenes of Config.pipeMaxTris triangles or more, the tests' level
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
func (b *gpuBuild) largeCUDAPipe(d *devLevel, nodes []refbuild.LNode, n int, rs *refbuild.Records) (parked []parkedRange, overflow bool, err error) {
	p, err := b.newPipe(d, nodes, n, rs)
	if p != nil {
		defer p.bk.finish()
		defer func() { d.inPipe = false }()
	}
	if err != nil || p == nil {
		return nil, p == nil && err == nil, err
	}
	p.t0 = b.subPhase("large.alloc", p.t0)
	b.LevelProgress(0, 1)
	p.last = p.bk.take() // level k-1's levelBook
	if err := b.levelFrontCUDA(d, nodes, 1, n, false); err != nil {
		return nil, false, err
	}
	if err := p.tail(0, 1, n, 1, p.last); err != nil {
		return nil, false, err
	}
	b.Levels++
	p.t0 = b.subPhase("large.upload", p.t0)
	p.lastNN, p.lastN, p.lastPK = 1, n, 0
	for k := 1; ; k++ {
		if err := b.Ctx.Err(); err != nil {
			return nil, false, err
		}
		done, over, err := p.level(k, nodes)
		if err != nil || over {
			return nil, over, err
		}
		if done {
			break
		}
	}
	parked = p.bk.finish()
	b.subPhase("large.book", p.t0)
	// The booker's own time, overlapped with the levels (not part of
	// large's time but what it must keep up with).
	b.Phases["large.count"] += float64(p.bk.countTime.Nanoseconds()) / 1e6
	b.Phases["large.records"] += float64(p.bk.bookTime.Nanoseconds()) / 1e6
	return parked, false, p.bk.failed()
}

// pipe is a pipelined large phase under way: its booker, the bounds of
// the buffers, the last level's levelBook and real sizes.
type pipe struct {
	b               *gpuBuild
	d               *devLevel
	bk              *booker
	refCap, nodeCap int
	roots           int // the small roots before the level whose sizes sizes read last
	t0              time.Time
	last            *levelBook // level k-1's
	// Level k-1's real sizes and the references parked before it.
	lastNN, lastN, lastPK int
}

// newPipe readies the buffers, the booker and the pinned memory of a
// pipelined large phase; nil (and no error) when there is no pinned memory
// for the levelBooks' logs: the level-synchronous phase, which needs none,
// builds then. A non-nil pipe's booker must be finished and d.inPipe reset.
func (b *gpuBuild) newPipe(d *devLevel, nodes []refbuild.LNode, n int, rs *refbuild.Records) (*pipe, error) {
	p := &pipe{b: b, d: d, refCap: d.scRefs, nodeCap: d.nodeCap}
	if c := b.cfg.PipeRefCap; c > 0 {
		p.refCap = min(p.refCap, c)
		d.refLimit = p.refCap
	}
	if err := d.ensurePipe(p.refCap, p.nodeCap, b.Opt.Bins); err != nil {
		return nil, err
	}
	if err := d.ensureRoots(n); err != nil {
		return nil, err
	}
	if d.red == nil {
		d.red = reduce.NewReducer(d.ex)
	}
	if err := d.red.ReserveBoxesAoS(p.refCap); err != nil {
		return nil, err
	}
	p.t0 = time.Now()
	d.inPipe = true
	p.bk = newPipeBooker(b.HostWorkers(), nodes, rs, b.roomFunc(rs, n))
	p.bk.b = b.Builder
	// When the device lays the tree out, the host's records are not
	// needed: the booker only counts and checks each level.
	p.bk.count = d.deviceTop
	d.topLevels = append(d.topLevels[:0], 0, 1) // level 0: the root
	// Pinned memory for the levelBooks' logs (they grow with the levels).
	for _, lb := range p.bk.all {
		var err error
		if lb.pin, err = d.pinned(4 * (szWords + 6*min(p.nodeCap, 256))); err != nil {
			p.bk.finish()
			d.inPipe = false
			return nil, nil
		}
	}
	return p, nil
}

// tail queues level k's tail (its front ran on nb nodes and nRefs
// references: bounds or the level's sizes), the next level's table laid
// out for twice nb nodes, and the copy of its log (at most logNodes nodes)
// into lb.
func (p *pipe) tail(k, nb, nRefs, logNodes int, lb *levelBook) error {
	log, direct, err := p.d.logDest(lb, logNodes)
	if err != nil {
		return err
	}
	if err := p.b.queueTail(p.d, nb, nRefs, min(2*nb, p.nodeCap), k, log); err != nil {
		return err
	}
	if err := p.d.fetch(lb, logNodes, direct); err != nil {
		return err
	}
	return p.d.ctx.Flush()
}

// sizes waits for lb's copy and returns the sizes it holds (the next
// level's: nodes, references, parked before it, overflow), and sets
// p.roots to the small roots before it.
func (p *pipe) sizes(lb *levelBook) (nn, nr, pk int, over bool, err error) {
	if err := lb.wait(); err != nil {
		return 0, 0, 0, false, err
	}
	h := lb.pin.U32(szWords)
	p.roots = int(h[4])
	return int(h[0]), int(h[1]), int(h[2]), h[3] != 0, nil
}

// levelSizes are a level's sizes as the pipe knows them.
type levelSizes struct {
	known      bool // nn, nr, pk and over are the level's own
	nn, nr, pk int
	over       bool
	nb, nRefs  int // the bounds its front and tail run on
	logNodes   int
}

// level runs level k: its front and tail queued on bounds (or its own
// sizes), then level k-1's log handed to the booker. done: it was the last
// level (the large phase is over); over: a level outgrew the buffers.
func (p *pipe) level(k int, nodes []refbuild.LNode) (done, over bool, err error) {
	s, err := p.front(k)
	if err != nil {
		return false, false, err
	}
	b := p.b
	var lb *levelBook
	if !s.known || (s.nn > 0 && !s.over) {
		p.t0 = b.subPhase("large.host", p.t0)
		lb = p.bk.take()
		p.t0 = b.subPhase("large.booker", p.t0) // waiting for a levelBook: the booker is behind
		if err := p.tail(k, s.nb, s.nRefs, s.logNodes, lb); err != nil {
			return false, false, err
		}
	}
	p.t0 = b.subPhase("large.host", p.t0)
	// Level k's sizes, which level k-1's tail wrote: the device is busy
	// with level k meanwhile.
	if !s.known {
		if s.nn, s.nr, s.pk, s.over, err = p.sizes(p.last); err != nil {
			return false, false, err
		}
	}
	p.t0 = b.subPhase("large.device", p.t0)
	if err := p.hand(k, nodes, lb, s); err != nil {
		return false, false, err
	}
	return p.end(k, lb, s)
}

// front queues level k's front on its bounds: twice level k-1's nodes and
// references (what its splits can make), or, after a level of
// pipeExactRefs references or more (its device time dwarfs the host's
// queueing, and padding would cost more than waiting), level k's own
// sizes. (The buffers' capacity as the bounds, the same every level, let
// every second level queue the same launches, which the launch graphs of
// kernels/cuda then run without setting a parameter; but the padding cost
// the device more than that saved the host: bunny 2.71 -> 2.91 ms of
// kernels, conference 0.5 ms slower.) It makes room to park what levels
// k-1 and k may park.
func (p *pipe) front(k int) (s levelSizes, err error) {
	b, d := p.b, p.d
	s.known = p.lastN >= b.cfg.PipeExactRefs
	if s.known {
		if s.nn, s.nr, s.pk, s.over, err = p.sizes(p.last); err != nil {
			return s, err
		}
	}
	s.nb, s.nRefs = min(2*p.lastNN, d.layout), min(2*p.lastN, p.refCap)
	if s.known {
		s.nb, s.nRefs = s.nn, s.nr
	}
	s.logNodes = min(s.nb, 2*p.lastNN)
	if !s.known || (s.nn > 0 && !s.over) {
		if err := b.levelFrontCUDA(d, nil, s.nb, s.nRefs, false); err != nil {
			return s, err
		}
	}
	// Room to park what levels k-1 and k may park: at most 2·lastN (a
	// reference of level k-1 parks, or its copies go to level k and park
	// there). When that may not fit, wait for level k's sizes (level k-1
	// done; the device runs level k's front meanwhile) and grow the
	// buffers to what is parked then plus all of level k's references,
	// those parked kept, before level k's tail.
	if !s.known && p.lastPK+2*p.lastN > d.parkCap() {
		if err := d.ctx.Flush(); err != nil {
			return s, err
		}
		p.t0 = b.subPhase("large.host", p.t0)
		if s.nn, s.nr, s.pk, s.over, err = p.sizes(p.last); err != nil {
			return s, err
		}
		p.t0 = b.subPhase("large.park", p.t0) // waiting for the sizes to make room to park
		s.known = true
	}
	if s.known && !s.over && s.nn > 0 && s.pk+s.nr > d.parkCap() {
		if err := d.growParked(s.pk+s.nr, s.pk); err != nil {
			return s, err
		}
	}
	return s, nil
}

// hand gives level k-1's log (its decisions after the sizes) to the
// booker, the root's box first (rootBox queued it before level 0: home by
// now), and makes lb (level k's, or nil) the last.
func (p *pipe) hand(k int, nodes []refbuild.LNode, lb *levelBook, s levelSizes) error {
	if k == 1 {
		var err error
		if nodes[0].Box, err = p.d.takeRoot(); err != nil {
			return err
		}
		if p.d.prep != nil {
			// The first level ran on a bound: its count comes with the
			// root box (prepareCUDA's queued count).
			kept, err := p.b.keptCount(p.d)
			if err != nil {
				return err
			}
			nodes[0].Cnt, nodes[0].Budget = uint32(kept), p.b.RootBudgetOf(kept)
		}
	}
	last := p.last
	last.h, last.stride = last.pin.U32(szWords + 6*p.lastNN)[szWords:], p.lastNN
	last.want = [3]int{s.nn, s.nr, s.pk}
	p.bk.give(last)
	p.last = lb
	return nil
}

// end ends level k: the large phase when it was the last level (the small
// phase started early) or a level overflowed, else the next level's
// bookkeeping.
func (p *pipe) end(k int, lb *levelBook, s levelSizes) (done, over bool, err error) {
	b, d := p.b, p.d
	over = s.over
	if !over && s.nn == 0 && d.deviceTop && !d.topFits(p.roots) {
		// The device's lists outgrew their room: level by level, with
		// the host's records (buildCUDA), as after an overflow.
		d.topMissed, over = true, true
	}
	if over || s.nn == 0 {
		if !over {
			// The large phase is done on the device: the small phase is
			// queued now, from the small roots the levels listed, and
			// runs while the booker finishes the host's records.
			d.parked = s.pk
			if err := b.startSmallEarly(d, p.roots, s.pk); err != nil {
				return false, false, err
			}
		}
		if lb != nil {
			lb.ev.Synchronize() // its copy is done before the booker takes it again
			p.bk.drop(lb)
		}
		if over {
			p.bk.finish()
		}
		return !over, over, nil
	}
	b.Levels++
	b.LevelProgress(k, s.nn)
	d.topLevels = append(d.topLevels, d.topLevels[len(d.topLevels)-1]+uint32(s.nn))
	p.lastNN, p.lastN, p.lastPK = s.nn, s.nr, s.pk
	return false, false, nil
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
	if dev := lb.pin.Dev(); dev != 0 && d.cfg.on(PathMappedLog) {
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
