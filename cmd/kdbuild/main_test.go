package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// result is what one kdbuild invocation produced.
type result struct {
	code           int
	stdout, stderr string
}

// kdbuild runs the tool in-process with a clean $KDBUILD_DEVICE.
func kdbuild(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// writeFile writes content to name in a fresh temporary folder.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// quadOBJ is one quad (fan-triangulated into 2 triangles) with a comment, a
// skipped keyword and a face of 2 vertices (skipped with a warning).
const quadOBJ = "# quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 -2\no thing\nf 1 2 3 4\nf 1 2\n"

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m), "stdout is not one JSON object: %q", s)
	return m
}

// lookup follows a dotted key path through nested JSON objects.
func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// kind names the JSON type of v as decoded by encoding/json.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

// Keys every kdbuild --json report has, with their JSON types.
var loadKeys = map[string]string{
	"scene.file":                 "string",
	"scene.format":               "string",
	"scene.vertices":             "number",
	"scene.triangles":            "number",
	"scene.faces":                "number",
	"scene.skipped_faces":        "number",
	"scene.degenerate_triangles": "number",
	"scene.bounds.min":           "array",
	"scene.bounds.max":           "array",
	"load.ms":                    "number",
	"load.mb_per_s":              "number",
	"warnings":                   "array",
	"device":                     "string",
	"device_fallback":            "string",
	"scene.skipped":              "object",
}

// Keys a report of a build adds.
var buildKeys = map[string]string{
	"build.ms":                     "number",
	"build.device_ms":              "number",
	"build.phases":                 "object",
	"tree.nodes":                   "number",
	"tree.leaves":                  "number",
	"tree.empty_leaves":            "number",
	"tree.max_depth":               "number",
	"tree.references":              "number",
	"tree.references_per_triangle": "number",
	"tree.sah_cost":                "number",
	"tree.dropped_triangles":       "number",
	"tree.limited":                 "string",
	"memory.host_peak_bytes":       "number",
	"memory.device_peak_bytes":     "number",
}

func checkKeys(t *testing.T, m map[string]any, keys map[string]string) {
	t.Helper()
	for path, want := range keys {
		v, ok := lookup(m, path)
		if assert.True(t, ok, "key %s missing", path) {
			assert.Equal(t, want, kind(v), "key %s: %v", path, v)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	obj := writeFile(t, "q.obj", quadOBJ)
	cases := []struct {
		name string
		env  string
		args []string
	}{
		{"unknown flag", "", []string{"--no-such-flag"}},
		{"unknown flag after file", "", []string{obj, "--frobnicate"}},
		{"bad device", "", []string{"--device", "tpu", obj}},
		{"bad device env", "tpu", []string{obj}},
		{"flag without value", "", []string{"--bins"}},
		{"bad number", "", []string{"--bins", "many", obj}},
		{"bench 0", "", []string{"--bench", "0", obj}},
		{"bench no op", "", []string{"bench"}},
		{"bench unknown op", "", []string{"bench", "fft"}},
		{"bench extra arg", "", []string{"bench", "scan", "x.obj"}},
		{"bench bad sizes", "", []string{"bench", "scan", "--sizes", "28..10"}},
		{"bench bad sizes text", "", []string{"bench", "scan", "--sizes", "big"}},
		{"bench runs 0", "", []string{"bench", "copy", "--runs", "0"}},
		{"bench plot not png", "", []string{"bench", "copy", "--plot", "chart.svg"}},
		{"devices argument", "", []string{"devices", "gpu0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KDBUILD_DEVICE", c.env)
			r := kdbuild(t, c.args...)
			assert.Equal(t, exitUsage, r.code, "stderr: %s", r.stderr)
			assert.NotEmpty(t, r.stderr)
			assert.Empty(t, r.stdout)
		})
	}
}

func TestUsageErrorWithJSONIsAnObject(t *testing.T) {
	r := kdbuild(t, "--json", "a.obj", "--bins", "many")
	require.Equal(t, exitUsage, r.code)
	m := decode(t, r.stdout)
	assert.Contains(t, m["error"], "-bins")
	assert.Equal(t, true, m["usage_error"])
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"x.obj", "--version"}} {
		r := kdbuild(t, args...)
		assert.Equal(t, exitOK, r.code, "%v", args)
		assert.True(t, strings.HasPrefix(r.stdout, "kdbuild "), "%q", r.stdout)
		assert.Equal(t, 1, strings.Count(r.stdout, "\n"))
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"bench", "-h"}, {"devices", "-h"}} {
		r := kdbuild(t, args...)
		assert.Equal(t, exitOK, r.code, "%v", args)
		assert.Contains(t, r.stdout, "Usage", "%v", args)
	}
}

