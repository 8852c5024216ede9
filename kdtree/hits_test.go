package kdtree

import (
	"context"
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
	s, err := scenes.Load(filepath.Join(dir, file))
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

// treesFor returns the trees to check on a scene: the reference builder's
// and Build's (with the Go executor).
func treesFor(t *testing.T, s *scenes.Scene) map[string]*Tree {
	t.Helper()
	trees := map[string]*Tree{"refbuild": refBuild(s, 8, 40)}
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Errorf("Build(%s): %v", s.Name, err)
	} else {
		trees["Build"] = tree
	}
	return trees
}

// TestAnchorHitCounts traces the full ANCHORS ray sets through trees of
// every shared scene and compares the number of hits with the table.
func TestAnchorHitCounts(t *testing.T) {
	for _, sc := range anchorScenes {
		t.Run(sc.file, func(t *testing.T) {
			if sc.slow && testing.Short() {
				t.Skip("large scene: skipped under -short")
			}
			s := loadShared(t, sc.file)
			for name, tree := range treesFor(t, s) {
				requireNoError(t, tree.Validate(), "%s tree of %s", name, sc.file)
				expectEqual(t, countHits(tree, PrimaryRays(s.Bounds)), sc.primary, "%s: %s primary hits", sc.file, name)
				expectEqual(t, countHits(tree, RandomRays(s.Bounds, anchorRandomRays)), sc.random, "%s: %s random hits", sc.file, name)
			}
		})
	}
}
