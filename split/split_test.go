package split

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// reference is the contract's loop, written out.
func reference(flags, offsets []uint32) (dl, dr, cl, cr, cb []uint32, total uint32) {
	nodes := len(offsets) - 1
	dl, dr = make([]uint32, len(flags)), make([]uint32, len(flags))
	cl, cr, cb = make([]uint32, nodes), make([]uint32, nodes), make([]uint32, nodes)
	base := uint32(0)
	for s := 0; s < nodes; s++ {
		l, r := uint32(0), uint32(0)
		for i := offsets[s]; i < offsets[s+1]; i++ {
			if flags[i]&Left != 0 {
				l++
			}
			if flags[i]&Right != 0 {
				r++
			}
		}
		cl[s], cr[s], cb[s] = l, r, base
		nl, nr := base, base+l
		for i := offsets[s]; i < offsets[s+1]; i++ {
			dl[i], dr[i] = None, None
			if flags[i]&Left != 0 {
				dl[i] = nl
				nl++
			}
			if flags[i]&Right != 0 {
				dr[i] = nr
				nr++
			}
		}
		base += l + r
	}
	return dl, dr, cl, cr, cb, base
}

type splitCase struct {
	name           string
	flags, offsets []uint32
}

// cases builds levels of the given node sizes with flags from gen.
func makeCase(name string, sizes []int, gen func(i int) uint32) splitCase {
	c := splitCase{name: name, offsets: []uint32{0}}
	for _, n := range sizes {
		for k := 0; k < n; k++ {
			c.flags = append(c.flags, gen(len(c.flags)))
		}
		c.offsets = append(c.offsets, uint32(len(c.flags)))
	}
	return c
}

func splitCases() []splitCase {
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(int) uint32 { return uint32(rng.IntN(4)) | uint32(rng.IntN(2))<<2 } // extra bit 4 must be ignored
	var out []splitCase
	out = append(out,
		makeCase("no nodes", nil, random),
		makeCase("empty nodes", []int{0, 0, 0}, random),
		makeCase("empty between", []int{0, 5, 0, 0, 3, 0}, random),
		makeCase("one-ref nodes", []int{1, 1, 1, 1, 1, 1, 1}, random),
		makeCase("all left", []int{3, 31, 32, 33}, func(int) uint32 { return Left }),
		makeCase("all right", []int{3, 31, 32, 33}, func(int) uint32 { return Right }),
		makeCase("all both", []int{1, 255, 256, 257}, func(int) uint32 { return Left | Right }),
		makeCase("leaves (no flags)", []int{4, 9}, func(int) uint32 { return 0 }),
		makeCase("alternating", []int{1023, 1024, 1025}, func(i int) uint32 { return uint32(1 + i%3) }),
		// Nodes spanning several of the ranks' scan tiles (4096 items of the
		// 2(n+1) unpacked flags), empty ones at tile edges.
		makeCase("tile-spanning nodes", []int{5000, 0, 0, 9000, 1, 12288, 0, 4095, 4097}, random),
	)
	for _, n := range []int{0, 1, 31, 32, 33, 255, 256, 257, 4095, 4096, 4097, 1 << 16, 1<<16 + 1} {
		out = append(out, makeCase("one node", []int{n}, random))
	}
	// Node counts at the edges of split_bases_u32's 1024-item tiles (it
	// scans nodes+1 items), nodes of 0 to 4 references.
	for _, nodes := range []int{1022, 1023, 1024, 2047, 2048, 2049} {
		sizes := make([]int, nodes)
		for i := range sizes {
			sizes[i] = rng.IntN(5)
		}
		out = append(out, makeCase(fmt.Sprintf("%d nodes", nodes), sizes, random))
	}
	var sizes []int
	for i := 0; i < 3000; i++ {
		sizes = append(sizes, rng.IntN(70))
	}
	out = append(out, makeCase("many nodes", sizes, random))
	return out
}

