package scan

import "strings"

// The GPU defaults, one line each, chosen by measurement on an NVIDIA H200
// at 2^28 elements (docs/performance.md has the figures and the commands):
//   - scan: production-bid, a single-pass look-back scan that takes its tile
//     numbers from blockIdx.x, at most 3 blocks per SM, each tile prefetching
//     the rows 2 tiles per SM ahead into the L2 (0.60 ms, CUB 0.695);
//   - compaction: mask, flags packed into bits with a count per 1024-item
//     chunk, a scan of the counts, then a gather: no look-back in the passes
//     over the data (0.72 ms, CUB's partition 0.906; the best single-pass
//     kernel, fused-async, 0.94);
//   - segmented scans: the segscan family, whose offsets form reads the
//     values and the offsets only and prefetches like the scan (0.75 ms,
//     1.26× the scan);
//   - sort: onesweep, an 8-bit LSD radix sort with one pass per digit
//     (10.5 ms, CUB 7.43).
//
// Every other kernel stays selectable by name (Variants, CompactVariants,
// SortVariants, the tuning variants) so that `kdbuild bench` ranks it
// against the default in the same run.
const (
	defaultScan      = VariantProductionBid // GPU scan of Exclusive, Inclusive, ExclusiveTotal, the sorts and scan-scatter
	defaultCompact   = CompactMask          // GPU compaction of Compact and CompactNonzero
	defaultSegmented = segmentedV2          // GPU segmented scans
	defaultSort      = SortOnesweep         // GPU sort of SortPairs
)

// Segmented scan kernel families (kernels/scan.cu): segscan_{excl,incl}_
// {u32,f32} and segscan_{excl,incl}_v1_{u32,f32}.
const (
	segmentedV2 = "segscan"
	segmentedV1 = "segscan_v1"
)

// segmentedOffsetsNative: the offsets form of the GPU segmented scan runs
// the segscan_off kernels, which read the values and the offsets only
// (true), or builds a heads array and runs the heads kernels (false, the
// first form: 4 more bytes read per item plus the heads array's memset and
// write).
var segmentedOffsetsNative = true

// segmentedFamily is the family the segmented scans launch; tests switch it
// to check both.
var segmentedFamily = defaultSegmented

// productionFamily maps the production variants to their kernel families
// (scan_{excl,incl}_<family>_{u32,f32}, kernels/scan.cu).
var productionFamily = map[string]string{
	VariantProduction:    "production",
	VariantProduction24:  "production24",
	VariantProduction16:  "production16",
	VariantProductionV1:  "production_v1",
	VariantProductionBid: "productionbid",
}

// lookbackTicket reports whether a single-pass kernel takes its tile
// numbers from the ticket in its state (kernels/scan.cuh, Tiling's Ticket),
// so that even a single tile needs the state zeroed: every kernel but the
// production-bid families, the offsets-form segmented scan (except its
// ticket tuning kernels) and the fused-async compactions.
func lookbackTicket(kernel string) bool {
	switch {
	case strings.Contains(kernel, "_productionbid"), strings.HasPrefix(kernel, "compact_fused_async"):
		return false
	case strings.HasPrefix(kernel, "segscan_off_"):
		return strings.Contains(kernel, "_ticket_") || strings.Contains(kernel, "_a8_")
	}
	return true
}

// lookbackTile returns the items per tile of a single-pass kernel
// (kernels/scan.cuh: TilingP32 8192, TilingP24 6144, TilingP16, TilingV1 and
// the segmented kernels 4096; the tuning kernels: tuning.go).
func lookbackTile(kernel string) int {
	if s, ok := tuningShape(kernel); ok {
		return s.tile
	}
	switch {
	case strings.Contains(kernel, "_production_u32"), strings.Contains(kernel, "_production_f32"),
		strings.Contains(kernel, "_productionbid_"),
		kernel == "compact_fused_u32", kernel == "compact_fused_staged_u32":
		return 8192
	case strings.Contains(kernel, "_production24_"):
		return 6144
	}
	return prodTile
}

// lookbackThreads returns the threads per block of a single-pass kernel:
// 256 but for the 512-thread tuning kernels.
func lookbackThreads(kernel string) int {
	if s, ok := tuningShape(kernel); ok {
		return s.threads
	}
	return prodThreads
}
