package gpubuild

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/scenes"
)

// btRecordsGo runs the Go build of s up to the layout.
func btRecordsGo(t testing.TB, s *scenes.Scene, o goOpts) *refbuild.Records {
	t.Helper()
	_, rs, err := goBuilder(s, o).RecordsGo()
	require.NoError(t, err)
	return rs
}

// btToDevice rewrites rs as the CUDA build leaves it before the layout:
// the small subtrees as small records (rec, srefs; roots first, the other
// records and the leaves' references in an order shuffled by rng, as the
// kernel's scheduling may place them), and the large-phase leaves parked
// (every other one; the rest keep their references on the host). It
// returns rec, srefs and the parked references.
func btToDevice(rs *refbuild.Records, rng *rand.Rand) (rec, srefs, parked []uint32) {
	R := len(rs.Small)
	rec = make([]uint32, 3*R)
	order := rng.Perm(R)
	for _, i := range order {
		list := rs.SmallOut[i]
		// Local record j > 0 goes to global base+j-1; 0 is the root, i.
		base := uint32(len(rec) / 3)
		rec = append(rec, make([]uint32, 3*(len(list)-1))...)
		global := func(j int32) uint32 {
			if j == 0 {
				return uint32(i)
			}
			return base + uint32(j) - 1
		}
		for j := range list {
			r := &list[j]
			g := global(int32(j))
			if r.Fate == refbuild.FateLeaf {
				rec[3*g], rec[3*g+1], rec[3*g+2] = smallLeafFate, uint32(len(srefs)), uint32(len(r.Refs))
				srefs = append(srefs, r.Refs...)
				continue
			}
			rec[3*g], rec[3*g+1], rec[3*g+2] = uint32(r.Axis)<<8, mathFloat32bits(r.Pos), global(r.Left)
		}
	}
	leaf := 0
	for i := range rs.Recs {
		r := &rs.Recs[i]
		if r.Fate != refbuild.FateLeaf {
			continue
		}
		if leaf++; leaf%2 == 0 {
			continue
		}
		// Parked after some padding, as other nodes' references sit between.
		parked = append(parked, make([]uint32, rng.IntN(5))...)
		refs := r.Refs
		*r = refbuild.Record{Fate: refbuild.FateLeaf, Parked: true, Park: uint32(len(parked)), Pcnt: uint32(len(refs))}
		parked = append(parked, refs...)
	}
	return rec, srefs, parked
}

func mathFloat32bits(f float32) uint32 { return refbuild.InteriorNode(0, f, 0).W0 }

// The split layout (sizes, host top layout, per-root emit, parked copies),
// run with the reference loops of its kernels, equals layoutGo.
func TestBuildLayoutDeviceEqualsGo(t *testing.T) {
	list := procedural()
	if s := trySharedScene(t, "stanford-bunny.obj"); s != nil && !testing.Short() {
		list = append(list, s)
	}
	for _, s := range list {
		for _, o := range []goOpts{{}, {MaxDepth: 4}, {SmallNode: 5, Bins: 7}, {MaxDepth: 1}} {
			rs := btRecordsGo(t, s, o)
			if rs == nil {
				continue
			}
			wantNodes, wantRefs, err := refbuild.LayoutGo(rs)
			require.NoError(t, err)
			rec, srefs, parked := btToDevice(rs, rand.New(rand.NewPCG(uint64(len(s.Tris)), 5)))
			gotNodes, gotRefs, err := layoutSmallHost(rs, rec, srefs, parked)
			require.NoError(t, err)
			require.Equal(t, len(wantNodes), len(gotNodes), "%s %+v: nodes", s.Name, o)
			for i := range wantNodes {
				if wantNodes[i] != gotNodes[i] {
					t.Fatalf("%s %+v: node %d: layoutGo %v, split layout %v", s.Name, o, i, wantNodes[i], gotNodes[i])
				}
			}
			require.True(t, slices.Equal(wantRefs, gotRefs), "%s %+v: references", s.Name, o)
		}
	}
}

// smallSizes counts what smallEmit writes, and a corrupt record index is an
// error, not a panic.
func TestBuildSmallSizes(t *testing.T) {
	// Root 0: split with children 2 (leaf of 3) and 3 (split: 4 leaf of 0, 5
	// leaf of 2); root 1: a leaf of 1.
	rec := []uint32{
		0 << 8, mathFloat32bits(0.5), 2,
		smallLeafFate, 5, 1,
		smallLeafFate, 0, 3,
		2 << 8, mathFloat32bits(0.25), 4,
		smallLeafFate, 3, 0,
		smallLeafFate, 3, 2,
	}
	size, err := smallSizes(rec, 2)
	require.NoError(t, err)
	require.Equal(t, []uint32{5, 1, 5, 1}, size)
	srefs := []uint32{10, 11, 12, 13, 14, 15}
	nodes := make([]refbuild.Node, 6)
	refs := make([]uint32, 6)
	smallEmit(rec, srefs, 2, []uint32{0, 5, 0, 5}, nodes, refs)
	require.Equal(t, []refbuild.Node{
		refbuild.InteriorNode(0, 0.5, 2), refbuild.LeafNode(0, 3), refbuild.InteriorNode(2, 0.25, 4), refbuild.LeafNode(3, 0), refbuild.LeafNode(3, 2), refbuild.LeafNode(5, 1),
	}, nodes)
	require.Equal(t, []uint32{10, 11, 12, 13, 14, 15}, refs)
	_, err = smallSizes([]uint32{0, 0, 7}, 1)
	require.Error(t, err)
}

// TestPrefixSizes: the chunked running totals of the small subtrees'
// sizes equal a serial pass, for root counts at the chunk grain's edges
// and any number of workers, from nonzero starts.
func TestPrefixSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, roots := range []int{0, 1, 31, 32, 33, 1<<15 - 1, 1 << 15, 1<<15 + 1, 3<<15 + 5, 1 << 18} {
		size := make([]uint32, 2*roots)
		for i := range size {
			size[i] = rng.Uint32N(500)
		}
		order := make([]uint32, roots)
		for i, v := range rng.Perm(roots) {
			order[i] = uint32(v)
		}
		want := [2][]uint64{make([]uint64, roots+1), make([]uint64, roots+1)}
		want[0][0], want[1][0] = 5, 9
		for k, s := range order {
			want[0][k+1] = want[0][k] + uint64(size[s])
			want[1][k+1] = want[1][k] + uint64(size[roots+int(s)])
		}
		for _, workers := range []int{1, 2, 3, 8} {
			sn, sr := make([]uint64, roots+1), make([]uint64, roots+1)
			sn[0], sr[0] = 5, 9
			prefixSizes(order, size, sn, sr, workers)
			if !slices.Equal(sn, want[0]) || !slices.Equal(sr, want[1]) {
				t.Fatalf("%d roots, %d workers: running totals differ from a serial pass", roots, workers)
			}
		}
	}
}

// BenchmarkPlanTop times planTop on the bunny's records with its memory
// reused from build to build (planPool), as layoutCUDA uses it.
func BenchmarkPlanTop(b *testing.B) {
	s := trySharedScene(b, "stanford-bunny.obj")
	if s == nil {
		b.Skip("no shared scenes")
	}
	rs := btRecordsGo(b, s, goOpts{})
	b.ReportAllocs()
	for b.Loop() {
		p, err := planTop(rs)
		if err != nil {
			b.Fatal(err)
		}
		releasePlan(p)
	}
}
