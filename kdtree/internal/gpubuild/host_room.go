package gpubuild

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
)

// hostRoom is the host memory a CUDA build's large phase fills: its
// records, the parked ranges, the small roots and their offsets, counts,
// depths and boxes, sized as the large phase sizes them (n/8 records, n/16
// parked ranges for n triangles). Making that room is not free: for the
// 8.9M triangles of the bunny grid about 160 MB, which took the large
// phase 14-28 ms on the device machine before its first level was queued
// (Go zeroes memory it reuses), with the device idle. startHostRoom makes
// it on a goroutine of its own while the scene is uploaded and prepared;
// its pages are first touched by the booker, which fills them while the
// device works.
type hostRoom struct {
	recs            []refbuild.Record
	parked          []parkedRange
	small           []refbuild.SmallRoot
	off, cnt, depth []uint32
	box             []float32
}

// startHostRoom makes a hostRoom for up to n triangles on new goroutines,
// one per slice (Go zeroes each on the goroutine that makes it: one after
// the other they took longer than the grid's staged upload); the channel
// delivers it when all are made.
func startHostRoom(n int) <-chan *hostRoom {
	ch := make(chan *hostRoom, 1)
	go func() {
		ranges := n/16 + 1024
		h := &hostRoom{}
		var wg sync.WaitGroup
		for _, make1 := range []func(){
			func() { h.recs = make([]refbuild.Record, 0, n/8+1024+1) },
			func() { h.parked = make([]parkedRange, 0, ranges) },
			func() { h.small = make([]refbuild.SmallRoot, 0, ranges) },
			func() {
				h.off, h.cnt, h.depth = make([]uint32, 0, ranges), make([]uint32, 0, ranges), make([]uint32, 0, ranges)
				h.box = make([]float32, 0, 6*ranges)
			},
		} {
			wg.Go(make1)
		}
		wg.Wait()
		ch <- h
	}()
	return ch
}

// touched writes the zero value into every page of s's capacity (so that
// they are faulted in now, not where s is filled) and returns s: for
// memory made off the device's path that is then filled on it.
func touched[T any](s []T) []T {
	var zero T
	all := s[:cap(s)]
	step := max(1, 4096/int(unsafe.Sizeof(zero)))
	for i := 0; i < len(all); i += step {
		all[i] = zero
	}
	return s
}

// takeRoom returns the build's hostRoom, waiting for it, the first time it
// is called after startHostRoom; nil after that or without one.
func (b *gpuBuild) takeRoom() *hostRoom {
	if b.roomReady == nil && b.room != nil {
		b.roomReady = <-b.room
	}
	h := b.roomReady
	b.room, b.roomReady = nil, nil
	return h
}

// roomMade reports whether takeRoom would return at once.
func (b *gpuBuild) roomMade() bool {
	if b.room == nil || b.roomReady != nil {
		return true
	}
	select {
	case b.roomReady = <-b.room:
		return true
	default:
		return false
	}
}

// largeRoom readies rs for the large phase of n kept triangles (records,
// small roots) from the build's hostRoom where it has the room, and
// returns the parked ranges' slice for the booker, parked (those made so
// far) copied into it.
func (b *gpuBuild) largeRoom(rs *refbuild.Records, n int, parked []parkedRange) []parkedRange {
	return b.takeRoom().moveIn(rs, parked, n/8+1024, n/16+1024)
}

// roomFunc is a booker's room (see booker.room) for a large phase of n
// kept triangles keeping its records in rs: room for the records and
// parked ranges the large phase usually makes (the bunny parks about n/19
// small roots; a split makes two records), so that book rarely grows them:
// growing copies every record made so far, and the records hold pointers
// (the grid's growth cost 80 ms of host time per build on the device
// machine).
func (b *gpuBuild) roomFunc(rs *refbuild.Records, n int) func([]parkedRange, bool) ([]parkedRange, bool) {
	return func(parked []parkedRange, wait bool) ([]parkedRange, bool) {
		if !wait && !b.roomMade() {
			return parked, false
		}
		return b.largeRoom(rs, n, parked), true
	}
}

// moveIn gives rs room for recs records and ranges small roots (rs.small,
// smallOff, smallCnt, smallDepth, smallBox) and returns parked with room
// for ranges parked ranges: each in h's memory where it holds that many
// and what is already there (copied into it), else grown. The totals are
// the whole large phase's: rs and parked may hold the first levels',
// booked before the room was made. h is empty afterwards; nil is an empty
// room.
func (h *hostRoom) moveIn(rs *refbuild.Records, parked []parkedRange, recs, ranges int) []parkedRange {
	if h == nil {
		h = &hostRoom{}
	}
	rs.Recs = roomOr(h.recs, rs.Recs, recs)
	rs.Small = roomOr(h.small, rs.Small, ranges)
	rs.SmallOff = roomOr(h.off, rs.SmallOff, ranges)
	rs.SmallCnt = roomOr(h.cnt, rs.SmallCnt, ranges)
	rs.SmallDepth = roomOr(h.depth, rs.SmallDepth, ranges)
	rs.SmallBox = roomOr(h.box, rs.SmallBox, 6*ranges)
	parked = roomOr(h.parked, parked, ranges)
	*h = hostRoom{}
	return parked
}

// roomOr returns s with room for total, in room's memory when it holds
// that many and s, else s grown.
func roomOr[T any](room, s []T, total int) []T {
	if cap(room) >= max(total, len(s)) {
		return append(room[:0], s...)
	}
	return slices.Grow(s, max(0, total-len(s)))
}
