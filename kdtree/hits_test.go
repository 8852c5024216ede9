package kdtree

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kdbuild/kdbuild/scenes"
)

// anchorScene is a shared scene with the hit counts of ../shared/ANCHORS.md
// for PrimaryRays and RandomRays(1e6).
type anchorScene struct {
	file            string
	primary, random int
	slow            bool // skipped under -short
}

var anchorScenes = []anchorScene{
	{"stanford-bunny.obj", 419153, 432326, false},
	{"spot.obj", 196626, 442067, false},
	{"dragon-19k.obj.gz", 311301, 412094, false},
	{"sponza-dabrovic.obj.gz", 499712, 979203, true},
	{"conference.obj.gz", 230229, 952753, true},
}

// AnchorRandomRays is the size of ANCHORS' random ray set.
const anchorRandomRays = 1_000_000

// sharedDir returns ../shared/scenes seen from the package directory, or
// skips the test when it is absent.
func sharedDir(tb testing.TB) string {
	dir := filepath.Join("..", "..", "shared", "scenes")
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("shared scenes not found (%v)", err)
	}
	return dir
}

var sceneCache sync.Map // file -> *scenes.Scene

// loadShared loads a shared scene once per test binary.
func loadShared(tb testing.TB, file string) *scenes.Scene {
	tb.Helper()
	dir := sharedDir(tb)
	if s, ok := sceneCache.Load(file); ok {
		return s.(*scenes.Scene)
	}
	path := filepath.Join(dir, file)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("shared scene %s not found", file)
	}
	s, err := scenes.Load(path)
	if err != nil {
		tb.Fatalf("load %s: %v", file, err)
	}
	sceneCache.Store(file, s)
	return s
}

// countHits traces rays over all CPUs and returns how many hit.
func countHits(tree *Tree, rays []Ray) int {
	var hits atomic.Int64
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	chunk := (len(rays) + workers - 1) / workers
	for lo := 0; lo < len(rays); lo += chunk {
		hi := min(lo+chunk, len(rays))
		wg.Add(1)
		go func(rs []Ray) {
			defer wg.Done()
			n := 0
			for i := range rs {
				if _, ok := tree.Intersect(rs[i]); ok {
					n++
				}
			}
			hits.Add(int64(n))
		}(rays[lo:hi])
	}
	wg.Wait()
	return int(hits.Load())
}

var treeCache sync.Map // file + "/" + builder -> *Tree

// treesFor returns the validated trees to check on a shared scene: Build's
// (Go executor) and, when withRef, the reference builder's. Trees are
// built once per test binary.
func treesFor(t *testing.T, file string, withRef bool) map[string]*Tree {
	t.Helper()
	s := loadShared(t, file)
	trees := map[string]*Tree{}
	get := func(name string, build func() (*Tree, error)) {
		if v, ok := treeCache.Load(file + "/" + name); ok {
			trees[name] = v.(*Tree)
			return
		}
		tree, err := build()
		if err != nil {
			t.Errorf("%s tree of %s: %v", name, file, err)
			return
		}
		if err := tree.Validate(); err != nil {
			t.Errorf("%s tree of %s: %v", name, file, err)
			return
		}
		treeCache.Store(file+"/"+name, tree)
		trees[name] = tree
	}
	get("Build", func() (*Tree, error) { return Build(context.Background(), s, Options{}) })
	if withRef {
		get("refbuild", func() (*Tree, error) { return refBuild(s, 8, 40), nil })
	}
	return trees
}

// TestAnchorHitCounts traces the full ANCHORS ray sets (1024×1024 primary,
// 1M random) through the trees of every shared scene of the table and
// compares the number of hits with it. The reference builder's tree is
// checked too on the small scenes. Under -short only spot and the bunny.
func TestAnchorHitCounts(t *testing.T) {
	for _, sc := range anchorScenes {
		t.Run(sc.file, func(t *testing.T) {
			if testing.Short() && sc.file != "spot.obj" && sc.file != "stanford-bunny.obj" {
				t.Skip("skipped under -short")
			}
			s := loadShared(t, sc.file)
			primary, random := PrimaryRays(s.Bounds), RandomRays(s.Bounds, anchorRandomRays)
			for name, tree := range treesFor(t, sc.file, !sc.slow) {
				p, r := countHits(tree, primary), countHits(tree, random)
				t.Logf("%s tree (SAH %.2f): primary hits %d, random hits %d", name, tree.Stats().SAHCost, p, r)
				expectEqual(t, p, sc.primary, "%s: %s tree, primary hits", sc.file, name)
				expectEqual(t, r, sc.random, "%s: %s tree, random hits", sc.file, name)
			}
		})
	}
}

