package kdtree

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// ReadTree reads a tree file written by Tree.WriteTo: the tree and the
// scene it indexes (vertices, triangles, source faces, name, format,
// bounds), the statistics and the build options. The result traces and
// validates exactly like the tree that was written.
//
// Input that is not a tree file, a newer format version, a truncated
// file, a checksum mismatch, or arrays that do not form a traversable tree
// (child or reference indices out of range, a node reached twice, depth
// over MaxTreeDepth) give an error, never a panic. Memory is bounded by the
// input: when r is a file, a bytes.Reader or another io.Seeker (or has a
// Len method), the counts are checked against the bytes left before
// anything is allocated; otherwise the arrays grow as data arrives.
// ReadTree reads exactly the file's bytes from r.
func ReadTree(r io.Reader) (*Tree, error) {
	var hb [treeHeaderSize]byte
	if n, err := io.ReadFull(r, hb[:]); err != nil {
		switch {
		case n == 0 && errors.Is(err, io.EOF):
			return nil, fmt.Errorf("kdtree: %w: empty input", ErrNotTreeFile)
		case errors.Is(err, io.ErrUnexpectedEOF):
			if n >= len(treeMagic) && [8]byte(hb[:8]) == treeMagic {
				return nil, fmt.Errorf("kdtree: tree file truncated in the header (%d of %d bytes)", n, treeHeaderSize)
			}
			return nil, fmt.Errorf("kdtree: %w (%d bytes)", ErrNotTreeFile, n)
		}
		return nil, fmt.Errorf("kdtree: reading the tree file header: %w", err)
	}
	h, err := decodeHeader(hb[:])
	if err != nil {
		return nil, err
	}
	body := h.bodySize()
	left, known := remaining(r)
	if known && left < int64(body) {
		return nil, fmt.Errorf("kdtree: tree file truncated: %d bytes after the header, the counts need %d", left, body)
	}
	sr := &sectionReader{r: r, h: h, off: treeHeaderSize, known: known}
	nodes := readSection[Node](sr, 0)
	refs := readSection[uint32](sr, 1)
	verts := readSection[mgl32.Vec3](sr, 2)
	tris := readSection[[3]uint32](sr, 3)
	faces := readSection[uint32](sr, 4)
	metaBytes := readSection[byte](sr, 5)
	if sr.err != nil {
		return nil, sr.err
	}
	m, err := decodeMeta(metaBytes)
	if err != nil {
		return nil, err
	}
	sc := &scenes.Scene{
		Name: m.name, Format: m.format,
		Verts: verts,
		Tris:  tris, Faces: faces,
		Bounds: m.sceneBounds, Stats: m.sceneStats,
	}
	if err := checkTraversable(nodes, refs, sc); err != nil {
		return nil, err
	}
	t := NewTree(sc, nodes, refs, m.root, m.stats)
	t.opts = h.options()
	return t, nil
}

// options decodes the stored build options.
func (h *treeHeader) options() Options {
	f := math.Float32frombits
	return Options{
		TraversalCost: f(h.opts[0]), IntersectCost: f(h.opts[1]), EmptyBonus: f(h.opts[2]),
		SmallNode: int(h.opts[3]), Bins: int(h.opts[4]), MaxDepth: int(h.opts[5]),
	}
}

// remaining returns the bytes left in r when r can tell.
func remaining(r io.Reader) (int64, bool) {
	switch v := r.(type) {
	case interface{ Len() int }: // bytes.Reader, bytes.Buffer, strings.Reader
		return int64(v.Len()), true
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		cur, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		return fi.Size() - cur, true
	case io.Seeker:
		cur, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		end, err := v.Seek(0, io.SeekEnd)
		if err != nil {
			return 0, false
		}
		if _, err := v.Seek(cur, io.SeekStart); err != nil {
			return 0, false
		}
		return end - cur, true
	}
	return 0, false
}

// sectionReader reads the sections in order, keeping the first error.
type sectionReader struct {
	r     io.Reader
	h     *treeHeader
	off   uint64 // file offset
	known bool   // the input's size was checked against the counts
	err   error
}

