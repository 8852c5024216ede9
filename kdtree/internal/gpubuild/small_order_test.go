package gpubuild

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLargestFirst checks the small roots' launch order against a stable
// sort by decreasing count.
func TestLargestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	random := func(n int, hi uint32) []uint32 {
		c := make([]uint32, n)
		for i := range c {
			c[i] = rng.Uint32N(hi + 1)
		}
		return c
	}
	cases := []struct {
		name string
		cnt  []uint32
	}{
		{"empty", nil},
		{"one", []uint32{5}},
		{"zeros", []uint32{0, 0, 0}},
		{"ascending", []uint32{1, 2, 3, 4}},
		{"ties", []uint32{3, 1, 3, 2, 1, 3}},
		{"random 33", random(33, 64)},
		{"random 4097", random(4097, 64)},
		{"random 2^16+1", random(1<<16+1, 64)},
		{"random 5·2^16-3", random(5<<16-3, 64)},
		{"random 3·2^16, large counts", random(3<<16, 1000)},
	}
	for _, c := range cases {
		want := make([]uint32, len(c.cnt))
		for i := range want {
			want[i] = uint32(i)
		}
		slices.SortStableFunc(want, func(a, b uint32) int { return int(c.cnt[b]) - int(c.cnt[a]) })
		for _, workers := range []int{1, 2, 3, 8} {
			got := make([]uint32, len(c.cnt))
			largestFirst(c.cnt, got, workers)
			if !slices.Equal(got, want) {
				t.Errorf("%s, %d workers: order differs from a stable sort by decreasing count", c.name, workers)
			}
		}
		// largestFirstHist with the histogram book makes, and with wrong
		// ones (it must notice and sort anyway).
		total, hist := 0, []int{}
		for _, v := range c.cnt {
			total += int(v)
			if int(v) >= len(hist) {
				hist = append(hist, make([]int, int(v)+1-len(hist))...)
			}
			hist[v]++
		}
		shifted := append([]int{0}, hist...) // every count one too high
		short := slices.Clone(hist)
		if len(short) > 0 {
			short = short[:len(short)-1] // the largest count missing
		}
		swapped := slices.Clone(hist)
		if len(swapped) > 1 {
			swapped[0], swapped[len(swapped)-1] = swapped[len(swapped)-1], swapped[0]
		}
		for _, h := range []struct {
			name string
			hist []int
		}{{"right", hist}, {"nil", nil}, {"shifted", shifted}, {"short", short}, {"swapped", swapped}} {
			got := make([]uint32, len(c.cnt))
			if tot := largestFirstHist(c.cnt, h.hist, got); tot != total {
				t.Errorf("%s, %s histogram: total %d, want %d", c.name, h.name, tot, total)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s histogram: order differs from a stable sort by decreasing count", c.name, h.name)
			}
		}
	}
}
