package reduce

import (
	"fmt"
	"math"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// op selects what a reduction computes.
type op int

const (
	opMin    op = 1
	opMax    op = 2
	opMinMax op = 3
)

func (o op) String() string {
	switch o {
	case opMin:
		return "min"
	case opMax:
		return "max"
	}
	return "minmax"
}

// maxLen is the largest input the kernels index (32-bit counts).
const maxLen = math.MaxInt32

// Min returns the minimum of src in the package's order (see Min2): NaNs are
// skipped, -0 < +0, and an empty or all-NaN src gives +Inf. The reference
// loop:
//
//	m := float32(math.Inf(1))
//	for _, v := range src { m = Min2(m, v) }
func Min(ex exec.Executor, src *exec.Buf[float32]) (float32, error) {
	return reducerFor(ex).MinVariant(DefaultVariant, src)
}

// Max returns the maximum of src: NaNs are skipped, +0 > -0, and an empty or
// all-NaN src gives -Inf.
func Max(ex exec.Executor, src *exec.Buf[float32]) (float32, error) {
	return reducerFor(ex).MaxVariant(DefaultVariant, src)
}

// MinMax returns Min and Max of src in one pass.
func MinMax(ex exec.Executor, src *exec.Buf[float32]) (lo, hi float32, err error) {
	return reducerFor(ex).MinMaxVariant(DefaultVariant, src)
}

// MinVariant is Min computed by the named design (r0 … r7, see Variant). On
// the Go executor every design runs the same Go loop.
func MinVariant(ex exec.Executor, variant string, src *exec.Buf[float32]) (float32, error) {
	return reducerFor(ex).MinVariant(variant, src)
}

// MaxVariant is Max computed by the named design.
func MaxVariant(ex exec.Executor, variant string, src *exec.Buf[float32]) (float32, error) {
	return reducerFor(ex).MaxVariant(variant, src)
}

// MinMaxVariant is MinMax computed by the named design.
func MinMaxVariant(ex exec.Executor, variant string, src *exec.Buf[float32]) (lo, hi float32, err error) {
	return reducerFor(ex).MinMaxVariant(variant, src)
}

// Min is the package-level Min on r's executor and scratch.
func (r *Reducer) Min(src *exec.Buf[float32]) (float32, error) {
	return r.MinVariant(DefaultVariant, src)
}

// Max is the package-level Max on r's executor and scratch.
func (r *Reducer) Max(src *exec.Buf[float32]) (float32, error) {
	return r.MaxVariant(DefaultVariant, src)
}

// MinMax is the package-level MinMax on r's executor and scratch.
func (r *Reducer) MinMax(src *exec.Buf[float32]) (lo, hi float32, err error) {
	return r.MinMaxVariant(DefaultVariant, src)
}

// MinVariant is the package-level MinVariant on r's executor and scratch.
func (r *Reducer) MinVariant(variant string, src *exec.Buf[float32]) (float32, error) {
	lo, _, err := r.reduce(variant, opMin, src)
	return lo, err
}

// MaxVariant is the package-level MaxVariant on r's executor and scratch.
func (r *Reducer) MaxVariant(variant string, src *exec.Buf[float32]) (float32, error) {
	_, hi, err := r.reduce(variant, opMax, src)
	return hi, err
}

// MinMaxVariant is the package-level MinMaxVariant on r's executor and scratch.
func (r *Reducer) MinMaxVariant(variant string, src *exec.Buf[float32]) (lo, hi float32, err error) {
	return r.reduce(variant, opMinMax, src)
}

func (r *Reducer) reduce(variant string, o op, src *exec.Buf[float32]) (lo, hi float32, err error) {
	v, err := lookup(variant)
	if err != nil {
		return 0, 0, err
	}
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	if r.ctx == nil {
		klo, khi := goMinMaxKeys(r.ex, src.Host(), int(o))
		return minResult(klo), maxResult(khi), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fixed(); err != nil { // r.result must exist before it is passed
		return lo, hi, err
	}
	if err := r.enqueue(v, o, src, r.result, 0, 1); err != nil {
		return lo, hi, err
	}
	if err := r.result.Slice(0, 2).CopyToHost(r.host[:2]); err != nil {
		r.dirty = true
		return lo, hi, fmt.Errorf("reduce: %s %s: %w", v.Kernel(o.String()), "result", err)
	}
	switch o {
	case opMin:
		lo = r.host[0]
	case opMax:
		hi = r.host[1]
	default:
		lo, hi = r.host[0], r.host[1]
	}
	return lo, hi, nil
}

// enqueue launches the kernels of design v over src; the minimum goes to
// dst[loAt] and the maximum to dst[hiAt] (only those op asks for). Nothing
// is read back. r.mu must be held.
func (r *Reducer) enqueue(v Variant, o op, src, dst *exec.Buf[float32], loAt, hiAt int) error {
	n := src.Len()
	if n > maxLen {
		return fmt.Errorf("reduce: %d elements is more than the kernels index (%d)", n, maxLen)
	}
	if err := r.fixed(); err != nil {
		return err
	}
	kernel := v.Kernel(o.String())
	lanes := 1
	if o == opMinMax {
		lanes = 2
	}
	dstLo, dstHi := cuda.DevPtr(0), cuda.DevPtr(0)
	if o&opMin != 0 {
		dstLo = dst.Slice(loAt, 1).Ptr()
	}
	if o&opMax != 0 {
		dstHi = dst.Slice(hiAt, 1).Ptr()
	}
	// Results of a min-only or max-only kernel are written through the
	// "lo" output pointer of the kernel.
	outFinal := func() (cuda.DevPtr, cuda.DevPtr) {
		if o == opMax {
			return dstHi, 0
		}
		return dstLo, dstHi
	}
	block := cuda.Linear(blockSize)
	launchErr := func(err error) error {
		return fmt.Errorf("reduce: %s over %d elements: %w", kernel, n, err)
	}

	switch {
	case v.PerBlock > 0: // r0 … r5 and the tuning variants: one launch per level, the last one a single block
		g1 := v.levelGrid(n)
		stride := roundUp(g1, 64) // hi partials start here
		if g1 > 1 {
			for i := range r.part {
				if err := ensureF32(r.ex, &r.part[i], lanes*stride); err != nil {
					return err
				}
			}
		}
		work := cuda.DevPtr(0)
		if d := v.design(); d == "r0" || d == "r1" { // v.Threads/2 states per block
			if err := ensureU32(r.ex, &r.work, lanes*g1*v.Threads/2); err != nil {
				return err
			}
			work = r.work.Ptr()
		}
		inLo, inHi := src.Dev().Ptr(), cuda.DevPtr(0)
		if n == 0 {
			inLo = 0
		}
		cnt := n
		threads := cuda.Linear(v.Threads)
		for level := 0; ; level++ {
			g := v.levelGrid(cnt)
			var outLo, outHi cuda.DevPtr
			if g == 1 {
				outLo, outHi = outFinal()
			} else {
				p := r.part[level%2].Ptr()
				outLo, outHi = p, p+cuda.DevPtr(4*stride)
				if o != opMinMax {
					outHi = 0
				}
			}
			k, th := kernel, threads
			if g == 1 {
				k, th = v.finalKernel(o.String()), cuda.Linear(v.FinalThreads)
			}
			if err := r.launch(k, cuda.Linear(g), th, inLo, inHi, outLo, outHi, work, uint32(cnt)); err != nil {
				return launchErr(err)
			}
			if g == 1 {
				return nil
			}
			inLo, inHi, cnt = outLo, outHi, g
		}

	case v.design() == "r6": // grid-stride pass, then one block over the block results
		g := r.gridFor(n)
		outLo, outHi := outFinal()
		in := cuda.DevPtr(0)
		if n > 0 {
			in = src.Dev().Ptr()
		}
		if g == 1 {
			if err := r.launch(kernel, cuda.Linear(1), block, in, cuda.DevPtr(0), outLo, outHi, cuda.DevPtr(0), uint32(n)); err != nil {
				return launchErr(err)
			}
			return nil
		}
		stride := roundUp(g, 64)
		if err := ensureF32(r.ex, &r.part[0], lanes*stride); err != nil {
			return err
		}
		pLo := r.part[0].Ptr()
		pHi := cuda.DevPtr(0)
		if o == opMinMax {
			pHi = pLo + cuda.DevPtr(4*stride)
		}
		if err := r.launch(kernel, cuda.Linear(g), block, in, cuda.DevPtr(0), pLo, pHi, cuda.DevPtr(0), uint32(n)); err != nil {
			return launchErr(err)
		}
		if err := r.launch(kernel, cuda.Linear(1), block, pLo, pHi, outLo, outHi, cuda.DevPtr(0), uint32(g)); err != nil {
			return launchErr(err)
		}
		return nil

	default: // r7: one pass, last block done
		g := r.gridFor(n)
		stride := roundUp(g, 64)
		if err := ensureF32(r.ex, &r.part[0], lanes*stride); err != nil {
			return err
		}
		pLo := r.part[0].Ptr()
		pHi := cuda.DevPtr(0)
		if o == opMinMax {
			pHi = pLo + cuda.DevPtr(4*stride)
		}
		slot := ctrMinMax
		switch o {
		case opMin:
			slot = ctrMin
		case opMax:
			slot = ctrMax
		}
		ctr := r.counter.Slice(slot, 1).Ptr()
		in := cuda.DevPtr(0)
		if n > 0 {
			in = src.Dev().Ptr()
		}
		outLo, outHi := outFinal()
		if err := r.launch(kernel, cuda.Linear(g), block, in, pLo, pHi, ctr, outLo, outHi, uint32(n)); err != nil {
			return launchErr(err)
		}
		return nil
	}
}

// levelGrid is the grid of a level of a multi-pass design over n inputs:
// one block when n gives each thread at most finalPerThread inputs (the
// final level), else one block per PerBlock inputs.
func (v Variant) levelGrid(n int) int {
	if n <= finalPerThread*v.FinalThreads {
		return 1
	}
	return ceilDiv(n, v.PerBlock)
}

// Launches returns how many kernel launches design v needs for n elements
// (see Variant).
func (v Variant) Launches(n int) int {
	switch {
	case v.PerBlock > 0:
		k := 1
		for g := v.levelGrid(n); g > 1; g = v.levelGrid(g) {
			k++
		}
		return k
	case v.design() == "r6" && ceilDiv(n, blockSize*16) > 1:
		return 2
	}
	return 1
}

// gridFor is the grid of the grid-stride designs: enough blocks to fill the
// GPU (SMs × blocksPerSM) but no more than gives each thread 16 elements.
func (r *Reducer) gridFor(n int) int {
	g := ceilDiv(n, blockSize*16)
	return max(1, min(g, r.sms*blocksPerSM))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, b int) int { return ceilDiv(a, b) * b }
