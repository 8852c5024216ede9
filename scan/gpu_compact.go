package scan

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/consts"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
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
		return lookbackLaunch(sc, kernel, n, func(state cuda.DevPtr) launch.CompactFusedU32Args {
			return launch.CompactFusedU32Args{Src: src.Ptr(), Flags: flags.Ptr(), Dst: dstPtr, N: uint64(n), Cap: capacity, State: state, Count: count}
		})
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
		if err := lookbackLaunch(sc, kernel, n, func(state cuda.DevPtr) launch.CompactFusedU32Args {
			return launch.CompactFusedU32Args{Src: src.Ptr(), Flags: flags.Ptr(), Dst: dstPtr, N: uint64(n), Cap: capacity, State: state, Count: count}
		}); err != nil {
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
		if err := launch.CompactFlagsU32.Launch(ctx, g, cuda.Linear(256), 0, launch.CompactFlagsU32Args{Flags: flags.Ptr(), Out: f, N: uint64(n)}); err != nil {
			return err
		}
		if err := sc.productionRaw("u32", f, f, n, false, count); err != nil {
			return err
		}
		if err := launch.CompactScatterU32.Launch(ctx, g, cuda.Linear(256), 0, launch.CompactScatterU32Args{
			Src: src.Ptr(), Flags: flags.Ptr(), Pos: f, Dst: dstPtr, N: uint64(n), Cap: capacity}); err != nil {
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
	maskWarps = int(consts.MaskWarps)
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
	if err := launch.CompactMaskU32.Launch(ctx, grid, cuda.Linear(32*maskWarps), 0,
		launch.CompactMaskU32Args{Flags: flags, N: uint64(n), Mask: mask, Counts: counts}); err != nil {
		return err
	}
	if err := sc.productionRaw("u32", counts, counts, chunks, false, count); err != nil {
		return err
	}
	return launch.CompactGatherU32.Launch(ctx, grid, cuda.Linear(32*maskWarps), 0,
		launch.CompactGatherU32Args{Src: src, Mask: mask, Offs: counts, Dst: dst, N: uint64(n), Cap: capacity})
}
