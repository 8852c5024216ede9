//go:build amd64 && !purego

package scan

// sumAVX2 returns the sum modulo 2^32 of src[0:n], n a multiple of 32.
//
//go:noescape
func sumAVX2(src *uint32, n int) uint32

// scanNT8 is scanNT eight items at a time with AVX2: dst must be 32-byte
// aligned and n a multiple of 8.
//
//go:noescape
func scanNT8(dst, src *uint32, n int, carry uint32, inclusive bool) uint32

func cpuHasAVX2() bool

// haveAVX2 says whether the CPU and the OS support AVX2.
var haveAVX2 = cpuHasAVX2()
