package kdtree

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// lgLevel is one large-phase level as the onLevel hook sees it.
type lgLevel struct {
	nodes []refbuild.LNode
	dec   []refbuild.Decision
}

func lgRecord(out *[]lgLevel) func([]refbuild.LNode, []refbuild.Decision) {
	return func(n []refbuild.LNode, d []refbuild.Decision) {
		*out = append(*out, lgLevel{append([]refbuild.LNode(nil), n...), append([]refbuild.Decision(nil), d...)})
	}
}

// The CUDA large phase (reduce's box reduction, shared-memory histograms,
// the warp-per-node SAH and the node tables made on the device, which the
// onLevel hook makes levelCUDA check against the host's nodes) decides
// every level as the Go one does, for bin counts around the warp width and
// the tile sizes, down to one reference per small node.
func TestLargeGPULevelsEqualGo(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	list := []*scenes.Scene{scenes.Soup(20000, 5), scenes.Grid(scenes.Icosphere(3), 2, 2, 2),
		scenes.HugeAmongTiny(5000, 3), scenes.Identical(3000), scenes.Soup(1, 1), scenes.Soup(65, 2)}
	opts := []Options{{Bins: 2}, {Bins: 31}, {Bins: 32}, {Bins: 33}, {Bins: 100}, {Bins: MaxBins},
		{SmallNode: 1}, {SmallNode: 1, Bins: 64, EmptyBonus: 0.8}}
	for _, s := range list {
		for _, o := range opts {
			name := fmt.Sprintf("%s %+v", s.Name, o)
			var goLv, gpuLv []lgLevel
			goOpt, gpuOpt := o, o
			goOpt.Executor, gpuOpt.Executor = exec.Go(0), ex
			want, err := build(context.Background(), s, goOpt, lgRecord(&goLv))
			require.NoError(t, err, name)
			got, err := build(context.Background(), s, gpuOpt, lgRecord(&gpuLv))
			require.NoError(t, err, name)
			for l := 0; l < min(len(goLv), len(gpuLv)); l++ {
				g, d := goLv[l], gpuLv[l]
				require.Equal(t, len(g.nodes), len(d.nodes), "%s: level %d node count", name, l)
				for i := range g.nodes {
					gn, dn := g.nodes[i], d.nodes[i]
					gn.Rec, dn.Rec = 0, 0 // record numbering is each path's own
					require.Equal(t, gn, dn, "%s: level %d node %d", name, l, i)
					require.Equal(t, g.dec[i], d.dec[i], "%s: level %d node %d decision", name, l, i)
				}
			}
			require.Equal(t, len(goLv), len(gpuLv), "%s: levels", name)
			btEqualTrees(t, name, want, got)
		}
	}
}
