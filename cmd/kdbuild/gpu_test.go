package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// TestGPUTreeStatsMatchGo builds the same scenes with --device gpu and
// --device cpu and compares every tree statistic: the two executors must
// build the same tree. It also checks that the GPU run reports its device
// and its peak device memory.
func TestGPUTreeStatsMatchGo(t *testing.T) {
	if ex, why := exec.TestGPU(); ex == nil {
		t.Skip(why)
	}
	scenes := []string{"proc:icosphere:4", "proc:coplanar:3000", "proc:identical:200"}
	bunny := filepath.Join("..", "..", "..", "shared", "scenes", "stanford-bunny.obj")
	if _, err := os.Stat(bunny); err == nil {
		scenes = append(scenes, bunny)
	}
	for _, s := range scenes {
		t.Run(s, func(t *testing.T) {
			gpu := kdbuild(t, s, "--device", "gpu", "--json")
			require.Equal(t, exitOK, gpu.code, "stderr: %s", gpu.stderr)
			cpu := kdbuild(t, s, "--device", "cpu", "--json")
			require.Equal(t, exitOK, cpu.code, "stderr: %s", cpu.stderr)
			g, c := decode(t, gpu.stdout), decode(t, cpu.stdout)
			assert.NotEqual(t, "cpu", g["device"])
			for path := range buildKeys {
				if strings.HasPrefix(path, "tree.") {
					gv, _ := lookup(g, path)
					cv, _ := lookup(c, path)
					assert.Equal(t, cv, gv, "%s: %s differs between executors", s, path)
				}
			}
			dev, _ := lookup(g, "memory.device_peak_bytes")
			assert.Greater(t, dev.(float64), 0.0, "a GPU build uses device memory")
		})
	}
}

// TestGPUTraceMatchesGo traces the same rays with --device gpu and --device
// cpu: the hit counts of closest and any hit must agree (the kdtree tests
// compare every hit bit for bit), and the GPU run reports where it traced
// and its device-resident rate.
func TestGPUTraceMatchesGo(t *testing.T) {
	if ex, why := exec.TestGPU(); ex == nil {
		t.Skip(why)
	}
	for _, rays := range []string{"primary", "random"} {
		gpu := kdbuild(t, "trace", "proc:icosphere:4", "--rays", rays, "--n", "100000", "--device", "gpu", "--json")
		require.Equal(t, exitOK, gpu.code, "stderr: %s", gpu.stderr)
		cpu := kdbuild(t, "trace", "proc:icosphere:4", "--rays", rays, "--n", "100000", "--device", "cpu", "--json")
		require.Equal(t, exitOK, cpu.code, "stderr: %s", cpu.stderr)
		g, c := decode(t, gpu.stdout), decode(t, cpu.stdout)
		for _, key := range []string{"trace.hits", "occluded.hits", "trace.rays"} {
			gv, _ := lookup(g, key)
			cv, _ := lookup(c, key)
			assert.Equal(t, cv, gv, "%s: %s differs between executors", rays, key)
		}
		where, _ := lookup(g, "trace.device")
		assert.Equal(t, "gpu", where)
		rate, _ := lookup(g, "trace.resident_mrays_per_s")
		assert.Greater(t, rate.(float64), 0.0)
	}
}
