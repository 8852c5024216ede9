package kdtree

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kdbuild/kdbuild/scenes"
)

// mapsHere reports whether ReadTreeFile maps regular files on this host.
func mapsHere() bool {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
		return littleEndian
	}
	return false
}

// readFileOf writes data to path and loads it with ReadTreeFile; a tree
// that loads is unmapped when the test ends.
func readFileOf(t testing.TB, path string, data []byte) (*Tree, error) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return loadFile(t, path)
}

// builtAndLoaded builds s's tree and returns it with the same tree saved
// to a file and loaded back with ReadTreeFile.
func builtAndLoaded(t *testing.T, s *scenes.Scene) (built, loaded *Tree) {
	t.Helper()
	built, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err = readFileOf(t, filepath.Join(t.TempDir(), "t.kdt"), saveTree(t, built))
	if err != nil {
		t.Fatal(err)
	}
	return built, loaded
}

// loadFile is ReadTreeFile(path), the tree unmapped at the test's end.
func loadFile(t testing.TB, path string) (*Tree, error) {
	t.Helper()
	tree, err := ReadTreeFile(path)
	if err == nil {
		t.Cleanup(func() { tree.Unmap() })
	}
	return tree, err
}

// TestTreeFileMappedRoundTrip: a mapped tree equals the built one (arrays,
// stats, options, scene, hits), is Mapped on unix, and Unmap is
// idempotent.
func TestTreeFileMappedRoundTrip(t *testing.T) {
	for _, spec := range []string{"icosphere:0", "icosphere:4", "soup:500:7", "soup:0"} {
		t.Run(spec, func(t *testing.T) {
			s := icoScene(t, spec)
			tree, got := builtAndLoaded(t, s)
			if got.Mapped() != mapsHere() {
				t.Fatalf("Mapped %v on %s", got.Mapped(), runtime.GOOS)
			}
			checkSameTree(t, tree, got, append(hardRays(s, 500, 5), RandomRays(s.Bounds, 500)...))
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := got.Unmap(); err != nil || got.Mapped() {
					t.Fatalf("Unmap: %v, still mapped %v", err, got.Mapped())
				}
			}
		})
	}
}

// TestTreeFileMappedTruncated: every prefix of a saved tree, and the tree
// with bytes after it, is refused by the mapped path with the errors of
// ReadTree.
func TestTreeFileMappedTruncated(t *testing.T) {
	s := icoScene(t, "soup:60:3")
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := saveTree(t, tree)
	path := filepath.Join(t.TempDir(), "t.kdt")
	for n := 0; n < len(data); n++ {
		_, err := readFileOf(t, path, data[:n])
		_, want := ReadTree(bytes.NewReader(data[:n]))
		if err == nil || err.Error() != want.Error() {
			t.Fatalf("prefix of %d of %d bytes: %v, ReadTree says %v", n, len(data), err, want)
		}
	}
	if _, err := readFileOf(t, path, append(slices.Clone(data), 0)); err == nil || !strings.Contains(err.Error(), "1 bytes after the tree") {
		t.Fatalf("a byte after the tree: %v", err)
	}
	if _, err := readFileOf(t, path, data); err != nil {
		t.Fatal(err)
	}
}

// TestTreeFileMappedBunnyDamage: the sampled truncation points and byte
// flips of TestTreeFileBunnyDamage, on a file read by ReadTreeFile (the
// flips made in place, the cuts from the longest down).
func TestTreeFileMappedBunnyDamage(t *testing.T) {
	_, data := bunnyTreeFile(t)
	path := filepath.Join(t.TempDir(), "bunny.kdt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cuts, flips := bunnyDamage(len(data))
	for _, fl := range flips {
		if _, err := f.WriteAt([]byte{data[fl.at] ^ fl.xor}, int64(fl.at)); err != nil {
			t.Fatal(err)
		}
		if _, err := loadFile(t, path); err == nil {
			t.Fatalf("byte %d of %d xor %#x accepted", fl.at, len(data), fl.xor)
		}
		if _, err := f.WriteAt(data[fl.at:fl.at+1], int64(fl.at)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := loadFile(t, path); err != nil {
		t.Fatalf("undamaged file rejected: %v", err)
	}
	slices.Sort(cuts)
	for _, n := range slices.Backward(cuts) {
		if err := f.Truncate(int64(n)); err != nil {
			t.Fatal(err)
		}
		if _, err := loadFile(t, path); err == nil {
			t.Fatalf("prefix of %d of %d bytes accepted", n, len(data))
		}
	}
}

// TestTreeFileMappedNotFiles: a missing path, a directory and an empty
// file give clear errors.
func TestTreeFileMappedNotFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadTreeFile(filepath.Join(dir, "missing.kdt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := ReadTreeFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory: %v", err)
	}
	if _, err := readFileOf(t, filepath.Join(dir, "empty.kdt"), nil); !errors.Is(err, ErrNotTreeFile) {
		t.Fatalf("empty file: %v", err)
	}
}

// TestTreeFileMappedShared: every shared scene's tree loads mapped with
// the built tree's arrays and hits.
func TestTreeFileMappedShared(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, file := range sharedFiles {
		t.Run(file, func(t *testing.T) {
			s := loadShared(t, file)
			tree, got := builtAndLoaded(t, s)
			checkSameTree(t, tree, got, strided(RandomRays(s.Bounds, anchorRandomRays), 5000))
		})
	}
}
