package scan

import "strings"

// The GPU defaults, one line each, chosen by measurement on an NVIDIA H200
// (2026-11-22, 2^28 elements): production scan 0.706 ms (production-v1
// 0.819), fused-staged compaction 1.110 ms (fused 1.189, fused-v1 1.131),
// onesweep sort 10.5 ms (lsd8-prefetch 25.2). To go back to the first
// kernels, set defaultScan to VariantProductionV1, defaultCompact to
// CompactFusedV1, defaultSegmented to segmentedV1 and defaultSort to SortLSD8.
// Every kernel stays selectable by name (Variants, CompactVariants,
// SortVariants) whatever the default.
const (
	defaultScan      = VariantProduction  // GPU scan of Exclusive, Inclusive, ExclusiveTotal, the sorts and scan-scatter
	defaultCompact   = CompactFusedStaged // GPU compaction of Compact and CompactNonzero
	defaultSegmented = segmentedV2        // GPU segmented scans
	defaultSort      = SortOnesweep       // GPU sort of SortPairs
)

// Segmented scan kernel families (kernels/scan.cu): segscan_{excl,incl}_
// {u32,f32} and segscan_{excl,incl}_v1_{u32,f32}.
const (
	segmentedV2 = "segscan"
	segmentedV1 = "segscan_v1"
)

// segmentedFamily is the family the segmented scans launch; tests switch it
// to check both.
var segmentedFamily = defaultSegmented

// productionFamily maps the production variants to their kernel families
// (scan_{excl,incl}_<family>_{u32,f32}, kernels/scan.cu).
var productionFamily = map[string]string{
	VariantProduction:   "production",
	VariantProduction24: "production24",
	VariantProduction16: "production16",
	VariantProductionV1: "production_v1",
}

// lookbackTile returns the items per tile of a single-pass kernel
// (kernels/scan.cuh: TilingP32 8192, TilingP24 6144, TilingP16, TilingV1 and
// the segmented kernels 4096).
func lookbackTile(kernel string) int {
	switch {
	case strings.Contains(kernel, "_production_u32"), strings.Contains(kernel, "_production_f32"),
		kernel == "compact_fused_u32", kernel == "compact_fused_staged_u32":
		return 8192
	case strings.Contains(kernel, "_production24_"):
		return 6144
	}
	return prodTile
}
