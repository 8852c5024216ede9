package reduce

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// checkInto runs MinMaxInto and BoundsInto on ex and compares with the
// oracles.
func checkInto(t *testing.T, ex exec.Executor, s []float32, put func([]float32) *exec.Buf[float32], get func(*exec.Buf[float32]) []float32) {
	t.Helper()
	src := put(s)
	dst := put(make([]float32, 2))
	require.NoError(t, MinMaxInto(ex, dst, src))
	require.Equal(t, bitsOf([]float32{refMin(s), refMax(s)}), bitsOf(get(dst)), "n=%d", len(s))
	xyz := s[:len(s)/3*3]
	box := put(make([]float32, 6))
	require.NoError(t, BoundsInto(ex, box, put(xyz)))
	lo, hi := refBounds(xyz)
	require.Equal(t, bitsOf(append(lo[:], hi[:]...)), bitsOf(get(box)), "n=%d", len(s))
}

func TestGoInto(t *testing.T) {
	ex := exec.Go(2)
	for _, n := range []int{0, 1, 33, 1000, 70001} {
		checkInto(t, ex, genData("special", n, 3), exec.Wrap[float32], func(b *exec.Buf[float32]) []float32 { return b.Host() })
	}
	require.Panics(t, func() { _ = MinMaxInto(ex, exec.Wrap(make([]float32, 3)), exec.Wrap([]float32{1})) })
	require.Panics(t, func() { _ = BoundsInto(ex, exec.Wrap(make([]float32, 5)), exec.Wrap([]float32{1, 2, 3})) })
}

func TestGPUInto(t *testing.T) {
	ex := gpuOrSkip(t)
	var bufs []*exec.Buf[float32]
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	put := func(s []float32) *exec.Buf[float32] {
		b, err := exec.FromHost(ex, s)
		require.NoError(t, err)
		bufs = append(bufs, b)
		return b
	}
	get := func(b *exec.Buf[float32]) []float32 {
		h, err := b.ToHost()
		require.NoError(t, err)
		return h
	}
	for _, n := range []int{0, 1, 33, 1000, 70001, 1<<22 + 1} {
		checkInto(t, ex, genData("special", n, 3), put, get)
	}
}
