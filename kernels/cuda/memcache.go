//go:build cgo && linux

package cuda

// The device memory cache. cuMemFree waits for the whole device and
// cuMemAlloc of a large block maps pages: a builder that frees its level
// buffers before the small phase and allocates again at every build paid
// about 1.7 ms of host time per bunny build in them (a CPU profile on an
// H200), a quarter of the build. FreePtr therefore keeps a freed block for
// reuse and Alloc takes a cached block of exactly the size asked for before
// it asks the driver.
//
// Reuse is safe because all of a Context's work runs on the default
// stream: the work queued after Alloc returns a reused block runs after the
// work queued before the FreePtr that released it. AllocatedBytes and
// PeakBytes count the blocks owners hold, not the cache; CachedBytes says
// what the cache holds. The cache holds at most a quarter of the device's
// memory (SetCacheLimit changes that; 0 turns it off), is emptied when an
// allocation fails for want of memory (and the allocation retried), by
// FreeCache, and by Close.

// memBlock is a cached device block.
type memBlock struct {
	p     DevPtr
	bytes uint64
}

// takeCached removes and returns a cached block of exactly bytes (c.memMu
// held), or 0.
func (c *Context) takeCached(bytes uint64) DevPtr {
	for i := len(c.cache) - 1; i >= 0; i-- {
		if b := c.cache[i]; b.bytes == bytes {
			c.cache = append(c.cache[:i], c.cache[i+1:]...)
			c.cachedBytes -= bytes
			return b.p
		}
	}
	return 0
}

// keep caches a freed block when the limit allows (c.memMu held) and says
// whether it did.
func (c *Context) keep(p DevPtr, bytes uint64) bool {
	if c.cachedBytes+bytes > c.cacheLimit {
		return false
	}
	c.cache = append(c.cache, memBlock{p, bytes})
	c.cachedBytes += bytes
	return true
}

// CachedBytes returns the bytes of freed device blocks kept for reuse.
func (c *Context) CachedBytes() uint64 {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	return c.cachedBytes
}

// SetCacheLimit sets the most bytes of freed blocks the Context keeps for
// reuse (0: none) and releases the cached blocks beyond it.
func (c *Context) SetCacheLimit(bytes uint64) error {
	if err := c.check(); err != nil {
		return err
	}
	c.memMu.Lock()
	c.cacheLimit = bytes
	c.memMu.Unlock()
	return c.trimCache(bytes)
}

// FreeCache releases every cached block to the driver.
func (c *Context) FreeCache() error {
	if err := c.check(); err != nil {
		return err
	}
	return c.trimCache(0)
}

// trimCache releases cached blocks, oldest first, until at most keep bytes
// stay cached.
func (c *Context) trimCache(keep uint64) error {
	c.memMu.Lock()
	var drop []memBlock
	for len(c.cache) > 0 && c.cachedBytes > keep {
		b := c.cache[0]
		c.cache = c.cache[1:]
		c.cachedBytes -= b.bytes
		drop = append(drop, b)
	}
	c.memMu.Unlock()
	if len(drop) == 0 {
		return nil
	}
	// Queued launches may use the blocks: they go first.
	first := c.flush()
	for _, b := range drop {
		if r := memFree(c.ctx, b.p); r != 0 && first == nil {
			first = driverError("cuMemFree", "", r)
		}
	}
	return first
}
