package reduce

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOrderKeyIsMonotoneAndInvertible(t *testing.T) {
	vals := []float32{negInf, -math.MaxFloat32, -1e30, -1, -denorm, negZ, 0, denorm, 1e-30, 1, 1e30, math.MaxFloat32, posInf}
	require.True(t, sort.SliceIsSorted(vals, func(i, j int) bool { return refBefore(vals[i], vals[j]) }))
	for i, v := range vals {
		require.Equal(t, math.Float32bits(v), math.Float32bits(fromKey(orderKey(v))), "round trip of %v", v)
		if i > 0 {
			require.Less(t, orderKey(vals[i-1]), orderKey(v), "%v before %v", vals[i-1], v)
		}
	}
}

func TestNaNKeysAreIdentities(t *testing.T) {
	for _, v := range []float32{nanP, nanN, nanMax, nanMin, float32(math.NaN())} {
		require.Equal(t, minIdentity, minKey(v))
		require.Equal(t, maxIdentity, maxKey(v))
	}
	for _, v := range specials {
		if v != v {
			continue
		}
		require.Less(t, minKey(v), minIdentity, "%v", v)
		require.Greater(t, maxKey(v), maxIdentity, "%v", v)
	}
}

func TestMin2Max2(t *testing.T) {
	cases := []struct {
		a, b     float32
		min, max float32
	}{
		{negZ, 0, negZ, 0},
		{0, negZ, negZ, 0},
		{nanP, 1, 1, 1},
		{-1, nanN, -1, -1},
		{nanP, nanN, posInf, negInf},
		{posInf, negInf, negInf, posInf},
		{denorm, -denorm, -denorm, denorm},
		{3, 2, 2, 3},
	}
	for _, c := range cases {
		bitsEqual(t, "Min2", Min2(c.a, c.b), c.min)
		bitsEqual(t, "Max2", Max2(c.a, c.b), c.max)
	}
}
