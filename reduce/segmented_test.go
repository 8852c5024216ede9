package reduce

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// segCase is a segmentation of n elements.
type segCase struct {
	name    string
	n       int
	offsets []uint32
}

// randomOffsets splits n elements into ns segments whose lengths follow
// the given shape (with empty and one-element segments mixed in).
func randomOffsets(rng *rand.Rand, n, ns int, shape string) []uint32 {
	cuts := make([]int, 0, ns+1)
	cuts = append(cuts, 0)
	switch shape {
	case "random":
		for i := 1; i < ns; i++ {
			cuts = append(cuts, rng.IntN(n+1))
		}
	case "even":
		for i := 1; i < ns; i++ {
			cuts = append(cuts, i*n/ns)
		}
	case "skewed": // one huge segment, the rest of 0, 1 or 2 elements
		for i := 1; i < ns; i++ {
			cuts = append(cuts, max(0, n-3*(ns-i))+rng.IntN(2))
		}
	}
	cuts = append(cuts, n)
	slices.Sort(cuts) // O(n log n): an insertion sort here took hours for 2^20 random cuts
	off := make([]uint32, len(cuts))
	for i, c := range cuts {
		off[i] = uint32(c)
	}
	return off
}

// segCfg is a size and a segment count for segCases.
type segCfg struct{ n, ns int }

// bigSegCfgs are the GPU-only sizes of TestGPUSegmentedMatchesGo: few huge
// segments (the block-shared path), thousands of long ones and 2^20 tiny
// ones (the warp path). About 10^8 generated values in all.
var bigSegCfgs = []segCfg{{1 << 22, 1}, {1<<22 + 3, 5}, {1 << 22, 2000}, {1 << 22, 1 << 16}, {3 << 20, 1 << 20}, {1<<23 + 1, 7}}

// segCases mixes empty segments, one-element segments, few huge segments and
// many tiny ones; extra adds sizes meant for the GPU.
func segCases(extra []segCfg) []segCase {
	rng := rand.New(rand.NewPCG(11, 12))
	cases := []segCase{
		{"no-segments", 10, []uint32{0}},
		{"one-empty", 10, []uint32{3, 3}},
		{"empty-and-one", 5, []uint32{0, 0, 1, 1, 2, 5, 5}},
		{"all-one-element", 33, nil},
		{"prefix-only", 100, []uint32{0, 10, 20}},
	}
	cases[3].offsets = make([]uint32, 34)
	for i := range cases[3].offsets {
		cases[3].offsets[i] = uint32(i)
	}
	cfgs := append([]segCfg{{1000, 37}, {5000, 3}, {70000, 1}, {70000, 2}, {100000, 999}}, extra...)
	for _, c := range cfgs {
		for _, shape := range []string{"random", "even", "skewed"} {
			cases = append(cases, segCase{fmt.Sprintf("%s-%d-%d", shape, c.n, c.ns), c.n, randomOffsets(rng, c.n, c.ns, shape)})
		}
	}
	return cases
}

// refSegmented is the reference loop of SegmentedMin/Max.
func refSegmented(s []float32, off []uint32) (lo, hi []float32) {
	for i := 0; i+1 < len(off); i++ {
		lo = append(lo, refMin(s[off[i]:off[i+1]]))
		hi = append(hi, refMax(s[off[i]:off[i+1]]))
	}
	return lo, hi
}

func TestGoSegmentedMatchesOracle(t *testing.T) {
	for _, workers := range []int{1, 4} {
		ex := exec.Go(workers)
		for _, c := range segCases(nil) {
			for _, kind := range []string{"special", "uniform"} {
				s := genData(kind, c.n, 5)
				ns := len(c.offsets) - 1
				wantLo, wantHi := refSegmented(s, c.offsets)
				lo, hi := make([]float32, ns), make([]float32, ns)
				off := exec.Wrap(c.offsets)
				require.NoError(t, SegmentedMin(ex, exec.Wrap(lo), exec.Wrap(s), off))
				for i := range lo {
					bitsEqual(t, fmt.Sprintf("%s/%s min[%d]", c.name, kind, i), lo[i], wantLo[i])
				}
				require.NoError(t, SegmentedMax(ex, exec.Wrap(hi), exec.Wrap(s), off))
				for i := range hi {
					bitsEqual(t, fmt.Sprintf("%s/%s max[%d]", c.name, kind, i), hi[i], wantHi[i])
				}
				lo2, hi2 := make([]float32, ns), make([]float32, ns)
				require.NoError(t, SegmentedMinMax(ex, exec.Wrap(lo2), exec.Wrap(hi2), exec.Wrap(s), off))
				require.Equal(t, bitsOf(lo), bitsOf(lo2))
				require.Equal(t, bitsOf(hi), bitsOf(hi2))
			}
		}
	}
}

func bitsOf(s []float32) []uint32 {
	b := make([]uint32, len(s))
	for i, v := range s {
		b[i] = orderKey(v)
	}
	return b
}

func TestGoSegmentedRejectsBadOffsets(t *testing.T) {
	ex := exec.Go(2)
	s := exec.Wrap(make([]float32, 10))
	dst := exec.Wrap(make([]float32, 2))
	require.Error(t, SegmentedMin(ex, dst, s, exec.Wrap([]uint32{0, 5, 4})))
	require.Error(t, SegmentedMax(ex, dst, s, exec.Wrap([]uint32{0, 5, 11})))
	require.Panics(t, func() { _ = SegmentedMin(ex, dst, s, exec.Wrap([]uint32{0, 5})) })
	require.Panics(t, func() { _ = SegmentedMin(ex, dst, s, exec.Wrap([]uint32{})) })
	require.NoError(t, SegmentedMin(ex, exec.Wrap([]float32{}), s, exec.Wrap([]uint32{})))
}
