package reduce

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The oracles below restate the package's order with float comparisons (no
// keys), so that they can catch a wrong key transform.

// refBefore reports whether a comes strictly before b; both are not NaN.
func refBefore(a, b float32) bool {
	if a == b {
		return math.Signbit(float64(a)) && !math.Signbit(float64(b))
	}
	return a < b
}

func refMin(s []float32) float32 {
	m := float32(math.Inf(1))
	for _, v := range s {
		if v == v && refBefore(v, m) {
			m = v
		}
	}
	return m
}

func refMax(s []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range s {
		if v == v && refBefore(m, v) {
			m = v
		}
	}
	return m
}

var (
	posInf = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
	negZ   = math.Float32frombits(0x80000000)
	nanP   = math.Float32frombits(0x7FC00000)
	nanN   = math.Float32frombits(0xFFC00001) // negative NaN with a payload
	nanMax = math.Float32frombits(0x7FFFFFFF) // key 0xFFFFFFFF = min identity
	nanMin = math.Float32frombits(0xFFFFFFFF) // key 0 = max identity
	denorm = math.Float32frombits(0x00000001)
)

// specials are the values every data kind mixes in.
var specials = []float32{0, negZ, posInf, negInf, nanP, nanN, nanMax, nanMin, denorm, -denorm,
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1, -1}

// dataKinds name the inputs the tests use.
var dataKinds = []string{"uniform", "special", "zeros", "nan", "descending"}

// genData returns n values of a kind from a fixed seed.
func genData(kind string, n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	s := make([]float32, n)
	switch kind {
	case "uniform": // negative and positive, a wide range of magnitudes
		var scale [20]float64
		for e := range scale {
			scale[e] = math.Pow(10, float64(e-10))
		}
		for i := range s {
			s[i] = float32((rng.Float64()*2 - 1) * scale[rng.IntN(20)])
		}
	case "special": // mostly specials, so that ±0, ±Inf and NaN meet at every level
		for i := range s {
			if rng.IntN(4) == 0 {
				s[i] = float32(rng.NormFloat64())
			} else {
				s[i] = specials[rng.IntN(len(specials))]
			}
		}
	case "zeros": // only -0 and +0 (and one extreme placed at random)
		for i := range s {
			if rng.IntN(2) == 0 {
				s[i] = negZ
			}
		}
	case "nan": // NaN everywhere except perhaps one value
		for i := range s {
			s[i] = []float32{nanP, nanN, nanMax, nanMin}[rng.IntN(4)]
		}
		if n > 2 {
			s[rng.IntN(n)] = float32(rng.NormFloat64())
		}
	case "descending": // the extreme values at the very end
		for i := range s {
			s[i] = float32(n-i) - float32(n)/2
		}
	default:
		panic("unknown data kind " + kind)
	}
	return s
}

// testSizes are the edge sizes around warps and blocks, and 2^k±1 up to 2^maxK.
func testSizes(maxK int) []int {
	s := []int{0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 63, 64, 65, 255, 256, 257, 383, 384, 385, 511, 512, 513, 1023, 1024, 1025}
	for k := 11; k <= maxK; k++ {
		s = append(s, 1<<k-1, 1<<k, 1<<k+1)
	}
	return s
}

func bitsEqual(t testing.TB, what string, got, want float32) {
	t.Helper()
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Errorf("%s = %v (%#08x), want %v (%#08x)", what, got, math.Float32bits(got), want, math.Float32bits(want))
	}
}
