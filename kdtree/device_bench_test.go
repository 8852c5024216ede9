package kdtree

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/gputrace"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// deviceBenchRuns is how many event-timed launches each figure is the
// median of (after one warm-up).
const deviceBenchRuns = 20

// BenchmarkDeviceTrace reports Mrays/s of the device tracer on the bunny
// and conference (trees built on the device), ANCHORS primary and random
// rays, closest and any hit: "device" with rays and hits in device memory
// (kernel time by CUDA events, median of deviceBenchRuns, for every kernel
// variant of gputrace.Variants), "host" for IntersectBatch/OccludedBatch
// from host slices (wall clock, copies included, median of 5; the default
// kernel, through mapped or copied page-locked memory). The trees are kept
// on the device by their build; trees built with the traversal costs of
// benchTraversalCosts add rows for the default and incoherent kernels. Run on a GPU machine
// with -test.bench DeviceTrace -test.benchtime 1x.
func BenchmarkDeviceTrace(b *testing.B) {
	ex, why := exec.TestGPU()
	if ex == nil {
		b.Skip(why)
	}
	for _, file := range []string{"stanford-bunny.obj", "conference.obj.gz"} {
		s := loadShared(b, file)
		tree := deviceTree(b, ex, s)
		sets := []struct {
			name string
			rays []Ray
		}{{"primary", PrimaryRays(s.Bounds)}, {"random", RandomRays(s.Bounds, anchorRandomRays)}}
		benchPairLayout(b, ex, tree, file)
		for _, set := range sets {
			benchDeviceSet(b, ex, tree, file, set.name, set.rays)
		}
		benchRayOrders(b, ex, tree, s, file, "random", sets[1].rays)
		// Trees built for fewer, larger leaves (a dearer traversal step):
		// their shape, then the default and the incoherent kernel on them.
		for _, tc := range benchTraversalCosts {
			tag := fmt.Sprintf("tc%g", tc)
			tt, st := benchTree(b, ex, s, Options{TraversalCost: tc})
			b.Run(file+"/tree/"+tag, func(b *testing.B) {
				b.ReportMetric(float64(st.Nodes), "nodes")
				b.ReportMetric(float64(st.References)/float64(max(st.Leaves-st.EmptyLeaves, 1)), "refs/leaf")
				b.ReportMetric(st.SAHCost, "SAH")
				b.ReportMetric(st.BuildMs, "build-ms")
			})
			for _, set := range sets {
				benchDeviceKernels(b, ex, tt, file, set.name, set.rays, "-"+tag,
					[]gputrace.Kernel{gputrace.DefaultKernel, gputrace.IncoherentKernel})
			}
			tt.Close()
		}
	}
}

// benchPairLayout reports what the device copy's pair layout costs: the
// conversion from the host's node words (gputrace.PairLayout) and its
// upload (allocation and copy), the median of 5 each.
func benchPairLayout(b *testing.B, ex exec.Executor, tree *Tree, file string) {
	b.Run(file+"/tree/pair-layout", func(b *testing.B) {
		nodes := nodeWordsOf(tree.Nodes)
		var conv, up []float64
		for i := 0; i < max(b.N, 5); i++ {
			t0 := time.Now()
			pairs, err := gputrace.PairLayout(nodes)
			require.NoError(b, err)
			t1 := time.Now()
			buf, err := cuda.NewBuffer[uint32](ex.CUDA(), len(pairs))
			require.NoError(b, err)
			require.NoError(b, buf.CopyFromHost(pairs))
			require.NoError(b, ex.CUDA().Synchronize())
			t2 := time.Now()
			require.NoError(b, buf.Free())
			conv = append(conv, float64(t1.Sub(t0).Microseconds())/1e3)
			up = append(up, float64(t2.Sub(t1).Microseconds())/1e3)
			b.ReportMetric(float64(len(pairs)*4), "bytes")
		}
		b.ReportMetric(float64(len(tree.Nodes)), "nodes")
		b.ReportMetric(median(conv), "layout-ms")
		b.ReportMetric(median(up), "upload-ms")
	})
}

