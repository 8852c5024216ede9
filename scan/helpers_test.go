package scan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Reference loops, written plainly (the package's serial loops are unrolled).

func refExclusive[T Value](src []T) []T {
	out := make([]T, len(src))
	var acc T
	for i, v := range src {
		out[i] = acc
		acc += v
	}
	return out
}

func refInclusive[T Value](src []T) []T {
	out := make([]T, len(src))
	var acc T
	for i, v := range src {
		acc += v
		out[i] = acc
	}
	return out
}

func refSegmented[T Value](src []T, heads []uint32, inclusive bool) []T {
	out := make([]T, len(src))
	var acc T
	for i, v := range src {
		if heads[i] != 0 {
			acc = 0
		}
		if inclusive {
			acc += v
			out[i] = acc
		} else {
			out[i] = acc
			acc += v
		}
	}
	return out
}

func refCompact(src, flags []uint32) []uint32 {
	out := []uint32{}
	for i, v := range src {
		if flags[i] != 0 {
			out = append(out, v)
		}
	}
	return out
}

// sizesUpTo lists the edge sizes: 0, 1, 2, 31, 32, 33, each block size
// b-1, b, b+1, and 2^k-1, 2^k, 2^k+1 for the given k, all at most limit.
func sizesUpTo(limit int, blocks []int, ks []int) []int {
	seen := map[int]bool{}
	var out []int
	add := func(n int) {
		if n >= 0 && n <= limit && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range []int{0, 1, 2, 3, 31, 32, 33} {
		add(n)
	}
	for _, b := range blocks {
		add(b - 1)
		add(b)
		add(b + 1)
	}
	for _, k := range ks {
		add(1<<k - 1)
		add(1 << k)
		add(1<<k + 1)
	}
	return out
}

// randomValues returns n values of T from a fixed seed. Integers are full
// 32-bit random (sums wrap); floats are small integers (0..7, or 0..1 for
// n > 2^21) so that every partial sum is exact in float32 and every
// variant must match the serial loop bit for bit.
func randomValues[T Value](n int, seed uint64) []T {
	r := rand.New(rand.NewPCG(seed, 0x5ca9))
	out := make([]T, n)
	var z T
	switch any(z).(type) {
	case float32:
		m := 8
		if n > 1<<21 {
			m = 2
		}
		for i := range out {
			out[i] = T(r.IntN(m))
		}
	default:
		for i := range out {
			out[i] = T(r.Uint32())
		}
	}
	return out
}

// randomHeads returns head flags with about one head in every `every`
// items, with runs of consecutive heads (one-element segments) and,
// for nonzero values, arbitrary nonzero words.
func randomHeads(n, every int, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, 0x4ead))
	h := make([]uint32, n)
	for i := range h {
		switch {
		case r.IntN(every) == 0:
			h[i] = 1 + r.Uint32N(1<<31)
		case r.IntN(4*every) == 0:
			// A run of one-element segments.
			for j := i; j < min(n, i+5); j++ {
				h[j] = 1
			}
		}
	}
	return h
}

func equalExact[T Value](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] && !(isNaN(got[i]) && isNaN(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v (first of the differences)", what, i, got[i], want[i])
		}
	}
}

func isNaN[T Value](v T) bool {
	f, ok := any(v).(float32)
	return ok && math.IsNaN(float64(f))
}

func typeName[T Value]() string { var z T; return fmt.Sprintf("%T", z) }

// goEx is the Go executor with two workers (the parallel paths run even on
// one core).
var goEx = exec.Go(2)

// guardWords is how many guard items surround every output buffer.
const guardWords = 64

func guardValue[T Value]() T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(float32(-12345.5)).(T)
	}
	return T(0x5a5a5a5a)
}

