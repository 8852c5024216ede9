//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package kdtree

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only and shared: the pages
// are the page cache's, and mapPopulate (Linux) maps them all in the same
// call rather than on first touch.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if int64(int(size)) != size {
		return nil, syscall.EFBIG
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
}

// unmapFile releases a mapping of mapFile.
func unmapFile(b []byte) error { return syscall.Munmap(b) }
