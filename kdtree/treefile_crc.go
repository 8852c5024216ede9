package kdtree

import "hash/crc32"

// crc32Combine returns the crc32-Castagnoli of a‖b from crcA = crc(a),
// crcB = crc(b) and lenB = len(b) bytes, so that a section's checksum is
// computed in pieces on all cores. crc(a‖b) = crcA·x^(8·lenB) + crcB in
// GF(2)[x] modulo the polynomial (the pre- and post-inversion of the
// standard CRC cancel out): about log2(lenB) products of 32 steps each.
func crc32Combine(crcA, crcB uint32, lenB uint64) uint32 {
	if lenB == 0 {
		return crcA
	}
	return mulModP(xPow8n(lenB), crcA) ^ crcB
}

// In the reflected representation of hash/crc32, bit 31 is x^0 and bit 0
// is x^31.
const x0 = uint32(1) << 31

// mulModP returns a·b modulo the Castagnoli polynomial.
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := x0; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		b = b>>1 ^ crc32.Castagnoli&-(b&1) // b·x
	}
	return p
}

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [64]uint32) {
	p := x0 >> 1 // x^1
	for k := range t {
		t[k] = p
		p = mulModP(p, p)
	}
	return t
}()

// xPow8n returns x^(8·n) modulo the polynomial: n bytes of zeros.
func xPow8n(n uint64) uint32 {
	p := x0
	for k := 3; n != 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			p = mulModP(x2n[k%64], p)
		}
	}
	return p
}
