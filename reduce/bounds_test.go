package reduce

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

func refBounds(xyz []float32) (lo, hi [3]float32) {
	for a := range 3 {
		var c []float32
		for i := a; i < len(xyz); i += 3 {
			c = append(c, xyz[i])
		}
		lo[a], hi[a] = refMin(c), refMax(c)
	}
	return lo, hi
}

func TestGoBoundsMatchesOracle(t *testing.T) {
	for _, workers := range []int{1, 4} {
		ex := exec.Go(workers)
		for _, kind := range []string{"uniform", "special", "descending"} {
			for _, pts := range []int{0, 1, 2, 31, 32, 33, 127, 128, 129, 1000, 100001} {
				xyz := genData(kind, 3*pts, 9)
				lo, hi, err := Bounds(ex, exec.Wrap(xyz))
				require.NoError(t, err)
				wlo, whi := refBounds(xyz)
				for a := range 3 {
					bitsEqual(t, fmt.Sprintf("w%d/%s/%d lo[%d]", workers, kind, pts, a), lo[a], wlo[a])
					bitsEqual(t, fmt.Sprintf("w%d/%s/%d hi[%d]", workers, kind, pts, a), hi[a], whi[a])
				}
			}
		}
	}
	require.Panics(t, func() { _, _, _ = Bounds(exec.Go(1), exec.Wrap(make([]float32, 4))) })
}

// boxArrays returns six arrays of n boxes from a fixed seed.
func boxArrays(kind string, n int) (lo, hi [3][]float32) {
	for a := range 3 {
		lo[a] = genData(kind, n, uint64(20+a))
		hi[a] = genData(kind, n, uint64(30+a))
	}
	return lo, hi
}

func refBoxes(lo, hi [3][]float32, off []uint32) []float32 {
	var out []float32
	for s := 0; s+1 < len(off); s++ {
		var box [6]float32
		for a := range 3 {
			box[a] = refMin(lo[a][off[s]:off[s+1]])
			box[3+a] = refMax(hi[a][off[s]:off[s+1]])
		}
		out = append(out, box[:]...)
	}
	return out
}

func TestGoSegmentedBoxesMatchesOracle(t *testing.T) {
	ex := exec.Go(4)
	for _, c := range segCases(nil) {
		lo, hi := boxArrays("special", c.n)
		var blo, bhi [3]*exec.Buf[float32]
		for a := range 3 {
			blo[a], bhi[a] = exec.Wrap(lo[a]), exec.Wrap(hi[a])
		}
		out := make([]float32, 6*(len(c.offsets)-1))
		require.NoError(t, SegmentedBoxes(ex, exec.Wrap(out), blo, bhi, exec.Wrap(c.offsets)))
		require.Equal(t, bitsOf(refBoxes(lo, hi, c.offsets)), bitsOf(out), c.name)
	}
}
