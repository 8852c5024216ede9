//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package kdtree

import (
	"errors"
	"os"
)

// mapFile: this system's files are read, not mapped (ReadTreeFile).
func mapFile(*os.File, int64) ([]byte, error) {
	return nil, errors.New("kdtree: tree files are not mapped on this system")
}

func unmapFile([]byte) error { return nil }