// runAddresses runs Addresses, or AddressesQueued with the total taken
// from the last node's counts when queued.
func runAddresses(t *testing.T, ex exec.Executor, c splitCase, queued bool) (dl, dr, cl, cr, cb []uint32, total uint32) {
	t.Helper()
	n, nodes := len(c.flags), len(c.offsets)-1
	flags, err := exec.FromHost(ex, c.flags)
	require.NoError(t, err)
	offsets, err := exec.FromHost(ex, c.offsets)
	require.NoError(t, err)
	alloc := func(k int) *exec.Buf[uint32] { return allocWords(t, ex, k) }
	res := Result{DstL: alloc(n), DstR: alloc(n), CountL: alloc(nodes), CountR: alloc(nodes), ChildBase: alloc(nodes)}
	sc, err := NewScratch(ex, n, nodes)
	require.NoError(t, err)
	defer sc.Free()
	if queued {
		require.NoError(t, AddressesQueued(ex, sc, flags, offsets, res))
	} else {
		total, err = Addresses(ex, sc, flags, offsets, res)
		require.NoError(t, err)
	}
	get := func(b *exec.Buf[uint32]) []uint32 {
		h, err := b.ToHost()
		require.NoError(t, err)
		b.Free()
		return h
	}
	flags.Free()
	offsets.Free()
	dl, dr, cl, cr, cb = get(res.DstL), get(res.DstR), get(res.CountL), get(res.CountR), get(res.ChildBase)
	if queued && nodes > 0 {
		total = cb[nodes-1] + cl[nodes-1] + cr[nodes-1]
	}
	return dl, dr, cl, cr, cb, total
}

func TestAddresses(t *testing.T) {
	for _, c := range splitCases() {
		dl, dr, cl, cr, cb, total := reference(c.flags, c.offsets)
		for i, w := range []int{1, 2, 5} {
			gdl, gdr, gcl, gcr, gcb, gtotal := runAddresses(t, exec.Go(w), c, i == 1)
			require.Equal(t, total, gtotal, c.name)
			require.True(t, slices.Equal(dl, gdl), "%s: DstL", c.name)
			require.True(t, slices.Equal(dr, gdr), "%s: DstR", c.name)
			require.True(t, slices.Equal(cl, gcl), "%s: CountL", c.name)
			require.True(t, slices.Equal(cr, gcr), "%s: CountR", c.name)
			require.True(t, slices.Equal(cb, gcb), "%s: ChildBase", c.name)
		}
		// Every destination is used exactly once.
		seen := make([]bool, total)
		for i := range c.flags {
			for _, d := range []uint32{dl[i], dr[i]} {
				if d != None {
					require.False(t, seen[d], "%s: destination %d twice", c.name, d)
					seen[d] = true
				}
			}
		}
	}
}

func TestAddressesBadOffsets(t *testing.T) {
	ex := exec.Go(1)
	res := Result{DstL: exec.Wrap(make([]uint32, 3)), DstR: exec.Wrap(make([]uint32, 3)),
		CountL: exec.Wrap(make([]uint32, 1)), CountR: exec.Wrap(make([]uint32, 1)), ChildBase: exec.Wrap(make([]uint32, 1))}
	_, err := Addresses(ex, nil, exec.Wrap([]uint32{1, 2, 3}), exec.Wrap([]uint32{0, 2}), res)
	require.Error(t, err)
	require.Panics(t, func() {
		Addresses(ex, nil, exec.Wrap([]uint32{1, 2, 3, 4}), exec.Wrap([]uint32{0, 4}), res)
	})
}

// The CUDA path gives the reference's results, guard values around the
// outputs untouched.
func TestAddressesGPU(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, c := range splitCases() {
		dl, dr, cl, cr, cb, total := reference(c.flags, c.offsets)
		for _, queued := range []bool{false, true} {
			gdl, gdr, gcl, gcr, gcb, gtotal := runAddresses(t, ex, c, queued)
			require.Equal(t, total, gtotal, c.name)
			require.True(t, slices.Equal(dl, gdl), "%s: DstL", c.name)
			require.True(t, slices.Equal(dr, gdr), "%s: DstR", c.name)
			require.True(t, slices.Equal(cl, gcl), "%s: CountL", c.name)
			require.True(t, slices.Equal(cr, gcr), "%s: CountR", c.name)
			require.True(t, slices.Equal(cb, gcb), "%s: ChildBase", c.name)
		}
	}
}

