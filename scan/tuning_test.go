package scan

import (
	"slices"
	"testing"
)

// TestTuningShapes checks the launch shapes of the tuning kernels against
// their tilings (kernels/scan.cu, compact.cu) and that the default kernels'
// shapes are unchanged (a tuning family such as productionbid_16 must not
// be taken for productionbid).
func TestTuningShapes(t *testing.T) {
	cases := []struct {
		kernel        string
		tile, threads int
	}{
		{"scan_excl_productionbid_u32", 8192, 256},
		{"scan_incl_productionbid_f32", 8192, 256},
		{"scan_excl_production_u32", 8192, 256},
		{"scan_excl_production24_u32", 6144, 256},
		{"scan_excl_production16_u32", 4096, 256},
		{"compact_fused_staged_u32", 8192, 256},
		{"compact_fused_prefetch_u32", 4096, 256},
		{"scan_incl_productionbid_32x4_u32", 8192, 256},
		{"scan_excl_productionbid_24_u32", 6144, 256},
		{"scan_incl_productionbid_ahead1_f32", 8192, 256},
		{"scan_excl_productionbid_noahead_u32", 8192, 256},
		{"scan_excl_productionbid_ahead3_u32", 8192, 256},
		{"scan_excl_productionbid_ahead6_f32", 8192, 256},
		{"compact_fused_async_u32", 4096, 256},
		{"compact_fused_async_24bid_u32", 6144, 256},
		{"compact_fused_async_nobackoff_u32", 4096, 256},
	}
	for _, c := range cases {
		if got := lookbackTile(c.kernel); got != c.tile {
			t.Errorf("lookbackTile(%s) = %d, want %d", c.kernel, got, c.tile)
		}
		if got := lookbackThreads(c.kernel); got != c.threads {
			t.Errorf("lookbackThreads(%s) = %d, want %d", c.kernel, got, c.threads)
		}
	}
}

// TestTuningNames: every tuning variant is listed once, selectable (a
// production family or a compaction kernel), none is a default, and their
// tiles are at least the 4096 items that ScratchBytes assumes.
func TestTuningNames(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range append(tuningScanVariants(), tuningCompactVariants()...) {
		if seen[v] {
			t.Errorf("%s listed twice", v)
		}
		seen[v] = true
		if v == defaultScan || v == defaultCompact {
			t.Errorf("%s is a default", v)
		}
	}
	for _, s := range tuningScan {
		if productionFamily[s.variant] != s.family || !slices.Contains(gpuVariants, s.variant) {
			t.Errorf("%s: not selectable (family %q)", s.variant, productionFamily[s.variant])
		}
		if s.shape.tile < prodTile || s.shape.tile%(4*s.shape.threads) != 0 {
			t.Errorf("%s: tile %d", s.variant, s.shape.tile)
		}
	}
	for _, c := range tuningCompact {
		if k, ok := tuningCompactKernel(c.variant); !ok || k != c.kernel {
			t.Errorf("%s: kernel %q", c.variant, k)
		}
		if c.shape.tile < prodTile || c.shape.tile%(4*c.shape.threads) != 0 {
			t.Errorf("%s: tile %d", c.variant, c.shape.tile)
		}
	}
	if len(tuningScan) > 6 || len(tuningCompact) > 6 {
		t.Errorf("%d scan and %d compaction tuning variants: keep the bench readable (at most 6 each)", len(tuningScan), len(tuningCompact))
	}
}

// TestLookbackTicket: the kernels whose tilings take tile numbers from the
// ticket (kernels/scan.cuh, scan.cu, compact.cu) need their state zeroed
// even for one tile; the blockIdx.x ones do not.
func TestLookbackTicket(t *testing.T) {
	for kernel, want := range map[string]bool{
		"scan_excl_productionbid_u32": false, "scan_incl_productionbid_ahead3_f32": false,
		"scan_excl_productionbid_32x4_u32": false, "scan_excl_productionbid_noahead_u32": false,
		"scan_excl_production_u32": true, "scan_incl_production24_f32": true, "scan_excl_production_v1_u32": true,
		"segscan_excl_u32": true, "segscan_incl_v1_f32": true,
		"segscan_off_excl_u32": false, "segscan_off_incl_f32": false, "segscan_off_bida2_excl_u32": false,
		"segscan_off_ticket_excl_u32": true, "segscan_off_a8_excl_u32": true,
		"compact_fused_async_u32": false, "compact_fused_async_24bid_u32": false, "compact_fused_async_nobackoff_u32": false,
		"compact_fused_u32": true, "compact_fused_staged_u32": true, "compact_fused_prefetch_u32": true,
		"compact_fused_v1_u32": true,
	} {
		if got := lookbackTicket(kernel); got != want {
			t.Errorf("lookbackTicket(%s) = %v, want %v", kernel, got, want)
		}
	}
}
