package kdtree

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// The device small phase (kdtree_small_w_f32) builds the Go executor's
// tree with the default and other options, its output laid out both ways:
// records placed a thread each, and walked per root (the places' limit
// lowered so that the kernel reports subtrees too large for them); the
// roots' words sent in one array and as the booker's arrays
// (smallPackRoots 0).
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
	for _, s := range list {
		for _, o := range []Options{{}, {SmallNode: 16, EmptyBonus: 0.8}, {MaxDepth: 12, IntersectCost: 3}} {
			goOpt := o
			goOpt.Executor = exec.Go(0)
			want, err := Build(context.Background(), s, goOpt)
			require.NoError(t, err)
			for _, c := range []struct {
				limit uint32
				pack  int
			}{{0xFFFF, 1 << 15}, {2, 1 << 15}, {1, 1 << 15}, {0xFFFF, 0}} {
				got, err := Build(context.Background(), s, btGPUOptions(o, ex, func(g *gpubuild.Config) {
					g.SmallPlaceLimit, g.SmallPackRoots = c.limit, c.pack
				}))
				require.NoError(t, err, s.Name)
				btEqualTrees(t, fmt.Sprintf("%s %+v (place limit %d, packed roots %v)", s.Name, o, c.limit, c.pack > 0),
					want, got)
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
		got, err := Build(context.Background(), s, btGPUOptions(Options{}, ex, func(c *gpubuild.Config) {
			c.SmallCaps = c.SmallCaps[:1]
		}))
		require.NoError(t, err, s.Name)
		btEqualTrees(t, s.Name+" (first room only)", want, got)
		if len(got.Nodes) > 1 {
			require.Contains(t, got.Stats().Phases, "download", s.Name)
		}
		for _, caps := range [][][2]int{{{0, 0}, {6, 4}}, {{0, 0}}, {{6, 0}, {0, 4}, {6, 4}}} {
			got, err := Build(context.Background(), s, btGPUOptions(Options{}, ex, func(c *gpubuild.Config) { c.SmallCaps = caps }))
			require.NoError(t, err, "%s %v", s.Name, caps)
			btEqualTrees(t, fmt.Sprintf("%s, small caps %v", s.Name, caps), want, got)
		}
	}
}
