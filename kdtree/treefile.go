package kdtree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// Tree files (.kdt) hold a built tree with the scene it indexes, so that a
// tree is built once and loaded many times. The layout, all little-endian:
//
//	offset  size  field
//	0       8     magic "\x89KDT\r\n\x1a\n" (a high byte and line ends, so
//	              that text-mode copies and foreign files are caught)
//	8       4     format version (TreeFileVersion)
//	12      4     header size (128)
//	16      8×6   counts: nodes, refs, vertices, triangles, faces (0 or
//	              the triangle count), meta bytes
//	64      4×6   crc32-Castagnoli of each section, in section order
//	88      4×6   build options: TraversalCost, IntersectCost, EmptyBonus
//	              (float32), SmallNode, Bins, MaxDepth (uint32)
//	112     4     build option MaxDuplication (int32; version 1 files:
//	              none, read as -1: no budget)
//	116     4×2   reserved, zero
//	124     4     crc32-Castagnoli of bytes 0..124
//	128           sections, each starting at a multiple of 64 bytes, the
//	              gaps zero: nodes (Node, 8 bytes), refs (uint32), vertices
//	              (3×float32), triangles (3×uint32), faces (uint32), meta
//
// The meta section (treefile_meta.go) holds the root box, the statistics
// and the scene's name, format, bounds, load counts and meshes. Every section is
// an array of 4-byte words, so loading reads each one straight into its
// slice: a few large reads. The scene fingerprint (SceneFingerprint) is
// the pair of the vertex and triangle sections' checksums.
const TreeFileVersion = 2

// treeMagic opens every tree file.
var treeMagic = [8]byte{0x89, 'K', 'D', 'T', '\r', '\n', 0x1a, '\n'}

const (
	treeHeaderSize = 128
	sectionAlign   = 64
	maxMetaBytes   = 1 << 20 // far above any real meta section
	numSections    = 6
	growChunk      = 4 << 20 // bytes read at a time when the input size is unknown
)

// section names, in file order, for error messages.
var sectionNames = [numSections]string{"nodes", "refs", "vertices", "triangles", "faces", "meta"}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// treeHeader is the decoded fixed header.
type treeHeader struct {
	version uint32
	counts  [numSections]uint64 // elements per section (bytes for meta)
	crcs    [numSections]uint32
	opts    [6]uint32 // options as stored (float bits for the costs)
	maxDup  int32     // Options.MaxDuplication
}

// elemSize is the bytes per element of each section.
var elemSize = [numSections]uint64{8, 4, 12, 12, 4, 1}

// ErrNotTreeFile is returned (wrapped) by ReadTree for input that is not a
// kdbuild tree file at all.
var ErrNotTreeFile = errors.New("not a kdbuild tree file")

// SceneFingerprint identifies a scene's geometry: the crc32-Castagnoli of
// its vertex positions (high 32 bits) and of its triangle indices (low 32
// bits), as little-endian float32 and uint32 words. A tree file stores the
// fingerprint of its scene, so a tree can be matched with a scene file.
func SceneFingerprint(s *scenes.Scene) uint64 {
	return uint64(crcWords(s.Verts))<<32 | uint64(crcWords(s.Tris))
}

// Fingerprint returns SceneFingerprint of the tree's scene.
func (t *Tree) Fingerprint() uint64 {
	if t.Scene == nil {
		return 0
	}
	return SceneFingerprint(t.Scene)
}

// Options returns the build options the tree was built with, defaults
// resolved, without Executor and Progress. A tree made by NewTree has the
// zero Options.
func (t *Tree) Options() Options { return t.opts }

// WriteTo writes t as a tree file (the .kdt format above) and returns the
// bytes written. The tree needs its scene. The tree-shape statistics are
// computed first when the tree has not done so yet.
func (t *Tree) WriteTo(w io.Writer) (int64, error) {
	if t.Scene == nil {
		return 0, errors.New("kdtree: WriteTo of a tree without a scene")
	}
	s := t.Scene
	faces := s.Faces
	if len(faces) != len(s.Tris) {
		faces = nil
	}
	meta := encodeMeta(t.Bounds, t.Stats(), s)
	words := [numSections - 1][]byte{
		wordBytes(t.Nodes), wordBytes(t.Refs), wordBytes(s.Verts), wordBytes(s.Tris), wordBytes(faces),
	}
	var h treeHeader
	h.version = TreeFileVersion
	for i, b := range words {
		h.counts[i] = uint64(len(b)) / elemSize[i]
		h.crcs[i] = crc32.Checksum(b, castagnoli)
	}
	h.counts[5], h.crcs[5] = uint64(len(meta)), crc32.Checksum(meta, castagnoli)
	o := t.opts
	h.opts = [6]uint32{math.Float32bits(o.TraversalCost), math.Float32bits(o.IntersectCost),
		math.Float32bits(o.EmptyBonus), uint32(o.SmallNode), uint32(o.Bins), uint32(o.MaxDepth)}
	h.maxDup = int32(o.MaxDuplication) // resolved: -1 or in [1, MaxInt32]

	cw := &countWriter{w: w}
	cw.write(h.encode())
	for _, b := range words {
		cw.pad()
		if !littleEndian {
			b = swapWords(b)
		}
		cw.write(b)
	}
	cw.pad()
	cw.write(meta)
	return cw.n, cw.err
}

