package kdtree

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kdtree/internal/gputrace"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// deviceTree builds s's tree with ex and keeps it on the device (freed by
// the test's cleanup).
func deviceTree(tb testing.TB, ex exec.Executor, s *scenes.Scene) *Tree {
	tb.Helper()
	tree, err := Build(context.Background(), s, Options{Executor: ex, KeepOnDevice: true})
	require.NoError(tb, err)
	require.True(tb, tree.OnDevice())
	tb.Cleanup(func() { tree.Close() })
	return tree
}

// A tree kept on the device by its build traces as the same tree uploaded
// from the host copy, word for word, on every layout path of the builder
// (device top, host top, level by level, Go small phase: Upload's
// fallback); Close frees it and is idempotent.
func TestDeviceKeepEqualsUpload(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	ctx := context.Background()
	for _, file := range []string{"stanford-bunny.obj", "dragon-19k.obj.gz"} {
		s := loadShared(t, file)
		rays := append(RandomRays(s.Bounds, 20_011), PrimaryRays(s.Bounds)[:40_000]...)
		rb, hb, ob := deviceBuffers(t, ex, rays)
		_, hu, ou := deviceBuffers(t, ex, rays)
		for _, off := range []gpubuild.Paths{0, gpubuild.PathDeviceTop, gpubuild.PathPipeline, gpubuild.PathDeviceSmall} {
			what := fmt.Sprintf("%s, paths off %b", file, off)
			o := btGPUOptions(Options{KeepOnDevice: true}, ex, func(c *gpubuild.Config) { c.Off = off })
			kept, err := Build(ctx, s, o)
			require.NoError(t, err, what)
			require.True(t, kept.OnDevice(), what)
			up := NewTree(s, kept.Nodes, kept.Refs, kept.Bounds, Stats{})
			require.NoError(t, up.Upload(ex), what)
			require.Equal(t, up.dev.tree.DeviceBytes(), kept.dev.tree.DeviceBytes(), what)
			kw, err := kept.dev.tree.NodeWords()
			require.NoError(t, err, what)
			uw, err := up.dev.tree.NodeWords()
			require.NoError(t, err, what)
			require.Equal(t, uw, kw, "%s: the pair layout of the kept tree and of the uploaded one", what)
			require.NoError(t, kept.IntersectDevice(ctx, rb, hb), what)
			require.NoError(t, kept.OccludedDevice(ctx, rb, ob), what)
			require.NoError(t, up.IntersectDevice(ctx, rb, hu), what)
			require.NoError(t, up.OccludedDevice(ctx, rb, ou), what)
			for _, pair := range [][2]*exec.Buf[float32]{{hb, hu}} {
				a, err := pair[0].ToHost()
				require.NoError(t, err)
				b, err := pair[1].ToHost()
				require.NoError(t, err)
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
						t.Fatalf("%s: hit word %d (ray %d): kept %v, uploaded %v", what, i, i/DeviceHitWords, a[i], b[i])
					}
				}
			}
			oa, err := ob.ToHost()
			require.NoError(t, err)
			ou2, err := ou.ToHost()
			require.NoError(t, err)
			require.Equal(t, ou2, oa, what)
			require.NoError(t, kept.Close())
			require.NoError(t, kept.Close())
			require.False(t, kept.OnDevice())
			require.NoError(t, up.Close())
		}
	}
}

// hostAnswers traces rays with Intersect and Occluded over all CPUs.
func hostAnswers(tree *Tree, rays []Ray) ([]Hit, []bool, []bool) {
	hits, ok, occ := make([]Hit, len(rays)), make([]bool, len(rays)), make([]bool, len(rays))
	var wg sync.WaitGroup
	w := runtime.GOMAXPROCS(0)
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for i := k; i < len(rays); i += w {
				hits[i], ok[i] = tree.Intersect(rays[i])
				occ[i] = tree.Occluded(rays[i])
			}
		}(k)
	}
	wg.Wait()
	return hits, ok, occ
}

