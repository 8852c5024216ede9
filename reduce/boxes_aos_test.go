package reduce

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// aosBoxes returns n interleaved boxes of a data kind from a fixed seed.
func aosBoxes(kind string, n int) []float32 { return genData(kind, 6*n, 40) }

// refBoxesAoS is the reference loop of SegmentedBoxesAoS, with the oracle's
// float comparisons.
func refBoxesAoS(b []float32, off []uint32) []float32 {
	var out []float32
	for s := 0; s+1 < len(off); s++ {
		var box [6]float32
		for a := range 6 {
			var c []float32
			for i := off[s]; i < off[s+1]; i++ {
				c = append(c, b[6*int(i)+a])
			}
			if a < 3 {
				box[a] = refMin(c)
			} else {
				box[a] = refMax(c)
			}
		}
		out = append(out, box[:]...)
	}
	return out
}

// aosCases are segCases plus lengths around a warp's 32 lanes, the warp
// limit and the tile of the GPU kernels.
func aosCases(extra []segCfg) []segCase {
	cases := segCases(extra)
	lens := []int{31, 32, 33, 65, 96, 97, aosWarpLimit - 1, aosWarpLimit, aosWarpLimit + 1,
		aosTile - 1, aosTile, aosTile + 1, 3*aosTile + 5}
	off := []uint32{0}
	for _, l := range lens {
		off = append(off, off[len(off)-1]+uint32(l), off[len(off)-1]+uint32(l)) // and an empty one
	}
	cases = append(cases, segCase{"edge-lengths", int(off[len(off)-1]), off})
	for _, l := range lens {
		cases = append(cases, segCase{fmt.Sprintf("one-%d", l), l, []uint32{0, uint32(l)}})
	}
	return cases
}

func TestGoSegmentedBoxesAoSMatchesOracle(t *testing.T) {
	for _, workers := range []int{1, 4} {
		ex := exec.Go(workers)
		for _, c := range aosCases(nil) {
			for _, kind := range []string{"special", "zeros", "uniform"} {
				b := aosBoxes(kind, c.n)
				out := make([]float32, 6*(len(c.offsets)-1))
				require.NoError(t, SegmentedBoxesAoS(ex, exec.Wrap(out), exec.Wrap(b), exec.Wrap(c.offsets)))
				require.Equal(t, bitsOf(refBoxesAoS(b, c.offsets)), bitsOf(out), "w%d %s/%s", workers, c.name, kind)
			}
		}
	}
}

// TestGoSegmentedBoxesAoSMatchesSoA: the AoS form gives the bits of
// SegmentedBoxes over the same boxes split into six arrays.
func TestGoSegmentedBoxesAoSMatchesSoA(t *testing.T) {
	ex := exec.Go(3)
	for _, c := range aosCases(nil) {
		b := aosBoxes("special", c.n)
		var lo, hi [3]*exec.Buf[float32]
		for a := range 3 {
			l, h := make([]float32, c.n), make([]float32, c.n)
			for i := range c.n {
				l[i], h[i] = b[6*i+a], b[6*i+3+a]
			}
			lo[a], hi[a] = exec.Wrap(l), exec.Wrap(h)
		}
		ns := len(c.offsets) - 1
		want, got := make([]float32, 6*ns), make([]float32, 6*ns)
		require.NoError(t, SegmentedBoxes(ex, exec.Wrap(want), lo, hi, exec.Wrap(c.offsets)))
		require.NoError(t, SegmentedBoxesAoS(ex, exec.Wrap(got), exec.Wrap(b), exec.Wrap(c.offsets)))
		require.Equal(t, bitsOf(want), bitsOf(got), c.name)
	}
}

func TestGoSegmentedBoxesAoSZeroSigns(t *testing.T) {
	// min(-0, +0) = -0 and max(-0, +0) = +0 whatever their order.
	b := []float32{0, negZ, 0, negZ, 0, negZ, negZ, 0, negZ, 0, negZ, 0}
	out := make([]float32, 12)
	require.NoError(t, SegmentedBoxesAoS(exec.Go(1), exec.Wrap(out), exec.Wrap(b), exec.Wrap([]uint32{0, 2, 2})))
	want := []float32{negZ, negZ, negZ, 0, 0, 0, posInf, posInf, posInf, negInf, negInf, negInf}
	require.Equal(t, bitsOf(want), bitsOf(out))
}