// readSection reads section i into a new []T (T of elemSize[i] bytes):
// the zero padding before it, then the words, then checks its checksum.
func readSection[T any](sr *sectionReader, i int) []T {
	if sr.err != nil {
		return nil
	}
	if k := padding(sr.off); k > 0 {
		var pad [sectionAlign]byte
		if err := sr.full(pad[:k], i); err != nil {
			return nil
		}
		if !bytes.Equal(pad[:k], make([]byte, k)) {
			sr.err = fmt.Errorf("kdtree: tree file corrupt: padding before the %s section not zero", sectionNames[i])
			return nil
		}
	}
	n := sr.h.counts[i]
	var s []T
	if sr.known || n*elemSize[i] <= growChunk {
		s = make([]T, n)
		if sr.full(wordBytes(s), i) != nil {
			return nil
		}
	} else {
		// Unknown input size: grow by chunks as the data arrives, so that
		// a lying count costs at most twice the bytes really sent.
		per := growChunk / elemSize[i]
		for uint64(len(s)) < n {
			m := min(n-uint64(len(s)), max(per, uint64(len(s))))
			s = append(s, make([]T, m)...)
			if sr.full(wordBytes(s[uint64(len(s))-m:]), i) != nil {
				return nil
			}
		}
	}
	b := wordBytes(s) // as read: little-endian
	if got := crc32.Checksum(b, castagnoli); got != sr.h.crcs[i] {
		sr.err = fmt.Errorf("kdtree: tree file corrupt: %s section checksum %08x, stored %08x", sectionNames[i], got, sr.h.crcs[i])
		return nil
	}
	if !littleEndian && elemSize[i]%4 == 0 {
		copy(b, swapWords(b))
	}
	return s
}

// full reads len(b) bytes of section i.
func (sr *sectionReader) full(b []byte, i int) error {
	n, err := io.ReadFull(sr.r, b)
	sr.off += uint64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("kdtree: tree file truncated in the %s section (at byte %d of %d)", sectionNames[i], sr.off, treeHeaderSize+sr.h.bodySize())
		} else {
			err = fmt.Errorf("kdtree: reading the tree file's %s section: %w", sectionNames[i], err)
		}
		sr.err = err
	}
	return err
}

// checkTraversable makes sure traversal of the loaded arrays stays in
// range, in one pass over the nodes: nodes in depth-first order (the below
// child of node i is i+1, the above child after it, each node reached
// once), depth at most MaxTreeDepth, leaf reference ranges inside refs,
// references naming triangles and triangles naming vertices. It is the
// part of Validate that memory safety needs; the checksums catch the rest
// of any damage.
func checkTraversable(nodes []Node, refs []uint32, s *scenes.Scene) error {
	for i, tri := range s.Tris {
		if uint64(tri[0]) >= uint64(len(s.Verts)) || uint64(tri[1]) >= uint64(len(s.Verts)) || uint64(tri[2]) >= uint64(len(s.Verts)) {
			return fmt.Errorf("kdtree: tree file triangle %d index %v out of range (%d vertices)", i, tri, len(s.Verts))
		}
	}
	for k, p := range refs {
		if uint64(p) >= uint64(len(s.Tris)) {
			return fmt.Errorf("kdtree: tree file reference %d names triangle %d, the scene has %d", k, p, len(s.Tris))
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	// depth[i] is 1 + the depth of node i once a parent has named it.
	depth := make([]uint8, len(nodes))
	depth[0] = 1
	for i, n := range nodes {
		d := depth[i]
		if d == 0 {
			return fmt.Errorf("kdtree: tree file node %d is not reached from the root", i)
		}
		if n.IsLeaf() {
			if uint64(n.FirstRef())+uint64(n.RefCount()) > uint64(len(refs)) {
				return fmt.Errorf("kdtree: tree file leaf %d references [%d, +%d) beyond %d references", i, n.FirstRef(), n.RefCount(), len(refs))
			}
			continue
		}
		if int(d) > MaxTreeDepth {
			return fmt.Errorf("kdtree: tree file node %d has children below depth %d", i, MaxTreeDepth)
		}
		above := uint64(n.AboveChild())
		if above <= uint64(i)+1 || above >= uint64(len(nodes)) {
			return fmt.Errorf("kdtree: tree file node %d above child %d not in [%d, %d)", i, above, i+2, len(nodes))
		}
		if depth[i+1] != 0 || depth[above] != 0 {
			return fmt.Errorf("kdtree: tree file node %d shares a child with another node", i)
		}
		depth[i+1], depth[above] = d+1, d+1
	}
	return nil
}
