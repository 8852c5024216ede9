package kdtree

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// btEqualTrees requires two trees to be equal node for node and reference
// for reference, naming the first difference.
func btEqualTrees(t *testing.T, name string, want, got *Tree) {
	t.Helper()
	require.Equal(t, want.Bounds, got.Bounds, "%s: root box", name)
	require.Equal(t, len(want.Nodes), len(got.Nodes), "%s: node count", name)
	for i := range want.Nodes {
		if want.Nodes[i] != got.Nodes[i] {
			t.Fatalf("%s: node %d: Go %v, GPU %v", name, i, want.Nodes[i], got.Nodes[i])
		}
	}
	require.True(t, slices.Equal(want.Refs, got.Refs), "%s: references differ", name)
	ws, gs := want.Stats(), got.Stats()
	require.Equal(t, ws.DroppedTriangles, gs.DroppedTriangles)
	require.Equal(t, ws.SAHCost, gs.SAHCost)
}

// The CUDA executor builds the Go executor's tree, on the procedural
// scenes (edge sizes and hard cases) and every shared scene.
func TestBuildGPUEqualsGo(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	var list []*scenes.Scene
	list = append(list, btProcedural()...)
	for _, sc := range btShared {
		if s := btTrySharedScene(t, sc.file); s != nil {
			list = append(list, s)
		}
	}
	var counts gpubuild.Counts
	// Paths KDBUILD_GPU_OFF turns off, then all of them (the logs copied
	// and the three decision kernels among them: TestBuildGPUPipelineFallback
	// has the copied logs alone, large levels the three kernels), then
	// none (the default).
	variants := []struct {
		name string
		off  gpubuild.Paths
	}{
		{"large phase on the GPU, small phase in Go", gpubuild.PathDeviceSmall},
		{"level by level", gpubuild.PathPipeline},
		{"host's count and small roots", gpubuild.PathEarlySmall | gpubuild.PathQueuedPrepare},
		{"host's top layout", gpubuild.PathDeviceTop},
		{"every fast path off", 1<<gpubuild.NumPaths - 1},
		{"", 0},
	}
	for _, s := range list {
		for _, o := range []Options{{}, {Bins: 7, SmallNode: 16}, {EmptyBonus: 0.8, MaxDepth: 12}} {
			goOpt := o
			goOpt.Executor = exec.Go(0)
			want, err := Build(context.Background(), s, goOpt)
			require.NoError(t, err)
			var got *Tree
			for _, v := range variants {
				gpuOpt := btGPUOptions(o, ex, func(c *gpubuild.Config) {
					c.Off, c.CheckEarlyRoots, c.Counts = v.off, true, &counts
				})
				got, err = Build(context.Background(), s, gpuOpt)
				require.NoError(t, err, s.Name)
				btEqualTrees(t, strings.TrimSuffix(s.Name+" ("+v.name+")", " ()"), want, got)
			}
			if len(got.Nodes) > 0 {
				require.Contains(t, got.Stats().Phases, "download", s.Name)
			}
			if o.Bins == 0 && o.MaxDepth == 0 {
				require.NoError(t, got.Validate(), s.Name)
			}
			st := got.Stats()
			require.Equal(t, ex.Name(), st.Device)
			if len(s.Tris) > st.DroppedTriangles {
				require.Positive(t, st.DevicePeakBytes)
			}
			t.Logf("%s %+v: SAH %.2f, %d nodes, GPU build %.1f ms, device peak %d B (%.0f B/tri), phases %v",
				s.Name, o, st.SAHCost, st.Nodes, st.BuildMs, st.DevicePeakBytes,
				float64(st.DevicePeakBytes)/float64(max(1, len(s.Tris))), st.Phases)
		}
	}
	// The pipelined scenes with small roots started their small phase
	// from the device's list.
	require.Positive(t, counts[gpubuild.CountEarlyRun].Load(), "no build started its small phase early")
	t.Logf("%d builds went on level by level when the device's lists outgrew their room", counts[gpubuild.CountTopFallback].Load())
}

// btGPUOptions is o on executor ex with the default Config changed by
// set (a value of its own: tests never change the defaults).
func btGPUOptions(o Options, ex exec.Executor, set func(*gpubuild.Config)) Options {
	c := gpubuild.DefaultConfig()
	if set != nil {
		set(&c)
	}
	o.Executor, o.gpu = ex, &c
	return o
}

// Building on the GPU reports progress as the contract says, once per
// large level like the Go build, pipelined or not.
func TestBuildGPUProgress(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	s := scenes.Soup(5000, 4)
	var goCalls []Progress
	_, err := Build(context.Background(), s, Options{Progress: func(p Progress) { goCalls = append(goCalls, p) }})
	require.NoError(t, err)
	goLevels := checkProgress(t, goCalls)
	for _, off := range []gpubuild.Paths{0, gpubuild.PathPipeline} {
		var gpuCalls []Progress
		o := btGPUOptions(Options{Progress: func(p Progress) { gpuCalls = append(gpuCalls, p) }}, ex,
			func(c *gpubuild.Config) { c.Off = off })
		_, err = Build(context.Background(), s, o)
		require.NoError(t, err)
		require.Equal(t, goLevels, checkProgress(t, gpuCalls), "paths off %b", off)
	}
}