func TestLoadOnlyJSON(t *testing.T) {
	obj := writeFile(t, "quad.obj", quadOBJ)
	// Flags after the file, as people type them.
	r := kdbuild(t, obj, "--json", "--no-build")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Empty(t, r.stderr)
	m := decode(t, r.stdout)
	checkKeys(t, m, loadKeys)
	for _, k := range []string{"build", "tree", "memory"} {
		v, ok := m[k]
		assert.True(t, ok, "key %s missing", k)
		assert.Nil(t, v, "key %s with --no-build", k)
	}
	want := map[string]any{
		"scene.file":                 obj,
		"scene.format":               "obj",
		"scene.vertices":             4.0,
		"scene.triangles":            2.0,
		"scene.faces":                2.0,
		"scene.skipped_faces":        1.0,
		"scene.degenerate_triangles": 0.0,
		"scene.bounds.min":           []any{0.0, 0.0, -2.0},
		"scene.bounds.max":           []any{1.0, 1.0, 0.0},
	}
	for path, w := range want {
		v, _ := lookup(m, path)
		assert.Equal(t, w, v, path)
	}
	warnings, _ := lookup(m, "warnings")
	assert.NotEmpty(t, warnings, "the 2-vertex face is a warning")
	ms, _ := lookup(m, "load.ms")
	assert.Greater(t, ms.(float64), 0.0)
}

func TestTextSummary(t *testing.T) {
	obj := writeFile(t, "quad.obj", quadOBJ)
	r := kdbuild(t, "--no-build", obj)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	for _, want := range []string{"triangles   2 from 2 faces (1 skipped, 0 degenerate)", "vertices    4", "bounds", "load", "warning"} {
		assert.Contains(t, r.stdout, want)
	}
}

func TestMalformedOBJErrorJSON(t *testing.T) {
	cases := []struct {
		name, content string
		line          int
	}{
		{"index out of range", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", 4},
		{"index zero", "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 0 1 2\n", 5},
		{"bad number", "v 0 0 0\nv 1 zero 0\n", 2},
		{"NaN", "v 0 0 0\nv nan 0 0\n", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := writeFile(t, "bad.obj", c.content)
			r := kdbuild(t, "--json", obj)
			require.Equal(t, exitError, r.code)
			m := decode(t, r.stdout)
			msg, _ := m["error"].(string)
			prefix := obj + ":" + itoa(c.line) + ":"
			assert.True(t, strings.HasPrefix(msg, prefix), "error %q does not start with %q", msg, prefix)
			assert.Contains(t, r.stderr, prefix, "the message is on stderr too")
			// Without --json: message on stderr, nothing on stdout.
			r = kdbuild(t, obj)
			assert.Equal(t, exitError, r.code)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, prefix)
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.obj")
	r := kdbuild(t, "--json", p)
	assert.Equal(t, exitError, r.code)
	m := decode(t, r.stdout)
	assert.Contains(t, m["error"], "nope.obj")
	r = kdbuild(t, t.TempDir())
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "directory")
}

func TestDefaultSceneBuilds(t *testing.T) {
	r := kdbuild(t, "--json", "--device", "cpu")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	m := decode(t, r.stdout)
	checkKeys(t, m, loadKeys)
	checkKeys(t, m, buildKeys)
	assert.Equal(t, "cpu", m["device"])
	tris, _ := lookup(m, "scene.triangles")
	assert.Greater(t, tris.(float64), 0.0)
	nodes, _ := lookup(m, "tree.nodes")
	leaves, _ := lookup(m, "tree.leaves")
	assert.Greater(t, nodes.(float64), 0.0)
	assert.Equal(t, (nodes.(float64)+1)/2, leaves.(float64), "a kd-tree is a full binary tree")

	f, _ := lookup(m, "scene.file")
	assert.Equal(t, "", f, "the default scene has no file")
}

// smallScene is a procedural scene that builds in milliseconds.
const smallScene = "proc:icosphere:3"

func TestTextReport(t *testing.T) {
	r := kdbuild(t, "--device", "cpu", "-q", smallScene)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Empty(t, r.stderr, "-q keeps stderr quiet")
	for _, want := range []string{"scene       " + smallScene + " (procedural)", "triangles   1,280", "device      cpu", "build", "nodes", "SAH cost", "peak memory"} {
		assert.Contains(t, r.stdout, want)
	}
}

func TestBenchBuilds(t *testing.T) {
	r := kdbuild(t, "--json", "--device", "cpu", "--bench", "3", "--bins", "16", "--max-depth", "5", smallScene)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	m := decode(t, r.stdout)
	runs, _ := lookup(m, "build.runs")
	assert.Equal(t, 3.0, runs)
	depth, _ := lookup(m, "tree.max_depth")
	assert.LessOrEqual(t, depth.(float64), 5.0, "--max-depth reaches the builder")
	// The tree figures (computed once, from the last build) are a single
	// build's.
	one := kdbuild(t, "--json", "--device", "cpu", "--bins", "16", "--max-depth", "5", smallScene)
	require.Equal(t, exitOK, one.code, "stderr: %s", one.stderr)
	m1 := decode(t, one.stdout)
	for _, k := range []string{"tree.nodes", "tree.leaves", "tree.empty_leaves", "tree.max_depth", "tree.references",
		"tree.references_per_triangle", "tree.sah_cost", "tree.dropped_triangles"} {
		got, ok := lookup(m, k)
		require.True(t, ok, k)
		want, _ := lookup(m1, k)
		assert.Equal(t, want, got, k)
	}
}

func TestAutoDeviceSaysWhyOnce(t *testing.T) {
	t.Setenv("KDBUILD_DEVICE", "")
	r := kdbuild(t, smallScene)
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	if strings.Contains(r.stdout, "device      cpu") {
		assert.Equal(t, 1, strings.Count(r.stderr, "no usable GPU"), "stderr: %s", r.stderr)
	}
	for _, quiet := range []string{"--json", "-q"} {
		r = kdbuild(t, quiet, smallScene)
		require.Equal(t, exitOK, r.code)
		assert.Empty(t, r.stderr, "%s keeps stderr quiet", quiet)
	}
}

func TestGPUWithoutDeviceIsAnError(t *testing.T) {
	d := kdbuild(t, "devices", "--json")
	require.Equal(t, exitOK, d.code)
	if usable, _ := decode(t, d.stdout)["gpu_usable"].(bool); usable {
		t.Skip("this machine has a usable GPU")
	}
	obj := writeFile(t, "quad.obj", quadOBJ)
	r := kdbuild(t, "--device", "gpu", obj)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "gpu")
}

