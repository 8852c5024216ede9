package gpubuild

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
)

// bookLevel is a level's read-back as the device returns it, with the
// host's nodes: the input of levelBook.
type bookLevel struct {
	nodes []refbuild.LNode
	h     []uint32
}

// makeBookLevel makes a level of nn nodes whose records follow recBase
// (as every level's do), with random fates (leaf, small, split with
// probability pSplit), planes and child counts laid out node after node.
func makeBookLevel(rng *rand.Rand, nn, recBase int, pSplit float64) bookLevel {
	l := bookLevel{nodes: make([]refbuild.LNode, nn), h: make([]uint32, 6*nn)}
	dec, cl, cr, cb := l.h[:3*nn], l.h[3*nn:4*nn], l.h[4*nn:5*nn], l.h[5*nn:]
	var off, base uint32
	for i := range l.nodes {
		var box refbuild.AABB
		for a := 0; a < 3; a++ {
			box.Lo[a] = rng.Float32()
			box.Hi[a] = box.Lo[a] + 1 + rng.Float32()
		}
		cnt := uint32(rng.Intn(200))
		l.nodes[i] = refbuild.LNode{Box: box, Off: off, Cnt: cnt, Depth: 7, Rec: int32(recBase + i)}
		off += cnt
		cb[i] = base
		switch r := rng.Float64(); {
		case r < pSplit:
			a := rng.Intn(3)
			dec[3*i], dec[3*i+1] = refbuild.FateSplit, uint32(a)
			dec[3*i+2] = math.Float32bits(box.Lo[a] + rng.Float32())
			cl[i], cr[i] = uint32(rng.Intn(int(cnt)+1)), uint32(rng.Intn(int(cnt)+1))
		case r < (1+pSplit)/2:
			dec[3*i] = refbuild.FateLeaf
		default:
			dec[3*i] = refbuild.FateSmall
		}
		base += cl[i] + cr[i]
	}
	return l
}

// bookSequential is the level bookkeeping node after node with
// records.setInterior and appends, as levelCUDA kept it before levelBook,
// and the parked nodes' records as buildCUDA made them afterwards before
// levelBook.book made them.
func bookSequential(l bookLevel, rs *refbuild.Records, parked []parkedRange, parked0 int) ([]refbuild.LNode, []parkedRange, int, uint32) {
	nn := len(l.nodes)
	dec, cl, cr, cb := l.h[:3*nn], l.h[3*nn:4*nn], l.h[4*nn:5*nn], l.h[5*nn:]
	var out []refbuild.LNode
	off := parked0
	for i := range l.nodes {
		x := &l.nodes[i]
		switch fate := int(dec[3*i]); fate {
		case refbuild.FateLeaf, refbuild.FateSmall:
			parked = append(parked, parkedRange{rec: x.Rec, off: uint32(off), cnt: x.Cnt, small: fate == refbuild.FateSmall,
				box: x.Box, depth: x.Depth})
			if fate == refbuild.FateSmall {
				rs.SmallOff = append(rs.SmallOff, uint32(off))
				rs.SmallCnt = append(rs.SmallCnt, x.Cnt)
				rs.SmallDepth = append(rs.SmallDepth, uint32(x.Depth))
				rs.SmallBox = append(append(rs.SmallBox, x.Box.Lo[:]...), x.Box.Hi[:]...)
				rs.SetSmall(x.Rec, refbuild.SmallRoot{Box: x.Box, Depth: x.Depth})
			} else {
				rs.Recs[x.Rec] = refbuild.Record{Fate: refbuild.FateLeaf, Parked: true, Park: uint32(off), Pcnt: x.Cnt}
			}
			off += int(x.Cnt)
		default:
			axis, pos := int(dec[3*i+1]), math.Float32frombits(dec[3*i+2])
			left := rs.SetInterior(x.Rec, axis, pos)
			lb, rb := refbuild.ChildBoxes(x.Box, axis, pos)
			out = append(out,
				refbuild.LNode{Box: lb, Off: cb[i], Cnt: cl[i], Depth: x.Depth + 1, Rec: left},
				refbuild.LNode{Box: rb, Off: cb[i] + cl[i], Cnt: cr[i], Depth: x.Depth + 1, Rec: left + 1})
		}
	}
	return out, parked, off, cb[nn-1] + cl[nn-1] + cr[nn-1]
}