// sameDeviceHit reports whether the device's hit equals Intersect's answer bit
// for bit (a miss: T +Inf, Prim NoHit, U = V = 0).
func sameDeviceHit(got Hit, want Hit, ok bool) bool {
	if !ok {
		return math.IsInf(float64(got.T), 1) && got.Prim == gputrace.NoHit && got.U == 0 && got.V == 0
	}
	return math.Float32bits(got.T) == math.Float32bits(want.T) && math.Float32bits(got.U) == math.Float32bits(want.U) &&
		math.Float32bits(got.V) == math.Float32bits(want.V) && got.Prim == want.Prim
}

// compareDevice traces rays on the device (both batches) and requires the
// answers of Intersect and Occluded, naming the first few differences. It
// returns the number of hits.
func compareDevice(t *testing.T, tree *Tree, rays []Ray, what string) int {
	t.Helper()
	want, ok, occ := hostAnswers(tree, rays)
	got := make([]Hit, len(rays))
	gotOcc := make([]bool, len(rays))
	require.NoError(t, tree.IntersectBatch(context.Background(), rays, got), what)
	require.NoError(t, tree.OccludedBatch(context.Background(), rays, gotOcc), what)
	bad, hits := 0, 0
	for i := range rays {
		if ok[i] {
			hits++
		}
		if !sameDeviceHit(got[i], want[i], ok[i]) || gotOcc[i] != occ[i] {
			bad++
			if bad <= 3 {
				t.Errorf("%s: ray %d %+v: device %+v occluded %v, host %v %+v occluded %v",
					what, i, rays[i], got[i], gotOcc[i], ok[i], want[i], occ[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d rays differ", what, bad, len(rays))
	}
	return hits
}

// The device's hits equal Intersect's bit for bit, and its any-hit answers
// Occluded's, for the ANCHORS ray sets on every shared scene.
func TestDeviceTraceEqualsHost(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, sc := range anchorScenes {
		t.Run(sc.file, func(t *testing.T) {
			s := loadShared(t, sc.file)
			tree := deviceTree(t, ex, s)
			p := compareDevice(t, tree, PrimaryRays(s.Bounds), sc.file+" primary")
			r := compareDevice(t, tree, RandomRays(s.Bounds, anchorRandomRays), sc.file+" random")
			t.Logf("%s: primary hits %d, random hits %d (device equals host on every ray)", sc.file, p, r)
			expectEqual(t, p, sc.primary, "%s primary hits", sc.file)
			expectEqual(t, r, sc.random, "%s random hits", sc.file)
		})
	}
}

// Every kernel variant gives the same hits, through mapped and copied
// host memory, on random rays and the edge rays (NaN, infinite, zero and
// axis-parallel).
func TestDeviceTraceVariants(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, file := range []string{"stanford-bunny.obj", "conference.obj.gz"} {
		t.Run(file, func(t *testing.T) {
			s := loadShared(t, file)
			tree := deviceTree(t, ex, s)
			rays := append(RandomRays(s.Bounds, 100_003), edgeRays(tree, s)...)
			dev := tree.dev.tree
			for _, k := range append(gputrace.Variants, gputrace.IncoherentKernel) {
				for _, m := range []gputrace.HostMode{gputrace.HostMapped, gputrace.HostCopy} {
					dev.Kernel, dev.HostKernel, dev.Host = k, k, m
					compareDevice(t, tree, rays, file+" "+k.String()+"/"+m.String())
				}
			}
		})
	}
}

// edgeRays are rays the traversal must not trip on: NaN and infinite
// components, zero directions, axis-parallel rays, and TMin/TMax windows
// around each ray's hit.
func edgeRays(tree *Tree, s *scenes.Scene) []Ray {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	c := s.Bounds.Min.Add(s.Bounds.Max).Mul(0.5)
	out := []Ray{
		{Org: c, Dir: mgl32.Vec3{nan, 1, 0}, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{nan, nan, nan}, TMax: inf},
		{Org: mgl32.Vec3{nan, 0, 0}, Dir: mgl32.Vec3{0, 0, 1}, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{}, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{1, 0, 0}, TMin: nan, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{1, 0, 0}, TMax: nan},
		{Org: mgl32.Vec3{-inf, c[1], c[2]}, Dir: mgl32.Vec3{1, 0, 0}, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{inf, 0, 0}, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{1e-38, 1e-38, -1}, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{0, 0, -1}, TMin: -inf, TMax: inf},
		{Org: c, Dir: mgl32.Vec3{0, -1, 0}, TMin: 1, TMax: 0},
	}
	for _, r := range RandomRays(s.Bounds, 4000) {
		h, ok := tree.Intersect(r)
		if !ok {
			out = append(out, r)
			continue
		}
		below, above := math.Nextafter32(h.T, 0), math.Nextafter32(h.T, float32(math.Inf(1)))
		for _, w := range [][2]float32{{0, h.T}, {0, below}, {h.T, inf}, {above, inf}, {-1, h.T / 2}, {h.T, h.T}, {h.T * 2, h.T}} {
			q := r
			q.TMin, q.TMax = w[0], w[1]
			out = append(out, q)
		}
	}
	return out
}

// Edge cases: NaN and degenerate rays, TMin/TMax windows, 0, 1 and
// block-unaligned ray counts, a batch spanning chunks, the empty tree,
// length mismatches, cancellation, Close.
func TestDeviceTraceEdges(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	ctx := context.Background()
	s := loadShared(t, "stanford-bunny.obj")
	tree := deviceTree(t, ex, s)

	rays := edgeRays(tree, s)
	compareDevice(t, tree, rays, "edge rays")
	got := make([]Hit, 4)
	require.NoError(t, tree.IntersectBatch(ctx, rays[:4], got))
	for i, h := range got {
		require.Equal(t, gputrace.NoHit, h.Prim, "NaN or zero ray %d must miss", i)
	}

	random := RandomRays(s.Bounds, gputrace.Chunk+37)
	for _, n := range []int{0, 1, 127, 129, 1000, gputrace.Chunk + 37} {
		compareDevice(t, tree, random[:n], fmt.Sprintf("%d rays", n))
	}

	require.Error(t, tree.IntersectBatch(ctx, rays[:3], make([]Hit, 2)))
	require.Error(t, tree.OccludedBatch(ctx, rays[:3], make([]bool, 4)))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.True(t, errors.Is(tree.IntersectBatch(cctx, random, make([]Hit, len(random))), context.Canceled))
	require.True(t, errors.Is(tree.OccludedBatch(cctx, random, make([]bool, len(random))), context.Canceled))

	empty := NewTree(&scenes.Scene{}, nil, nil, scenes.Bounds{}, Stats{})
	require.NoError(t, empty.Upload(ex))
	eh := make([]Hit, 3)
	require.NoError(t, empty.IntersectBatch(ctx, random[:3], eh))
	for _, h := range eh {
		require.True(t, sameDeviceHit(h, Hit{}, false), "empty tree: %+v", h)
	}
	require.NoError(t, empty.Close())
	require.NoError(t, empty.Close())
	require.False(t, empty.OnDevice())
}

// The device-buffer forms: rays and hits stay in device memory; the hits
// equal the host batch's, and N is (B−A)×(C−A) with each product rounded.
func TestDeviceBuffers(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	ctx := context.Background()
	s := loadShared(t, "stanford-bunny.obj")
	tree := deviceTree(t, ex, s)
	rays := PrimaryRays(s.Bounds)
	rb, hb, ob := deviceBuffers(t, ex, rays)
	// trace poisons the outputs (every record must be written), traces
	// every ray both ways and returns the hit words and any-hit bytes.
	trace := func() ([]float32, []uint8) {
		require.NoError(t, hb.Dev().Memset32(0x7fbadbad))
		require.NoError(t, ob.Dev().Memset8(7))
		require.NoError(t, tree.IntersectDevice(ctx, rb, hb))
		require.NoError(t, tree.OccludedDevice(ctx, rb, ob))
		hw, err := hb.ToHost()
		require.NoError(t, err)
		occ, err := ob.ToHost()
		require.NoError(t, err)
		return hw, occ
	}
	hw, occ := trace()
	want, ok, wantOcc := hostAnswers(tree, rays)
	for i := range rays {
		w := hw[i*DeviceHitWords : (i+1)*DeviceHitWords]
		h := Hit{T: w[0], U: w[1], V: w[2], Prim: math.Float32bits(w[3])}
		n := mgl32.Vec3{w[4], w[5], w[6]}
		var wantN mgl32.Vec3
		if ok[i] {
			tri := s.Tris[want[i].Prim]
			wantN = normalOf(s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]])
		}
		if !sameDeviceHit(h, want[i], ok[i]) || n != wantN || w[7] != 0 || (occ[i] != 0) != wantOcc[i] {
			t.Fatalf("ray %d: device %+v N %v occluded %d, host %v %+v N %v occluded %v", i, h, n, occ[i], ok[i], want[i], wantN, wantOcc[i])
		}
	}
	// The incoherent kernel writes the same words.
	tree.SetDeviceRays(IncoherentRays)
	defer tree.SetDeviceRays(CoherentRays)
	hw2, occ2 := trace()
	for i := range hw {
		require.Equal(t, math.Float32bits(hw[i]), math.Float32bits(hw2[i]), "IncoherentRays: hit word %d", i)
	}
	require.Equal(t, occ, occ2, "IncoherentRays: any-hit answers")
	require.Error(t, tree.IntersectDevice(ctx, rb.Slice(0, 7), hb), "ray words not a multiple of DeviceRayWords")
	require.Error(t, tree.IntersectDevice(ctx, rb, hb.Slice(0, 8)), "length mismatch")
	require.Error(t, tree.OccludedDevice(ctx, rb, ob.Slice(0, 1)), "length mismatch")
}

// deviceBuffers returns rays copied to the device (DeviceRayWords each)
// and room for their hits and any-hit bytes, freed by the test's cleanup.
func deviceBuffers(tb testing.TB, ex exec.Executor, rays []Ray) (rb, hb *exec.Buf[float32], ob *exec.Buf[uint8]) {
	tb.Helper()
	words := make([]float32, 0, len(rays)*DeviceRayWords)
	for _, r := range rays {
		words = append(words, r.Org[0], r.Org[1], r.Org[2], r.Dir[0], r.Dir[1], r.Dir[2], r.TMin, r.TMax)
	}
	rb, err := exec.FromHost(ex, words)
	require.NoError(tb, err)
	tb.Cleanup(func() { rb.Free() })
	hb, err = exec.Alloc[float32](ex, len(rays)*DeviceHitWords)
	require.NoError(tb, err)
	tb.Cleanup(func() { hb.Free() })
	ob, err = exec.Alloc[uint8](ex, len(rays))
	require.NoError(tb, err)
	tb.Cleanup(func() { ob.Free() })
	return rb, hb, ob
}

// normalOf is (b−a)×(c−a) with every product rounded to float32 on its own.
func normalOf(a, b, c mgl32.Vec3) mgl32.Vec3 {
	e1 := mgl32.Vec3{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
	e2 := mgl32.Vec3{c[0] - a[0], c[1] - a[1], c[2] - a[2]}
	return mgl32.Vec3{
		float32(e1[1]*e2[2]) - float32(e1[2]*e2[1]),
		float32(e1[2]*e2[0]) - float32(e1[0]*e2[2]),
		float32(e1[0]*e2[1]) - float32(e1[1]*e2[0]),
	}
}