// upload returns a buffer on ex holding data with guard items on both
// sides, and the view of data inside it.
func upload[T Value](t *testing.T, ex exec.Executor, data []T) (whole, view *exec.Buf[T]) {
	t.Helper()
	host := make([]T, len(data)+2*guardWords)
	for i := range host {
		host[i] = guardValue[T]()
	}
	copy(host[guardWords:], data)
	whole, err := exec.FromHost(ex, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { whole.Free() })
	return whole, whole.Slice(guardWords, len(data))
}

// download returns the view's contents after checking that the guards of
// whole are untouched.
func download[T Value](t *testing.T, what string, whole *exec.Buf[T]) []T {
	t.Helper()
	host, err := whole.ToHost()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	n := len(host) - 2*guardWords
	for i := 0; i < guardWords; i++ {
		if host[i] != guardValue[T]() || host[guardWords+n+i] != guardValue[T]() {
			t.Fatalf("%s: guard item overwritten (before: %v, after: %v)", what, host[i], host[guardWords+n+i])
		}
	}
	return host[guardWords : guardWords+n]
}

// checkScans runs every variant in variants on ex over the sizes and
// compares with the reference loops exactly, in place and out of place.
func checkScans[T Value](t *testing.T, ex exec.Executor, variants []string, sizes []int) {
	for _, n := range sizes {
		src := randomValues[T](n, uint64(n)+1)
		want := [2][]T{refExclusive(src), refInclusive(src)}
		_, in := upload(t, ex, src)
		for _, v := range variants {
			for k, name := range []string{"exclusive", "inclusive"} {
				what := fmt.Sprintf("%s %s %s n=%d", typeName[T](), name, v, n)
				outWhole, out := upload(t, ex, make([]T, n))
				run := ExclusiveVariant[T]
				if k == 1 {
					run = InclusiveVariant[T]
				}
				if err := run(ex, v, out, in); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				equalExact(t, what, download(t, what, outWhole), want[k])
				// In place.
				ipWhole, ip := upload(t, ex, src)
				if err := run(ex, v, ip, ip); err != nil {
					t.Fatalf("%s in place: %v", what, err)
				}
				equalExact(t, what+" in place", download(t, what, ipWhole), want[k])
				outWhole.Free()
				ipWhole.Free()
			}
		}
		in.Free()
	}
}

// checkSegmented compares both segmented forms (heads and offsets) with the
// reference loop.
// tileStarts is what scan.SegmentedExclusivePrepared wants of its caller:
// for each SegOffsetsTile-item tile of n items, the first offsets entry at
// or past the tile's start (len(offsets) if none).
func tileStarts(offsets []uint32, n int) []uint32 {
	out := make([]uint32, SegOffsetsTiles(n))
	for tile := range out {
		out[tile] = uint32(sort.Search(len(offsets), func(s int) bool { return int(offsets[s]) >= tile*SegOffsetsTile }))
	}
	return out
}

