package kdtree

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// ReadTree reads a tree file written by Tree.WriteTo: the tree and the
// scene it indexes (vertices, triangles, source faces, meshes, name,
// format, bounds, load counts), the statistics and the build options.
// The scene's attributes (Scene.Attr) and warnings are not in the file:
// the loaded scene has none. The result traces and
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
		return nil, shortHeaderErr(hb[:n], err)
	}
	h, err := decodeHeader(hb[:])
	if err != nil {
		return nil, err
	}
	body := h.bodySize()
	left, known := remaining(r)
	if known && left < int64(body) {
		return nil, h.shortBodyErr(uint64(left))
	}
	buf, err := readBody(r, h, known)
	if err != nil {
		return nil, err
	}
	return h.decodeBody(buf)
}

// shortHeaderErr describes input that ended (or failed, err) after the
// bytes b, short of a header.
func shortHeaderErr(b []byte, err error) error {
	switch {
	case len(b) == 0 && errors.Is(err, io.EOF):
		return fmt.Errorf("kdtree: %w: empty input", ErrNotTreeFile)
	case errors.Is(err, io.ErrUnexpectedEOF):
		if len(b) >= len(treeMagic) && [8]byte(b[:8]) == treeMagic {
			return fmt.Errorf("kdtree: tree file truncated in the header (%d of %d bytes)", len(b), treeHeaderSize)
		}
		return fmt.Errorf("kdtree: %w (%d bytes)", ErrNotTreeFile, len(b))
	}
	return fmt.Errorf("kdtree: reading the tree file header: %w", err)
}

// shortBodyErr describes a file with only left bytes after the header.
func (h *treeHeader) shortBodyErr(left uint64) error {
	return fmt.Errorf("kdtree: tree file truncated: %d bytes after the header, the counts need %d", left, h.bodySize())
}

// decodeBody checks the body (the bodySize bytes after the header) and
// makes the tree, whose arrays are views of body: body must stay as it is
// for the tree's life (on a big-endian host its words are swapped in
// place first).
func (h *treeHeader) decodeBody(buf []byte) (*Tree, error) {
	sec, err := h.sections(buf)
	if err != nil {
		return nil, err
	}
	nodes := viewAs[Node](sec[0])
	refs := viewAs[uint32](sec[1])
	verts := viewAs[mgl32.Vec3](sec[2])
	tris := viewAs[[3]uint32](sec[3])
	faces := viewAs[uint32](sec[4])
	metaBytes := sec[5]
	if err := h.checkSections(sec, nodes, refs, tris); err != nil {
		return nil, err
	}
	m, err := decodeMeta(metaBytes)
	if err != nil {
		return nil, err
	}
	if err := checkMeshes(m.meshes, len(tris)); err != nil {
		return nil, err
	}
	sc := &scenes.Scene{
		Name: m.name, Format: m.format,
		Verts: verts,
		Tris:  tris, Faces: faces,
		Bounds: m.sceneBounds, Stats: m.sceneStats,
		Meshes: m.meshes,
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
		MaxDuplication: int(h.maxDup),
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

// readBody reads the bytes after the header into one buffer: with a known
// input size (checked already) one read, else chunks appended as they
// arrive, so that a count the data does not back costs little memory.
func readBody(r io.Reader, h *treeHeader, known bool) ([]byte, error) {
	size := h.bodySize()
	var buf []byte
	if f, ok := r.(*os.File); ok && known && size >= 2*parallelReadChunk {
		return h.readFileBody(f, size)
	}
	if known || size <= growChunk {
		buf = make([]byte, size)
		n, err := io.ReadFull(r, buf)
		return buf, h.bodyErr(uint64(n), err)
	}
	for uint64(len(buf)) < size {
		m := min(size-uint64(len(buf)), max(growChunk, uint64(len(buf))))
		buf = append(buf, make([]byte, m)...)
		n, err := io.ReadFull(r, buf[uint64(len(buf))-m:])
		if err != nil {
			return nil, h.bodyErr(uint64(len(buf))-m+uint64(n), err)
		}
	}
	return buf, nil
}

// parallelReadChunk is the least share of a file's body one goroutine of
// readFileBody reads.
const parallelReadChunk = 1 << 20

// readFileBody reads the body of a file (its size checked) with parallel
// ReadAt calls, one per core up to a chunk of parallelReadChunk each: the
// time of a load is mostly the first touch of the fresh buffer's pages,
// which the kernel then serves on every core. The file offset is left at
// the end of the body, as a sequential read leaves it.
func (h *treeHeader) readFileBody(f *os.File, size uint64) ([]byte, error) {
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("kdtree: reading the tree file: %w", err)
	}
	buf := make([]byte, size)
	parts := min(uint64(runtime.GOMAXPROCS(0)), size/parallelReadChunk)
	step := (size/parts + sectionAlign - 1) &^ (sectionAlign - 1)
	short := make([]uint64, parts) // bytes read per part, to name the section of a short read
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := min(p*step, size), min((p+1)*step, size)
		wg.Go(func() {
			n, err := f.ReadAt(buf[lo:hi], start+int64(lo))
			short[p], errs[p] = lo+uint64(n), err
		})
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			return nil, h.bodyErr(short[p], err)
		}
	}
	if _, err := f.Seek(start+int64(size), io.SeekStart); err != nil {
		return nil, fmt.Errorf("kdtree: reading the tree file: %w", err)
	}
	return buf, nil
}

// bodyErr describes a read of the body that stopped after n bytes.
func (h *treeHeader) bodyErr(n uint64, err error) error {
	if err == nil {
		return nil
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("kdtree: reading the tree file: %w", err)
	}
	off, name := uint64(treeHeaderSize), sectionNames[0]
	for i, c := range h.counts {
		off += padding(off)
		if treeHeaderSize+n >= off {
			name = sectionNames[i]
		}
		off += c * elemSize[i]
	}
	return fmt.Errorf("kdtree: tree file truncated in the %s section (%d of %d bytes)", name, treeHeaderSize+n, off)
}

// sections cuts the body into its sections, checking that the padding
// between them is zero.
func (h *treeHeader) sections(body []byte) ([numSections][]byte, error) {
	var sec [numSections][]byte
	off := uint64(0) // in body; the body starts at a multiple of sectionAlign
	for i, c := range h.counts {
		pad := padding(off)
		for _, b := range body[off : off+pad] {
			if b != 0 {
				return sec, fmt.Errorf("kdtree: tree file corrupt: padding before the %s section not zero", sectionNames[i])
			}
		}
		off += pad
		n := c * elemSize[i]
		sec[i] = body[off : off+n : off+n]
		off += n
	}
	return sec, nil
}

// viewAs views b (from a make([]byte) or a mapped file, so aligned for any
// word type, at a multiple of sectionAlign) as a []T with a capacity of its
// length.
func viewAs[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}
