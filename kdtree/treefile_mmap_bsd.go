//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package kdtree

// mapPopulate: these systems map a file's pages on first touch.
const mapPopulate = 0
