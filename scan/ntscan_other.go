//go:build !amd64 || purego

package scan

// scanNT is not available: the parallel scan uses the Go loop.
func scanNT(dst, src *uint32, n int, carry uint32, inclusive bool) uint32 {
	panic("scan: scanNT without assembly")
}

const haveNT = false

// Nor are the AVX2 forms.
func sumAVX2(src *uint32, n int) uint32 { panic("scan: sumAVX2 without assembly") }

func scanNT8(dst, src *uint32, n int, carry uint32, inclusive bool) uint32 {
	panic("scan: scanNT8 without assembly")
}

const haveAVX2 = false
