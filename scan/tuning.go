package scan

import "strings"

// Tuning variants: the default GPU kernels' templates instantiated with
// other tilings (items per thread, threads per block, __launch_bounds__
// blocks per SM) and, for the compaction, other tile numbering and wider
// stores, so that one benchmark run ranks them (kernels/scan.cu,
// kernels/compact.cu; scan/doc.go lists them). Every one keeps the contract
// of the kernel it varies and is selectable by name; none is a default.
const (
	VariantProductionBid16x512 = "production-bid-16x512" // production-bid, 512 threads × 16 items, 2 blocks per SM
	VariantProductionBid24x512 = "production-bid-24x512" // production-bid, 512 × 24, 2 blocks per SM
	VariantProductionBid32x4   = "production-bid-32x4"   // production-bid with 4 blocks per SM (≤ 64 registers), its kernel before 2026-11-24
	VariantProductionBid24     = "production-bid-24"     // production-bid, 256 × 24, 5 blocks per SM
	VariantProductionBid20     = "production-bid-20"     // production-bid, 256 × 20, 5 blocks per SM
	VariantProductionBid16     = "production-bid-16"     // production-bid, 256 × 16, 6 blocks per SM

	CompactFusedAsync24Bid     = "fused-async-24-bid"    // fused-async with 256 × 24 items (5 blocks per SM), the places recorded after the look-back
	CompactFusedAsyncNoBackoff = "fused-async-nobackoff" // fused-async polling the look-back without sleeping
	CompactFusedAsyncPub       = "fused-async-pub"       // fused-async with the aggregate published before warp 0 records its places
	CompactFusedAsyncPub7      = "fused-async-pub-7"     // fused-async-pub with at most 7 blocks per SM (36 registers)
	CompactFusedAsyncPub24     = "fused-async-pub24"     // fused-async-pub with 256 × 24 items
	CompactFusedAsyncPubL2     = "fused-async-pub-l2"    // fused-async-pub with .L2::256B hints on the loads
)

// lookbackShape is the tile and block size of a tuning kernel.
type lookbackShape struct{ tile, threads int }

// tuningScan maps the tuning scan variants to their kernel families
// (scan_{excl,incl}_<family>_{u32,f32}) and shapes.
var tuningScan = []struct {
	variant, family string
	shape           lookbackShape
}{
	{VariantProductionBid16x512, "productionbid_16x512", lookbackShape{8192, 512}},
	{VariantProductionBid24x512, "productionbid_24x512", lookbackShape{12288, 512}},
	{VariantProductionBid32x4, "productionbid_32x4", lookbackShape{8192, 256}},
	{VariantProductionBid24, "productionbid_24", lookbackShape{6144, 256}},
	{VariantProductionBid20, "productionbid_20", lookbackShape{5120, 256}},
	{VariantProductionBid16, "productionbid_16", lookbackShape{4096, 256}},
}

// tuningCompact maps the tuning compaction variants to their kernels and
// shapes.
var tuningCompact = []struct {
	variant, kernel string
	shape           lookbackShape
}{
	{CompactFusedAsync24Bid, "compact_fused_async_24bid_u32", lookbackShape{6144, 256}},
	{CompactFusedAsyncNoBackoff, "compact_fused_async_nobackoff_u32", lookbackShape{4096, 256}},
	{CompactFusedAsyncPub, "compact_fused_async_pub_u32", lookbackShape{4096, 256}},
	{CompactFusedAsyncPub7, "compact_fused_async_pub7_u32", lookbackShape{4096, 256}},
	{CompactFusedAsyncPub24, "compact_fused_async_pub24_u32", lookbackShape{6144, 256}},
	{CompactFusedAsyncPubL2, "compact_fused_async_publ2_u32", lookbackShape{4096, 256}},
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
