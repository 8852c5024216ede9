package scan

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// gpuCompact runs a GPU compaction and reads the count back.
func gpuCompact(sc *Scanner, variant string, dst, src, flags *exec.Buf[uint32]) (int, error) {
	count, err := sc.resultPtr(0)
	if err != nil {
		return 0, err
	}
	if err := gpuCompactTo(sc, variant, dst, src, flags, count); err != nil {
		return 0, err
	}
	k, err := sc.readResult(0)
	return int(k), err
}

// gpuCompactTo queues a GPU compaction that leaves the count in the device
// word count; it waits for nothing.
func gpuCompactTo(sc *Scanner, variant string, dst, src, flags *exec.Buf[uint32], count cuda.DevPtr) error {
	n := src.Len()
	if err := checkGPUSize("compact", n); err != nil {
		return err
	}
	ctx := sc.ex.CUDA()
	var dstPtr cuda.DevPtr
	if dst.Len() > 0 {
		dstPtr = dst.Ptr()
	}
	capacity := uint64(dst.Len())
	if kernel, ok := tuningCompactKernel(variant); ok {
		return sc.lookbackLaunch(kernel, n, count, true, src.Ptr(), flags.Ptr(), dstPtr, uint64(n), capacity)
	}
	switch variant {
	case CompactFused, CompactFusedStaged, CompactFusedV1, CompactFusedPrefetch, CompactFusedAsync:
		kernel := map[string]string{
			CompactFusedAsync:    "compact_fused_async_u32",
			CompactFused:         "compact_fused_u32",
			CompactFusedStaged:   "compact_fused_staged_u32",
			CompactFusedV1:       "compact_fused_v1_u32",
			CompactFusedPrefetch: "compact_fused_prefetch_u32",
		}[variant]
		if err := sc.lookbackLaunch(kernel, n, count, true, src.Ptr(), flags.Ptr(), dstPtr, uint64(n), capacity); err != nil {
			return err
		}
	case CompactMask:
		if err := sc.maskCompact(dstPtr, src.Ptr(), flags.Ptr(), n, capacity, count); err != nil {
			return err
		}
	case CompactScanScatter:
		buf, err := sc.scratchBuf(scratchFlags, 4*uint64(n))
		if err != nil {
			return err
		}
		f := buf.Ptr()
		g := linearGrid(n, 256)
		if err := ctx.Launch("compact_flags_u32", g, cuda.Linear(256), 0, flags.Ptr(), f, uint64(n)); err != nil {
			return err
		}
		if err := sc.productionRaw("u32", f, f, n, false, count); err != nil {
			return err
		}
		if err := ctx.Launch("compact_scatter_u32", g, cuda.Linear(256), 0, src.Ptr(), flags.Ptr(), f, dstPtr, uint64(n), capacity); err != nil {
			return err
		}
	default:
		return fmt.Errorf("scan: unknown GPU compaction %q", variant)
	}
	return nil
}

// maskChunk is the chunk of the mask compaction: one warp's items
// (kernels/compact.cu, kd_scan::kMaskChunk), maskWarps the chunks per block.
const (
	maskChunk = 1024
	maskWarps = 8
)

// maskCompact runs the mask compaction: compact_mask_u32 (bits and chunk
// counts), the production scan of the counts (chunk offsets, the total to
// count), compact_gather_u32. Scratch: 4 bytes per 32 items of bits and 4
// per 1024 of counts.
func (sc *Scanner) maskCompact(dst, src, flags cuda.DevPtr, n int, capacity uint64, count cuda.DevPtr) error {
	chunks := (n + maskChunk - 1) / maskChunk
	mask, err := sc.scratch(scratchMask, 128*uint64(chunks))
	if err != nil {
		return err
	}
	counts, err := sc.scratch(scratchCounts, 4*uint64(chunks))
	if err != nil {
		return err
	}
	ctx := sc.ex.CUDA()
	grid := cuda.Linear((chunks + maskWarps - 1) / maskWarps)
	if err := ctx.Launch("compact_mask_u32", grid, cuda.Linear(32*maskWarps), 0, flags, uint64(n), mask, counts); err != nil {
		return err
	}
	if err := sc.productionRaw("u32", counts, counts, chunks, false, count); err != nil {
		return err
	}
	return ctx.Launch("compact_gather_u32", grid, cuda.Linear(32*maskWarps), 0, src, mask, counts, dst, uint64(n), capacity)
}
