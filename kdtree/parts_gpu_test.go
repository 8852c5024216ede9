package kdtree

import (
	"context"
	"fmt"
	"testing"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// TestBuildPartsGPU builds parts on one GPU, and on two when the machine
// has them: the joined tree equals the Go executor's node for node (each
// part's tree does) and gives brute force's hits.
func TestBuildPartsGPU(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	devs := [][]exec.Executor{{ex}}
	if infos, err := cuda.Devices(); err == nil && len(infos) >= 2 {
		second, err := exec.GPUOn(1)
		if err != nil {
			t.Fatal(err)
		}
		defer second.Close()
		devs = append(devs, []exec.Executor{ex, second})
	}
	// Every path of the CUDA build (a part may take any: the pipelined
	// levels below a million triangles, level by level above).
	paths := []gpubuild.Paths{0, gpubuild.PathPipeline, gpubuild.PathDeviceSmall,
		gpubuild.PathEarlySmall | gpubuild.PathQueuedPrepare, gpubuild.PathDeviceTop, 1<<gpubuild.NumPaths - 1}
	for _, s := range []*scenes.Scene{scenes.Grid(scenes.Icosphere(4), 4, 2, 2), scenes.HugeAmongTiny(5000, 3)} {
		want, _, err := BuildParts(context.Background(), s, Options{}, PartOptions{Parts: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, exs := range devs {
			for _, off := range paths {
				o := btGPUOptions(Options{}, ex, func(c *gpubuild.Config) { c.Off = off })
				got, rep, err := BuildParts(context.Background(), s, o, PartOptions{Executors: exs, Parts: 4})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s on %d GPUs, paths off %b: %d parts, %+v", s.Name, len(exs), off, rep.Parts, rep.Devices)
				btEqualTrees(t, fmt.Sprintf("%s (paths off %b)", s.Name, off), want, got)
				checkPartsTree(t, got, 2000)
			}
		}
	}
}