func TestDevices(t *testing.T) {
	r := kdbuild(t, "devices")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stdout, "CUDA driver")
	assert.Contains(t, r.stdout, "--device auto uses")

	r = kdbuild(t, "devices", "--json")
	require.Equal(t, exitOK, r.code)
	m := decode(t, r.stdout)
	assert.Equal(t, "array", kind(m["devices"]))
	if m["gpu_usable"] == true {
		assert.Equal(t, "gpu", m["auto"])
		assert.NotEmpty(t, m["devices"])
	} else {
		assert.Equal(t, "cpu", m["auto"])
		assert.NotEmpty(t, m["reason"], "no GPU: the reason is given")
		assert.Contains(t, r.stdout, "reason")
	}
}

func TestBunnyTriangles(t *testing.T) {
	bunny := filepath.Join("..", "..", "..", "shared", "scenes", "stanford-bunny.obj")
	if _, err := os.Stat(bunny); err != nil {
		t.Skipf("shared scenes absent: %v", err)
	}
	r := kdbuild(t, bunny, "--json", "--no-build")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	m := decode(t, r.stdout)
	tris, _ := lookup(m, "scene.triangles")
	assert.Equal(t, 69451.0, tris)
	mbs, _ := lookup(m, "load.mb_per_s")
	assert.Greater(t, mbs.(float64), 0.0)
}

func TestProceduralSceneArgument(t *testing.T) {
	r := kdbuild(t, "proc:", "--no-build", "--json")
	// An empty spec is either a documented default or a clear error; never a
	// crash, and always file-named in --json.
	if r.code == exitOK {
		m := decode(t, r.stdout)
		f, _ := lookup(m, "scene.file")
		assert.Equal(t, "proc:", f)
	} else {
		assert.Equal(t, exitError, r.code)
		m := decode(t, r.stdout)
		assert.Equal(t, "proc:", m["file"])
		assert.NotEmpty(t, m["error"])
	}
	r = kdbuild(t, "proc:no-such-generator", "--no-build")
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "no-such-generator")
}
