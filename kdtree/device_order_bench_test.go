package kdtree

import (
	"sort"
	"testing"

	"github.com/kdbuild/kdbuild/kdtree/internal/gputrace"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// rayOrders are the orders of a ray set that benchRayOrders traces: each
// a sort key of a ray's origin (quantised in the scene's box) and
// direction (quantised in [-1, 1]), as Morton codes.
var rayOrders = []struct {
	name string
	key  func(o, d [3]uint64) uint64
}{
	// All six coordinates interleaved, 10 bits each.
	{"morton6", func(o, d [3]uint64) uint64 {
		return interleave([]uint64{o[0], o[1], o[2], d[0], d[1], d[2]}, 10)
	}},
	// The direction's code first (5 bits a component), then the origin's.
	{"dir-org", func(o, d [3]uint64) uint64 {
		return interleave([]uint64{d[0] >> 5, d[1] >> 5, d[2] >> 5}, 5)<<30 | interleave(o[:], 10)
	}},
	// The origin's code first (7 bits a coordinate), then the direction's.
	{"org-dir", func(o, d [3]uint64) uint64 {
		return interleave([]uint64{o[0] >> 3, o[1] >> 3, o[2] >> 3}, 7)<<30 | interleave(d[:], 10)
	}},
}

// interleave returns the Morton code of xs, bits low bits each: bit i of
// xs[k] at bit i·len(xs) + k.
func interleave(xs []uint64, bits int) uint64 {
	var c uint64
	for i := 0; i < bits; i++ {
		for k, x := range xs {
			c |= (x >> i & 1) << (i*len(xs) + k)
		}
	}
	return c
}

// sortedRays returns a copy of rays in the order of key: each origin
// coordinate and direction component quantised to 10 bits.
func sortedRays(rays []Ray, b scenes.Bounds, key func(o, d [3]uint64) uint64) []Ray {
	q := func(x, lo, hi float32) uint64 {
		if !(hi > lo) {
			return 0
		}
		v := (x - lo) / (hi - lo) * 1024
		return uint64(min(max(v, 0), 1023))
	}
	keys := make([]uint64, len(rays))
	idx := make([]int, len(rays))
	for i, r := range rays {
		var o, d [3]uint64
		for a := 0; a < 3; a++ {
			o[a] = q(r.Org[a], b.Min[a], b.Max[a])
			d[a] = q(r.Dir[a], -1, 1)
		}
		keys[i], idx[i] = key(o, d), i
	}
	sort.SliceStable(idx, func(x, y int) bool { return keys[idx[x]] < keys[idx[y]] })
	out := make([]Ray, len(rays))
	for i, j := range idx {
		out[i] = rays[j]
	}
	return out
}

// benchRayOrders traces rays sorted on the host in each of rayOrders with
// the incoherent kernel (the sort's cost not included): how much a
// reordering of an incoherent batch could gain at most.
func benchRayOrders(b *testing.B, ex exec.Executor, tree *Tree, s *scenes.Scene, file, set string, rays []Ray) {
	for _, o := range rayOrders {
		benchDeviceKernels(b, ex, tree, file, set+"-"+o.name, sortedRays(rays, s.Bounds, o.key), "",
			[]gputrace.Kernel{gputrace.IncoherentKernel})
	}
}
