//go:build !amd64 || purego

package scan

// scanNT is not available: the parallel scan uses the Go loop.
func scanNT(dst, src *uint32, n int, carry uint32, inclusive bool) uint32 {
	panic("scan: scanNT without assembly")
}

const haveNT = false
