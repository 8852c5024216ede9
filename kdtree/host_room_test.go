package kdtree

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostRoomKeepsEarlyRecords: the room takes the records, parked ranges
// and small roots booked before it was made (copied, in order) when it holds
// them and the total asked for; else they are grown, never lost.
func TestHostRoomKeepsEarlyRecords(t *testing.T) {
	for _, c := range []struct {
		name              string
		room, have, total int
		inRoom            bool
	}{
		{"empty", 100, 0, 100, true},
		{"some booked", 100, 30, 100, true},
		{"all booked", 100, 100, 100, true},
		{"room too small for the total", 100, 30, 101, false},
		{"more booked than the room", 100, 101, 50, false},
		{"no room", -1, 7, 20, false},
	} {
		var h *hostRoom
		if c.room >= 0 {
			h = &hostRoom{recs: make([]record, 0, c.room), parked: make([]parkedRange, 0, c.room),
				small: make([]smallRoot, 0, c.room), off: make([]uint32, 0, c.room), cnt: make([]uint32, 0, c.room),
				depth: make([]uint32, 0, c.room), box: make([]float32, 0, 6*c.room)}
		}
		rs := &records{}
		var parked []parkedRange
		for i := range c.have {
			rs.recs = append(rs.recs, record{fate: fateLeaf, pcnt: uint32(i)})
			parked = append(parked, parkedRange{off: uint32(i)})
			rs.small = append(rs.small, smallRoot{depth: i})
			rs.smallOff = append(rs.smallOff, uint32(i))
			rs.smallCnt = append(rs.smallCnt, uint32(2*i))
			rs.smallDepth = append(rs.smallDepth, uint32(3*i))
			rs.smallBox = append(rs.smallBox, float32(i), 0, 0, 0, 0, float32(-i))
		}
		want := *rs
		wantParked := append([]parkedRange(nil), parked...)
		want.recs = append([]record(nil), rs.recs...)
		parked = h.moveIn(rs, parked, c.total, c.total)
		sameElems(t, want.recs, rs.recs, c.name)
		sameElems(t, wantParked, parked, c.name)
		sameElems(t, want.small, rs.small, c.name)
		sameElems(t, want.smallOff, rs.smallOff, c.name)
		sameElems(t, want.smallCnt, rs.smallCnt, c.name)
		sameElems(t, want.smallDepth, rs.smallDepth, c.name)
		sameElems(t, want.smallBox, rs.smallBox, c.name)
		for _, got := range []int{cap(rs.recs), cap(parked), cap(rs.smallOff)} {
			require.GreaterOrEqual(t, got, max(c.total, c.have), c.name)
			if c.inRoom {
				require.Equal(t, c.room, got, "%s: in the room", c.name)
			}
		}
	}
}

// sameElems requires a and b to hold the same elements (nil and empty
// alike).
func sameElems[T any](t *testing.T, a, b []T, msg string) {
	t.Helper()
	require.Len(t, b, len(a), msg)
	if len(a) > 0 {
		require.Equal(t, a, b, msg)
	}
}
