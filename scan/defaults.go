package scan

// The GPU defaults, one line each: to go back to the first production
// kernels, set defaultScan to VariantProductionV1, defaultCompact to
// CompactFusedV1, defaultSegmented to segmentedV1 and defaultSort to
// SortLSD8. Every kernel stays
// selectable by name (Variants, CompactVariants) whatever the default.
const (
	defaultScan      = VariantProduction // GPU scan of Exclusive, Inclusive, ExclusiveTotal, the sorts and scan-scatter
	defaultCompact   = CompactFused      // GPU compaction of Compact and CompactNonzero
	defaultSegmented = segmentedV2       // GPU segmented scans
	defaultSort      = SortLSD8Prefetch  // GPU sort of SortPairs
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

// lookbackTile returns the items per tile of a single-pass kernel family
// (kernels/scan.cuh: TilingV1 4096, TilingV2 6144, TilingSegV2 4096).
func lookbackTile(kernel string) int {
	switch kernel {
	case "scan_excl_production_u32", "scan_incl_production_u32",
		"scan_excl_production_f32", "scan_incl_production_f32",
		"compact_fused_u32":
		return prodTileV2
	}
	return prodTile
}
