package kdtree

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/scenes"
)

// The recorded workload is the build's own: one reduction per level, the
// first over every kept triangle as one segment, each level's segments the
// nodes the build decided on, and the reductions' results (checked against
// a brute-force union) nested in those nodes' boxes.
func TestReductionWorkload(t *testing.T) {
	list := []*scenes.Scene{scenes.Default(), scenes.Soup(0, 1), scenes.Soup(1, 1), scenes.Soup(65, 2),
		scenes.Coplanar(2000, 4), scenes.Identical(300)}
	for _, s := range list {
		t.Run(s.Name, func(t *testing.T) {
			levels, err := ReductionWorkload(context.Background(), s, Options{})
			require.NoError(t, err)
			// The same build, with the nodes of every level.
			var nodes [][]refbuild.LNode
			tree, err := build(context.Background(), s, Options{}, func(n []refbuild.LNode, _ []refbuild.Decision) {
				nodes = append(nodes, append([]refbuild.LNode(nil), n...))
			})
			require.NoError(t, err)
			st := tree.Stats()
			kept := len(s.Tris) - st.DroppedTriangles
			require.Len(t, levels, st.Levels)
			require.Len(t, levels, len(nodes))
			if kept == 0 {
				require.Empty(t, levels)
				return
			}
			require.Positive(t, len(levels))
			require.Equal(t, []uint32{0, uint32(kept)}, levels[0].Offsets)
			require.Len(t, levels[0].Boxes, 6*kept)
			for k, lv := range levels {
				nn := len(nodes[k])
				require.Len(t, lv.Offsets, nn+1, "level %d", k)
				require.Len(t, lv.Boxes, 6*int(lv.Offsets[nn]), "level %d", k)
				out := make([]float32, 6*nn)
				require.NoError(t, reduce.SegmentedBoxesAoS(exec.Go(0), exec.Wrap(out), exec.Wrap(lv.Boxes), exec.Wrap(lv.Offsets)))
				for i, n := range nodes[k] {
					require.Equal(t, n.Off, lv.Offsets[i], "level %d node %d", k, i)
					require.Equal(t, n.Off+n.Cnt, lv.Offsets[i+1], "level %d node %d", k, i)
					want := refbuild.EmptyBox()
					for r := n.Off; r < n.Off+n.Cnt; r++ {
						var bx refbuild.AABB
						copy(bx.Lo[:], lv.Boxes[6*r:6*r+3])
						copy(bx.Hi[:], lv.Boxes[6*r+3:6*r+6])
						want.Union(&bx)
					}
					for a := 0; a < 3; a++ {
						lo, hi := out[6*i+a], out[6*i+3+a]
						require.True(t, lo == want.Lo[a] && hi == want.Hi[a], "level %d node %d axis %d: reduced [%v, %v], union [%v, %v]",
							k, i, a, lo, hi, want.Lo[a], want.Hi[a])
						if n.Cnt == 0 {
							require.True(t, math.IsInf(float64(lo), 1) && math.IsInf(float64(hi), -1))
							continue
						}
						require.True(t, lo >= n.Box.Lo[a] && hi <= n.Box.Hi[a] && lo <= hi,
							"level %d node %d axis %d: tight [%v, %v] outside the node's [%v, %v]", k, i, a, lo, hi, n.Box.Lo[a], n.Box.Hi[a])
					}
				}
			}
			if k := len(levels) - 1; k > 0 {
				t.Logf("%s: %d levels, last %d nodes, %d references", s.Name, len(levels), len(nodes[k]), levels[k].Offsets[len(nodes[k])])
			}
		})
	}
}
