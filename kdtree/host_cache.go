package kdtree

import (
	"sync"
	"unsafe"
)

// hostCache keeps one value's host memory from one CUDA build to the next
// (the last one put). A build's host arrays made anew have their pages
// faulted in as they are first written, on the build's path (on the
// device machine, gVisor, planTop spent most of its time there). A value
// larger than maxCachedBytes is not kept. (The host room, hostRoom, kept
// the same way made the bunny's booking no faster on the device machine:
// not kept.)
type hostCache[T any] struct {
	mu sync.Mutex
	v  *T
}

// maxCachedBytes is the most host memory a hostCache keeps.
const maxCachedBytes = 32 << 20

// take removes and returns the kept value, or nil.
func (c *hostCache[T]) take() *T {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.v
	c.v = nil
	return v
}

// put keeps v (replacing what was kept) when its memory, bytes, is at most
// maxCachedBytes.
func (c *hostCache[T]) put(v *T, bytes int) {
	if v == nil || bytes > maxCachedBytes {
		return
	}
	c.mu.Lock()
	c.v = v
	c.mu.Unlock()
}

// capBytes is the memory of s's capacity.
func capBytes[T any](s []T) int {
	var z T
	return cap(s) * int(unsafe.Sizeof(z))
}
