package scan

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Production tiling (kernels/scan.cuh): 256 threads, 16 items each (v1,
// production-16, the segmented kernels); production-24: 24; production and
// the fused compaction: 32 (see lookbackTile).
const (
	prodThreads = 256
	prodItems   = 16
	prodTile    = prodThreads * prodItems
	prodTileV2  = prodThreads * 32
	// sharedBlock is the block size of the shared-memory teaching scans.
	sharedBlock = 512
	// gridCap bounds the grid of grid-stride kernels.
	gridCap = 1 << 16
	// maxGPU is the largest length the kernels take (32-bit counts and
	// tile numbers).
	maxGPU = 1<<32 - 1
)

// ScratchBytes returns the device scratch a production scan, segmented scan
// or fused compaction of n elements needs: one 64-bit look-back word per
// tile of 4096 elements (the smallest tile of those kernels) plus one word
// for the tile counter. (The teaching
// variants, the offsets form of the segmented scan, the scan-scatter
// compaction and the sorts need more; a Scanner grows on demand.)
func ScratchBytes(n int) uint64 {
	return 8 * (uint64(tilesFor(n)) + 1)
}

func tilesFor(n int) int { return (n + prodTile - 1) / prodTile }

// linearGrid is the grid for a grid-stride kernel over n items in blocks of
// threads.
func linearGrid(n, threads int) cuda.Dim3 {
	g := (n + threads - 1) / threads
	return cuda.Linear(min(max(g, 1), gridCap))
}

func ptrAt(p cuda.DevPtr, elems int) cuda.DevPtr { return p + cuda.DevPtr(4*uint64(elems)) }

func checkGPUSize(op string, n int) error {
	if n > maxGPU {
		return fmt.Errorf("scan: %s: %d elements, the GPU kernels take at most %d", op, n, maxGPU)
	}
	return nil
}

// lookbackLaunch zeroes the look-back state for n items and launches the
// single-pass kernel with args followed by the state pointer (and, when
// withTotal, the total pointer); one block per tile of lookbackTile(kernel).
// A single tile of a kernel without the ticket reads no state (tile 0
// looks back at nothing, it only publishes): the memset is skipped, one
// driver call less for the kd-tree builder's many small scans.
func (sc *Scanner) lookbackLaunch(kernel string, n int, total cuda.DevPtr, withTotal bool, args ...any) error {
	tile := lookbackTile(kernel)
	tiles := (n + tile - 1) / tile
	state, err := sc.lookbackState(tiles, tiles > 1 || lookbackTicket(kernel))
	if err != nil {
		return err
	}
	return sc.lookbackRun(kernel, tiles, state, total, withTotal, args...)
}

// lookbackState returns the look-back state of tiles tiles (8*(tiles+1)
// bytes of scratch), zeroed when zero says so.
func (sc *Scanner) lookbackState(tiles int, zero bool) (cuda.DevPtr, error) {
	bytes := 8 * (uint64(tiles) + 1)
	buf, err := sc.scratchBuf(scratchTiles, bytes)
	if err != nil {
		return 0, err
	}
	if zero {
		if err := buf.Slice(0, int(bytes)).Memset8(0); err != nil {
			return 0, err
		}
	}
	return buf.Ptr(), nil
}

// lookbackRun launches a single-pass kernel over tiles tiles with args, the
// state (zeroed already) and, when withTotal, total.
func (sc *Scanner) lookbackRun(kernel string, tiles int, state, total cuda.DevPtr, withTotal bool, args ...any) error {
	args = append(args, state)
	if withTotal {
		args = append(args, total)
	}
	return sc.ex.CUDA().Launch(kernel, cuda.Linear(tiles), cuda.Linear(lookbackThreads(kernel)), 0, args...)
}

// productionRaw runs the default production scan (defaultScan) over raw
// pointers (4-byte items of the type named by sfx); total may be 0.
func (sc *Scanner) productionRaw(sfx string, dst, src cuda.DevPtr, n int, inclusive bool, total cuda.DevPtr) error {
	return sc.productionVariant(defaultScan, sfx, dst, src, n, inclusive, total)
}

// productionVariant runs one of the production variants over raw pointers.
func (sc *Scanner) productionVariant(variant, sfx string, dst, src cuda.DevPtr, n int, inclusive bool, total cuda.DevPtr) error {
	kind := "excl"
	if inclusive {
		kind = "incl"
	}
	family, ok := productionFamily[variant]
	if !ok {
		return fmt.Errorf("scan: unknown production variant %q", variant)
	}
	return sc.lookbackLaunch("scan_"+kind+"_"+family+"_"+sfx, n, total, true, src, dst, uint64(n))
}

// resultPtr returns the device address of word i of the small read-back
// area.
func (sc *Scanner) resultPtr(i int) (cuda.DevPtr, error) {
	p, err := sc.scratch(scratchResult, 64)
	if err != nil {
		return 0, err
	}
	return ptrAt(p, i), nil
}

// readResult copies word i of the read-back area to the host (waits for the
// queued work).
func (sc *Scanner) readResult(i int) (uint32, error) {
	if _, err := sc.scratch(scratchResult, 64); err != nil {
		return 0, err
	}
	b := sc.bufs[scratchResult].Slice(4*i, 4)
	out, err := b.ToHost()
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(out), nil
}

func gpuScan[T Value](sc *Scanner, variant string, dst, src *exec.Buf[T], inclusive bool) error {
	n := src.Len()
	if err := checkGPUSize("scan", n); err != nil {
		return err
	}
	sfx := suffix[T]()
	incl := int32(0)
	if inclusive {
		incl = 1
	}
	ctx := sc.ex.CUDA()
	if _, ok := productionFamily[variant]; ok { // the production and tuning variants
		return sc.productionVariant(variant, sfx, dst.Ptr(), src.Ptr(), n, inclusive, 0)
	}
	switch variant {
	case VariantNaive:
		// Hillis–Steele: a = shifted (or plain) src, then ping-pong between
		// a and dst, one launch per level; copy to dst if it ends in a.
		a, err := sc.scratch(scratchTemp, 4*uint64(n))
		if err != nil {
			return err
		}
		g := linearGrid(n, 256)
		if err := ctx.Launch("scan_naive_init_"+sfx, g, cuda.Linear(256), 0, src.Ptr(), a, uint64(n), incl); err != nil {
			return err
		}
		cur, other := a, dst.Ptr()
		for d := 1; d < n; d <<= 1 {
			if err := ctx.Launch("scan_naive_step_"+sfx, g, cuda.Linear(256), 0, cur, other, uint64(n), uint64(d)); err != nil {
				return err
			}
			cur, other = other, cur
		}
		if cur != dst.Ptr() {
			return ctx.Launch("scan_copy_u32", g, cuda.Linear(256), 0, dst.Ptr(), cur, uint64(n))
		}
		return nil

	case VariantWorkEfficient, VariantWorkEfficientThreads:
		// Blelloch over a power-of-two copy: up-sweep, clear the root,
		// down-sweep, then dst = a (+ src for inclusive).
		m := 1 << bits.Len(uint(n-1))
		if n == 1 {
			m = 1
		}
		buf, err := sc.scratchBuf(scratchTemp, 4*uint64(m))
		if err != nil {
			return err
		}
		a := buf.Ptr()
		if err := ctx.Launch("scan_we_load_"+sfx, linearGrid(m, 256), cuda.Linear(256), 0, src.Ptr(), a, uint64(n), uint64(m)); err != nil {
			return err
		}
		up, down := "scan_we_up_"+sfx, "scan_we_down_"+sfx
		threads := func(s int) int { return m }
		if variant == VariantWorkEfficientThreads {
			up, down = "scan_we_up_threads_"+sfx, "scan_we_down_threads_"+sfx
			threads = func(s int) int { return m / s }
		}
		for s := 2; s <= m; s <<= 1 {
			if err := ctx.Launch(up, linearGrid(threads(s), 256), cuda.Linear(256), 0, a, uint64(m), uint64(s)); err != nil {
				return err
			}
		}
		if err := buf.Slice(4*(m-1), 4).Memset8(0); err != nil {
			return err
		}
		for s := m; s >= 2; s >>= 1 {
			if err := ctx.Launch(down, linearGrid(threads(s), 256), cuda.Linear(256), 0, a, uint64(m), uint64(s)); err != nil {
				return err
			}
		}
		return ctx.Launch("scan_we_finish_"+sfx, linearGrid(n, 256), cuda.Linear(256), 0, a, src.Ptr(), dst.Ptr(), uint64(n), incl)

	case VariantSharedNaive, VariantSharedWorkEfficient:
		sums, err := sc.scratch(scratchTemp, 4*uint64(sharedSumsLen(n)))
		if err != nil {
			return err
		}
		kernel, threads := "scan_block_naive_"+sfx, sharedBlock
		if variant == VariantSharedWorkEfficient {
			kernel, threads = "scan_block_we_"+sfx, sharedBlock/2
		}
		return sharedScan(ctx, kernel, threads, sfx, src.Ptr(), dst.Ptr(), n, incl, sums)
	}
	return fmt.Errorf("scan: unknown GPU variant %q", variant)
}

// sharedSumsLen is the number of block sums of every level of the
// shared-memory scans of n items (each level rounded up to 4).
func sharedSumsLen(n int) int {
	total := 0
	for m := n; m > 1; {
		m = (m + sharedBlock - 1) / sharedBlock
		total += (m + 3) &^ 3
	}
	return total + 4
}

// sharedScan scans per block into out with the block totals in sums, scans
// the totals recursively (exclusive, in place, their own totals after them)
// and adds them back.
func sharedScan(ctx *cuda.Context, kernel string, threads int, sfx string, in, out cuda.DevPtr, n int, incl int32, sums cuda.DevPtr) error {
	nb := (n + sharedBlock - 1) / sharedBlock
	if err := ctx.Launch(kernel, cuda.Linear(nb), cuda.Linear(threads), 0, in, out, sums, uint64(n), incl); err != nil {
		return err
	}
	if nb == 1 {
		return nil
	}
	next := ptrAt(sums, (nb+3)&^3)
	if err := sharedScan(ctx, kernel, threads, sfx, sums, sums, nb, 0, next); err != nil {
		return err
	}
	return ctx.Launch("scan_add_sums_"+sfx, linearGrid(n, 256), cuda.Linear(256), 0, out, sums, uint64(n))
}

func gpuSegmented[T Value](sc *Scanner, family string, dst, src *exec.Buf[T], heads cuda.DevPtr, inclusive bool) error {
	n := src.Len()
	if err := checkGPUSize("segmented scan", n); err != nil {
		return err
	}
	kind := "excl"
	if inclusive {
		kind = "incl"
	}
	kernel := "segscan_" + kind + "_" + suffix[T]()
	if family == segmentedV1 {
		kernel = "segscan_" + kind + "_v1_" + suffix[T]()
	}
	return sc.lookbackLaunch(kernel, n, 0, false, src.Ptr(), heads, dst.Ptr(), uint64(n))
}

// gpuSegmentedOffsets runs the offsets-form kernels: segscan_tile_starts
// finds each 4096-item tile's first segment entry by binary search
// (scratch, one word per tile), then segscan_off_* scans reading only the
// values and the offsets.
func gpuSegmentedOffsets[T Value](sc *Scanner, dst, src *exec.Buf[T], offsets *exec.Buf[uint32], inclusive bool) error {
	kind := "excl"
	if inclusive {
		kind = "incl"
	}
	return gpuSegmentedOffsetsKernel(sc, "segscan_off_"+kind+"_"+suffix[T](), dst, src, offsets)
}

// gpuSegmentedOffsetsKernel is gpuSegmentedOffsets with the scan kernel
// named (the default segscan_off_* or a tuning one, all on 4096-item tiles).
func gpuSegmentedOffsetsKernel[T Value](sc *Scanner, kernel string, dst, src *exec.Buf[T], offsets *exec.Buf[uint32]) error {
	n := src.Len()
	if err := checkGPUSize("segmented scan", n); err != nil {
		return err
	}
	if err := checkGPUSize("segmented scan offsets", offsets.Len()); err != nil {
		return err
	}
	tile := lookbackTile(kernel) // 4096 for every segscan_off kernel
	tiles := (n + tile - 1) / tile
	buf, err := sc.scratchBuf(scratchSegTiles, 4*uint64(tiles))
	if err != nil {
		return err
	}
	nent := offsets.Len()
	var offPtr cuda.DevPtr
	if nent > 0 {
		offPtr = offsets.Ptr()
	}
	// segscan_tile_starts also zeroes the look-back state of the kernel's
	// tiles, which are its tiles.
	state, err := sc.lookbackState(tiles, false)
	if err != nil {
		return err
	}
	if err := sc.ex.CUDA().Launch("segscan_tile_starts", linearGrid(tiles, 256), cuda.Linear(256), 0,
		offPtr, uint64(nent), buf.Ptr(), uint64(tiles), uint64(tile), state); err != nil {
		return err
	}
	return sc.lookbackRun(kernel, tiles, state, 0, false,
		src.Ptr(), offPtr, buf.Ptr(), uint64(nent), dst.Ptr(), uint64(n))
}

// gpuHeadsFromOffsets builds head flags for n items from segment offsets in
// the flags scratch.
func gpuHeadsFromOffsets(sc *Scanner, offsets *exec.Buf[uint32], n int) (cuda.DevPtr, error) {
	buf, err := sc.scratchBuf(scratchFlags, 4*uint64(n))
	if err != nil {
		return 0, err
	}
	if err := buf.Slice(0, 4*n).Memset8(0); err != nil {
		return 0, err
	}
	nseg := offsets.Len()
	if nseg > 0 {
		if err := sc.ex.CUDA().Launch("segscan_heads_from_offsets", linearGrid(nseg, 256), cuda.Linear(256), 0,
			offsets.Ptr(), uint64(nseg), buf.Ptr(), uint64(n)); err != nil {
			return 0, err
		}
	}
	return buf.Ptr(), nil
}
