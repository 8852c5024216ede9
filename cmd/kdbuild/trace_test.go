package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// rayFile writes rays (six float32 each) as a raw ray file, plus extra bytes.
func rayFile(t *testing.T, rays [][6]float32, extra int) string {
	t.Helper()
	var b []byte
	for _, r := range rays {
		for _, v := range r {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	b = append(b, make([]byte, extra)...)
	p := filepath.Join(t.TempDir(), "rays.bin")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func TestTraceJSONKeys(t *testing.T) {
	// Two rays at the icosphere's centre from outside (hit), one away (miss).
	file := rayFile(t, [][6]float32{{0, 0, 5, 0, 0, -1}, {0, 0, -5, 0, 0, 1}, {0, 0, 5, 0, 0, 1}}, 0)
	r := kdbuild(t, "trace", "proc:icosphere:2", "--rays", file, "--device", "cpu", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	m := decode(t, r.stdout)
	for _, q := range []string{"trace", "occluded"} {
		for key, want := range map[string]float64{"rays": 3, "hits": 2} {
			v, ok := lookup(m, q+"."+key)
			require.True(t, ok, "key %s.%s missing", q, key)
			assert.Equal(t, want, v, "%s.%s", q, key)
		}
		for _, key := range []string{"ms", "mrays_per_s", "threads"} {
			_, ok := lookup(m, q+"."+key)
			assert.True(t, ok, "key %s.%s missing", q, key)
		}
	}
}

func TestTraceRaySets(t *testing.T) {
	for _, c := range []struct {
		args []string
		rays string
	}{
		{[]string{"--rays", "random", "--n", "1000"}, "1,000 rays"},
		{[]string{"--n", "5000"}, "5,000 rays"},
	} {
		r := kdbuild(t, append([]string{"trace", "proc:icosphere:2", "--device", "cpu", "-q"}, c.args...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, c.rays)
		assert.Contains(t, r.stdout, "Mrays/s")
	}
}

// TestTraceGPUWithoutDevice: --device gpu where no GPU works is an error
// that says why (on a GPU machine the trace runs: TestGPUTraceMatchesGo).
func TestTraceGPUWithoutDevice(t *testing.T) {
	if ex, _ := exec.TestGPU(); ex != nil {
		t.Skip("a GPU works here")
	}
	r := kdbuild(t, "trace", "proc:icosphere:1", "--device", "gpu")
	assert.Equal(t, exitError, r.code, r.stderr)
	assert.Contains(t, r.stderr, "no usable GPU")
}

func TestTraceErrors(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no scene", []string{"trace"}, exitUsage, "name one scene"},
		{"negative n", []string{"trace", "proc:icosphere:1", "--n", "-1"}, exitUsage, "--n -1"},
		{"missing file", []string{"trace", "proc:icosphere:1", "--rays", "/nonexistent/rays.bin"}, exitError, "want primary, random or a ray file"},
		{"partial ray", []string{"trace", "proc:icosphere:1", "--rays", rayFile(t, [][6]float32{{0, 0, 5, 0, 0, -1}}, 10)}, exitError, "10 bytes after ray 1"},
		{"empty", []string{"trace", "proc:icosphere:1", "--rays", rayFile(t, nil, 0)}, exitError, "no rays"},
		{"nan", []string{"trace", "proc:icosphere:1", "--rays", rayFile(t, [][6]float32{{0, 0, 5, 0, 0, -1}, {0, 0, 5, 0, nan, -1}}, 0)}, exitError, "ray 1 (byte 40): component 4 (dy) is NaN"},
		{"bench runs", []string{"bench", "trace", "--runs", "0"}, exitUsage, "--runs 0"},
	} {
		r := kdbuild(t, c.args...)
		assert.Equal(t, c.code, r.code, "%s: %s", c.name, r.stderr)
		assert.Contains(t, r.stderr, c.msg, c.name)
	}
}

func TestBenchTraceTable(t *testing.T) {
	r := kdbuild(t, "bench", "trace", "proc:icosphere:1", "--runs", "1", "--device", "cpu", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	m := decode(t, r.stdout)
	rows, ok := m["rows"].([]any)
	require.True(t, ok, "rows missing")
	require.GreaterOrEqual(t, len(rows), 4, "rows: primary/random × closest/any")
	row := rows[0].(map[string]any)
	for _, key := range []string{"scene", "rays", "query", "from", "threads", "ray_count", "hits", "ms", "mrays_per_s"} {
		_, ok := row[key]
		assert.True(t, ok, "row key %s missing", key)
	}
	r = kdbuild(t, "bench", "trace", "proc:icosphere:1", "--runs", "1", "--device", "cpu", "-q")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "| scene | rays | query | from | threads |")
}

func TestBenchTracePlot(t *testing.T) {
	png := filepath.Join(t.TempDir(), "trace.png")
	r := kdbuild(t, "bench", "trace", "proc:icosphere:1", "--runs", "1", "--device", "cpu", "--plot", png, "-q")
	require.Equal(t, exitOK, r.code, r.stderr)
	b, err := os.ReadFile(png)
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG", string(b[:4]))
	r = kdbuild(t, "bench", "trace", "proc:icosphere:1", "--runs", "1", "--device", "cpu", "--plot", png, "-q")
	assert.Equal(t, exitError, r.code, "an existing plot is not replaced without --force")
	assert.Contains(t, r.stderr, "--force")
}
