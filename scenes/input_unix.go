//go:build unix

package scenes

import (
	"os"
	"syscall"
)

// openNonBlocking opens path with O_NONBLOCK, so that opening a FIFO
// without a writer returns at once; Go's poller then serves the reads
// (blocking the goroutine, not the thread), and regular files ignore the
// flag.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