// countWriter writes to w, counting bytes and keeping the first error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) write(b []byte) {
	if c.err != nil || len(b) == 0 {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

// pad writes zeros up to the next multiple of sectionAlign.
func (c *countWriter) pad() {
	var zeros [sectionAlign]byte
	if k := padding(uint64(c.n)); k > 0 && c.err == nil {
		n, err := c.w.Write(zeros[:k])
		c.n += int64(n)
		c.err = err
	}
}

func padding(off uint64) uint64 { return (sectionAlign - off%sectionAlign) % sectionAlign }

// encode returns the 128 header bytes.
func (h *treeHeader) encode() []byte {
	b := make([]byte, treeHeaderSize)
	le := binary.LittleEndian
	copy(b, treeMagic[:])
	le.PutUint32(b[8:], h.version)
	le.PutUint32(b[12:], treeHeaderSize)
	for i := range h.counts {
		le.PutUint64(b[16+8*i:], h.counts[i])
		le.PutUint32(b[64+4*i:], h.crcs[i])
		le.PutUint32(b[88+4*i:], h.opts[i])
	}
	le.PutUint32(b[112:], uint32(h.maxDup))
	le.PutUint32(b[124:], crc32.Checksum(b[:124], castagnoli))
	return b
}

// decodeHeader checks the magic, the version and the header checksum.
func decodeHeader(b []byte) (*treeHeader, error) {
	le := binary.LittleEndian
	if [8]byte(b[:8]) != treeMagic {
		return nil, fmt.Errorf("kdtree: %w (bad magic % x)", ErrNotTreeFile, b[:8])
	}
	h := &treeHeader{version: le.Uint32(b[8:])}
	if h.version > TreeFileVersion {
		return nil, fmt.Errorf("kdtree: tree file format version %d is newer than this kdbuild reads (%d): rebuild the tree or update kdbuild",
			h.version, TreeFileVersion)
	}
	if h.version == 0 {
		return nil, fmt.Errorf("kdtree: tree file format version 0 is not valid")
	}
	if got, want := crc32.Checksum(b[:124], castagnoli), le.Uint32(b[124:]); got != want {
		return nil, fmt.Errorf("kdtree: tree file header corrupt (checksum %08x, stored %08x)", got, want)
	}
	if size := le.Uint32(b[12:]); size != treeHeaderSize {
		return nil, fmt.Errorf("kdtree: tree file header size %d, want %d", size, treeHeaderSize)
	}
	for i := range h.counts {
		h.counts[i] = le.Uint64(b[16+8*i:])
		h.crcs[i] = le.Uint32(b[64+4*i:])
		h.opts[i] = le.Uint32(b[88+4*i:])
	}
	reserved := 116
	h.maxDup = int32(le.Uint32(b[112:]))
	if h.version == 1 {
		reserved, h.maxDup = 112, -1 // built before the duplication budget
	}
	for _, r := range b[reserved:124] {
		if r != 0 {
			return nil, fmt.Errorf("kdtree: tree file header reserved bytes not zero")
		}
	}
	return h, h.checkCounts()
}

// checkCounts bounds the counts by what the tree and scene types allow,
// so that the sizes computed from them cannot overflow.
func (h *treeHeader) checkCounts() error {
	c := h.counts
	limits := [numSections]uint64{MaxChildIndex - 1, math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32, maxMetaBytes}
	for i, n := range c {
		if n > limits[i] {
			return fmt.Errorf("kdtree: tree file %s count %d over the limit %d", sectionNames[i], n, limits[i])
		}
	}
	if c[4] != 0 && c[4] != c[3] {
		return fmt.Errorf("kdtree: tree file has %d face indices for %d triangles", c[4], c[3])
	}
	return nil
}

// bodySize is the bytes after the header that the counts call for.
func (h *treeHeader) bodySize() uint64 {
	off := uint64(treeHeaderSize)
	for i, n := range h.counts {
		off += padding(off) + n*elemSize[i]
	}
	return off - treeHeaderSize
}

// crcWords is the crc32-Castagnoli of a slice of 4-byte words as
// little-endian bytes.
func crcWords[T any](s []T) uint32 {
	b := wordBytes(s)
	if !littleEndian {
		b = swapWords(b)
	}
	return crc32.Checksum(b, castagnoli)
}

// wordBytes views s as bytes (no copy). T must be made of 4-byte words.
func wordBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// littleEndian reports the host's byte order; tree files are little-endian.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// swapWords returns a copy of b with every 4-byte word reversed.
func swapWords(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+4 <= len(b); i += 4 {
		out[i], out[i+1], out[i+2], out[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return out
}

// The element sizes the sections assume (a compile error otherwise).
var (
	_ = [1]struct{}{}[unsafe.Sizeof(mgl32.Vec3{})-12]
	_ = [1]struct{}{}[unsafe.Sizeof([3]uint32{})-12]
	_ = [1]struct{}{}[unsafe.Sizeof(Node{})-8]
)
