package scan

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
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
// single-pass kernel named kernel, whose arguments are A, with args(state);
// one block per tile of lookbackTile(kernel).
// A single tile of a kernel without the ticket reads no state (tile 0
// looks back at nothing, it only publishes): the memset is skipped, one
// driver call less for the kd-tree builder's many small scans.
func lookbackLaunch[A launch.Args](sc *Scanner, kernel string, n int, args func(state cuda.DevPtr) A) error {
	tile := lookbackTile(kernel)
	tiles := (n + tile - 1) / tile
	state, err := sc.lookbackState(tiles, tiles > 1 || lookbackTicket(kernel))
	if err != nil {
		return err
	}
	return lookbackRun(sc, kernel, tiles, args(state))
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

// lookbackRun launches the single-pass kernel named kernel over tiles
// tiles with a (its state zeroed already).
func lookbackRun[A launch.Args](sc *Scanner, kernel string, tiles int, a A) error {
	k, err := launch.Named[A](kernel)
	if err != nil {
		return err
	}
	return k.Launch(sc.ex.CUDA(), cuda.Linear(tiles), cuda.Linear(lookbackThreads(kernel)), 0, a)
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
	return lookbackLaunch(sc, "scan_"+kind+"_"+family+"_"+sfx, n, func(state cuda.DevPtr) launch.ScanExclProductionU32Args {
		return launch.ScanExclProductionU32Args{Src: src, Dst: dst, N: uint64(n), State: state, Total: total}
	})
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
		initK, err := launch.Named[launch.ScanNaiveInitU32Args]("scan_naive_init_" + sfx)
		if err != nil {
			return err
		}
		stepK, err := launch.Named[launch.ScanNaiveStepU32Args]("scan_naive_step_" + sfx)
		if err != nil {
			return err
		}
		if err := initK.Launch(ctx, g, cuda.Linear(256), 0, launch.ScanNaiveInitU32Args{Src: src.Ptr(), Out: a, N: uint64(n), Inclusive: incl}); err != nil {
			return err
		}
		cur, other := a, dst.Ptr()
		for d := 1; d < n; d <<= 1 {
			if err := stepK.Launch(ctx, g, cuda.Linear(256), 0, launch.ScanNaiveStepU32Args{In: cur, Out: other, N: uint64(n), D: uint64(d)}); err != nil {
				return err
			}
			cur, other = other, cur
		}
		if cur != dst.Ptr() {
			return launch.ScanCopyU32.Launch(ctx, g, cuda.Linear(256), 0, launch.ScanCopyU32Args{Dst: dst.Ptr(), Src: cur, N: uint64(n)})
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
		loadK, err := launch.Named[launch.ScanWeLoadU32Args]("scan_we_load_" + sfx)
		if err != nil {
			return err
		}
		if err := loadK.Launch(ctx, linearGrid(m, 256), cuda.Linear(256), 0, launch.ScanWeLoadU32Args{Src: src.Ptr(), A: a, N: uint64(n), M: uint64(m)}); err != nil {
			return err
		}
		upName, downName := "scan_we_up_"+sfx, "scan_we_down_"+sfx
		threads := func(s int) int { return m }
		if variant == VariantWorkEfficientThreads {
			upName, downName = "scan_we_up_threads_"+sfx, "scan_we_down_threads_"+sfx
			threads = func(s int) int { return m / s }
		}
		up, err := launch.Named[launch.ScanWeUpU32Args](upName)
		if err != nil {
			return err
		}
		down, err := launch.Named[launch.ScanWeDownU32Args](downName)
		if err != nil {
			return err
		}
		for s := 2; s <= m; s <<= 1 {
			if err := up.Launch(ctx, linearGrid(threads(s), 256), cuda.Linear(256), 0, launch.ScanWeUpU32Args{A: a, M: uint64(m), S: uint64(s)}); err != nil {
				return err
			}
		}
		if err := buf.Slice(4*(m-1), 4).Memset8(0); err != nil {
			return err
		}
		for s := m; s >= 2; s >>= 1 {
			if err := down.Launch(ctx, linearGrid(threads(s), 256), cuda.Linear(256), 0, launch.ScanWeDownU32Args{A: a, M: uint64(m), S: uint64(s)}); err != nil {
				return err
			}
		}
		finish, err := launch.Named[launch.ScanWeFinishU32Args]("scan_we_finish_" + sfx)
		if err != nil {
			return err
		}
		return finish.Launch(ctx, linearGrid(n, 256), cuda.Linear(256), 0, launch.ScanWeFinishU32Args{A: a, Src: src.Ptr(), Dst: dst.Ptr(), N: uint64(n), Inclusive: incl})

	case VariantSharedNaive, VariantSharedWorkEfficient:
		sums, err := sc.scratch(scratchTemp, 4*uint64(sharedSumsLen(n)))
		if err != nil {
			return err
		}
		name, threads := "scan_block_naive_"+sfx, sharedBlock
		if variant == VariantSharedWorkEfficient {
			name, threads = "scan_block_we_"+sfx, sharedBlock/2
		}
		kernel, err := launch.Named[launch.ScanBlockNaiveU32Args](name)
		if err != nil {
			return err
		}
		add, err := launch.Named[launch.ScanAddSumsU32Args]("scan_add_sums_" + sfx)
		if err != nil {
			return err
		}
		return sharedScan(ctx, kernel, add, threads, src.Ptr(), dst.Ptr(), n, incl, sums)
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
func sharedScan(ctx *cuda.Context, kernel launch.Kernel[launch.ScanBlockNaiveU32Args], add launch.Kernel[launch.ScanAddSumsU32Args],
	threads int, in, out cuda.DevPtr, n int, incl int32, sums cuda.DevPtr) error {
	nb := (n + sharedBlock - 1) / sharedBlock
	if err := kernel.Launch(ctx, cuda.Linear(nb), cuda.Linear(threads), 0,
		launch.ScanBlockNaiveU32Args{In: in, Out: out, Sums: sums, N: uint64(n), Inclusive: incl}); err != nil {
		return err
	}
	if nb == 1 {
		return nil
	}
	next := ptrAt(sums, (nb+3)&^3)
	if err := sharedScan(ctx, kernel, add, threads, sums, sums, nb, 0, next); err != nil {
		return err
	}
	return add.Launch(ctx, linearGrid(n, 256), cuda.Linear(256), 0, launch.ScanAddSumsU32Args{Out: out, Sums: sums, N: uint64(n)})
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
	return lookbackLaunch(sc, kernel, n, func(state cuda.DevPtr) launch.SegscanExclU32Args {
		return launch.SegscanExclU32Args{Src: src.Ptr(), Heads: heads, Dst: dst.Ptr(), N: uint64(n), State: state}
	})
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
	if err := launch.SegscanTileStarts.Launch(sc.ex.CUDA(), linearGrid(tiles, 256), cuda.Linear(256), 0, launch.SegscanTileStartsArgs{
		Offsets: offPtr, Nentries: uint64(nent), TileSeg: buf.Ptr(), Tiles: uint64(tiles), Tile: uint64(tile), State: state}); err != nil {
		return err
	}
	return lookbackRun(sc, kernel, tiles, launch.SegscanOffExclU32Args{Src: src.Ptr(), Offsets: offPtr, TileSeg: buf.Ptr(),
		Nentries: uint64(nent), Dst: dst.Ptr(), N: uint64(n), State: state})
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
		if err := launch.SegscanHeadsFromOffsets.Launch(sc.ex.CUDA(), linearGrid(nseg, 256), cuda.Linear(256), 0,
			launch.SegscanHeadsFromOffsetsArgs{Offsets: offsets.Ptr(), Nseg: uint64(nseg), Heads: buf.Ptr(), N: uint64(n)}); err != nil {
			return 0, err
		}
	}
	return buf.Ptr(), nil
}