// sharedFiles are every scene of ../shared/scenes.
var sharedFiles = []string{
	"stanford-bunny.obj", "spot.obj", "dragon-19k.obj.gz", "sponza-dabrovic.obj.gz",
	"conference.obj.gz", "fandisk.obj", "teapot.obj", "cow.obj", "suzanne.obj",
}

// TestRaysMatchBruteShared compares tree traversal with IntersectBrute,
// hit or miss, Prim and the bits of T, on a deterministic subsample of the
// ANCHORS primary and random rays of every shared scene: about 1.5·10^7
// brute-force triangle tests per ray set and scene (evenly strided rays,
// 64 to 2048 per set); the full sets are counted by TestAnchorHitCounts.
func TestRaysMatchBruteShared(t *testing.T) {
	for _, file := range sharedFiles {
		t.Run(file, func(t *testing.T) {
			if testing.Short() && (file == "conference.obj.gz" || file == "sponza-dabrovic.obj.gz") {
				t.Skip("large scene: skipped under -short")
			}
			s := loadShared(t, file)
			per := min(2048, max(64, 15_000_000/max(len(s.Tris), 1)))
			trees := treesFor(t, file, len(s.Tris) < 100_000)
			primary := PrimaryRays(s.Bounds)
			mid := len(primary)/2 - per/2
			for set, rays := range map[string][]Ray{
				"primary": strided(primary, per),
				"random":  strided(RandomRays(s.Bounds, anchorRandomRays), per),
				// Consecutive camera rays: the batch calls' packets.
				"primary rows": primary[mid : mid+per],
			} {
				oracle := bruteAll(s, rays)
				for name, tree := range trees {
					if bad := mismatches(t, tree, rays, oracle, file+" "+name+" "+set); bad != 0 {
						t.Errorf("%s: %s tree, %s rays: %d of %d differ from brute force", file, name, set, bad, len(rays))
					}
				}
			}
		})
	}
}

// strided returns n rays evenly spread over rays (offset so that the image
// centre is not skipped).
func strided(rays []Ray, n int) []Ray {
	out := make([]Ray, 0, n)
	step := float64(len(rays)) / float64(n)
	for i := 0; i < n; i++ {
		out = append(out, rays[int((float64(i)+0.5)*step)])
	}
	return out
}

// bruteHit is IntersectBrute's answer for one ray.
type bruteHit struct {
	hit Hit
	ok  bool
}

// bruteAll runs IntersectBrute on every ray over all CPUs.
func bruteAll(s *scenes.Scene, rays []Ray) []bruteHit {
	out := make([]bruteHit, len(rays))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(rays); i += workers {
				out[i].hit, out[i].ok = IntersectBrute(s, rays[i])
			}
		}(w)
	}
	wg.Wait()
	return out
}

// mismatches compares the tree's Intersect and Occluded, and its batch
// calls (the lanes and the packets), with the oracle's answers on every ray
// (hit or miss, Prim, bits of T), logging the first few differences.
func mismatches(t *testing.T, tree *Tree, rays []Ray, oracle []bruteHit, what string) int {
	bad := 0
	hits, occ := make([]Hit, len(rays)), make([]bool, len(rays))
	requireNoError(t, tree.IntersectBatch(context.Background(), rays, hits), "%s: IntersectBatch", what)
	requireNoError(t, tree.OccludedBatch(context.Background(), rays, occ), "%s: OccludedBatch", what)
	for i, r := range rays {
		got, gok := tree.Intersect(r)
		want, wok := oracle[i].hit, oracle[i].ok
		same := func(h Hit, ok bool) bool {
			return ok == wok && (!ok || (h.Prim == want.Prim && math.Float32bits(h.T) == math.Float32bits(want.T)))
		}
		if !same(got, gok) || !same(hits[i], hits[i].Prim != NoHit) || tree.Occluded(r) != wok || occ[i] != wok {
			bad++
			if bad <= 3 {
				t.Logf("%s: ray %d %+v: tree %v %+v, brute %v %+v", what, i, r, gok, got, wok, want)
			}
		}
	}
	return bad
}