func checkSegmented[T Value](t *testing.T, ex exec.Executor, sizes []int) {
	for _, n := range sizes {
		for _, every := range []int{3, 100, 5000} {
			src := randomValues[T](n, uint64(n)+2)
			heads := randomHeads(n, every, uint64(n*every))
			_, in := upload(t, ex, src)
			hw, h := upload(t, ex, heads)
			// Offsets: the heads' positions, with empty segments doubled in.
			offsets := []uint32{0}
			for i := 1; i < n; i++ {
				if heads[i] != 0 {
					offsets = append(offsets, uint32(i))
					if i%7 == 0 {
						offsets = append(offsets, uint32(i)) // an empty segment
					}
				}
			}
			offsets = append(offsets, uint32(n))
			_, off := upload(t, ex, offsets)
			for k, name := range []string{"exclusive", "inclusive"} {
				what := fmt.Sprintf("%s segmented %s n=%d every=%d", typeName[T](), name, n, every)
				want := refSegmented(src, heads, k == 1)
				outWhole, out := upload(t, ex, make([]T, n))
				var err error
				if k == 0 {
					err = SegmentedExclusive(ex, out, in, h)
				} else {
					err = SegmentedInclusive(ex, out, in, h)
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				equalExact(t, what, download(t, what, outWhole), want)
				if k == 0 {
					err = SegmentedExclusiveOffsets(ex, out, in, off)
				} else {
					err = SegmentedInclusiveOffsets(ex, out, in, off)
				}
				if err != nil {
					t.Fatalf("%s offsets: %v", what, err)
				}
				// The offsets mark a head wherever heads does except at 0,
				// which starts a segment anyway.
				equalExact(t, what+" offsets", download(t, what, outWhole), want)
				outWhole.Free()
				if k == 0 {
					// The prepared form: tile starts and a zeroed state from
					// the caller (the guards around them must stay).
					tsWhole, ts := upload(t, ex, tileStarts(offsets, n))
					stWhole, st := upload(t, ex, make([]uint32, SegOffsetsStateWords(n)))
					pWhole, p := upload(t, ex, make([]T, n))
					if err := SegmentedExclusivePrepared(ex, p, in, off, ts, st); err != nil {
						t.Fatalf("%s prepared: %v", what, err)
					}
					equalExact(t, what+" prepared", download(t, what, pWhole), want)
					download(t, what+" prepared tile starts", tsWhole)
					download(t, what+" prepared state", stWhole)
				}
			}
			download(t, "heads", hw)
		}
	}
}

// checkCompact compares every compaction variant with the reference, with
// flags of several densities, with CompactNonzero, and with a short dst.
func checkCompact(t *testing.T, ex exec.Executor, variants []string, sizes []int) {
	for _, n := range sizes {
		r := rand.New(rand.NewPCG(uint64(n), 99))
		for _, density := range []int{0, 1, 50, 100} {
			src := make([]uint32, n)
			flags := make([]uint32, n)
			for i := range src {
				src[i] = r.Uint32()
				if r.IntN(100) < density {
					flags[i] = 1 + r.Uint32N(7)
				}
				if density == 50 && r.IntN(3) == 0 {
					src[i] = 0 // zeros for CompactNonzero
				}
			}
			_, in := upload(t, ex, src)
			_, fl := upload(t, ex, flags)
			want := refCompact(src, flags)
			wantNZ := refCompact(src, src)
			for _, v := range variants {
				what := fmt.Sprintf("compact %s n=%d density=%d%%", v, n, density)
				outWhole, out := upload(t, ex, make([]uint32, n))
				k, err := CompactVariant(ex, v, out, in, fl)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if k != len(want) {
					t.Fatalf("%s: count %d, want %d", what, k, len(want))
				}
				got := download(t, what, outWhole)
				equalExact(t, what, got[:k], want)
				// Nonzero, through the variant with flags = src.
				k, err = CompactVariant(ex, v, out, in, in)
				if err != nil || k != len(wantNZ) {
					t.Fatalf("%s nonzero: count %d (%v), want %d", what, k, err, len(wantNZ))
				}
				equalExact(t, what+" nonzero", download(t, what, outWhole)[:k], wantNZ)
				outWhole.Free()
				// Too short a dst: an error, the first items written, no stray writes.
				if len(want) > 1 {
					short := len(want) / 2
					sw, s := upload(t, ex, make([]uint32, short))
					k, err := CompactVariant(ex, v, s, in, fl)
					if !errors.Is(err, ErrShortDst) || k != len(want) {
						t.Fatalf("%s short dst: count %d err %v, want %d and ErrShortDst", what, k, err, len(want))
					}
					equalExact(t, what+" short", download(t, what+" short", sw), want[:short])
					sw.Free()
				}
			}
			in.Free()
			fl.Free()
		}
	}
}

// sortKeys returns n keys from a fixed seed: full 32-bit, a small range
// (many duplicates, high zero bits) or all equal.
func sortKeys(n int, kind string, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, 0x5047))
	k := make([]uint32, n)
	for i := range k {
		switch kind {
		case "full":
			k[i] = r.Uint32()
		case "small":
			k[i] = r.Uint32N(1000)
		case "bytes3":
			k[i] = r.Uint32N(1 << 20)
		case "equal":
			k[i] = 77
		}
	}
	return k
}

