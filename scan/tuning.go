package scan

import "strings"

// Tuning variants: the default GPU kernels' templates instantiated with
// other tilings (items per thread, threads per block, __launch_bounds__
// blocks per SM) and, for the compaction, other tile numbering and wider
// stores, so that one benchmark run ranks them (kernels/scan.cu,
// kernels/compact.cu; scan/doc.go lists them). Every one keeps the contract
// of the kernel it varies and is selectable by name; none is a default.
const (
	VariantProductionBid32x4    = "production-bid-32x4"    // production-bid with 4 blocks per SM (≤ 64 registers) and no L2 prefetch
	VariantProductionBid24      = "production-bid-24"      // production-bid, 256 × 24, 5 blocks per SM
	VariantProductionBidNoAhead = "production-bid-noahead" // production-bid without the L2 prefetch (3 blocks per SM)
	VariantProductionBidAhead1  = "production-bid-ahead1"  // production-bid prefetching into the L2 the rows 1 tile per SM ahead (default: 2)
	VariantProductionBidAhead3  = "production-bid-ahead3"  // production-bid prefetching 3 tiles per SM (one wave of blocks) ahead
	VariantProductionBidAhead6  = "production-bid-ahead6"  // production-bid prefetching 6 tiles per SM ahead

	CompactFusedAsync24Bid     = "fused-async-24-bid"    // fused-async with 256 × 24 items (5 blocks per SM), the places recorded after the look-back
	CompactFusedAsyncNoBackoff = "fused-async-nobackoff" // fused-async polling the look-back without sleeping
)

// tuningSegOffsets maps the tuning variants of the segmented scan's offsets
// form (exclusive, uint32: the segscan bench's rows) to their kernels, all
// on segscan_off's 4096-item tiles of 256 threads.
var tuningSegOffsets = []struct{ variant, kernel string }{
	{"production-offsets-ticket", "segscan_off_ticket_excl_u32"},    // tile numbers from the ticket (the default: blockIdx.x)
	{"production-offsets-bid-ahead2", "segscan_off_bida2_excl_u32"}, // blockIdx.x, L2 prefetch 2 tiles per SM ahead (default 4)
	{"production-offsets-ahead8", "segscan_off_a8_excl_u32"},        // L2 prefetch 8 tiles per SM ahead
}

// lookbackShape is the tile and block size of a tuning kernel.
type lookbackShape struct{ tile, threads int }

// tuningScan maps the tuning scan variants to their kernel families
// (scan_{excl,incl}_<family>_{u32,f32}) and shapes.
var tuningScan = []struct {
	variant, family string
	shape           lookbackShape
}{
	{VariantProductionBid32x4, "productionbid_32x4", lookbackShape{8192, 256}},
	{VariantProductionBid24, "productionbid_24", lookbackShape{6144, 256}},
	{VariantProductionBidNoAhead, "productionbid_noahead", lookbackShape{8192, 256}},
	{VariantProductionBidAhead1, "productionbid_ahead1", lookbackShape{8192, 256}},
	{VariantProductionBidAhead3, "productionbid_ahead3", lookbackShape{8192, 256}},
	{VariantProductionBidAhead6, "productionbid_ahead6", lookbackShape{8192, 256}},
}

// tuningCompact maps the tuning compaction variants to their kernels and
// shapes.
var tuningCompact = []struct {
	variant, kernel string
	shape           lookbackShape
}{
	{CompactFusedAsync24Bid, "compact_fused_async_24bid_u32", lookbackShape{6144, 256}},
	{CompactFusedAsyncNoBackoff, "compact_fused_async_nobackoff_u32", lookbackShape{4096, 256}},
}

// tuningScanVariants and tuningCompactVariants list the names in table order.
func tuningScanVariants() []string {
	v := make([]string, len(tuningScan))
	for i, t := range tuningScan {
		v[i] = t.variant
	}
	return v
}

func tuningCompactVariants() []string {
	v := make([]string, len(tuningCompact))
	for i, t := range tuningCompact {
		v[i] = t.variant
	}
	return v
}

// tuningCompactKernel returns the kernel of a tuning compaction variant.
func tuningCompactKernel(variant string) (string, bool) {
	for _, t := range tuningCompact {
		if t.variant == variant {
			return t.kernel, true
		}
	}
	return "", false
}

// tuningShape returns the shape of a tuning kernel (ok false for the
// others).
func tuningShape(kernel string) (lookbackShape, bool) {
	for _, t := range tuningScan {
		if strings.HasSuffix(kernel, "_"+t.family+"_u32") || strings.HasSuffix(kernel, "_"+t.family+"_f32") {
			return t.shape, true
		}
	}
	for _, t := range tuningCompact {
		if kernel == t.kernel {
			return t.shape, true
		}
	}
	return lookbackShape{}, false
}

func init() {
	for _, t := range tuningScan {
		productionFamily[t.variant] = t.family
	}
}
