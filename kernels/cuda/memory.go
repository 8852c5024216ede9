//go:build cgo && linux

package cuda

import (
	"fmt"
	"unsafe"
)

// Alloc allocates bytes of device memory (uninitialised), reusing a cached
// block of that size when there is one (memcache.go). A request the device
// cannot satisfy, even with the cache released, returns an error wrapping
// ErrOutOfMemory that says how much was asked and how much is free.
// Alloc(0) returns 0.
func (c *Context) Alloc(bytes uint64) (DevPtr, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	if bytes == 0 {
		return 0, nil
	}
	c.memMu.Lock()
	p := c.takeCached(bytes)
	c.memMu.Unlock()
	var r Result
	if p == 0 {
		p, r = memAlloc(c.ctx, bytes)
		if r == resultOutOfMemory && c.CachedBytes() > 0 {
			if err := c.FreeCache(); err != nil {
				return 0, err
			}
			p, r = memAlloc(c.ctx, bytes)
		}
	}
	if r != 0 {
		e := driverError("cuMemAlloc", "", r)
		if r == resultOutOfMemory {
			free, total, _ := memInfo(c.ctx)
			return 0, fmt.Errorf("cuda: allocating %d bytes (%s) with %s free of %s: %w",
				bytes, human(bytes), human(free), human(total), unprefixed{e})
		}
		return 0, fmt.Errorf("cuda: allocating %d bytes: %w", bytes, unprefixed{e})
	}
	c.memMu.Lock()
	c.sizes[p] = bytes
	c.current += bytes
	if c.current > c.peak {
		c.peak = c.current
	}
	c.memMu.Unlock()
	return p, nil
}

// FreePtr releases memory from Alloc: into the cache (memcache.go) while
// it has room, else to the driver. Freeing 0 does nothing.
func (c *Context) FreePtr(p DevPtr) error {
	if p == 0 {
		return nil
	}
	if err := c.check(); err != nil {
		return err
	}
	c.memMu.Lock()
	bytes, ok := c.sizes[p]
	kept := ok && c.keep(p, bytes)
	c.memMu.Unlock()
	if !kept {
		// Queued launches may use p: they go first.
		if err := c.flush(); err != nil {
			return err
		}
		if r := memFree(c.ctx, p); r != 0 {
			return driverError("cuMemFree", "", r)
		}
	}
	c.memMu.Lock()
	c.current -= bytes
	delete(c.sizes, p)
	c.memMu.Unlock()
	return nil
}

// AllocatedBytes returns the bytes allocated through this context and not
// yet freed.
func (c *Context) AllocatedBytes() uint64 {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	return c.current
}

// PeakBytes returns the most bytes allocated at once since Open or the last
// ResetPeak.
func (c *Context) PeakBytes() uint64 {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	return c.peak
}

// ResetPeak sets the peak to the bytes allocated now.
func (c *Context) ResetPeak() {
	c.memMu.Lock()
	c.peak = c.current
	c.memMu.Unlock()
}

// HostAlloc allocates page-locked host memory of n bytes for fast copies; it
// must be released with HostFree (never by the garbage collector).
func (c *Context) HostAlloc(bytes uint64) (unsafe.Pointer, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	p, r := hostAlloc(c.ctx, bytes)
	if r != 0 {
		return nil, fmt.Errorf("cuda: allocating %d bytes of pinned host memory: %w", bytes, unprefixed{driverError("cuMemHostAlloc", "", r)})
	}
	return p, nil
}

// HostFree releases memory from HostAlloc; nil does nothing.
func (c *Context) HostFree(p unsafe.Pointer) error {
	if p == nil {
		return nil
	}
	if err := c.check(); err != nil {
		return err
	}
	return driverError("cuMemFreeHost", "", hostFree(c.ctx, p))
}

func (c *Context) htod(dst DevPtr, src unsafe.Pointer, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	if n >= stageMin {
		if ok, err := c.htodStaged(dst, src, n); ok {
			return err
		}
	}
	return driverError("cuMemcpyHtoD", "", memcpyHtoD(c.ctx, dst, src, n))
}

func (c *Context) dtoh(dst unsafe.Pointer, src DevPtr, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	if n >= stageMin {
		if ok, err := c.dtohStaged(dst, src, n); ok {
			return err
		}
	}
	return driverError("cuMemcpyDtoH", "", memcpyDtoH(c.ctx, dst, src, n))
}

func (c *Context) dtod(dst, src DevPtr, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	return driverError("cuMemcpyDtoD", "", memcpyDtoD(c.ctx, dst, src, n))
}

func (c *Context) memsetD8(dst DevPtr, v byte, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	return driverError("cuMemsetD8", "", memsetD8(c.ctx, dst, v, n))
}

func (c *Context) memsetD32(dst DevPtr, v uint32, n uint64) error {
	if err := c.ready(); err != nil {
		return err
	}
	return driverError("cuMemsetD32", "", memsetD32(c.ctx, dst, v, n))
}

// CopyDtoD copies bytes device to device on the default stream.
func (c *Context) CopyDtoD(dst, src DevPtr, bytes uint64) error {
	if bytes == 0 {
		return nil
	}
	return c.dtod(dst, src, bytes)
}
