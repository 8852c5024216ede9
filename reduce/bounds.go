package reduce

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// boundsBlock is the thread count of the Bounds kernel: a multiple of 3, so
// that in its grid-stride loop over the interleaved array every thread
// always sees the same coordinate.
const boundsBlock = 384

// boundsBlocksPerSM is how many 384-thread blocks fit on an SM at once.
const boundsBlocksPerSM = 5

// Bounds returns the per-axis minimum and maximum of n points stored
// interleaved as xyz = x0 y0 z0 x1 y1 z1 …, in one pass (len(xyz) must be a
// multiple of 3; a mismatch is a programmer error). Order and NaN policy are
// Min's and Max's: with no points (or only NaN coordinates on an axis) that
// axis gives min = +Inf, max = -Inf (an empty box). The reference loop:
//
//	for i, v := range xyz { lo[i%3] = Min2(lo[i%3], v); hi[i%3] = Max2(hi[i%3], v) }
//
// Scene bounds are Bounds over the vertex array; the bounds of the
// triangles' boxes are SegmentedBoxes with one segment.
func Bounds(ex exec.Executor, xyz *exec.Buf[float32]) (lo, hi [3]float32, err error) {
	return reducerFor(ex).Bounds(xyz)
}

// Bounds is the package-level Bounds on r's scratch.
func (r *Reducer) Bounds(xyz *exec.Buf[float32]) (lo, hi [3]float32, err error) {
	n := xyz.Len()
	if n%3 != 0 {
		panic(fmt.Sprintf("reduce: Bounds of %d floats, not a multiple of 3", n))
	}
	if r.ctx == nil {
		var klo [3]uint32
		var khi [3]uint32
		s := xyz.Host()
		for a := range 3 {
			klo[a], khi[a] = minIdentity, maxIdentity
		}
		// Chunks hold whole points so that every goroutine sees all axes.
		var mu chunkMerge
		exec.ParallelFor(r.ex.Workers(), n/3, goGrain, func(p0, p1 int) {
			l := [3]uint32{minIdentity, minIdentity, minIdentity}
			h := [3]uint32{maxIdentity, maxIdentity, maxIdentity}
			for i := 3 * p0; i < 3*p1; i += 3 {
				for a := range 3 {
					l[a] = min(l[a], minKey(s[i+a]))
					h[a] = max(h[a], maxKey(s[i+a]))
				}
			}
			mu.merge(&klo, &khi, l, h)
		})
		for a := range 3 {
			lo[a], hi[a] = minResult(klo[a]), maxResult(khi[a])
		}
		return lo, hi, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fixed(); err != nil {
		return lo, hi, err
	}
	if err := r.boundsLaunch(r.result.Slice(0, 6), xyz); err != nil {
		return lo, hi, err
	}
	const k = "reduce_bounds_f32"
	if err := r.result.Slice(0, 6).CopyToHost(r.host[:6]); err != nil {
		r.dirty = true
		return lo, hi, fmt.Errorf("reduce: %s result: %w", k, err)
	}
	copy(lo[:], r.host[0:3])
	copy(hi[:], r.host[3:6])
	return lo, hi, nil
}

// boundsLaunch enqueues the Bounds kernel writing its 6 results to dst.
// r.mu must be held.
func (r *Reducer) boundsLaunch(dst, xyz *exec.Buf[float32]) error {
	n := xyz.Len()
	if n%3 != 0 {
		panic(fmt.Sprintf("reduce: Bounds of %d floats, not a multiple of 3", n))
	}
	if n > maxLen {
		return fmt.Errorf("reduce: Bounds of %d floats: more than the kernels index", n)
	}
	if err := r.fixed(); err != nil {
		return err
	}
	g := max(1, min(ceilDiv(n, boundsBlock*16), r.sms*boundsBlocksPerSM))
	if err := ensureF32(r.ex, &r.part[0], 6*g); err != nil {
		return err
	}
	in := cuda.DevPtr(0)
	if n > 0 {
		in = xyz.Ptr()
	}
	k := launch.ReduceBoundsF32
	if err := launchTyped(r, k, cuda.Linear(g), cuda.Linear(boundsBlock), launch.ReduceBoundsF32Args{
		Xyz: in, Part: r.part[0].Ptr(), Counter: r.counter.Slice(ctrBounds, 1).Ptr(), Out: dst.Ptr(), N: uint32(n)}); err != nil {
		return fmt.Errorf("reduce: %s over %d floats: %w", k.Name(), n, err)
	}
	return nil
}

// SegmentedBoxes reduces boxes stored as six arrays (lo[a][i], hi[a][i] for
// axis a of box i) per segment: for segment s (len(out) = 6·(len(offsets)-1))
//
//	out[6s+a]   = min over i in [offsets[s], offsets[s+1]) of lo[a][i]
//	out[6s+3+a] = max over the same i of hi[a][i]
//
// in Min's and Max's order; an empty segment gives the empty box (+Inf…,
// -Inf…). The six arrays must have the same length (programmer error
// otherwise). Offsets are handled as in SegmentedMin.
func SegmentedBoxes(ex exec.Executor, out *exec.Buf[float32], lo, hi [3]*exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	return reducerFor(ex).SegmentedBoxes(out, lo, hi, offsets)
}

// SegmentedBoxes is the package-level SegmentedBoxes on r's scratch.
func (r *Reducer) SegmentedBoxes(out *exec.Buf[float32], lo, hi [3]*exec.Buf[float32], offsets *exec.Buf[uint32]) error {
	if out.Len()%6 != 0 {
		panic(fmt.Sprintf("reduce: SegmentedBoxes output of %d floats, not 6 per segment", out.Len()))
	}
	ns := numSegments(out.Len()/6, offsets)
	n := lo[0].Len()
	for a := range 3 {
		if lo[a].Len() != n || hi[a].Len() != n {
			panic(fmt.Sprintf("reduce: SegmentedBoxes arrays of different lengths (%d, lo[%d] %d, hi[%d] %d)", n, a, lo[a].Len(), a, hi[a].Len()))
		}
	}
	if ns == 0 {
		return nil
	}
	if r.ctx == nil {
		off := offsets.Host()
		if err := checkOffsets(off, n); err != nil {
			return err
		}
		var l, h [3][]float32
		for a := range 3 {
			l[a], h[a] = lo[a].Host(), hi[a].Host()
		}
		o := out.Host()
		grain := max(1, ns*goGrain/max(n, 1))
		exec.ParallelFor(r.ex.Workers(), ns, grain, func(a, b int) {
			for s := a; s < b; s++ {
				for ax := range 3 {
					o[6*s+ax] = minResult(minKeys(l[ax][off[s]:off[s+1]]))
					o[6*s+3+ax] = maxResult(maxKeys(h[ax][off[s]:off[s+1]]))
				}
			}
		})
		return nil
	}
	if n > maxLen || ns > maxLen/32 {
		return fmt.Errorf("reduce: SegmentedBoxes input too large (%d boxes, %d segments)", n, ns)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var p [6]cuda.DevPtr
	if n > 0 {
		for a := range 3 {
			p[a], p[3+a] = lo[a].Ptr(), hi[a].Ptr()
		}
	}
	list, keys, big, capacity, err := r.bigScratch(n, boxWarpLimit, 6)
	if err != nil {
		return err
	}
	k1, k2 := launch.ReduceSegwarpBoxF32, launch.ReduceSegbigBoxF32
	if err := r.segReset(k1.Name(), ns); err != nil {
		return err
	}
	block := cuda.Linear(blockSize)
	if err := launchTyped(r, k1, cuda.GridFor(ns*32, blockSize), block, launch.ReduceSegwarpBoxF32Args{
		Lx: p[0], Ly: p[1], Lz: p[2], Hx: p[3], Hy: p[4], Hz: p[5], Offsets: offsets.Ptr(), Out: out.Ptr(),
		BigList: list, BigKeys: keys, Big: big, Nseg: uint32(ns), N: uint32(n), Limit: uint32(boxWarpLimit),
		Cap: uint32(capacity)}); err != nil {
		return r.segFailed(k1.Name(), ns, err)
	}
	if err := launchTyped(r, k2, cuda.Linear(r.sms*blocksPerSM), block, launch.ReduceSegbigBoxF32Args{
		Lx: p[0], Ly: p[1], Lz: p[2], Hx: p[3], Hy: p[4], Hz: p[5], Offsets: offsets.Ptr(), Out: out.Ptr(),
		BigList: list, BigKeys: keys, Big: big, N: uint32(n), Cap: uint32(capacity)}); err != nil {
		return r.segFailed(k2.Name(), ns, err)
	}
	return nil
}
