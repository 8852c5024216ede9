package gpubuild

import (
	"time"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
)

// booker keeps the host's records of the CUDA large phase on a goroutine of
// its own, level after level, while the levels go on: largeCUDA counts a
// level's read-back (levelBook.count, which is all the device work after it
// needs), queues that work and hands the read-back here; book makes the
// level's records, parked ranges and the next level's nodes. bookerBooks
// levelBooks go round between the two goroutines (free gives back the one
// booked), so the counting of a level overlaps the booking of the levels
// before it, at most bookerBooks levels ahead. Inline bookers book on the caller's goroutine
// (the tests' level hooks need each level's nodes as soon as it is read
// back). Either way the records are the same: book runs on the levels in
// order.
type booker struct {
	workers int
	rs      *refbuild.Records
	nodes   []refbuild.LNode // the next level to book
	spare   []refbuild.LNode // the memory of the level before, reused for the next
	parked  []parkedRange
	// room, when not nil, moves rs and the parked ranges so far into the
	// build's hostRoom (Builder.roomFunc): wait false, only when it is made
	// (ok tells). The booker calls it on its own goroutine, so that the
	// levels start while the hostRoom is still being made (zeroing the
	// grid's took longer than the scene's staged upload), and books the
	// first levels (fewer than roomWaitNodes nodes) without it while it is
	// not made.
	room func(parked []parkedRange, wait bool) (out []parkedRange, ok bool)

	inline bool
	pipe   bool            // pipelined: each job is waited for and counted here (newPipeBooker)
	count  bool            // pipelined: count and check only, book nothing (the device lays out the tree)
	err    error           // pipelined: the first failure (later jobs are only waited for)
	all    []*levelBook    // pipelined: every levelBook, for their pinned memory and events
	jobs   chan *levelBook // read-backs to book, in level order
	free   chan *levelBook // levelBooks not in use
	done   chan struct{}   // closed when the goroutine has booked every job
	closed bool
	// The host time the pipelined booker spent counting and booking
	// (each written by one goroutine, read after finish): the sub-phases
	// large.count and large.records (see largeCUDAPipe).
	countTime, bookTime time.Duration
	// b, when set (pipelined), is the build whose budget leaves runPipe
	// counts (levelBook.budgets).
	b *refbuild.Builder
}

// newBooker starts a booker whose first level is nodes, appending records to
// rs and parked ranges to a slice of its own, both moved into the
// build's host room by room (see booker.room; nil: none). Nothing but the
// booker may touch rs until finish.
func newBooker(workers int, nodes []refbuild.LNode, rs *refbuild.Records, room func([]parkedRange, bool) ([]parkedRange, bool), inline bool) *booker {
	k := &booker{workers: workers, rs: rs, nodes: nodes, room: room, inline: inline,
		jobs: make(chan *levelBook, bookerBooks), free: make(chan *levelBook, bookerBooks), done: make(chan struct{})}
	for range bookerBooks {
		k.free <- &levelBook{}
	}
	if inline {
		close(k.done)
	} else {
		go k.run()
	}
	return k
}

// bookerBooks is the number of levelBooks of a level-by-level booker: the
// levels may run that many ahead of the booker while it catches up (it
// waits for the build's hostRoom before its first level: on the device
// machine the grid's large phase waited 5-20 ms for the booker with two).
const bookerBooks = 4

// newPipeBooker starts a booker for largeCUDAPipe: its jobs are
// read-backs still being copied (levelBook.fetch), which it waits for,
// counts (with the level before's counts) and checks against the sizes the
// device computed, then books (runPipe).
func newPipeBooker(workers int, nodes []refbuild.LNode, rs *refbuild.Records, room func([]parkedRange, bool) ([]parkedRange, bool)) *booker {
	k := &booker{workers: workers, rs: rs, nodes: nodes, room: room, pipe: true,
		jobs: make(chan *levelBook, pipeBooks), free: make(chan *levelBook, pipeBooks), done: make(chan struct{})}
	for range pipeBooks {
		lb := &levelBook{}
		k.all = append(k.all, lb)
		k.free <- lb
	}
	go k.runPipe()
	return k
}

// pipeBooks is the number of levelBooks of a pipelined booker.
const pipeBooks = 8