// TestLevelBookEqualsSequential: levelBook's parallel count and book give
// the records, next nodes and parked ranges of the sequential loop, over
// chunk edges, worker counts and levels in a row (reused scratch).
func TestLevelBookEqualsSequential(t *testing.T) {
	cases := []struct {
		sizes  []int
		pSplit float64
	}{
		{[]int{1}, 1},
		{[]int{1}, 0},
		{[]int{1, 2, 4}, 1},
		{[]int{bookGrain - 1, bookGrain, bookGrain + 1}, 0.5},
		{[]int{3*bookGrain + 17, 5, 2 * bookGrain}, 0.7},
		{[]int{2*bookGrain + 3, 1}, 0},
	}
	for ci, c := range cases {
		for _, workers := range []int{1, 3, 8} {
			name := fmt.Sprintf("case%d/workers%d", ci, workers)
			rng := rand.New(rand.NewSource(int64(17 + ci)))
			// Records of a tree so far: the level's nodes are the last ones.
			want, got := &refbuild.Records{}, &refbuild.Records{}
			for i := 0; i < 5; i++ {
				want.Add()
				got.Add()
			}
			var wantP, gotP []parkedRange
			var spare []refbuild.LNode
			lb := &levelBook{}
			parked0 := 11
			for _, nn := range c.sizes {
				for len(got.Recs) < 5+nn {
					want.Add()
					got.Add()
				}
				l := makeBookLevel(rng, nn, len(got.Recs)-nn, c.pSplit)
				wantOut, wp, wantPark, wantTotal := bookSequential(l, want, wantP, parked0)
				wantP = wp
				lb.h = append(lb.h[:0], l.h...)
				require.NoError(t, lb.count(workers, nodeCounts(l.nodes), parked0), name)
				require.Equal(t, len(wantOut)/2, lb.nsplit, name)
				require.Equal(t, wantPark, lb.park, name)
				require.Equal(t, wantTotal, lb.total, name)
				require.Equal(t, nodeCounts(wantOut), append([]uint32{}, lb.next...), name)
				var out []refbuild.LNode
				out, gotP = lb.book(workers, l.nodes, got, gotP, spare)
				require.Equal(t, len(wantOut), len(out), name)
				if len(wantOut) > 0 {
					require.Equal(t, wantOut, out, name)
				}
				requireSameRecords(t, want, got, name)
				require.Equal(t, wantP, gotP, name)
				spare = l.nodes[:0] // reused as the next call's output
				parked0 = lb.park
			}
		}
	}
}

// nodeCounts lists the nodes' reference counts (count's input, lb.next).
func nodeCounts(nodes []refbuild.LNode) []uint32 {
	c := make([]uint32, len(nodes))
	for i := range nodes {
		c[i] = nodes[i].Cnt
	}
	return c
}

// TestBookerEqualsSequential: a booker fed levels one after another, the
// way largeCUDA feeds it (take, count from the last level's lb.next, give),
// keeps the records and parked ranges of the sequential loop, on its own
// goroutine and inline, and its current nodes are the sequential loop's
// next level; with a host room made late (booker.room), the records are
// the same, moved into it.
func TestBookerEqualsSequential(t *testing.T) {
	for _, inline := range []bool{false, true} {
		for _, workers := range []int{1, 4} {
			for _, late := range []int{-1, 0, 3} {
				testBookerEqualsSequential(t, inline, workers, late)
			}
		}
	}
}