// benchTraversalCosts are the traversal costs of the extra trees that
// BenchmarkDeviceTrace traces (the default is 1).
var benchTraversalCosts = []float32{1.5, 2, 3, 4}

// benchTree builds s's tree with o on ex, kept on the device (the caller
// closes it), and returns its statistics (the median build time of 3).
func benchTree(b *testing.B, ex exec.Executor, s *scenes.Scene, o Options) (*Tree, Stats) {
	o.Executor, o.KeepOnDevice = ex, true
	var ms []float64
	var tree *Tree
	for i := 0; i < 3; i++ {
		if tree != nil {
			tree.Close()
		}
		var err error
		tree, err = Build(context.Background(), s, o)
		require.NoError(b, err)
		ms = append(ms, tree.BuildStats().BuildMs)
	}
	st := tree.Stats()
	st.BuildMs = median(ms)
	return tree, st
}

func benchDeviceSet(b *testing.B, ex exec.Executor, tree *Tree, file, set string, rays []Ray) {
	benchDeviceKernels(b, ex, tree, file, set, rays, "", gputrace.Variants)
	benchHostSet(b, tree, file, set, rays)
}

// benchDeviceKernels measures kernels on rays in device memory; tag ends
// each row's variant name.
func benchDeviceKernels(b *testing.B, ex exec.Executor, tree *Tree, file, set string, rays []Ray, tag string, kernels []gputrace.Kernel) {
	ctx := context.Background()
	rb, hb, ob := deviceBuffers(b, ex, rays)
	defer func() { rb.Free(); hb.Free(); ob.Free() }()
	dev := tree.dev.tree
	defer func() { dev.Kernel = gputrace.DefaultKernel }()
	for _, k := range kernels {
		for _, mode := range []string{"closest", "any"} {
			run := func() error {
				if mode == "any" {
					return tree.OccludedDevice(ctx, rb, ob)
				}
				return tree.IntersectDevice(ctx, rb, hb)
			}
			b.Run(file+"/"+set+"/"+mode+"/device/"+k.String()+tag, func(b *testing.B) {
				dev.Kernel = k
				tm, err := exec.Time(ex, deviceBenchRuns, run)
				require.NoError(b, err)
				for i := 0; i < b.N; i++ {
					require.NoError(b, run())
				}
				require.NoError(b, ex.CUDA().Synchronize())
				b.ReportMetric(float64(len(rays))/tm.Median/1e3, "Mrays/s")
				b.ReportMetric(tm.Median, "ms")
			})
		}
	}
}

// benchHostSet measures IntersectBatch and OccludedBatch from host slices.
func benchHostSet(b *testing.B, tree *Tree, file, set string, rays []Ray) {
	ctx := context.Background()
	dev := tree.dev.tree
	hits, occ := make([]Hit, len(rays)), make([]bool, len(rays))
	defer func() { dev.Host, dev.HostKernel = gputrace.HostMapped, gputrace.DefaultKernel }()
	for _, k := range []gputrace.Kernel{gputrace.DefaultKernel} {
		for _, hm := range []gputrace.HostMode{gputrace.HostMapped, gputrace.HostCopy} {
			for _, mode := range []string{"closest", "any"} {
				b.Run(file+"/"+set+"/"+mode+"/host/"+k.String()+"-"+hm.String(), func(b *testing.B) {
					dev.Kernel, dev.HostKernel, dev.Host = k, k, hm
					var ms []float64
					for i := 0; i < max(b.N, 5); i++ {
						t0 := time.Now()
						if mode == "any" {
							require.NoError(b, tree.OccludedBatch(ctx, rays, occ))
						} else {
							require.NoError(b, tree.IntersectBatch(ctx, rays, hits))
						}
						ms = append(ms, float64(time.Since(t0).Microseconds())/1e3)
					}
					med := median(ms)
					b.ReportMetric(float64(len(rays))/med/1e3, "Mrays/s")
					b.ReportMetric(med, "ms")
				})
			}
		}
	}
	dev.Kernel = gputrace.DefaultKernel
}

// median returns the middle of xs (the mean of the two middle ones for an
// even count); xs is reordered.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
