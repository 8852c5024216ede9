package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kdbuild/kdbuild/kdtree"
)

// treeFileExt is the extension of tree files (kdtree.Tree.WriteTo).
const treeFileExt = ".kdt"

// isTreeFile reports whether arg names a tree file by its extension.
func isTreeFile(arg string) bool { return strings.EqualFold(filepath.Ext(arg), treeFileExt) }

// treeFileJSON is the "tree_file" object of --json: the tree file written
// with -o or loaded in place of a scene.
type treeFileJSON struct {
	Path        string  `json:"path"`
	Bytes       int64   `json:"bytes"`
	Ms          float64 `json:"ms"`          // writing or loading, wall time
	Fingerprint string  `json:"fingerprint"` // kdtree.SceneFingerprint, 16 hex digits
	Written     bool    `json:"written"`     // true: written with -o; false: loaded
}

// checkNewFile fails when path exists and force is false: the check before
// the work, so that a build or render is not spent on a refused output.
func checkNewFile(path, flagName string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s %s: file exists (--force replaces it)", flagName, path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s %s: %w", flagName, path, err)
	}
	return nil
}

// writeNewFile writes path through write: into a temporary file in the
// same directory, then moved into place, so that a failed write never
// leaves a partial file behind. Without force an existing path is never
// replaced (the move is a hard link, which fails when path exists).
func writeNewFile(path, flagName string, force bool, write func(io.Writer) error) (int64, error) {
	if err := checkNewFile(path, flagName, force); err != nil {
		return 0, err
	}
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", flagName, path, err)
	}
	defer os.Remove(tmp.Name()) // gone once moved or linked; else the leftover
	mode := fs.FileMode(0o644)  // what os.Create gives under the usual umask; a replaced file keeps its own
	if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	err = tmp.Chmod(mode)
	if err == nil {
		err = write(tmp)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	var size int64
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(tmp.Name()); err == nil {
			size = fi.Size()
		}
	}
	if err == nil {
		err = moveIntoPlace(tmp.Name(), path, force)
	}
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", flagName, path, err)
	}
	return size, nil
}

// moveIntoPlace renames tmp to path; without force through a hard link,
// which refuses an existing path even one made since checkNewFile (a
// rename after a second check where links are not supported).
func moveIntoPlace(tmp, path string, force bool) error {
	if force {
		return os.Rename(tmp, path)
	}
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		if errors.Is(err, fs.ErrExist) {
			return errors.New("file exists (--force replaces it)")
		}
		return nil
	}
	if _, serr := os.Lstat(path); serr == nil {
		return errors.New("file exists (--force replaces it)")
	}
	return os.Rename(tmp, path)
}

// saveTree writes tree to path (-o).
func saveTree(tree *kdtree.Tree, path string, force bool) (*treeFileJSON, error) {
	t0 := time.Now()
	n, err := writeNewFile(path, "-o", force, func(w io.Writer) error {
		_, err := tree.WriteTo(w)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &treeFileJSON{Path: path, Bytes: n, Ms: round3(msSince(t0)), Fingerprint: fmt.Sprintf("%016x", tree.Fingerprint())}, nil
}

// loadTree loads the tree file path (mapped where the system allows:
// kdtree.ReadTreeFile). The tree is never unmapped: it lives as long as
// the command.
func loadTree(path string) (*kdtree.Tree, *treeFileJSON, error) {
	t0 := time.Now()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if fi.IsDir() {
		return nil, nil, fmt.Errorf("%s: is a directory, not a tree file", path)
	}
	tree, err := kdtree.ReadTreeFile(path)
	if err != nil {
		if _, ok := err.(*fs.PathError); ok {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return tree, &treeFileJSON{Path: path, Bytes: fi.Size(), Ms: round3(msSince(t0)), Fingerprint: fmt.Sprintf("%016x", tree.Fingerprint())}, nil
}

// runTreeFile is kdbuild file.kdt: load the tree and print its statistics
// (those of the build that made it) like a build's.
func runTreeFile(e *env, f sceneFlags, path string) int {
	if f.out != "" {
		return fail(e, f.json, path, usagef("-o with a tree file: the tree is already saved"))
	}
	tree, tf, err := loadTree(path)
	if err != nil {
		return fail(e, f.json, path, err)
	}
	l := &loaded{scene: tree.Scene, file: path, ms: tf.Ms, bytes: tf.Bytes}
	st := tree.Stats()
	r := newReport(l, st.Device, &built{stats: st, tree: tree, runs: 1, ms: st.BuildMs})
	r.TreeFile = tf
	return output(e, f.json, r, "")
}