// testBookerEqualsSequential runs TestBookerEqualsSequential's case; late
// < 0: no host room, else one made at the late-th look (or when the booker
// waits for it).
func testBookerEqualsSequential(t *testing.T, inline bool, workers, late int) {
	name := fmt.Sprintf("inline=%v/workers%d/late%d", inline, workers, late)
	rng := rand.New(rand.NewSource(29))
	want, got := &refbuild.Records{}, &refbuild.Records{}
	root := want.Add()
	got.Add()
	first := []refbuild.LNode{{Cnt: 900, Rec: root}}
	first[0].Box.Hi = [3]float32{4, 4, 4}
	var wantP []parkedRange
	var room func([]parkedRange, bool) ([]parkedRange, bool)
	h := &hostRoom{recs: make([]refbuild.Record, 0, 1<<14), parked: make([]parkedRange, 0, 1<<13),
		small: make([]refbuild.SmallRoot, 0, 1<<13), off: make([]uint32, 0, 1<<13), cnt: make([]uint32, 0, 1<<13),
		depth: make([]uint32, 0, 1<<13), box: make([]float32, 0, 6<<13)}
	looks, moved := 0, false
	if late >= 0 {
		room = func(parked []parkedRange, wait bool) ([]parkedRange, bool) {
			if looks++; !wait && looks <= late {
				return parked, false
			}
			require.False(t, moved, "the room is taken twice")
			moved = true
			return h.moveIn(got, parked, 1<<13, 1<<12), true
		}
	}
	k := newBooker(workers, first, got, room, inline)
	cur, cnt := first, []uint32{900}
	parked0, booked := 0, 0
	for level := 0; level < 9 && len(cur) > 0; level++ {
		booked += len(cur)
		// A read-back for the current nodes: random fates, child
		// counts laid out node after node.
		l := makeBookLevel(rng, len(cur), 0, 0.8)
		l.nodes = cur
		lb := k.take()
		lb.h = append(lb.h[:0], l.h...)
		require.NoError(t, lb.count(workers, cnt, parked0), name)
		next, wp, park, _ := bookSequential(l, want, wantP, parked0)
		wantP, parked0 = wp, park
		cnt = lb.next
		require.Equal(t, nodeCounts(next), append([]uint32{}, cnt...), name)
		k.give(lb)
		if level%3 == 2 {
			require.Equal(t, next, k.current(), name)
		}
		cur = next
	}
	gotP := k.finish()
	require.Greater(t, booked, 100, name)
	require.Equal(t, wantP, gotP, name)
	requireSameRecords(t, want, got, name)
	require.Equal(t, gotP, k.finish(), name)
	if late >= 0 {
		require.True(t, moved, name)
		require.Equal(t, 1<<14, cap(got.Recs), "%s: the records are in the room", name)
	}
}

