package reduce

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// synthWorkload mimics the levels of a kd-tree build of about n
// triangles: level 0 is one segment of n boxes; level k has 2^k segments
// (random cuts, so some are empty or tiny and some long) over n·(1 + k/8)
// boxes (references straddling splits); the last level adds a run of
// empty segments. Boxes mix ±0, ±Inf and NaN in (data kind "special").
func synthWorkload(n, levels int) []BoxLevel {
	rng := rand.New(rand.NewPCG(77, uint64(n)))
	var wl []BoxLevel
	for k := range levels {
		m := n + n*k/8
		off := randomOffsets(rng, m, 1<<k, "random")
		if k == levels-1 {
			for range 5 {
				off = append(off, off[len(off)-1])
			}
		}
		wl = append(wl, BoxLevel{Boxes: genData("special", 6*m, uint64(60+k)), Offsets: off})
	}
	return wl
}

// runPlanOnHost executes the passes of planBoxPasses with a Go block
// reduction (the min and max over each block's span), as the GPU designs
// do, and returns the per-segment boxes.
func runPlanOnHost(boxes []float32, offsets []uint32, span int, onePass bool) ([]float32, int) {
	passes, first := planBoxPasses(offsets, span, onePass)
	in := boxes
	for _, e := range passes {
		out := make([]float32, 6*(len(e)/4))
		for b := 0; b < len(e)/4; b++ {
			k := aosIdentity
			aosKeys(&k, in[6*int(e[4*b]):6*int(e[4*b]+e[4*b+1])])
			aosStore(out[6*b:], k)
		}
		in = out
	}
	if onePass { // the last block of each segment folds the segment's blocks
		ns := len(offsets) - 1
		out := make([]float32, 6*ns)
		for s := range ns {
			k := aosIdentity
			aosKeys(&k, in[6*int(first[s]):6*int(first[s+1])])
			aosStore(out[6*s:], k)
		}
		in = out
	}
	return in, len(passes)
}

func TestPlanBoxPasses(t *testing.T) {
	for _, c := range aosCases(nil) {
		b := aosBoxes("special", c.n)
		want := refBoxesAoS(b, c.offsets)
		for _, span := range []int{2, 7, 256, 512, 4096} {
			for _, one := range []bool{false, true} {
				name := fmt.Sprintf("%s span %d one-pass %v", c.name, span, one)
				passes, _ := planBoxPasses(c.offsets, span, one)
				for _, e := range passes {
					for i := 1; i < len(e); i += 4 {
						require.LessOrEqual(t, int(e[i]), span, name)
					}
				}
				if !one { // the last pass has one block per segment
					require.Len(t, passes[len(passes)-1], 4*(len(c.offsets)-1), name)
				} else {
					require.Len(t, passes, 1, name)
				}
				got, _ := runPlanOnHost(b, c.offsets, span, one)
				require.Equal(t, bitsOf(want), bitsOf(got), name)
			}
		}
	}
	// Passes: ⌈log_span(longest segment)⌉, at least 1.
	for _, c := range []struct{ n, span, passes int }{{0, 256, 1}, {256, 256, 1}, {257, 256, 2}, {65536, 256, 2}, {65537, 256, 3}, {262144, 512, 2}, {262145, 512, 3}} {
		passes, _ := planBoxPasses([]uint32{0, uint32(c.n)}, c.span, false)
		require.Equal(t, c.passes, len(passes), "n=%d span=%d", c.n, c.span)
	}
}

// Every design's segmented box form, level by level, against the Go
// executor (what ThesisTable checks before timing, without the timing).
func TestGPUBoxDesignsMatchGo(t *testing.T) {
	ex := gpuOrSkip(t)
	n := 300000
	if k := gpuMaxK(); n > 1<<k {
		n = 1 << k
	}
	wl := synthWorkload(n, 9)
	wl = append(wl, BoxLevel{Boxes: nil, Offsets: []uint32{0, 0, 0}}) // no boxes at all
	tw, err := newThesisWork(ex, wl)
	require.NoError(t, err)
	defer tw.free()
	for _, v := range Variants() {
		plans, err := tw.plan(v)
		require.NoError(t, err)
		for rep := range 2 { // r7's counters must be back at 0
			for i, l := range wl {
				want := make([]float32, 6*l.Segments())
				require.NoError(t, SegmentedBoxesAoS(exec.Go(0), exec.Wrap(want), exec.Wrap(l.Boxes), exec.Wrap(l.Offsets)))
				require.NoError(t, tw.runLevel(v, i, plans[i]))
				require.NoError(t, tw.check(v.Name, i, want), "rep %d", rep)
			}
		}
		for _, p := range plans {
			p.free()
		}
	}
}
