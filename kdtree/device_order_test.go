package kdtree

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/scenes"
)

func TestInterleave(t *testing.T) {
	for _, c := range []struct {
		xs   []uint64
		bits int
		want uint64
	}{
		{[]uint64{1, 0}, 1, 1},
		{[]uint64{0, 1}, 1, 2},
		{[]uint64{3, 0}, 2, 0b0101},
		{[]uint64{0, 0, 7}, 3, 0b100100100},
		{[]uint64{1023, 1023, 1023, 1023, 1023, 1023}, 10, 1<<60 - 1},
	} {
		require.Equal(t, c.want, interleave(c.xs, c.bits), "%v", c.xs)
	}
}

// Every order of rayOrders is a permutation of the rays.
func TestSortedRaysPermutes(t *testing.T) {
	b := scenes.Bounds{Max: [3]float32{1, 2, 3}}
	rays := RandomRays(b, 1000)
	for _, o := range rayOrders {
		got := sortedRays(rays, b, o.key)
		require.Len(t, got, len(rays), o.name)
		seen := map[Ray]int{}
		for _, r := range rays {
			seen[r]++
		}
		for _, r := range got {
			seen[r]--
		}
		for r, n := range seen {
			require.Zero(t, n, "%s: %v", o.name, r)
		}
	}
}
