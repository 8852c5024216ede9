package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPartsJSON(t *testing.T) {
	tests := []struct {
		args     []string
		minParts float64
	}{
		{[]string{"--parts", "3"}, 3},
		{[]string{"--memory-budget", "300k"}, 2}, // 1280 triangles at 1000 B each
		{[]string{"--parts", "1"}, 1},
	}
	for _, tc := range tests {
		args := append([]string{"--json", "--device", "cpu", smallScene}, tc.args...)
		r := kdbuild(t, args...)
		require.Equal(t, exitOK, r.code, "%v: stderr: %s", tc.args, r.stderr)
		m := decode(t, r.stdout)
		checkKeys(t, m, buildKeys)
		checkKeys(t, m, map[string]string{
			"parts.count": "number", "parts.top_depth": "number", "parts.resplits": "number",
			"parts.max_part_triangles": "number", "parts.budget_triangles": "number",
			"parts.split_ms": "number", "parts.parts_ms": "number", "parts.join_ms": "number",
			"parts.devices": "array",
		})
		n, _ := lookup(m, "parts.count")
		assert.GreaterOrEqual(t, n.(float64), tc.minParts, "%v", tc.args)
		nodes, _ := lookup(m, "tree.nodes")
		leaves, _ := lookup(m, "tree.leaves")
		assert.Equal(t, (nodes.(float64)+1)/2, leaves.(float64), "%v: a kd-tree is a full binary tree", tc.args)
	}
}

func TestPartsFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--memory-budget", "12x"},
		{"--memory-budget", "-5"},
		{"--parts", "-2"},
		{"--devices", "0,0"},
		{"--devices", "one"},
	} {
		r := kdbuild(t, append([]string{"--device", "cpu", smallScene}, args...)...)
		assert.Equal(t, exitUsage, r.code, "%v: stderr %s", args, r.stderr)
	}
	r := kdbuild(t, "--json", smallScene)
	m := decode(t, r.stdout)
	_, ok := m["parts"]
	assert.False(t, ok, "a build without parts flags has no parts key")
}
