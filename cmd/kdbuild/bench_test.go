package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

func TestBenchEveryOpJSON(t *testing.T) {
	for _, op := range []string{"copy", "scan", "segscan", "compact", "sort", "reduce"} {
		t.Run(op, func(t *testing.T) {
			r := kdbuild(t, "bench", op, "--device", "cpu", "--sizes", "0,5,10", "--runs", "1", "--json")
			require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
			assert.Empty(t, r.stderr)
			m := decode(t, r.stdout)
			assert.Equal(t, op, m["op"])
			assert.Equal(t, "cpu", m["device"])
			assert.Equal(t, []any{1.0, 32.0, 1024.0}, m["sizes"])
			assert.Greater(t, m["copy_gb_per_s"].(float64), 0.0)
			rows, _ := m["rows"].([]any)
			require.NotEmpty(t, rows)
			seen := map[float64]bool{}
			for _, row := range rows {
				rm := row.(map[string]any)
				n := rm["n"].(float64)
				seen[n] = true
				for _, k := range []string{"op", "variant", "n", "bytes", "ms", "gb_per_s", "pct_copy"} {
					assert.Contains(t, rm, k)
				}
			}
			assert.Equal(t, map[float64]bool{1: true, 32: true, 1024: true}, seen, "every size has rows")
		})
	}
}

func TestBenchTable(t *testing.T) {
	r := kdbuild(t, "bench", "reduce", "--device", "cpu", "--sizes", "8..9")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stdout, "median of 20 runs", "reduce times at least 20 runs")
	lines := strings.Split(r.stdout, "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| variant") {
			rows = append(rows, l)
		}
	}
	require.NotEmpty(t, rows)
	for _, l := range rows {
		assert.Equal(t, 6, strings.Count(l, "|"), "five columns: %q", l)
	}
	assert.Contains(t, r.stdout, "| 2^8 |")
	assert.Contains(t, r.stdout, "| 2^9 |")
}

func TestBenchThesis(t *testing.T) {
	r := kdbuild(t, "bench", "thesis", "proc:icosphere:3", "--device", "cpu", "--runs", "2")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stdout, "Total execution time")
	assert.NotContains(t, r.stdout, "default scene", "a scene was given")

	r = kdbuild(t, "bench", "thesis", "--device", "cpu", "--runs", "1", "--json")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	m := decode(t, r.stdout)
	assert.Contains(t, m["thesis"], "Total execution time")
	assert.NotEmpty(t, m["notes"], "says that the default scene is not the bunny")
}

func TestReferenceCopy(t *testing.T) {
	cases := []struct {
		name string
		rows []exec.BenchRow
		want float64
	}{
		{"none", nil, 0},
		{"largest size wins over faster small", []exec.BenchRow{{N: 1024, GBps: 900}, {N: 1 << 20, GBps: 100}, {N: 1 << 20, GBps: 120}}, 120},
		{"unmeasured rows ignored", []exec.BenchRow{{N: 1024, GBps: 50}, {N: 1 << 28, GBps: 0, Note: "out of memory"}}, 50},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, referenceCopy(c.rows), c.name)
	}
}