// Level by level, the CUDA large phase sees the same nodes (box, range,
// depth) and makes the same decisions as the Go one: when the trees differ
// this names the first level and node that does.
func TestBuildGPULevelsEqualGo(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	type level struct {
		nodes []refbuild.LNode
		dec   []refbuild.Decision
	}
	record := func(out *[]level) func([]refbuild.LNode, []refbuild.Decision) {
		return func(n []refbuild.LNode, d []refbuild.Decision) {
			*out = append(*out, level{append([]refbuild.LNode(nil), n...), append([]refbuild.Decision(nil), d...)})
		}
	}
	list := []*scenes.Scene{scenes.Soup(5000, 3), scenes.Coplanar(2000, 4), scenes.Grid(scenes.Icosphere(3), 3, 3, 3)}
	for _, sc := range btShared[:5] {
		if s := btTrySharedScene(t, sc.file); s != nil {
			list = append(list, s)
		}
	}
	for _, s := range list {
		var goLv, gpuLv []level
		_, err := build(context.Background(), s, Options{}, record(&goLv))
		require.NoError(t, err)
		_, err = build(context.Background(), s, Options{Executor: ex}, record(&gpuLv))
		require.NoError(t, err)
		for l := 0; l < min(len(goLv), len(gpuLv)); l++ {
			g, d := goLv[l], gpuLv[l]
			require.Equal(t, len(g.nodes), len(d.nodes), "%s: level %d node count", s.Name, l)
			for i := range g.nodes {
				gn, dn := g.nodes[i], d.nodes[i]
				gn.Rec, dn.Rec = 0, 0
				require.Equal(t, gn, dn, "%s: level %d node %d", s.Name, l, i)
				require.Equal(t, g.dec[i], d.dec[i], "%s: level %d node %d decision (node %+v)", s.Name, l, i, gn)
			}
		}
		require.Equal(t, len(goLv), len(gpuLv), "%s: levels", s.Name)
	}
}

// When the device small phase runs out of output room it runs again with
// more, then falls back to the Go small phase: the tree is the same.
func TestBuildGPUSmallRetry(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, s := range []*scenes.Scene{scenes.Soup(3000, 17), scenes.Grid(scenes.Icosphere(2), 2, 2, 1)} {
		want, err := Build(context.Background(), s, Options{})
		require.NoError(t, err)
		for _, caps := range [][][2]int{{{0, 0}, {6, 4}}, {{0, 0}}, {{6, 0}, {0, 4}, {6, 4}}} {
			got, err := Build(context.Background(), s, btGPUOptions(Options{}, ex, func(c *gpubuild.Config) { c.SmallCaps = caps }))
			require.NoError(t, err, "%s %v", s.Name, caps)
			btEqualTrees(t, fmt.Sprintf("%s, small caps %v", s.Name, caps), want, got)
		}
	}
}

// The pipelined large phase gives the level-synchronous one's tree, also
// when a level outgrows its buffers (pipeRefCap) and the build falls back
// to the level-synchronous phase, and when the parked references' buffers
// must grow (parkReserve 1: the phase waits for a level's sizes and grows
// them, no fallback), and with the levels' logs copied rather than written
// into pinned memory by the tail (pathMappedLog off).
func TestBuildGPUPipelineFallback(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	list := []*scenes.Scene{scenes.Soup(5000, 3), scenes.Coplanar(2000, 4)}
	if s := btTrySharedScene(t, "stanford-bunny.obj"); s != nil {
		list = append(list, s)
	}
	for _, s := range list {
		want, err := Build(context.Background(), s, Options{Executor: exec.Go(0)})
		require.NoError(t, err)
		n := len(s.Tris)
		for _, c := range []struct {
			name             string
			pipe             bool
			cap, exact, park int
			copied           bool
		}{
			{"level-synchronous", false, 0, 1 << 20, 3, false}, {"pipelined", true, 0, 1 << 20, 3, false},
			{"overflow at once", true, 1, 1 << 20, 3, false}, {"overflow later", true, n + n/20, 1 << 20, 3, false},
			{"exact sizes from the middle", true, 0, n + n/20, 3, false}, {"exact sizes", true, 0, 1, 3, false},
			{"exact sizes, overflow later", true, n + n/20, 1, 3, false},
			{"parked buffers grown", true, 0, 1 << 20, 1, false},
			{"logs copied", true, 0, 1 << 20, 3, true}, {"logs copied, overflow later", true, n + n/20, 1 << 20, 3, true},
		} {
			var counts gpubuild.Counts
			got, err := Build(context.Background(), s, btGPUOptions(Options{}, ex, func(g *gpubuild.Config) {
				g.PipeRefCap, g.PipeExactRefs, g.ParkReserve, g.Counts = c.cap, c.exact, c.park, &counts
				if !c.pipe {
					g.Off |= gpubuild.PathPipeline
				}
				if c.copied {
					g.Off |= gpubuild.PathMappedLog
				}
			}))
			require.NoError(t, err, s.Name)
			btEqualTrees(t, s.Name+" "+c.name, want, got)
			fell := counts[gpubuild.CountPipeFallback].Load()
			// Every level after the first holds more than one reference;
			// the bunny's grow to 1.31 times its triangles.
			if c.cap == 1 || (c.cap > 0 && strings.Contains(s.Name, "bunny")) {
				require.EqualValues(t, 1, fell, "%s %s: fallbacks", s.Name, c.name)
			} else if !c.pipe || c.cap == 0 {
				require.Zero(t, fell, "%s %s: fallbacks", s.Name, c.name)
			}
			t.Logf("%s %s: %d fallbacks, %.2f ms", s.Name, c.name, fell, got.Stats().BuildMs)
		}
	}
}
