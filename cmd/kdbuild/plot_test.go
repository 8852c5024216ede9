package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// ladder makes rows for two variants over sizes 2^lo..2^hi; times grow with n.
func ladder(lo, hi int) []exec.BenchRow {
	var rows []exec.BenchRow
	for k := lo; k <= hi; k++ {
		n := 1 << k
		rows = append(rows,
			exec.BenchRow{Op: "scan", Variant: "fast", N: n, Ms: 0.001 * float64(n) / 1024},
			exec.BenchRow{Op: "scan", Variant: "slow", N: n, Ms: 0.003 * float64(n) / 1024})
	}
	return rows
}

func TestWritePlotIsPNGAndNeverOverwrites(t *testing.T) {
	cases := []struct {
		name   string
		lo, hi int
	}{
		{"one size", 10, 10},
		{"ladder", 10, 24},
		{"tiny sizes", 0, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "chart.png")
			require.NoError(t, checkWritable(p, false))
			require.NoError(t, writePlot(p, false, "test", ladder(c.lo, c.hi)))
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			img, err := png.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			assert.Greater(t, img.Bounds().Dx(), 100)

			// An existing file is refused before and while writing.
			assert.Error(t, checkWritable(p, false))
			err = writePlot(p, false, "test", ladder(c.lo, c.hi))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "--force")
			again, _ := os.ReadFile(p)
			assert.Equal(t, data, again, "the file is untouched")

			// --force replaces it.
			require.NoError(t, checkWritable(p, true))
			require.NoError(t, writePlot(p, true, "test", ladder(c.lo, c.lo)))
			_, err = png.Decode(mustOpen(t, p))
			require.NoError(t, err)
		})
	}
}

func TestWritePlotRefusesNothingToDraw(t *testing.T) {
	p := filepath.Join(t.TempDir(), "chart.png")
	err := writePlot(p, false, "empty", []exec.BenchRow{{Variant: "v", N: 1024, Ms: 0}})
	require.Error(t, err)
	_, statErr := os.Stat(p)
	assert.True(t, os.IsNotExist(statErr), "no file for a failed plot")
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestBenchPlotEndToEnd(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "copy.png")
	args := []string{"bench", "copy", "--device", "cpu", "--sizes", "10..12", "--runs", "2", "--plot", p}
	r := kdbuild(t, args...)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stdout, "| variant | n | ms | GB/s | % of copy |")
	assert.Contains(t, r.stdout, "| 2^12 |")
	first, err := os.ReadFile(p)
	require.NoError(t, err)
	_, err = png.Decode(bytes.NewReader(first))
	require.NoError(t, err)

	r = kdbuild(t, args...)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "--force")
	again, _ := os.ReadFile(p)
	assert.Equal(t, first, again)

	r = kdbuild(t, append(args, "--force", "--json")...)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	m := decode(t, r.stdout)
	rows, _ := m["rows"].([]any)
	best := 0
	for _, r := range rows {
		if r.(map[string]any)["variant"] == "best" {
			best++
		}
	}
	assert.Equal(t, 3, best, "one best row per size")
	assert.Equal(t, p, m["plot"])
}

func TestBenchGoDefaultSizesAreSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the default ladder")
	}
	r := kdbuild(t, "bench", "copy", "--device", "cpu", "--runs", "1")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stdout, "2^10..2^24")
	assert.Equal(t, 15, strings.Count(r.stdout, "| best"), "one best row per size of 2^10..2^24")
}
