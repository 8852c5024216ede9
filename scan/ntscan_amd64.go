//go:build amd64 && !purego

package scan

// scanNT writes the exclusive (or inclusive) scan of the 32-bit words
// src[0:n], starting from carry, to dst with non-temporal stores — no read
// for ownership of dst's lines, which go to memory around the caches — and
// returns carry plus the sum (mod 2^32). dst must be 16-byte aligned and n
// a multiple of 4. It ends with SFENCE, so the stores are ordered before
// any later synchronisation.
//
//go:noescape
func scanNT(dst, src *uint32, n int, carry uint32, inclusive bool) uint32

// haveNT says whether scanNT exists (SSE2 is part of amd64).
const haveNT = true