// runPipe counts the levels on this goroutine and books them on another,
// so that counting a level overlaps booking the one before (as in
// largeCUDA, where the main goroutine counts). A levelBook goes back to
// free when it is booked and the next level is counted (its next is that
// count's input).
func (k *booker) runPipe() {
	defer close(k.done)
	books := make(chan *levelBook, pipeBooks)
	booked := make(chan struct{})
	go func() {
		defer close(booked)
		for lb := range books {
			if !lb.skip && !k.count {
				t0 := time.Now()
				k.book(lb)
				k.bookTime += time.Since(t0)
			}
			k.release(lb)
		}
	}()
	var prev *levelBook
	var cnt, bud []uint32
	parked0, depth := 0, 0
	for lb := range k.jobs {
		if prev == nil {
			// The first level's one node, as the job's sender left it
			// (a pipelined build learns its count while the level runs).
			cnt, bud = []uint32{k.nodes[0].Cnt}, []uint32{k.nodes[0].Budget}
		}
		lb.refs.Store(2)
		err := lb.wait() // always: the pinned memory must be done with before reuse
		if k.err == nil {
			k.err = err
		}
		if k.err == nil {
			t0 := time.Now()
			k.err = lb.count(k.workers, cnt, parked0)
			k.countTime += time.Since(t0)
		}
		if k.err == nil {
			k.err = lb.check()
		}
		if k.err == nil && k.b != nil {
			k.b.AddBudgetLeaves(lb.budgets(cnt, bud, func(c, a uint32) bool { return k.b.OverBudget(c, a, depth) }))
		}
		lb.skip = k.err != nil
		books <- lb
		if prev != nil {
			k.release(prev)
		}
		prev, cnt, bud, parked0 = lb, lb.next, lb.nextB, lb.park
		depth++
	}
	if prev != nil {
		k.release(prev)
	}
	close(books)
	<-booked
}

// release drops one of a pipelined levelBook's two users.
func (k *booker) release(lb *levelBook) {
	if lb.refs.Add(-1) == 0 {
		k.free <- lb
	}
}

func (k *booker) run() {
	defer close(k.done)
	for lb := range k.jobs {
		k.book(lb)
		k.free <- lb
	}
}

// book keeps one level's records.
func (k *booker) book(lb *levelBook) {
	k.readyRoom(len(k.nodes) >= roomWaitNodes)
	next, parked := lb.book(k.workers, k.nodes, k.rs, k.parked, k.spare)
	k.spare, k.nodes, k.parked = k.nodes, next, parked
}

// roomWaitNodes is the level size, in nodes, from which the booker waits
// for the host room (a smaller level grows the booker's own slices).
const roomWaitNodes = 1 << 14

// readyRoom moves the booker's records into the host room once, when it
// is made or (wait) after waiting for it.
func (k *booker) readyRoom(wait bool) {
	if k.room == nil {
		return
	}
	if parked, ok := k.room(k.parked, wait); ok {
		k.parked = parked
		k.room = nil
	}
}

// take returns a levelBook to fill with the next level's read-back, waiting
// while all are in use (the booker is that many levels behind).
func (k *booker) take() *levelBook { return <-k.free }

// give hands a counted level over to be booked (book's inputs: its read-back
// and count's chunks; the levelBook must not be changed until take returns
// it again).
func (k *booker) give(lb *levelBook) {
	if k.inline {
		k.book(lb)
		k.free <- lb
		return
	}
	k.jobs <- lb
}

// current waits until every level given is booked and returns the nodes of
// the next level (inline bookers: no wait).
func (k *booker) current() []refbuild.LNode {
	if !k.inline {
		// Every levelBook back means no job is queued or running.
		var all [bookerBooks]*levelBook
		for i := range all {
			all[i] = <-k.free
		}
		for _, lb := range all {
			k.free <- lb
		}
	}
	return k.nodes
}

// drop gives back a levelBook taken but not given (its copy done).
func (k *booker) drop(lb *levelBook) { k.free <- lb }

// failed is the pipelined booker's first error, after finish.
func (k *booker) failed() error { return k.err }

// finish waits for the levels given and returns the parked ranges. It may
// be called more than once (the later calls return at once); after it,
// give must not be called.
func (k *booker) finish() []parkedRange {
	if !k.closed {
		k.closed = true
		close(k.jobs)
		<-k.done
	}
	return k.parked
}
