package kdtree

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// Where the duplication budget acts, the CUDA executor builds the Go
// executor's tree and Stats.Limited, on every path: pipelined or level by
// level, with the tests' level hook (which compares each level's node
// table, budgets included, with the host's), and with the fast paths off.
func TestBuildGPUBudgetEqualsGo(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	list := []*scenes.Scene{scenes.Slivers(3000, 5), scenes.Slivers(40000, 7)}
	if s := btTrySharedScene(t, "conference.obj.gz"); s != nil {
		list = append(list, s)
	}
	variants := []struct {
		name string
		off  gpubuild.Paths
	}{
		{"level by level", gpubuild.PathPipeline},
		{"host's count and small roots", gpubuild.PathEarlySmall | gpubuild.PathQueuedPrepare},
		{"every fast path off", 1<<gpubuild.NumPaths - 1},
		{"", 0},
	}
	for _, s := range list {
		for _, o := range []Options{{}, {MaxDuplication: 2}, {MaxDuplication: 5, SmallNode: 16}} {
			goOpt := o
			goOpt.Executor = exec.Go(0)
			want, err := Build(context.Background(), s, goOpt)
			require.NoError(t, err)
			limited := want.Stats().Limited
			for _, v := range variants {
				got, err := Build(context.Background(), s, btGPUOptions(o, ex, func(c *gpubuild.Config) { c.Off = v.off }))
				require.NoError(t, err, s.Name)
				btEqualTrees(t, s.Name+" "+v.name, want, got)
				require.Equal(t, limited, got.Stats().Limited, "%s %+v (%s)", s.Name, o, v.name)
			}
			hooked, err := build(context.Background(), s, btGPUOptions(o, ex, nil), func([]refbuild.LNode, []refbuild.Decision) {})
			require.NoError(t, err, s.Name)
			btEqualTrees(t, s.Name+" with the level hook", want, hooked)
			require.Equal(t, limited, hooked.Stats().Limited, "%s %+v (level hook)", s.Name, o)
			t.Logf("%s MaxDuplication %d: %.2f references per triangle, SAH %.1f; limited %q",
				s.Name, o.MaxDuplication, want.Stats().ReferencesPerTriangle, want.Stats().SAHCost, limited)
		}
	}
}
