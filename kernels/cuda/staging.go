//go:build cgo && linux

package cuda

import (
	"runtime"
	"sync"
	"unsafe"
)

// stagingBufs returns the context's two pinned staging buffers, allocating
// them on first use, or nils when pinned memory cannot be had (the caller
// then copies directly, as before). The caller holds stageMu.
func (c *Context) stagingBufs() [2]unsafe.Pointer {
	if c.stage == nil && !c.stageBad {
		p, r := hostAlloc(c.ctx, 2*stageChunk)
		if r != 0 || p == nil {
			c.stageBad = true
			return [2]unsafe.Pointer{}
		}
		c.stage = p
	}
	if c.stage == nil {
		return [2]unsafe.Pointer{}
	}
	return [2]unsafe.Pointer{c.stage, unsafe.Add(c.stage, stageChunk)}
}

// freeStaging releases the staging buffers (Close).
func (c *Context) freeStaging() Result {
	c.stageMu.Lock()
	defer c.stageMu.Unlock()
	if c.stage == nil {
		return 0
	}
	r := hostFree(c.ctx, c.stage)
	c.stage = nil
	return r
}

// dtohStaged copies n bytes from src to dst through the staging buffers,
// the host copy of each chunk overlapping the device copy of the next. ok
// is false when there are no staging buffers (nothing was copied).
func (c *Context) dtohStaged(dst unsafe.Pointer, src DevPtr, n uint64) (ok bool, err error) {
	c.stageMu.Lock()
	defer c.stageMu.Unlock()
	bufs := c.stagingBufs()
	if bufs[0] == nil {
		return false, nil
	}
	done := make(chan struct{}, 1)
	done <- struct{}{} // no host copy in flight
	for k, off := 0, uint64(0); off < n; k, off = k+1, off+stageChunk {
		m := min(stageChunk, n-off)
		b := bufs[k%2]
		// The host copy of chunk k-1 (the other buffer) runs meanwhile; the
		// one of chunk k-2 (this buffer) ended before chunk k-1's started.
		r := memcpyDtoH(c.ctx, b, src+DevPtr(off), m)
		<-done
		if r != 0 {
			return true, driverError("cuMemcpyDtoH", "", r)
		}
		go func(d unsafe.Pointer) {
			hostCopy(d, b, m)
			done <- struct{}{}
		}(unsafe.Add(dst, off))
	}
	<-done
	return true, nil
}

// htodStaged copies n bytes from src to dst through the staging buffers:
// goroutines copy chunk k+1 of src into one buffer while the driver copies
// chunk k from the other to the device (a copy from pinned memory returns
// when the device has the bytes, so the buffer is free again then). ok is
// false when there are no staging buffers (nothing was copied).
func (c *Context) htodStaged(dst DevPtr, src unsafe.Pointer, n uint64) (ok bool, err error) {
	c.stageMu.Lock()
	defer c.stageMu.Unlock()
	bufs := c.stagingBufs()
	if bufs[0] == nil {
		return false, nil
	}
	chunk := upChunk(n)
	hostCopy(bufs[0], src, min(chunk, n))
	for k, off := 0, uint64(0); off < n; k, off = k+1, off+chunk {
		var filled chan struct{}
		if next := off + chunk; next < n {
			filled = make(chan struct{})
			go func(b unsafe.Pointer, m uint64) {
				hostCopy(b, unsafe.Add(src, next), m)
				close(filled)
			}(bufs[(k+1)%2], min(chunk, n-next))
		}
		r := memcpyHtoD(c.ctx, dst+DevPtr(off), bufs[k%2], min(chunk, n-off))
		if filled != nil {
			<-filled
		}
		if r != 0 {
			return true, driverError("cuMemcpyHtoD", "", r)
		}
	}
	return true, nil
}

// upChunk is the chunk of a staged upload of n bytes: about a quarter of
// it, so that the host copies and the device copies overlap from the
// second chunk on, within [stageMin/2, stageChunk].
func upChunk(n uint64) uint64 {
	return min(stageChunk, max(stageMin/2, (n/4+4095)&^4095))
}

// hostCopy copies n bytes from src to dst (not overlapping) with up to
// GOMAXPROCS goroutines.
func hostCopy(dst, src unsafe.Pointer, n uint64) {
	parts := min(uint64(runtime.GOMAXPROCS(0)), max(n/copyGrain, 1))
	step := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for off := uint64(0); off < n; off += step {
		m := min(step, n-off)
		wg.Add(1)
		go func(off, m uint64) {
			defer wg.Done()
			copy(unsafe.Slice((*byte)(unsafe.Add(dst, off)), m), unsafe.Slice((*byte)(unsafe.Add(src, off)), m))
		}(off, m)
	}
	wg.Wait()
}
