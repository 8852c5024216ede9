package reduce

import "math"

// The order of float32 values used by every path of this package (Go and
// CUDA alike) is the order of their "keys": the bit pattern with the sign bit
// flipped for positive values and all bits flipped for negative ones. On
// non-NaN values this is the usual numeric order, with two refinements:
// -0 < +0, and every value lies between -Inf and +Inf inclusive. Because
// min and max then return one of their operands bit for bit, every path
// gives the same bits, whatever order it combines the values in.
//
// NaN policy: NaN inputs are ignored (skipped). The minimum of an empty
// range, or of a range holding only NaNs, is +Inf; the maximum is -Inf. A
// result is therefore never NaN, and kernels treat NaN like any other value
// (no loops depend on it), so they cannot hang on it.

const (
	minIdentity uint32 = 0xFFFFFFFF // key above every non-NaN key (the key of one NaN pattern)
	maxIdentity uint32 = 0          // key below every non-NaN key (the key of one NaN pattern)
	signBit     uint32 = 0x80000000
)

// orderKey maps f to a uint32 whose unsigned order is the float order
// described above (NaNs land above +Inf or below -Inf by their sign).
func orderKey(f float32) uint32 {
	u := math.Float32bits(f)
	return u ^ (uint32(int32(u)>>31) | signBit)
}

// fromKey inverts orderKey.
func fromKey(k uint32) float32 {
	if k&signBit != 0 {
		return math.Float32frombits(k ^ signBit)
	}
	return math.Float32frombits(^k)
}

func isNaN32(f float32) bool { return math.Float32bits(f)&0x7FFFFFFF > 0x7F800000 }

// minKey is the key a value contributes to a minimum: NaN contributes the
// identity, so it is skipped.
func minKey(f float32) uint32 {
	if isNaN32(f) {
		return minIdentity
	}
	return orderKey(f)
}

// maxKey is the key a value contributes to a maximum.
func maxKey(f float32) uint32 {
	if isNaN32(f) {
		return maxIdentity
	}
	return orderKey(f)
}

// minResult turns a reduced min key into the float result (+Inf for the
// identity: an empty or all-NaN range).
func minResult(k uint32) float32 {
	if k == minIdentity {
		return float32(math.Inf(1))
	}
	return fromKey(k)
}

// maxResult turns a reduced max key into the float result (-Inf for the
// identity).
func maxResult(k uint32) float32 {
	if k == maxIdentity {
		return float32(math.Inf(-1))
	}
	return fromKey(k)
}

// Min2 returns the smaller of a and b in this package's order: NaN is
// ignored (Min2(NaN, NaN) = +Inf) and -0 is smaller than +0. It is the
// binary operator every min reduction here applies.
func Min2(a, b float32) float32 { return minResult(min(minKey(a), minKey(b))) }

// Max2 returns the larger of a and b in this package's order: NaN is
// ignored (Max2(NaN, NaN) = -Inf) and +0 is larger than -0.
func Max2(a, b float32) float32 { return maxResult(max(maxKey(a), maxKey(b))) }
