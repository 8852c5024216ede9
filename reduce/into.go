package reduce

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// MinMaxInto writes Min(src) to dst[0] and Max(src) to dst[1] (len(dst) must
// be 2) without reading the result back: on a GPU the call only enqueues the
// kernel (DefaultVariant), so a builder can keep bounds on the device.
func MinMaxInto(ex exec.Executor, dst, src *exec.Buf[float32]) error {
	return reducerFor(ex).MinMaxInto(dst, src)
}

// MinMaxInto is the package-level MinMaxInto on r's scratch.
func (r *Reducer) MinMaxInto(dst, src *exec.Buf[float32]) error {
	if dst.Len() != 2 {
		panic(fmt.Sprintf("reduce: MinMaxInto needs 2 outputs, got %d", dst.Len()))
	}
	if r.ctx == nil {
		lo, hi := goMinMaxKeys(r.ex, src.Host(), int(opMinMax))
		d := dst.Host()
		d[0], d[1] = minResult(lo), maxResult(hi)
		return nil
	}
	v, err := lookup(DefaultVariant)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.enqueue(v, opMinMax, src, dst, 0, 1)
}

// BoundsInto writes Bounds(xyz) to dst as min x, min y, min z, max x, max y,
// max z (len(dst) must be 6) without reading it back.
func BoundsInto(ex exec.Executor, dst, xyz *exec.Buf[float32]) error {
	return reducerFor(ex).BoundsInto(dst, xyz)
}

// BoundsInto is the package-level BoundsInto on r's scratch.
func (r *Reducer) BoundsInto(dst, xyz *exec.Buf[float32]) error {
	if dst.Len() != 6 {
		panic(fmt.Sprintf("reduce: BoundsInto needs 6 outputs, got %d", dst.Len()))
	}
	if r.ctx == nil {
		lo, hi, err := r.Bounds(xyz)
		if err != nil {
			return err
		}
		d := dst.Host()
		copy(d[0:3], lo[:])
		copy(d[3:6], hi[:])
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.boundsLaunch(dst, xyz)
}
