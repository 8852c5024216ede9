package reduce

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// Segmented reductions reduce every segment src[offsets[s]:offsets[s+1]]
// of one array at once (a kd-tree level: one segment per node).
//
// Offsets must be non-decreasing and at most len(src); the Go executor
// returns an error otherwise. The CUDA executor does not read the offsets
// back to check them: it clamps each segment to [0, len(src)] and treats a
// decreasing pair as an empty segment, so bad offsets never read out of
// bounds (but the results then differ from the Go executor's error).
//
// On a GPU two launches handle any mix of segment lengths: one warp per
// segment reduces every segment of at most segWarpLimit elements (float4
// loads) and lists the longer ones; then a grid sized to the GPU goes
// through that list, each long segment shared by as many blocks as give
// every thread at least 16 elements (the whole grid for a huge one), blocks
// combining their shares with atomicMin/atomicMax on order-preserving keys.
// So a few huge segments run at full bandwidth and many tiny ones cost one
// warp each.

// SegmentedMin sets dst[s] to the minimum of src[offsets[s]:offsets[s+1]]
// for every segment s (len(dst) = len(offsets)-1), in Min's order; an empty
// segment gives +Inf. The reference loop:
//
//	for s := range dst {
//		dst[s] = float32(math.Inf(1))
//		for _, v := range src[offsets[s]:offsets[s+1]] { dst[s] = Min2(dst[s], v) }
//	}
func SegmentedMin(ex exec.Executor, dst, src *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return reducerFor(ex).segmented(opMin, dst, nil, src, offsets)
}

// SegmentedMax is SegmentedMin for the maximum; an empty segment gives -Inf.
func SegmentedMax(ex exec.Executor, dst, src *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return reducerFor(ex).segmented(opMax, nil, dst, src, offsets)
}

// SegmentedMinMax computes SegmentedMin into lo and SegmentedMax into hi in
// one pass over src.
func SegmentedMinMax(ex exec.Executor, lo, hi, src *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return reducerFor(ex).segmented(opMinMax, lo, hi, src, offsets)
}

// SegmentedMin is the package-level SegmentedMin on r's scratch.
func (r *Reducer) SegmentedMin(dst, src *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return r.segmented(opMin, dst, nil, src, offsets)
}

// SegmentedMax is the package-level SegmentedMax on r's scratch.
func (r *Reducer) SegmentedMax(dst, src *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return r.segmented(opMax, nil, dst, src, offsets)
}

// SegmentedMinMax is the package-level SegmentedMinMax on r's scratch.
func (r *Reducer) SegmentedMinMax(lo, hi, src *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return r.segmented(opMinMax, lo, hi, src, offsets)
}

// numSegments checks the lengths (a mismatch is a programmer error) and
// returns the number of segments.
func numSegments(outs int, offsets *exec.Buf[uint32]) int {
	if offsets.Len() == 0 {
		if outs != 0 {
			panic(fmt.Sprintf("reduce: %d outputs but no offsets", outs))
		}
		return 0
	}
	ns := offsets.Len() - 1
	if outs != ns {
		panic(fmt.Sprintf("reduce: %d outputs for %d segments (len(offsets)-1)", outs, ns))
	}
	return ns
}

// checkOffsets validates offsets on the host (Go executor).
func checkOffsets(off []uint32, n int) error {
	for s := 0; s+1 < len(off); s++ {
		if off[s] > off[s+1] {
			return fmt.Errorf("reduce: offsets decrease at segment %d (%d > %d)", s, off[s], off[s+1])
		}
	}
	if len(off) > 0 && int(off[len(off)-1]) > n {
		return fmt.Errorf("reduce: last offset %d beyond the %d elements", off[len(off)-1], n)
	}
	return nil
}

