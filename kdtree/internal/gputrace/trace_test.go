package gputrace

import (
	"math"
	"testing"
	"unsafe"
)

// Variant names are the benchmark rows' last element: distinct per variant.
func TestKernelString(t *testing.T) {
	cases := []struct {
		k    Kernel
		want string
	}{
		{Kernel{Block: 64}, "grid-b64"},
		{Kernel{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24}, "dynamic-b64-x16-r24"},
		{Kernel{Dynamic: true, Block: 64, BlocksPerSM: 18, AnyBlocksPerSM: 20, Refill: 24}, "dynamic-b64-x18-a20-r24"},
	}
	for _, c := range cases {
		if got := c.k.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.k, got, c.want)
		}
	}
	seen := map[string]bool{}
	for _, k := range append(Variants, DefaultKernel, IncoherentKernel) {
		if err := k.check(); err != nil {
			t.Errorf("variant %v: %v", k, err)
		}
		if seen[k.String()] && k != DefaultKernel && k != IncoherentKernel {
			t.Errorf("variant %v listed twice", k)
		}
		seen[k.String()] = true
	}
}

// The kernels run blocks of Block threads only (their shared per-ray
// constants) and refills of 1 to 32.
func TestKernelCheck(t *testing.T) {
	for _, k := range []Kernel{
		{Block: 32}, {Block: 48}, {Block: 128}, {Block: -64},
		{Dynamic: true, Block: 64, Refill: 0}, {Dynamic: true, Block: 64, Refill: 33},
		{Block: 64, BlocksPerSM: -1}, {Dynamic: true, Block: 64, Refill: 24, AnyBlocksPerSM: -1},
	} {
		if k.check() == nil {
			t.Errorf("%+v accepted", k)
		}
	}
}

// Every variant names a kernel of the image's family for closest and any
// hit, a thread a ray or dynamic.
func TestKernelName(t *testing.T) {
	cases := []struct {
		k      Kernel
		anyHit bool
		want   string
	}{
		{Kernel{Block: 64}, false, "kd_trace_closest"},
		{Kernel{Block: 64}, true, "kd_trace_any"},
		{Kernel{Dynamic: true}, false, "kd_trace_closest_dyn"},
		{Kernel{Dynamic: true}, true, "kd_trace_any_dyn"},
	}
	for _, c := range cases {
		if got := kernelName(c.k, c.anyHit); got != c.want {
			t.Errorf("%+v any=%v: %q, want %q", c.k, c.anyHit, got, c.want)
		}
	}
}

// parallelCopy copies every byte whatever the split, including sizes
// around its piece size.
func TestParallelCopy(t *testing.T) {
	for _, n := range []int{0, 1, 1<<20 - 1, 1 << 20, 1<<20 + 1, 5<<20 + 3} {
		src, dst := make([]byte, n), make([]byte, n+1)
		for i := range src {
			src[i] = byte(i*7 + i>>11)
		}
		dst[n] = 0xAB
		parallelCopy(dst[:n], src)
		for i := range src {
			if dst[i] != src[i] {
				t.Fatalf("n=%d: byte %d is %d, want %d", n, i, dst[i], src[i])
			}
		}
		if dst[n] != 0xAB {
			t.Fatalf("n=%d: wrote past the end", n)
		}
	}
}

// HostHit is the 7 words the kernels write for host slices, in this order.
func TestHostHitLayout(t *testing.T) {
	h := []HostHit{{T: 1, U: 2, V: 3, Prim: 4, N: [3]float32{5, 6, 7}}}
	b := asBytes(h)
	if HostHitWords != 7 || len(b) != 28 {
		t.Fatalf("HostHit is %d words, %d bytes", HostHitWords, len(b))
	}
	w := unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), 7)
	want := []uint32{math.Float32bits(1), math.Float32bits(2), math.Float32bits(3), 4,
		math.Float32bits(5), math.Float32bits(6), math.Float32bits(7)}
	for i := range want {
		if w[i] != want[i] {
			t.Errorf("word %d is %#x, want %#x", i, w[i], want[i])
		}
	}
}