func TestGoSegmentedBoxesAoSRejectsBadInput(t *testing.T) {
	ex := exec.Go(2)
	b := exec.Wrap(make([]float32, 60))
	out := exec.Wrap(make([]float32, 12))
	require.Error(t, SegmentedBoxesAoS(ex, out, b, exec.Wrap([]uint32{0, 5, 4})))
	require.Error(t, SegmentedBoxesAoS(ex, out, b, exec.Wrap([]uint32{0, 5, 11})))
	require.Panics(t, func() { _ = SegmentedBoxesAoS(ex, out, exec.Wrap(make([]float32, 7)), exec.Wrap([]uint32{0, 1, 1})) })
	require.Panics(t, func() { _ = SegmentedBoxesAoS(ex, exec.Wrap(make([]float32, 7)), b, exec.Wrap([]uint32{0, 1, 1})) })
	require.Panics(t, func() { _ = SegmentedBoxesAoS(ex, out, b, exec.Wrap([]uint32{0, 1})) })
	require.NoError(t, SegmentedBoxesAoS(ex, exec.Wrap([]float32{}), b, exec.Wrap([]uint32{})))
}

func TestGPUSegmentedBoxesAoSMatchesGo(t *testing.T) {
	ex := gpuOrSkip(t)
	var extra []segCfg
	if !testing.Short() && gpuMaxK() >= 21 {
		extra = []segCfg{{1 << 21, 1}, {1<<21 + 3, 1000}, {1 << 21, 1 << 16}, {1 << 22, 1 << 15}}
	}
	r := NewReducer(ex)
	defer r.Free()
	for _, c := range aosCases(extra) {
		if c.n > 1<<gpuMaxK() {
			continue
		}
		for _, kind := range []string{"special", "uniform"} {
			b := aosBoxes(kind, c.n)
			ns := len(c.offsets) - 1
			want := make([]float32, 6*ns)
			require.NoError(t, SegmentedBoxesAoS(exec.Go(0), exec.Wrap(want), exec.Wrap(b), exec.Wrap(c.offsets)))
			off, err := exec.FromHost(ex, c.offsets)
			require.NoError(t, err)
			// Aligned (the pads keep 8-byte alignment) and misaligned by one float.
			for _, shift := range []int{0, 1} {
				padded := make([]float32, shift+len(b)+6)
				copy(padded[shift:], b)
				for i := range padded {
					if i < shift || i >= shift+len(b) {
						padded[i] = []float32{negInf, negInf, negInf, posInf, posInf, posInf}[i%6]
					}
				}
				dev, err := exec.FromHost(ex, padded)
				require.NoError(t, err)
				// Twice through one Reducer: the counters must come back to 0.
				for rep := range 2 {
					out, read := guarded(t, ex, 6*ns)
					require.NoError(t, r.SegmentedBoxesAoS(out, dev.Slice(shift, len(b)), off), c.name)
					require.Equal(t, bitsOf(want), bitsOf(read()), "%s/%s shift %d rep %d", c.name, kind, shift, rep)
				}
				dev.Free()
			}
			off.Free()
		}
	}
}

func BenchmarkGPUSegmentedBoxesAoS(b *testing.B) {
	ex := gpuOrSkip(b)
	ctx := ex.CUDA()
	const n = 1 << 23 // about a grid build's references
	boxes, err := exec.FromHost(ex, benchData(6*n))
	require.NoError(b, err)
	defer boxes.Free()
	r := NewReducer(ex)
	defer r.Free()
	for _, ns := range []int{1, 64, 1 << 12, 1 << 15, 1 << 17} {
		offs := make([]uint32, ns+1)
		for i := range offs {
			offs[i] = uint32(i * n / ns)
		}
		off, err := exec.FromHost(ex, offs)
		require.NoError(b, err)
		out, err := exec.Alloc[float32](ex, 6*ns)
		require.NoError(b, err)
		require.NoError(b, r.SegmentedBoxesAoS(out, boxes, off)) // scratch allocated before timing
		require.NoError(b, ctx.Synchronize())
		b.Run(fmt.Sprintf("segments=%d", ns), func(b *testing.B) {
			b.SetBytes(24 * n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := r.SegmentedBoxesAoS(out, boxes, off); err != nil {
					b.Fatal(err)
				}
			}
			if err := ctx.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
		off.Free()
		out.Free()
	}
}
