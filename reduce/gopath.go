package reduce

import (
	"math"
	"sync"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// goGrain is the smallest chunk one goroutine of the Go executor takes.
const goGrain = 1 << 15

// maxWorkers bounds the partial results the Go executor keeps on the stack.
const maxWorkers = 256

// nanMask is all ones when u is the bit pattern of a NaN, else zero
// (branch-free form of isNaN32).
func nanMask(u uint32) uint32 { return uint32(int32(0x7F800000-(u&0x7FFFFFFF)) >> 31) }

// minKeys is the min key of s (minIdentity when empty or all NaN). Four
// independent accumulators and branch-free keys keep the loop fast.
func minKeys(s []float32) uint32 {
	k0, k1, k2, k3 := minIdentity, minIdentity, minIdentity, minIdentity
	i := 0
	for ; i+4 <= len(s); i += 4 {
		u0, u1, u2, u3 := math.Float32bits(s[i]), math.Float32bits(s[i+1]), math.Float32bits(s[i+2]), math.Float32bits(s[i+3])
		k0 = min(k0, (u0^(uint32(int32(u0)>>31)|signBit))|nanMask(u0))
		k1 = min(k1, (u1^(uint32(int32(u1)>>31)|signBit))|nanMask(u1))
		k2 = min(k2, (u2^(uint32(int32(u2)>>31)|signBit))|nanMask(u2))
		k3 = min(k3, (u3^(uint32(int32(u3)>>31)|signBit))|nanMask(u3))
	}
	for ; i < len(s); i++ {
		k0 = min(k0, minKey(s[i]))
	}
	return min(k0, k1, k2, k3)
}

// maxKeys is the max key of s (maxIdentity when empty or all NaN).
func maxKeys(s []float32) uint32 {
	k0, k1, k2, k3 := maxIdentity, maxIdentity, maxIdentity, maxIdentity
	i := 0
	for ; i+4 <= len(s); i += 4 {
		u0, u1, u2, u3 := math.Float32bits(s[i]), math.Float32bits(s[i+1]), math.Float32bits(s[i+2]), math.Float32bits(s[i+3])
		k0 = max(k0, (u0^(uint32(int32(u0)>>31)|signBit))&^nanMask(u0))
		k1 = max(k1, (u1^(uint32(int32(u1)>>31)|signBit))&^nanMask(u1))
		k2 = max(k2, (u2^(uint32(int32(u2)>>31)|signBit))&^nanMask(u2))
		k3 = max(k3, (u3^(uint32(int32(u3)>>31)|signBit))&^nanMask(u3))
	}
	for ; i < len(s); i++ {
		k0 = max(k0, maxKey(s[i]))
	}
	return max(k0, k1, k2, k3)
}

// goMinMaxKeys reduces s on the Go executor; which selects min (bit 0) and
// max (bit 1). Chunks are combined in a fixed order, although min and max do
// not depend on it.
func goMinMaxKeys(ex exec.Executor, s []float32, which int) (lo, hi uint32) {
	var los, his [maxWorkers]uint32
	w := min(ex.Workers(), maxWorkers)
	k := min(w, max(1, (len(s)+goGrain-1)/goGrain))
	for c := range k {
		los[c], his[c] = minIdentity, maxIdentity
	}
	exec.ParallelFor(k, len(s), goGrain, func(a, b int) {
		c := a * k / len(s) // chunk index: ParallelFor's chunk c starts at c*n/k
		for c+1 < k && (c+1)*len(s)/k <= a {
			c++
		}
		if which&1 != 0 {
			los[c] = minKeys(s[a:b])
		}
		if which&2 != 0 {
			his[c] = maxKeys(s[a:b])
		}
	})
	lo, hi = minIdentity, maxIdentity
	for c := range k {
		lo, hi = min(lo, los[c]), max(hi, his[c])
	}
	return lo, hi
}

// chunkMerge folds per-goroutine bounds into the totals.
type chunkMerge struct{ mu sync.Mutex }

func (c *chunkMerge) merge(lo, hi *[3]uint32, l, h [3]uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a := range 3 {
		lo[a] = min(lo[a], l[a])
		hi[a] = max(hi[a], h[a])
	}
}
