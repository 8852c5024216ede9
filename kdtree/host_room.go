package kdtree

import (
	"slices"
	"unsafe"
)

// hostRoom is the host memory a CUDA build's large phase fills: its
// records, the parked ranges, the small roots and their offsets and
// counts, sized as the large phase sizes them (n/8 records, n/16 parked
// ranges for n triangles). Making that room is not free: for the 8.9M
// triangles of the bunny grid about 130 MB, which took the large phase
// 21-23 ms before its first level was queued (zeroing and first touches
// of fresh pages), with the device idle. startHostRoom makes it on a goroutine of its own while the
// scene is uploaded and prepared, and touches every page, so that the
// large phase finds it ready.
type hostRoom struct {
	recs     []record
	parked   []parkedRange
	small    []smallRoot
	off, cnt []uint32
}

// startHostRoom makes a hostRoom for up to n triangles on a new goroutine;
// the channel delivers it.
func startHostRoom(n int) <-chan *hostRoom {
	ch := make(chan *hostRoom, 1)
	go func() {
		ranges := n/16 + 1024
		ch <- &hostRoom{
			recs:   touched(make([]record, 0, n/8+1024+1)),
			parked: touched(make([]parkedRange, 0, ranges)),
			small:  touched(make([]smallRoot, 0, ranges)),
			off:    touched(make([]uint32, 0, ranges)),
			cnt:    touched(make([]uint32, 0, ranges)),
		}
	}()
	return ch
}

// touched writes the zero value into every page of s's capacity (so that
// they are faulted in now, not where s is filled) and returns s.
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
func (b *builder) takeRoom() *hostRoom {
	if b.room == nil {
		return nil
	}
	h := <-b.room
	b.room = nil
	return h
}

// recsFor returns rs.recs with room for want more records: h's when it has
// that room (rs.recs copied into it), else rs.recs grown.
func (h *hostRoom) recsFor(recs []record, want int) []record {
	if h != nil && cap(h.recs) >= len(recs)+want {
		out := append(h.recs[:0], recs...)
		h.recs = nil
		return out
	}
	return slices.Grow(recs, want)
}

// parkedFor returns an empty slice of parked ranges with capacity want,
// h's when it is large enough.
func (h *hostRoom) parkedFor(want int) []parkedRange {
	if h != nil && cap(h.parked) >= want {
		out := h.parked[:0]
		h.parked = nil
		return out
	}
	return make([]parkedRange, 0, want)
}

// smallFor returns empty slices for the small roots and their offsets and
// counts with capacity want, h's where they are large enough (small, when
// not empty, grown instead).
func (h *hostRoom) smallFor(small []smallRoot, want int) ([]smallRoot, []uint32, []uint32) {
	if h == nil {
		h = &hostRoom{}
	}
	if len(small) == 0 && cap(h.small) >= want {
		small = h.small[:0]
	} else {
		small = slices.Grow(small, want)
	}
	off, cnt := h.off[:0], h.cnt[:0]
	if cap(off) < want || cap(cnt) < want {
		off, cnt = make([]uint32, 0, want), make([]uint32, 0, want)
	}
	h.small, h.off, h.cnt = nil, nil, nil
	return small, off, cnt
}
