package scan

import (
	"fmt"
	"math/bits"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// lsd8 tiling (kernels/sort.cu): sub-tiles of 2048 keys, 256 threads.
const (
	sortSub     = 2048
	sortThreads = 256
	// sortBlocksPerSM is how many scatter blocks per SM the lsd8 sort aims
	// for (63 registers and 27 KiB of shared memory let 4 fit).
	sortBlocksPerSM = 4
)

// sortGrid returns the number of blocks and sub-tiles per block of the
// lsd8 passes for n keys on ctx.
func sortGrid(ctx *cuda.Context, n int) (blocks, perBlock int) {
	subs := (n + sortSub - 1) / sortSub
	sms := 132
	if ctx != nil && ctx.Info().SMs > 0 {
		sms = ctx.Info().SMs
	}
	blocks = min(subs, sms*sortBlocksPerSM)
	perBlock = (subs + blocks - 1) / blocks
	blocks = (subs + perBlock - 1) / perBlock
	return blocks, perBlock
}

// sortScratch is the scratch, by name, a sort of n pairs needs (every
// variant).
func sortScratch(ctx *cuda.Context, n int) map[string]uint64 {
	blocks, _ := sortGrid(ctx, max(n, 1))
	return map[string]uint64{
		scratchKeys:   4 * uint64(n),
		scratchVals:   4 * uint64(n),
		scratchFlags:  4 * uint64(n),
		scratchHist:   4 * 256 * uint64(max(blocks, 4)),
		scratchTiles:  max(ScratchBytes(max(n, 256*max(blocks, 1))), onesweepStateBytes(n)),
		scratchResult: 64,
	}
}

// onesweep tiling (kernels/sort.cu kd_sort::kOsTile): 256 threads x 15 keys.
const (
	onesweepTile    = 3840
	onesweepMaxKeys = 1 << 30 // look-back words hold 30-bit counts
	// onesweepHistBlocksPerSM: blocks per SM of sort_onesweep_hist_u32
	// (each reads 4096 keys per grid step).
	onesweepHistBlocksPerSM = 8
)

// onesweepStateBytes is the look-back state of one onesweep pass over n
// keys: the tile counter and one word per tile and digit.
func onesweepStateBytes(n int) uint64 {
	tiles := (n + onesweepTile - 1) / onesweepTile
	return 4 * (1 + 256*uint64(tiles))
}

// onesweepSort is gpuSort's onesweep variant (n < 2^30): one read of the
// keys builds the four digit histograms, a one-block kernel scans them and
// marks the passes that move keys, then one launch per pass. nbits < 0:
// the mask of passes is read back (4 bytes) and passes whose digit is the
// same for every key are skipped; otherwise every pass below bit nbits runs.
func onesweepSort(sc *Scanner, keys, vals *exec.Buf[uint32], nbits int) error {
	n := keys.Len()
	ctx := sc.ex.CUDA()
	if nbits == 0 {
		return nil // every key is 0 (the caller says): already sorted
	}
	hist, err := sc.scratchBuf(scratchHist, 4*4*256)
	if err != nil {
		return err
	}
	if err := hist.Slice(0, 4*4*256).Memset32(0); err != nil {
		return err
	}
	maskPtr, err := sc.resultPtr(0)
	if err != nil {
		return err
	}
	sms := 132
	if ctx.Info().SMs > 0 {
		sms = ctx.Info().SMs
	}
	hb := min((n+4095)/4096, sms*onesweepHistBlocksPerSM)
	if err := launch.SortOnesweepHistU32.Launch(ctx, cuda.Linear(max(hb, 1)), cuda.Linear(256), 0,
		launch.SortOnesweepHistU32Args{Keys: keys.Ptr(), N: uint64(n), Hist: hist.Ptr()}); err != nil {
		return err
	}
	if err := launch.SortOnesweepScanU32.Launch(ctx, cuda.Linear(1), cuda.Linear(256), 0,
		launch.SortOnesweepScanU32Args{Hist: hist.Ptr(), N: uint64(n), Mask: maskPtr}); err != nil {
		return err
	}
	var mask uint32
	if nbits < 0 {
		if mask, err = sc.readResult(0); err != nil {
			return err
		}
	} else {
		for p := 0; 8*p < nbits; p++ {
			mask |= 1 << p
		}
	}
	if mask == 0 {
		return nil
	}

	altK, err := sc.scratch(scratchKeys, 4*uint64(n))
	if err != nil {
		return err
	}
	var inV, altV cuda.DevPtr
	if vals != nil {
		inV = vals.Ptr()
		if altV, err = sc.scratch(scratchVals, 4*uint64(n)); err != nil {
			return err
		}
	}
	stateBytes := onesweepStateBytes(n)
	state, err := sc.scratchBuf(scratchTiles, stateBytes)
	if err != nil {
		return err
	}
	tiles := (n + onesweepTile - 1) / onesweepTile
	inK := keys.Ptr()
	passes := 0
	for p := 0; p < 4; p++ {
		if mask&(1<<p) == 0 {
			continue
		}
		if err := state.Slice(0, int(stateBytes)).Memset32(0); err != nil {
			return err
		}
		if err := launch.SortOnesweepPassU32.Launch(ctx, cuda.Linear(tiles), cuda.Linear(256), 0, launch.SortOnesweepPassU32Args{
			KeysIn: inK, ValsIn: inV, KeysOut: altK, ValsOut: altV, N: uint64(n), Shift: uint32(8 * p),
			Offsets: ptrAt(hist.Ptr(), 256*p), State: state.Ptr()}); err != nil {
			return err
		}
		inK, altK = altK, inK
		inV, altV = altV, inV
		passes++
	}
	if passes%2 == 1 {
		// The result is in the scratch: copy it back.
		g := linearGrid(n, 256)
		if err := launch.ScanCopyU32.Launch(ctx, g, cuda.Linear(256), 0, launch.ScanCopyU32Args{Dst: keys.Ptr(), Src: inK, N: uint64(n)}); err != nil {
			return err
		}
		if vals != nil {
			if err := launch.ScanCopyU32.Launch(ctx, g, cuda.Linear(256), 0, launch.ScanCopyU32Args{Dst: vals.Ptr(), Src: inV, N: uint64(n)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// gpuSort sorts by the low nbits bits of the keys; nbits < 0: find them
// from the largest key (read back).
func gpuSort(sc *Scanner, variant string, keys, vals *exec.Buf[uint32], nbits int) error {
	n := keys.Len()
	if err := checkGPUSize("sort", n); err != nil {
		return err
	}
	ctx := sc.ex.CUDA()
	if variant == SortOnesweep && n < onesweepMaxKeys {
		return onesweepSort(sc, keys, vals, nbits)
	}
	if variant == SortOnesweep {
		variant = SortLSD8Prefetch // the look-back counts hold 30 bits
	}
	if nbits < 0 {
		// The largest key says how many low bits can differ.
		maxPtr, err := sc.resultPtr(0)
		if err != nil {
			return err
		}
		if err := sc.bufs[scratchResult].Slice(0, 4).Memset8(0); err != nil {
			return err
		}
		if err := launch.SortMaxU32.Launch(ctx, linearGrid(n, 256*8), cuda.Linear(256), 0,
			launch.SortMaxU32Args{Keys: keys.Ptr(), N: uint64(n), Result: maxPtr}); err != nil {
			return err
		}
		maxKey, err := sc.readResult(0)
		if err != nil {
			return err
		}
		nbits = bits.Len32(maxKey)
	}
	if nbits == 0 {
		return nil // every key is 0: already sorted
	}

	altK, err := sc.scratch(scratchKeys, 4*uint64(n))
	if err != nil {
		return err
	}
	var inV, altV cuda.DevPtr
	if vals != nil {
		inV = vals.Ptr()
		if altV, err = sc.scratch(scratchVals, 4*uint64(n)); err != nil {
			return err
		}
	}
	inK := keys.Ptr()
	passes := 0
	switch variant {
	case SortSplit:
		flags, err := sc.scratch(scratchFlags, 4*uint64(n))
		if err != nil {
			return err
		}
		zeros, err := sc.resultPtr(1)
		if err != nil {
			return err
		}
		g := linearGrid(n, 256)
		for bit := 0; bit < nbits; bit++ {
			if err := launch.SortSplitFlagsU32.Launch(ctx, g, cuda.Linear(256), 0,
				launch.SortSplitFlagsU32Args{Keys: inK, Flags: flags, N: uint64(n), Bit: uint32(bit)}); err != nil {
				return err
			}
			if err := sc.productionRaw("u32", flags, flags, n, false, zeros); err != nil {
				return err
			}
			if err := launch.SortSplitScatterU32.Launch(ctx, g, cuda.Linear(256), 0, launch.SortSplitScatterU32Args{
				KeysIn: inK, ValsIn: inV, KeysOut: altK, ValsOut: altV, Pos: flags, Zeros: zeros, N: uint64(n), Bit: uint32(bit)}); err != nil {
				return err
			}
			inK, altK = altK, inK
			inV, altV = altV, inV
			passes++
		}
	case SortLSD8, SortLSD8Prefetch:
		scatter := launch.SortScatter8U32
		if variant == SortLSD8Prefetch {
			scatter = launch.SortScatter8PrefetchU32
		}
		blocks, perBlock := sortGrid(ctx, n)
		hist, err := sc.scratch(scratchHist, 4*256*uint64(blocks))
		if err != nil {
			return err
		}
		for shift := 0; shift < nbits; shift += 8 {
			if err := launch.SortHist8U32.Launch(ctx, cuda.Linear(blocks), cuda.Linear(sortThreads), 0,
				launch.SortHist8U32Args{Keys: inK, N: uint64(n), Shift: uint32(shift), Counts: hist, PerBlock: uint64(perBlock)}); err != nil {
				return err
			}
			if err := sc.productionRaw("u32", hist, hist, 256*blocks, false, 0); err != nil {
				return err
			}
			if err := scatter.Launch(ctx, cuda.Linear(blocks), cuda.Linear(sortThreads), 0, launch.SortScatter8U32Args{
				KeysIn: inK, ValsIn: inV, KeysOut: altK, ValsOut: altV, N: uint64(n), Shift: uint32(shift), Offsets: hist,
				PerBlock: uint64(perBlock)}); err != nil {
				return err
			}
			inK, altK = altK, inK
			inV, altV = altV, inV
			passes++
		}
	default:
		return fmt.Errorf("scan: unknown GPU sort %q", variant)
	}
	if passes%2 == 1 {
		// The result is in the scratch: copy it back.
		g := linearGrid(n, 256)
		if err := launch.ScanCopyU32.Launch(ctx, g, cuda.Linear(256), 0, launch.ScanCopyU32Args{Dst: keys.Ptr(), Src: inK, N: uint64(n)}); err != nil {
			return err
		}
		if vals != nil {
			if err := launch.ScanCopyU32.Launch(ctx, g, cuda.Linear(256), 0, launch.ScanCopyU32Args{Dst: vals.Ptr(), Src: inV, N: uint64(n)}); err != nil {
				return err
			}
		}
	}
	return nil
}
