//go:build !unix

package scenes

import "os"

// openNonBlocking opens path; without O_NONBLOCK, opening a FIFO waits for
// a writer.
func openNonBlocking(path string) (*os.File, error) {
	return os.Open(path)
}