// TestLevelBookCountErrors: a child base off the running sum, a fate the
// SAH cannot give and a level past uint32 are errors naming the node.
func TestLevelBookCountErrors(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	nn := 2*bookGrain + 9
	cases := []struct {
		name  string
		spoil func(h []uint32)
		want  string
	}{
		{"first base", func(h []uint32) { h[5*nn] = 1 }, "level node 0: child base 1, want 0"},
		{"base in a later chunk", func(h []uint32) { h[5*nn+bookGrain+3]++ }, fmt.Sprintf("level node %d:", bookGrain+3)},
		{"fate", func(h []uint32) { h[3*(bookGrain+1)] = 3 }, fmt.Sprintf("node %d of level has fate 3", bookGrain+1)},
		{"two errors: the first", func(h []uint32) { h[3*(2*bookGrain)] = 9; h[3*5] = 7 }, "node 5 of level has fate 7"},
		{"overflow", func(h []uint32) { h[5*nn-1] = math.MaxUint32 }, "overflow uint32"},
	}
	for _, c := range cases {
		l := makeBookLevel(rng, nn, 0, 0.5)
		lb := &levelBook{h: append([]uint32(nil), l.h...)}
		require.NoError(t, lb.count(4, nodeCounts(l.nodes), 0), c.name)
		c.spoil(lb.h)
		err := lb.count(4, nodeCounts(l.nodes), 0)
		require.Error(t, err, c.name)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}

// requireSameRecords requires got to hold want's records and small roots.
func requireSameRecords(t *testing.T, want, got *refbuild.Records, name string) {
	t.Helper()
	require.Equal(t, want.Recs, got.Recs, name)
	require.Equal(t, want.Small, got.Small, name)
	require.Equal(t, want.SmallOff, got.SmallOff, name)
	require.Equal(t, want.SmallCnt, got.SmallCnt, name)
	require.Equal(t, want.SmallDepth, got.SmallDepth, name)
	require.Equal(t, want.SmallBox, got.SmallBox, name)
}

// BenchmarkLevelBookBunny times the pipelined booker's work (count, then
// book, level after level, into a host room) on the bunny's levels as the
// Go executor decides them: the host work that must keep up with the
// device's levels (large.count and large.records in build.phases).
func BenchmarkLevelBookBunny(b *testing.B) {
	s := trySharedScene(b, "stanford-bunny.obj")
	if s == nil {
		b.Skip("no shared scenes")
	}
	lv := goLevels(b, s)
	// Each level's log: decisions, cl, cr, cb from the next level's nodes.
	var logs [][]uint32
	for k, l := range lv {
		nn := len(l.nodes)
		h := make([]uint32, 6*nn)
		s := 0
		var base uint32
		for i, d := range l.dec {
			h[3*i] = uint32(d.Fate)
			h[3*i+1] = uint32(d.Axis)
			h[3*i+2] = math.Float32bits(d.Pos)
			h[5*nn+i] = base
			if d.Fate == refbuild.FateSplit {
				next := lv[k+1].nodes
				h[3*nn+i], h[4*nn+i] = next[2*s].Cnt, next[2*s+1].Cnt
				s++
			}
			base += h[3*nn+i] + h[4*nn+i]
		}
		logs = append(logs, h)
	}
	n := len(s.Tris)
	workers := runtime.GOMAXPROCS(0)
	// (On the device machine: book 541 us fresh, 369 reused; count 111 and
	// 74. Smaller chunks, more of them in parallel, were no faster.)
	for _, reuse := range []bool{false, true} {
		name := "fresh" // a host room made for every build, as builds do
		if reuse {
			name = "reused" // the last build's arrays
		}
		b.Run(name, func(b *testing.B) {
			var tc, tb time.Duration
			var kept *hostRoom
			for b.Loop() {
				rs := &refbuild.Records{}
				nodes := []refbuild.LNode{lv[0].nodes[0]}
				nodes[0].Rec = rs.Add()
				room := kept
				if room == nil {
					room = <-startHostRoom(n)
				}
				parked := room.moveIn(rs, nil, n/8+1024, n/16+1024)
				var spare []refbuild.LNode
				lb := &levelBook{}
				cnt := []uint32{nodes[0].Cnt}
				parked0 := 0
				for _, h := range logs {
					lb.h, lb.stride = h, len(nodes)
					t0 := time.Now()
					if err := lb.count(workers, cnt, parked0); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					var next []refbuild.LNode
					next, parked = lb.book(workers, nodes, rs, parked, spare)
					tc += t1.Sub(t0)
					tb += time.Since(t1)
					spare, nodes, cnt, parked0 = nodes, next, lb.next, lb.park
				}
				if reuse {
					kept = &hostRoom{recs: rs.Recs[:0], parked: parked[:0], small: rs.Small[:0], off: rs.SmallOff[:0],
						cnt: rs.SmallCnt[:0], depth: rs.SmallDepth[:0], box: rs.SmallBox[:0]}
				}
			}
			b.ReportMetric(float64(tc.Microseconds())/float64(b.N), "count-us")
			b.ReportMetric(float64(tb.Microseconds())/float64(b.N), "book-us")
		})
	}
}