func BenchmarkAddresses(b *testing.B) {
	ex, err := exec.FromEnv()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1 << 16, 1 << 20} {
		c := makeCase("bench", []int{n / 4, n / 4, n / 4, n / 4}, func(i int) uint32 { return uint32(1 + i%3) })
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			flags, _ := exec.FromHost(ex, c.flags)
			offsets, _ := exec.FromHost(ex, c.offsets)
			al := func(k int) *exec.Buf[uint32] { x, _ := exec.Alloc[uint32](ex, k); return x }
			res := Result{DstL: al(n), DstR: al(n), CountL: al(4), CountR: al(4), ChildBase: al(4)}
			sc, _ := NewScratch(ex, n, 4)
			b.SetBytes(int64(4 * n * 3))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Addresses(ex, sc, flags, offsets, res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// On the CUDA executor, AddressesQueued without destinations leaves the
// ranks from which the destinations follow (Scratch.Ranks), also on a
// padded level: references past offsets[nodes] with zero flags. The same
// with AddressesUnpacked after a kernel of the caller's unpacked the flags
// (here split_unpack_u32 itself on a grid of 2 blocks of 64 threads, so
// that its loops stride).
func TestAddressesGPURanks(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, c := range splitCases() {
		dl, dr, cl, cr, cb, _ := reference(c.flags, c.offsets)
		for _, v := range []struct {
			pad      int
			unpacked bool
		}{{0, false}, {1, false}, {33, false}, {1025, false}, {0, true}, {33, true}, {1025, true}} {
			pad := v.pad
			n, nodes := len(c.flags)+pad, len(c.offsets)-1
			if nodes < 1 {
				continue
			}
			flags, err := exec.FromHost(ex, append(slices.Clone(c.flags), make([]uint32, pad)...))
			require.NoError(t, err)
			offsets, err := exec.FromHost(ex, c.offsets)
			require.NoError(t, err)
			res := Result{CountL: allocWords(t, ex, nodes), CountR: allocWords(t, ex, nodes), ChildBase: allocWords(t, ex, nodes)}
			sc, err := NewScratch(ex, n, nodes)
			require.NoError(t, err)
			if v.unpacked {
				u, err := sc.Unpacking(n, nodes)
				require.NoError(t, err)
				require.NoError(t, launch.SplitUnpackU32.Launch(ex.CUDA(), cuda.Linear(2), cuda.Linear(64), 0,
					u.Kernel(flags.Ptr(), uint32(n), offsets.Ptr(), uint32(nodes))))
				require.NoError(t, AddressesUnpacked(ex, sc, flags, offsets, res))
			} else {
				require.NoError(t, AddressesQueued(ex, sc, flags, offsets, res))
			}
			ranks, err := sc.Ranks().Slice(0, 2*(n+1)).ToHost()
			require.NoError(t, err)
			gcl, err := res.CountL.ToHost()
			require.NoError(t, err)
			gcr, err := res.CountR.ToHost()
			require.NoError(t, err)
			gcb, err := res.ChildBase.ToHost()
			require.NoError(t, err)
			require.True(t, slices.Equal(cl, gcl) && slices.Equal(cr, gcr) && slices.Equal(cb, gcb), "%s pad %d unpacked %v: counts", c.name, pad, v.unpacked)
			for s := 0; s < nodes; s++ {
				for r := c.offsets[s]; r < c.offsets[s+1]; r++ {
					if dl[r] != None {
						require.Equal(t, dl[r], gcb[s]+ranks[r], "%s pad %d: left of %d", c.name, pad, r)
					}
					if dr[r] != None {
						require.Equal(t, dr[r], gcb[s]+gcl[s]+ranks[n+1+int(r)], "%s pad %d: right of %d", c.name, pad, r)
					}
				}
			}
			sc.Free()
			for _, b := range []*exec.Buf[uint32]{flags, offsets, res.CountL, res.CountR, res.ChildBase} {
				b.Free()
			}
		}
	}
}

// allocWords allocates k words on ex.
func allocWords(t *testing.T, ex exec.Executor, k int) *exec.Buf[uint32] {
	t.Helper()
	b, err := exec.Alloc[uint32](ex, k)
	require.NoError(t, err)
	return b
}