func (r *Reducer) segmented(o op, lo, hi, src *exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	out := lo
	if o == opMax {
		out = hi
	}
	ns := numSegments(out.Len(), offsets)
	if o == opMinMax && hi.Len() != lo.Len() {
		panic(fmt.Sprintf("reduce: SegmentedMinMax with %d lo and %d hi outputs", lo.Len(), hi.Len()))
	}
	if ns == 0 {
		return nil
	}
	n := src.Len()
	if r.ctx == nil {
		off := offsets.Host()
		if err := checkOffsets(off, n); err != nil {
			return err
		}
		s := src.Host()
		var dlo, dhi []float32
		if o&opMin != 0 {
			dlo = lo.Host()
		}
		if o&opMax != 0 {
			dhi = hi.Host()
		}
		one := func(i int, klo, khi uint32) {
			if dlo != nil {
				dlo[i] = minResult(klo)
			}
			if dhi != nil {
				dhi[i] = maxResult(khi)
			}
		}
		if ns < r.ex.Workers() && n >= goGrain { // few segments: parallel inside each
			for i := range ns {
				klo, khi := goMinMaxKeys(r.ex, s[off[i]:off[i+1]], int(o))
				one(i, klo, khi)
			}
			return nil
		}
		grain := max(1, ns*goGrain/max(n, 1))
		exec.ParallelFor(r.ex.Workers(), ns, grain, func(a, b int) {
			for i := a; i < b; i++ {
				seg := s[off[i]:off[i+1]]
				klo, khi := minIdentity, maxIdentity
				if dlo != nil {
					klo = minKeys(seg)
				}
				if dhi != nil {
					khi = maxKeys(seg)
				}
				one(i, klo, khi)
			}
		})
		return nil
	}

	if n > maxLen || ns > maxLen/32 {
		return fmt.Errorf("reduce: segmented input too large (%d elements, %d segments)", n, ns)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	outLo, outHi := cuda.DevPtr(0), cuda.DevPtr(0)
	switch o {
	case opMin:
		outLo = lo.Ptr()
	case opMax:
		outLo = hi.Ptr() // single-output kernels write through the first pointer
	default:
		outLo, outHi = lo.Ptr(), hi.Ptr()
	}
	in := cuda.DevPtr(0)
	if n > 0 {
		in = src.Ptr()
	}
	list, keys, big, capacity, err := r.bigScratch(n, segWarpLimit, 2)
	if err != nil {
		return err
	}
	name := o.String()
	k1, err := launch.Named[launch.ReduceSegwarpMinF32Args]("reduce_segwarp_" + name + "_f32")
	if err != nil {
		return err
	}
	k2, err := launch.Named[launch.ReduceSegbigMinF32Args]("reduce_segbig_" + name + "_f32")
	if err != nil {
		return err
	}
	if err := r.segReset(k1.Name(), ns); err != nil {
		return err
	}
	block := cuda.Linear(blockSize)
	if err := launchTyped(r, k1, cuda.GridFor(ns*32, blockSize), block, launch.ReduceSegwarpMinF32Args{
		Src: in, Offsets: offsets.Ptr(), OutLo: outLo, OutHi: outHi, BigList: list, BigKeys: keys, Big: big,
		Nseg: uint32(ns), N: uint32(n), Limit: uint32(segWarpLimit), Cap: uint32(capacity)}); err != nil {
		return r.segFailed(k1.Name(), ns, err)
	}
	if err := launchTyped(r, k2, cuda.Linear(r.sms*blocksPerSM), block, launch.ReduceSegbigMinF32Args{
		Src: in, Offsets: offsets.Ptr(), OutLo: outLo, OutHi: outHi, BigList: list, BigKeys: keys, Big: big,
		N: uint32(n), Cap: uint32(capacity)}); err != nil {
		return r.segFailed(k2.Name(), ns, err)
	}
	return nil
}

// segWarpLimit is the longest segment one warp reduces; longer ones are
// shared by blocks of the whole grid.
const segWarpLimit = 4096

// boxWarpLimit is segWarpLimit for boxes (six loads per element).
const boxWarpLimit = 2048

// bigScratch returns the list of long segments (room for entries = n/limit
// + 1, enough for valid offsets; with invalid, overlapping ones the kernels
// reduce the segments that do not fit in the list with one warp), their key
// words (words per entry) and the two counters the segmented kernels share.
// r.mu must be held.
func (r *Reducer) bigScratch(n, limit, words int) (list, keys, big cuda.DevPtr, entries int, err error) {
	if err := r.fixed(); err != nil {
		return 0, 0, 0, 0, err
	}
	entries = n/limit + 1
	if err := ensureU32(r.ex, &r.work, (1+words)*entries); err != nil {
		return 0, 0, 0, 0, err
	}
	list = r.work.Ptr()
	keys = list + cuda.DevPtr(4*entries)
	return list, keys, r.counter.Slice(ctrSegCount, 2).Ptr(), entries, nil
}

// segReset sets the two counters of the segmented kernels to 0 (a memset
// on the default stream, ordered before the launches that follow). The
// kernels also leave them at 0, but a call that failed or was aborted
// midway could have left them set, and then the list of long segments
// would be stale; so every call starts from a memset.
func (r *Reducer) segReset(kernel string, ns int) error {
	if err := r.counter.Slice(ctrSegCount, 2).Dev().Memset32(0); err != nil {
		r.dirty = true
		return fmt.Errorf("reduce: %s over %d segments: resetting the counters: %w", kernel, ns, err)
	}
	return nil
}

// segFailed wraps the error of a failed segmented launch (the next call
// resets the counters anyway).
func (r *Reducer) segFailed(kernel string, ns int, err error) error {
	return fmt.Errorf("reduce: %s over %d segments: %w", kernel, ns, err)
}
