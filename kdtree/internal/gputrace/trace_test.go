package gputrace

import "testing"

// Variant names are the benchmark rows' last element: distinct per variant.
func TestKernelString(t *testing.T) {
	cases := []struct {
		k    Kernel
		want string
	}{
		{Kernel{Block: 64}, "grid-b64"},
		{Kernel{Persistent: true, Block: 64, BlocksPerSM: 16}, "persistent-b64-x16"},
		{Kernel{Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24}, "dynamic-b64-x16-r24"},
		{Kernel{Sort: SortMorton, Block: 128}, "sorted-grid-b128"},
		{Kernel{Sort: SortDirection, Block: 64}, "sorted-dir-grid-b64"},
		{Kernel{Sort: SortOrigin, Dynamic: true, Block: 64, BlocksPerSM: 16, Refill: 24}, "sorted-org-dynamic-b64-x16-r24"},
	}
	for _, c := range cases {
		if got := c.k.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.k, got, c.want)
		}
	}
	seen := map[string]bool{}
	for _, k := range Variants {
		if seen[k.String()] {
			t.Errorf("variant %v listed twice", k)
		}
		seen[k.String()] = true
	}
}
