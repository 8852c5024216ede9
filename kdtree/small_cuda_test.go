package kdtree

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// Both device small-phase kernels (kdtree_small_f32 and kdtree_small_w_f32)
// build the Go executor's tree, with the default and other options, with
// the device layout and the host one (which downloads the records); the
// device layout of kdtree_small_w_f32's output both ways: records placed
// a thread each, and walked per root (the places' limit lowered so that
// the kernel reports subtrees too large for them); the roots' words sent
// in one array and as the booker's arrays (smallPackRoots 0).
func TestBuildGPUSmallKernelsEqualGo(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	list := btProcedural()
	for _, sc := range btShared {
		if s := btTrySharedScene(t, sc.file); s != nil {
			list = append(list, s)
		}
	}
	defer func(p int) { cudaSmallV1, cudaLayoutDevice, smallPlaceLimit, smallPackRoots = false, true, 0xFFFF, p }(smallPackRoots)
	for _, s := range list {
		for _, o := range []Options{{}, {SmallNode: 16, EmptyBonus: 0.8}, {MaxDepth: 12, IntersectCost: 3}} {
			goOpt, gpuOpt := o, o
			goOpt.Executor, gpuOpt.Executor = exec.Go(0), ex
			want, err := Build(context.Background(), s, goOpt)
			require.NoError(t, err)
			for _, v1 := range []bool{true, false} {
				for _, dev := range []bool{true, false} {
					for _, limit := range []uint32{0xFFFF, 2, 1} {
						if limit != 0xFFFF && (v1 || !dev) {
							continue // only the device layout after the warp kernel uses places
						}
						// limit 1 stands for the default limit with the
						// roots' words not packed.
						cudaSmallV1, cudaLayoutDevice, smallPlaceLimit, smallPackRoots = v1, dev, limit, 1<<15
						if limit == 1 {
							smallPlaceLimit, smallPackRoots = 0xFFFF, 0
						}
						got, err := Build(context.Background(), s, gpuOpt)
						require.NoError(t, err, s.Name)
						btEqualTrees(t, fmt.Sprintf("%s %+v (v1 kernel %v, device layout %v, place limit %d, packed roots %v)",
							s.Name, o, v1, dev, smallPlaceLimit, smallPackRoots > 0), want, got)
					}
				}
			}
		}
	}
}

// The chunked output of kdtree_small_w_f32 fits in the first room
// runSmallCUDA gives it on the shared scenes (no second launch), and its
// retries and the Go fallback still make the Go tree when the room is
// too small.
func TestBuildGPUSmallWarpsRoom(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	defer func(c [][2]int) { smallCaps = c }(smallCaps)
	list := []*scenes.Scene{scenes.Soup(3000, 17), scenes.Grid(scenes.Icosphere(2), 2, 2, 1)}
	for _, sc := range btShared[:5] {
		if s := btTrySharedScene(t, sc.file); s != nil {
			list = append(list, s)
		}
	}
	for _, s := range list {
		want, err := Build(context.Background(), s, Options{})
		require.NoError(t, err)
		// Only the first room: an overflow falls back to the Go small
		// phase, which the tree cannot show; the phases can (the
		// "download" phase exists only when the device small phase fitted).
		smallCaps = smallCaps[:1]
		got, err := Build(context.Background(), s, Options{Executor: ex})
		require.NoError(t, err, s.Name)
		btEqualTrees(t, s.Name+" (first room only)", want, got)
		if cudaLayoutOnDevice() && len(got.Nodes) > 1 {
			require.Contains(t, got.Stats().Phases, "download", s.Name)
		}
		for _, caps := range [][][2]int{{{0, 0}, {6, 4}}, {{0, 0}}, {{6, 0}, {0, 4}, {6, 4}}} {
			smallCaps = caps
			got, err := Build(context.Background(), s, Options{Executor: ex})
			require.NoError(t, err, "%s %v", s.Name, caps)
			btEqualTrees(t, fmt.Sprintf("%s, small caps %v", s.Name, caps), want, got)
		}
		smallCaps = [][2]int{{6, 4}, {16, 8}, {64, 32}}
	}
}

// toRecords reads only the records reachable from the roots (the chunked
// kernel leaves unused ones holding anything) and rejects corrupt ones.
func TestSmallToRecords(t *testing.T) {
	const junk = 0xDEADBEEF
	f := math.Float32bits(1.5)
	// Root 0: split on y at 1.5, children 4 (leaf of refs 2..3) and 5
	// (leaf of ref 0); root 1: an empty leaf. Records 2, 3, 6 unused.
	rec := []uint32{
		1 << 8, f, 4,
		1, 0, 0,
		junk, junk, junk,
		junk, 7, junk,
		1, 2, 2,
		1, 0, 1,
		junk, junk, junk,
	}
	refs := []uint32{10, junk, 30, 40}
	so := &smallDev{rec: exec.Wrap(rec), refs: exec.Wrap(refs), nrec: len(rec) / 3, nrefs: len(refs), roots: 2}
	rs := &records{}
	require.NoError(t, so.toRecords(rs))
	require.Len(t, rs.shared, 7)
	require.Equal(t, record{fate: fateSplit, axis: 1, pos: 1.5, left: 4}, rs.shared[0])
	require.Equal(t, fateLeaf, int(rs.shared[1].fate))
	require.Empty(t, rs.shared[1].refs)
	require.Equal(t, []uint32{30, 40}, rs.shared[4].refs)
	require.Equal(t, []uint32{10}, rs.shared[5].refs)
	for _, bad := range []struct {
		name string
		at   int
		v    uint32
	}{
		{"leaf past the references", 4*3 + 2, 3},
		{"child past the records", 0*3 + 2, 6},
		{"axis 3", 0*3 + 0, 3 << 8},
		{"unknown fate", 0*3 + 0, 2},
		{"cycle", 0*3 + 2, 0},
	} {
		r := append([]uint32(nil), rec...)
		r[bad.at] = bad.v
		so.rec = exec.Wrap(r)
		require.Error(t, so.toRecords(&records{}), bad.name)
	}
}
