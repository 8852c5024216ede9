package scenes

import (
	"math"
	"strconv"
)

// pow10f64 holds the powers of ten that float64 represents exactly.
var pow10f64 = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
}

// parseFloat32 converts a decimal token to the nearest float32, exactly as
// strconv.ParseFloat(string(b), 32) does: ok is false where ParseFloat
// reports a syntax error; values too large come back as ±Inf with ok true
// (the caller rejects non-finite numbers).
//
// Fast path: [+-]digits[.digits][(e|E)[+-]digits] with a significand below
// 2^53 and a decimal exponent within ±22. Then float64(m) * or / 10^k is one
// correctly rounded float64 operation on exact operands, and rounding that
// float64 to float32 is correct unless it sits exactly on a float32 midpoint
// (double rounding) or outside the normal float32 range; those cases, and
// every other spelling (hex, inf, nan, underscores, long mantissas), go to
// strconv.
func parseFloat32(b []byte) (float32, bool) {
	if f, n, ok := parseFloatPrefix(b); ok && n == len(b) {
		return f, true
	}
	return slowFloat32(b)
}

// parseFloatPrefix parses the simple decimal at the start of b on the fast
// path described at parseFloat32, returning the value and the bytes used.
// ok is false when the prefix needs strconv (or is no number at all); the
// caller then finds the token's end and calls parseFloat32 on it.
func parseFloatPrefix(b []byte) (f32 float32, used int, ok bool) {
	i := 0
	n := len(b)
	neg := false
	if i < n && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	digits := 0 // significant digits accumulated into mant
	exp := 0    // decimal exponent applied to mant
	sawDigit := false
	for ; i < n && b[i]-'0' <= 9; i++ {
		sawDigit = true
		if digits >= 19 {
			return 0, 0, false
		}
		mant = mant*10 + uint64(b[i]-'0')
		if mant != 0 {
			digits++
		}
	}
	if i < n && b[i] == '.' {
		i++
		for ; i < n && b[i]-'0' <= 9; i++ {
			sawDigit = true
			if digits >= 19 {
				return 0, 0, false
			}
			mant = mant*10 + uint64(b[i]-'0')
			exp--
			if mant != 0 {
				digits++
			}
		}
	}
	if !sawDigit {
		return 0, 0, false
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < n && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		if i >= n || b[i]-'0' > 9 {
			return 0, 0, false
		}
		e := 0
		for ; i < n && b[i]-'0' <= 9; i++ {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant == 0 {
		if neg {
			return float32(math.Copysign(0, -1)), i, true
		}
		return 0, i, true
	}
	if mant >= 1<<53 || exp < -22 || exp > 22 {
		return 0, 0, false
	}
	f := float64(mant)
	if exp >= 0 {
		f *= pow10f64[exp]
	} else {
		f /= pow10f64[-exp]
	}
	// Exactly halfway between two float32 values: the decimal may lie on
	// either side, so let strconv decide. Subnormal or overflowing float32
	// results also go to strconv.
	if math.Float64bits(f)&(1<<29-1) == 1<<28 || f < 0x1p-126 || f > math.MaxFloat32 {
		return 0, 0, false
	}
	if neg {
		f = -f
	}
	return float32(f), i, true
}

func slowFloat32(b []byte) (float32, bool) {
	f, err := strconv.ParseFloat(string(b), 32)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return float32(f), true
		}
		return 0, false
	}
	return float32(f), true
}

// parseInt parses a decimal integer token [+-]digits into an int64; ok is
// false for anything else or a magnitude above 2^40 (no mesh index gets
// there, and it keeps the arithmetic far from overflow).
func parseInt(b []byte) (int64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		i++
	}
	if i >= len(b) {
		return 0, false
	}
	var v int64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v > 1<<40 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseFloat64 is strconv.ParseFloat(string(b), 64) reporting only syntax
// errors (overflow gives ±Inf, ok).
func parseFloat64(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}
