package scan

import "strings"

// The GPU defaults, one line each, chosen by measurement on an NVIDIA H200
// (2026-11-22, 2^28 elements): production scan 0.706 ms (production-v1
// 0.819), fused-staged compaction 1.110 ms (fused 1.189, fused-v1 1.131),
// onesweep sort 10.5 ms (lsd8-prefetch 25.2). To go back to the first
// kernels, set defaultScan to VariantProductionV1, defaultCompact to
// CompactFusedV1, defaultSegmented to segmentedV1 and defaultSort to SortLSD8.
// Second session, same H200: fused-prefetch (fused-staged loading the
// values with the flags) measured 1.204 ms against fused-staged's 1.099 at
// 2^28, so fused-staged stays the default compaction; production-bid
// (tile number from blockIdx) 0.697 ms against production's 0.712 is the
// default scan. Tuning sweep, same run: best compaction fused-staged-24
// 1.071 ms, fused-staged-bid-wide 1.084 (both under 4% better: left as
// tuning variants); no scan tiling beat production-bid.
// Third session, same kind of H200: values copied to shared memory by
// cp.async at the start of each tile (256 x 24, blockIdx.x tiles) 1.022,
// 1.021 and 1.020 ms in three runs against fused-staged's 1.106, 1.091 and
// 1.119; with the kept items' places recorded during the look-back, 256 x
// 16 items, 0.930 ms: that kernel is fused-async, the default compaction.
// Fourth session, same kind of H200: the mask compaction (flags packed into
// bits with per-chunk counts, a scan of the counts, a gather; no look-back
// in the passes over the data) 0.721, 0.725 and 0.730 ms at 2^28 in three
// runs against fused-async's 0.947, 0.940 and 0.967 (2^24: 0.076 against
// 0.085-0.088): mask is the default compaction. production-bid's kernel
// is now bounded to 3 blocks per SM and prefetches the rows 2 tiles per SM
// ahead into the L2: 0.595-0.606 ms at 2^28 against 0.697-0.708 without
// the prefetch (production-bid-noahead) in the same runs; the old kernel,
// 4 blocks per SM without the prefetch, is the tuning production-bid-32x4.
// The offsets-form segmented scan prefetches too and takes its tile
// numbers from blockIdx.x: 0.747-0.756 ms against 0.79-0.80 with the ticket.
// Every kernel stays selectable by name (Variants, CompactVariants,
// SortVariants) whatever the default.
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
