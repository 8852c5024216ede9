package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTreeFileCLI: -o writes the tree, refuses to replace it without
// --force, and kdbuild file.kdt prints the same tree statistics.
func TestTreeFileCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ico.kdt")
	r := kdbuild(t, "proc:icosphere:3", "--device", "cpu", "-o", out, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	built := decode(t, r.stdout)
	assert.Equal(t, true, mustLookup(t, built, "tree_file.written"))
	fi, err := os.Stat(out)
	require.NoError(t, err)
	assert.EqualValues(t, fi.Size(), mustLookup(t, built, "tree_file.bytes"))

	r = kdbuild(t, "proc:icosphere:3", "--device", "cpu", "-o", out)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "file exists (--force replaces it)")
	r = kdbuild(t, "proc:icosphere:2", "--device", "cpu", "-o", out, "--force", "-q")
	require.Equal(t, 0, r.code, r.stderr)
	r = kdbuild(t, "proc:icosphere:3", "--device", "cpu", "-o", out, "--force", "-q")
	require.Equal(t, 0, r.code, r.stderr)
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*.tmp"))
	assert.Empty(t, left, "temporary files left behind")

	r = kdbuild(t, out, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	loaded := decode(t, r.stdout)
	for _, k := range []string{"tree.nodes", "tree.leaves", "tree.references", "tree.sah_cost", "tree.max_depth",
		"scene.triangles", "scene.vertices", "scene.format", "tree_file.fingerprint"} {
		assert.Equal(t, mustLookup(t, built, k), mustLookup(t, loaded, k), k)
	}
	assert.Equal(t, false, mustLookup(t, loaded, "tree_file.written"))
	r = kdbuild(t, out)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "tree file   "+out)
}

// TestTreeFileCLIMeshes: a tree file of two scenes reports the same
// meshes and tree.limited as the build that wrote it.
func TestTreeFileCLIMeshes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "two.kdt")
	r := kdbuild(t, "proc:icosphere:1", "proc:soup:40:2", "--device", "cpu", "-o", out, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	built := decode(t, r.stdout)
	r = kdbuild(t, out, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	loaded := decode(t, r.stdout)
	meshes, _ := mustLookup(t, built, "scene.meshes").([]any)
	assert.Len(t, meshes, 2)
	for _, k := range []string{"scene.meshes", "tree.limited"} {
		assert.Equal(t, mustLookup(t, built, k), mustLookup(t, loaded, k), k)
	}
}

func mustLookup(t *testing.T, m map[string]any, key string) any {
	t.Helper()
	v, ok := lookup(m, key)
	require.True(t, ok, "no key %s", key)
	return v
}

// TestTreeFileCLIErrors: bad tree files are clear errors, exit code 1.
func TestTreeFileCLIErrors(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "obj.kdt")
	require.NoError(t, os.WriteFile(foreign, []byte(quadOBJ), 0o644))
	good := filepath.Join(dir, "good.kdt")
	require.Equal(t, 0, kdbuild(t, "proc:icosphere:1", "--device", "cpu", "-o", good, "-q").code)
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	cut := filepath.Join(dir, "cut.kdt")
	require.NoError(t, os.WriteFile(cut, data[:len(data)/2], 0o644))
	for file, want := range map[string]string{
		foreign:                           "not a kdbuild tree file",
		cut:                               "truncated",
		filepath.Join(dir, "missing.kdt"): "no such file",
	} {
		r := kdbuild(t, file)
		assert.Equal(t, 1, r.code, file)
		assert.Contains(t, r.stderr, want, file)
	}
	r := kdbuild(t, good, "-o", filepath.Join(dir, "again.kdt"))
	assert.Equal(t, 2, r.code)
	assert.True(t, strings.Contains(r.stderr, "already saved"), r.stderr)
}

// TestWriteNewFileMode: a new file is readable by others like os.Create's
// (not the 0600 of a temporary file); a replaced one keeps its mode.
func TestWriteNewFileMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.bin")
	write := func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }
	_, err := writeNewFile(p, "--out", false, write)
	require.NoError(t, err)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	require.NoError(t, os.Chmod(p, 0o600))
	_, err = writeNewFile(p, "--out", true, write)
	require.NoError(t, err)
	fi, err = os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}
