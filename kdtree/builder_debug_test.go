package kdtree

import (
	"context"
	"os"
	"testing"
)

func TestDebugQuality(t *testing.T) {
	if os.Getenv("KD_DEBUG") == "" {
		t.Skip()
	}
	for _, f := range []string{"stanford-bunny.obj", "spot.obj", "dragon-19k.obj.gz"} {
		s := btSharedScene(t, f)
		for _, o := range []Options{{EmptyBonus: -1}, {EmptyBonus: 0.1}} {
			for _, ec := range []float32{0.25, 0.4, 2} {
				_ = ec
				tr, err := Build(context.Background(), s, o)
				if err != nil {
					t.Fatal(err)
				}
				st := tr.Stats()
				t.Logf("%s eb %.1f sn %d bins %d cut %.2f: SAH %.2f refs %.2f nodes %d empty %d", f, o.EmptyBonus, o.SmallNode, o.Bins, ec, st.SAHCost, st.ReferencesPerTriangle, st.Nodes, st.EmptyLeaves)
			}
		}
	}

}