// refSortPairs sorts pairs by key, stably (the contract of SortPairs): it
// sorts the 64-bit words key<<32 | original index with slices.Sort, which
// orders equal keys by position.
func refSortPairs(keys, vals []uint32) ([]uint32, []uint32) {
	w := make([]uint64, len(keys))
	for i, k := range keys {
		w[i] = uint64(k)<<32 | uint64(i)
	}
	slices.Sort(w)
	k, v := make([]uint32, len(keys)), make([]uint32, len(keys))
	for i, x := range w {
		k[i], v[i] = uint32(x>>32), vals[uint32(x)]
	}
	return k, v
}

func checkSort(t *testing.T, ex exec.Executor, variants []string, sizes []int) {
	for _, n := range sizes {
		for _, kind := range []string{"full", "small", "bytes3", "equal"} {
			keys := sortKeys(n, kind, uint64(n)+3)
			vals := make([]uint32, n)
			for i := range vals {
				vals[i] = uint32(i) // original positions: stability is visible
			}
			wantK, wantV := refSortPairs(keys, vals)
			plain := append([]uint32(nil), keys...)
			slices.Sort(plain)
			equalExact(t, "reference vs slices.Sort", wantK, plain)
			for _, v := range variants {
				what := fmt.Sprintf("sort %s %s n=%d", v, kind, n)
				kw, kb := upload(t, ex, keys)
				vw, vb := upload(t, ex, vals)
				if err := SortPairsVariant(ex, v, kb, vb); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				equalExact(t, what+" keys", download(t, what, kw), wantK)
				equalExact(t, what+" values", download(t, what, vw), wantV)
				// Keys only.
				if err := kb.CopyFromHost(keys); err != nil {
					t.Fatal(err)
				}
				if err := SortPairsVariant(ex, v, kb, nil); err != nil {
					t.Fatalf("%s keys only: %v", what, err)
				}
				equalExact(t, what+" keys only", download(t, what, kw), wantK)
				kw.Free()
				vw.Free()
			}
		}
	}
}

// checkCompactQueued checks CompactQueued against the reference: the kept
// items and the count left in the count word (the queued work finished by
// the download), on the sizes given, with the count word in a larger
// buffer whose other words stay untouched.
func checkCompactQueued(t *testing.T, ex exec.Executor, sizes []int) {
	for _, n := range sizes {
		r := rand.New(rand.NewPCG(uint64(n), 7))
		for _, density := range []int{0, 1, 50, 100} {
			src, flags := make([]uint32, n), make([]uint32, n)
			for i := range src {
				src[i] = r.Uint32()
				if r.IntN(100) < density {
					flags[i] = 1 + r.Uint32N(7)
				}
			}
			what := fmt.Sprintf("CompactQueued n=%d density=%d%%", n, density)
			_, in := upload(t, ex, src)
			_, fl := upload(t, ex, flags)
			outWhole, out := upload(t, ex, make([]uint32, n))
			cntWhole, cnt := upload(t, ex, []uint32{7, 0xFFFFFFFF, 9})
			if err := CompactQueued(ex, out, in, fl, cnt.Slice(1, 1)); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			want := refCompact(src, flags)
			c := download(t, what, cntWhole)
			if c[0] != 7 || c[2] != 9 || int(c[1]) != len(want) {
				t.Fatalf("%s: count words %v, want [7 %d 9]", what, c, len(want))
			}
			equalExact(t, what, download(t, what, outWhole)[:len(want)], want)
			// A dst shorter than src is refused before any work.
			if n > 0 {
				if err := CompactQueued(ex, out.Slice(0, n-1), in, fl, cnt.Slice(1, 1)); !errors.Is(err, ErrShortDst) {
					t.Fatalf("%s: short dst: %v, want ErrShortDst", what, err)
				}
			}
			outWhole.Free()
			cntWhole.Free()
		}
	}
}
