package refbuild

import (
	"testing"

	"github.com/kdbuild/kdbuild/kernels/consts"
)

// TestFatesMatchKernels checks the node fates against kernels/consts, the
// kernels' source: they stay untyped here because the host compares them
// with both the device's decision words (uint32) and Record.Fate.
func TestFatesMatchKernels(t *testing.T) {
	for _, c := range []struct {
		name      string
		here, dev int32
	}{
		{"split", FateSplit, consts.FateSplit},
		{"leaf", FateLeaf, consts.FateLeaf},
		{"small", FateSmall, consts.FateSmall},
	} {
		if c.here != c.dev {
			t.Errorf("Fate %s: %d here, %d in kernels/consts", c.name, c.here, c.dev)
		}
	}
}
