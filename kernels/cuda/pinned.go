//go:build cgo && linux

package cuda

import (
	"fmt"
	"unsafe"
)

// Pinned is a block of page-locked host memory from Context.Pinned: the
// destination of asynchronous copies (CopyToHostAsync), whose host side the
// caller reads once an event recorded after the copy has happened.
type Pinned struct {
	p     unsafe.Pointer
	bytes uint64
	dev   DevPtr // the block's device address (0: not mapped)
}

// Dev is the block's address on the device, where kernels may write into
// it directly (the host reads what they wrote once an event recorded after
// them has happened), or 0 when the driver did not map it.
func (b *Pinned) Dev() DevPtr { return b.dev }

// U32 returns the first n words of the block (n*4 at most its size).
func (b *Pinned) U32(n int) []uint32 {
	if uint64(n)*4 > b.bytes {
		panic(fmt.Sprintf("cuda: %d words of a %d-byte pinned block", n, b.bytes))
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(b.p), n)
}

// Bytes is the block's size.
func (b *Pinned) Bytes() uint64 { return b.bytes }

// pinnedMin is the smallest pinned block Pinned hands out: cuMemHostAlloc
// costs tens of microseconds whatever the size, so small blocks are
// rounded up and kept.
const pinnedMin = 64 << 10

// Pinned returns a page-locked host block of at least bytes, reusing one
// that PutPinned gave back when one is large enough (the blocks are kept
// until Close: a build asks for the same few sizes again and again). Sizes
// are rounded up to a power of two.
func (c *Context) Pinned(bytes uint64) (*Pinned, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	size := uint64(pinnedMin)
	for size < bytes {
		size *= 2
	}
	c.pinMu.Lock()
	for i, b := range c.pinned {
		if b.bytes == size {
			c.pinned = append(c.pinned[:i], c.pinned[i+1:]...)
			c.pinMu.Unlock()
			return b, nil
		}
	}
	c.pinMu.Unlock()
	p, r := hostAlloc(c.ctx, size)
	if r != 0 {
		return nil, fmt.Errorf("cuda: allocating %d bytes of pinned host memory: %w", size, unprefixed{driverError("cuMemHostAlloc", "", r)})
	}
	b := &Pinned{p: p, bytes: size}
	if d, r := hostDevPtr(c.ctx, p); r == 0 {
		b.dev = d
	}
	return b, nil
}

// PutPinned gives a block from Pinned back for reuse; nil does nothing.
// The caller must not use it afterwards, nor give it back while a copy
// into it may still run.
func (c *Context) PutPinned(b *Pinned) {
	if b == nil || b.p == nil {
		return
	}
	c.pinMu.Lock()
	defer c.pinMu.Unlock()
	if c.closed.Load() {
		hostFree(c.ctx, b.p)
		return
	}
	c.pinned = append(c.pinned, b)
}

// freePinned releases the kept pinned blocks (Close).
func (c *Context) freePinned() Result {
	c.pinMu.Lock()
	defer c.pinMu.Unlock()
	var first Result
	for _, b := range c.pinned {
		if r := hostFree(c.ctx, b.p); r != 0 && first == 0 {
			first = r
		}
	}
	c.pinned = nil
	return first
}

// CopyToHostAsync queues a copy of bytes from src into dst at byte offset
// off on the default stream, after the launches queued so far, and returns
// without waiting: dst holds the data once an event recorded after it has
// happened (Event.Synchronize).
func (c *Context) CopyToHostAsync(dst *Pinned, off uint64, src DevPtr, bytes uint64) error {
	if ok, err := c.asyncCopyReady(dst, off, bytes, "into"); !ok {
		return err
	}
	return driverError("cuMemcpyDtoHAsync", "", memcpyDtoHAsync(c.ctx, unsafe.Add(dst.p, off), src, bytes))
}

// CopyToDeviceAsync queues a copy of bytes from src at byte offset off to
// dst on the default stream, after the work queued so far, and returns
// without waiting: src must stay as it is until work queued after it has
// happened (an event, or a wait for the device). From pinned memory the
// device reads the bytes where they are: no staging copy on the host.
func (c *Context) CopyToDeviceAsync(dst DevPtr, src *Pinned, off uint64, bytes uint64) error {
	if ok, err := c.asyncCopyReady(src, off, bytes, "from"); !ok {
		return err
	}
	return driverError("cuMemcpyHtoDAsync", "", memcpyHtoDAsync(c.ctx, dst, unsafe.Add(src.p, off), bytes))
}

// asyncCopyReady checks an asynchronous copy of bytes at byte offset off
// into or from (dir) the pinned block b and readies the context for it:
// ok is false when there is nothing to copy (err nil) or the copy is
// refused (err says why).
func (c *Context) asyncCopyReady(b *Pinned, off, bytes uint64, dir string) (ok bool, err error) {
	if off > b.bytes || bytes > b.bytes-off {
		return false, fmt.Errorf("cuda: copying %d bytes at %d %s a %d-byte pinned block", bytes, off, dir, b.bytes)
	}
	if bytes == 0 {
		return false, nil
	}
	if err := c.ready(); err != nil {
		return false, err
	}
	return true, nil
}
