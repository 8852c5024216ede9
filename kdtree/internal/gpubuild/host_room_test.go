package gpubuild

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
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
			h = &hostRoom{recs: make([]refbuild.Record, 0, c.room), parked: make([]parkedRange, 0, c.room),
				small: make([]refbuild.SmallRoot, 0, c.room), off: make([]uint32, 0, c.room), cnt: make([]uint32, 0, c.room),
				depth: make([]uint32, 0, c.room), box: make([]float32, 0, 6*c.room)}
		}
		rs := &refbuild.Records{}
		var parked []parkedRange
		for i := range c.have {
			rs.Recs = append(rs.Recs, refbuild.Record{Fate: refbuild.FateLeaf, Pcnt: uint32(i)})
			parked = append(parked, parkedRange{off: uint32(i)})
			rs.Small = append(rs.Small, refbuild.SmallRoot{Depth: i})
			rs.SmallOff = append(rs.SmallOff, uint32(i))
			rs.SmallCnt = append(rs.SmallCnt, uint32(2*i))
			rs.SmallDepth = append(rs.SmallDepth, uint32(3*i))
			rs.SmallBox = append(rs.SmallBox, float32(i), 0, 0, 0, 0, float32(-i))
		}
		want := *rs
		wantParked := append([]parkedRange(nil), parked...)
		want.Recs = append([]refbuild.Record(nil), rs.Recs...)
		parked = h.moveIn(rs, parked, c.total, c.total)
		sameElems(t, want.Recs, rs.Recs, c.name)
		sameElems(t, wantParked, parked, c.name)
		sameElems(t, want.Small, rs.Small, c.name)
		sameElems(t, want.SmallOff, rs.SmallOff, c.name)
		sameElems(t, want.SmallCnt, rs.SmallCnt, c.name)
		sameElems(t, want.SmallDepth, rs.SmallDepth, c.name)
		sameElems(t, want.SmallBox, rs.SmallBox, c.name)
		for _, got := range []int{cap(rs.Recs), cap(parked), cap(rs.SmallOff)} {
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
