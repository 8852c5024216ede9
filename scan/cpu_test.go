package scan

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestLookbackScanForms checks the one-pass look-back scan and the two-pass
// form against the serial loop with every alignment of dst and src inside
// a 32-byte line (the AVX2 path scans from dst's first 32-byte boundary),
// several worker counts, in place and out of place.
func TestLookbackScanForms(t *testing.T) {
	sizes := []int{parallelMin - 1, parallelMin, 3*lbBlock - 1, 3*lbBlock + 7, 5*lbBlock + 33}
	for _, n := range sizes {
		for _, workers := range []int{2, 3, 4} {
			for off := 0; off < 8; off++ {
				for _, incl := range []bool{false, true} {
					name := fmt.Sprintf("n=%d/w=%d/off=%d/incl=%v", n, workers, off, incl)
					r := rand.New(rand.NewPCG(uint64(n), uint64(off)))
					buf := make([]uint32, n+16)
					for i := range buf {
						buf[i] = r.Uint32()
					}
					src := buf[off : off+n]
					want := make([]uint32, n)
					var wantTotal uint32
					if incl {
						wantTotal = serialInclusive(want, src, 0)
					} else {
						wantTotal = serialExclusive(want, src, 0)
					}
					out := make([]uint32, n+16)
					dst := out[7-off%8 : 7-off%8+n]
					for _, f := range []struct {
						form string
						fn   func(d, s []uint32) uint32
					}{
						{"lookback", func(d, s []uint32) uint32 { return lookbackScan(workers, d, s, incl) }},
						{"two-pass", func(d, s []uint32) uint32 { return twoPassScan(workers, d, s, incl) }},
					} {
						clear(out)
						if got := f.fn(dst, src); got != wantTotal {
							t.Fatalf("%s %s: total %d, want %d", f.form, name, got, wantTotal)
						}
						for i := range want {
							if dst[i] != want[i] {
								t.Fatalf("%s %s: [%d] = %d, want %d", f.form, name, i, dst[i], want[i])
							}
						}
					}
					// In place.
					in := append([]uint32(nil), src...)
					lookbackScan(workers, in, in, incl)
					for i := range want {
						if in[i] != want[i] {
							t.Fatalf("lookback in place %s: [%d] = %d, want %d", name, i, in[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestBlockSum checks the AVX2 sum against the plain loop around its
// 32-item groups.
func TestBlockSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	s := make([]uint32, 200)
	for i := range s {
		s[i] = r.Uint32()
	}
	for off := 0; off < 8; off++ {
		for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 191} {
			var want uint32
			for _, v := range s[off : off+n] {
				want += v
			}
			if got := blockSum(s[off : off+n]); got != want {
				t.Errorf("off=%d n=%d: %d, want %d", off, n, got, want)
			}
		}
	}
}
