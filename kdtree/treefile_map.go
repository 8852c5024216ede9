package kdtree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadTreeFile loads the tree file at path, like ReadTree of the opened
// file, with the same checks and errors (an error of opening the file is
// an *fs.PathError naming it; the others do not name it), except that the
// file must hold one tree and nothing after it.
//
// On Linux and the other unix systems (little-endian hosts) a regular
// file is mapped read-only and not copied: the tree's Nodes and Refs and
// its scene's Verts, Tris and Faces are views of the mapping (Mapped
// reports it), and a load costs the checks alone, the checksums and the
// node check on all cores. Elsewhere, for a file that is not a regular one
// (a pipe, a device) or when the system refuses to map it, the file is
// read into memory instead.
//
// A mapped tree's contract:
//   - its arrays are read-only: writing to them faults and the process
//     dies (Go cannot recover from it). Nothing in kdtree writes to a
//     tree's arrays; scenes.Scene.Weld, for one, would.
//   - the mapping lives until Unmap, or else as long as the process. It
//     costs no heap: the pages are the file's in the page cache, which the
//     kernel may drop under memory pressure and read again.
//   - the file must not be truncated or rewritten in place while mapped:
//     the checksums are checked once, at load, and reading past a
//     truncated end faults. Writing a new file and renaming it over the old
//     one (as kdbuild -o --force does) is safe.
func ReadTreeFile(path string) (*Tree, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory, not a tree file")}
	}
	if !fi.Mode().IsRegular() {
		return ReadTree(f)
	}
	if size := fi.Size(); size >= treeHeaderSize && littleEndian {
		if data, err := mapFile(f, size); err == nil {
			t, err := treeFromFile(data)
			if err != nil {
				unmapFile(data)
				return nil, err
			}
			t.mmap = data
			return t, nil
		}
	}
	t, err := ReadTree(f)
	if err != nil {
		return nil, err
	}
	if off, err := f.Seek(0, io.SeekCurrent); err == nil && off < fi.Size() {
		return nil, trailingErr(fi.Size(), off)
	}
	return t, nil
}

// treeFromFile checks the bytes of a whole tree file and makes the tree,
// whose arrays are views of data.
func treeFromFile(data []byte) (*Tree, error) {
	if len(data) < treeHeaderSize {
		return nil, shortHeaderErr(data, io.ErrUnexpectedEOF)
	}
	h, err := decodeHeader(data[:treeHeaderSize])
	if err != nil {
		return nil, err
	}
	body, size := data[treeHeaderSize:], h.bodySize()
	switch {
	case uint64(len(body)) < size:
		return nil, h.shortBodyErr(uint64(len(body)))
	case uint64(len(body)) > size:
		return nil, trailingErr(int64(len(data)), treeHeaderSize+int64(size))
	}
	return h.decodeBody(body)
}

// trailingErr describes a file of size bytes whose tree ends at end.
func trailingErr(size, end int64) error {
	return fmt.Errorf("kdtree: tree file has %d bytes after the tree's %d (one tree per file)", size-end, end)
}

// Mapped reports whether the tree's arrays are views of a mapped tree
// file (ReadTreeFile); see ReadTreeFile for what that implies.
func (t *Tree) Mapped() bool { return t.mmap != nil }

// Unmap releases the mapping of a tree that ReadTreeFile mapped. After it
// the tree, its Scene and every slice taken from them must not be used:
// their memory is gone (reading it faults, or sees whatever the address
// holds next). It does nothing for a tree that is not mapped, or a second
// time. It must not run concurrently with any other use of the tree.
// Close (the device copy) does not unmap.
func (t *Tree) Unmap() error {
	m := t.mmap
	if m == nil {
		return nil
	}
	t.mmap = nil
	if err := unmapFile(m); err != nil {
		return fmt.Errorf("kdtree: Unmap: %w", err)
	}
	return nil
}
