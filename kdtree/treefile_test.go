package kdtree

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kdbuild/kdbuild/scenes"
)

// saveTree writes tree to a buffer.
func saveTree(t testing.TB, tree *Tree) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := tree.WriteTo(&buf)
	if err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes()
}

// checkSameTree fails unless b (loaded) equals a (built) in every array,
// the statistics, options and scene, and traces rays to the same hits.
func checkSameTree(t *testing.T, a, b *Tree, rays []Ray) {
	t.Helper()
	switch {
	case !slices.Equal(a.Nodes, b.Nodes):
		t.Fatalf("nodes differ (%d and %d)", len(a.Nodes), len(b.Nodes))
	case !slices.Equal(a.Refs, b.Refs):
		t.Fatalf("refs differ (%d and %d)", len(a.Refs), len(b.Refs))
	case a.Bounds != b.Bounds:
		t.Fatalf("root box %v, loaded %v", a.Bounds, b.Bounds)
	case !reflect.DeepEqual(a.Stats(), b.Stats()):
		t.Fatalf("stats\n%+v\nloaded\n%+v", a.Stats(), b.Stats())
	case !reflect.DeepEqual(a.Options(), b.Options()):
		t.Fatalf("options %+v, loaded %+v", a.Options(), b.Options())
	case a.Fingerprint() != b.Fingerprint():
		t.Fatalf("fingerprint %x, loaded %x", a.Fingerprint(), b.Fingerprint())
	}
	sa, sb := a.Scene, b.Scene
	if !slices.Equal(sa.Verts, sb.Verts) || !slices.Equal(sa.Tris, sb.Tris) || !slices.Equal(sa.Faces, sb.Faces) ||
		sa.Name != sb.Name || sa.Format != sb.Format || sa.Bounds != sb.Bounds {
		t.Fatalf("scene differs: %q %q %v, loaded %q %q %v", sa.Name, sa.Format, sa.Bounds, sb.Name, sb.Format, sb.Bounds)
	}
	if sa.Stats.Faces != sb.Stats.Faces || sa.Stats.DegenerateTriangles != sb.Stats.DegenerateTriangles ||
		sa.Stats.SkippedFaces != sb.Stats.SkippedFaces || sa.Stats.Bytes != sb.Stats.Bytes ||
		sa.Stats.Primitives != sb.Stats.Primitives || sa.Stats.WeldedVertices != sb.Stats.WeldedVertices {
		t.Fatalf("scene stats %+v, loaded %+v", sa.Stats, sb.Stats)
	}
	if len(sa.Meshes) != len(sb.Meshes) || (len(sa.Meshes) > 0 && !slices.Equal(sa.Meshes, sb.Meshes)) {
		t.Fatalf("meshes %+v, loaded %+v", sa.Meshes, sb.Meshes)
	}
	for i, r := range rays {
		ha, oka := a.Intersect(r)
		hb, okb := b.Intersect(r)
		if oka != okb || ha != hb {
			t.Fatalf("ray %d: built %v %+v, loaded %v %+v", i, oka, ha, okb, hb)
		}
	}
}

// roundTrip builds s, saves and loads it, and checks the loaded tree.
func roundTrip(t *testing.T, s *scenes.Scene, rays []Ray, validate bool) {
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := saveTree(t, tree)
	got, err := ReadTree(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadTree: %v", err)
	}
	checkSameTree(t, tree, got, rays)
	if validate {
		if err := got.Validate(); err != nil {
			t.Fatalf("loaded tree: %v", err)
		}
	}
	// Again through a reader that hides its size (chunked growth).
	got, err = ReadTree(io.MultiReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatalf("ReadTree of a stream: %v", err)
	}
	checkSameTree(t, tree, got, rays[:min(len(rays), 100)])
}

func TestTreeFileRoundTripSmall(t *testing.T) {
	for _, spec := range []string{"icosphere:0", "icosphere:3", "soup:1:1", "soup:500:7", "coplanar:300", "identical:70", "huge:400", "slivers:200"} {
		t.Run(spec, func(t *testing.T) {
			s, err := scenes.Procedural(spec)
			if err != nil {
				t.Fatal(err)
			}
			rays := append(hardRays(s, 2000, 5), RandomRays(s.Bounds, 2000)...)
			roundTrip(t, s, rays, true)
		})
	}
}

// TestTreeFileMetaFields: every field of Stats but TraceBytes (computed
// by the loaded tree) survives the meta section, so that a field added to
// Stats and forgotten here fails; likewise the scene's load counts and
// meshes.
func TestTreeFileMetaFields(t *testing.T) {
	var st Stats
	v := reflect.ValueOf(&st).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(1000 + i))
		case reflect.Uint64:
			f.SetUint(uint64(2000 + i))
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.25)
		case reflect.String:
			f.SetString(fmt.Sprintf("field %d", i))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]float64{"large": 1.5, "small": 2.5}))
		default:
			t.Fatalf("Stats.%s: kind %v not covered by this test (nor perhaps by the meta section)", v.Type().Field(i).Name, f.Kind())
		}
	}
	s, err := scenes.Merge(icoScene(t, "icosphere:0"), icoScene(t, "icosphere:1"))
	if err != nil {
		t.Fatal(err)
	}
	s.Meshes[1].Name = "second \x00 mesh"
	s.Stats = scenes.Stats{Bytes: 11, Faces: 12, SkippedFaces: 13, DegenerateTriangles: 14, Primitives: 15, WeldedVertices: 16}
	m, err := decodeMeta(encodeMeta(scenes.Bounds{}, st, s))
	if err != nil {
		t.Fatal(err)
	}
	want := st
	want.TraceBytes = 0
	if !reflect.DeepEqual(m.stats, want) {
		t.Fatalf("stats\n%+v\nread back\n%+v", want, m.stats)
	}
	wantScene := s.Stats
	wantScene.Skipped = nil
	if !reflect.DeepEqual(m.sceneStats, wantScene) {
		t.Fatalf("scene stats %+v, read back %+v", wantScene, m.sceneStats)
	}
	if !slices.Equal(m.meshes, s.Meshes) {
		t.Fatalf("meshes %+v, read back %+v", s.Meshes, m.meshes)
	}
}

// TestTreeFileLimitedAndMeshes: a cut tree of a two-mesh scene loads with
// its Limited reason, its meshes and the hits of the tree that was saved.
func TestTreeFileLimitedAndMeshes(t *testing.T) {
	s, err := scenes.Merge(icoScene(t, "icosphere:1"), icoScene(t, "soup:50:3"))
	if err != nil {
		t.Fatal(err)
	}
	built, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := built.Stats()
	st.Limited = refbuild.MemoryGuardText(123, 45)
	tree := NewTree(s, built.Nodes, built.Refs, built.Bounds, st)
	tree.opts = built.opts
	got, err := ReadTree(bytes.NewReader(saveTree(t, tree)))
	if err != nil {
		t.Fatal(err)
	}
	checkSameTree(t, tree, got, RandomRays(s.Bounds, 500))
	if got.Stats().Limited != st.Limited || len(got.Scene.Meshes) != 2 {
		t.Fatalf("Limited %q, %d meshes", got.Stats().Limited, len(got.Scene.Meshes))
	}

	// Meshes that do not tile the triangles are refused.
	bad := *s
	bad.Meshes = slices.Clone(s.Meshes)
	bad.Meshes[1].NumTris--
	tree = NewTree(&bad, built.Nodes, built.Refs, built.Bounds, st)
	if _, err := ReadTree(bytes.NewReader(saveTree(t, tree))); err == nil || !strings.Contains(err.Error(), "meshes cover") {
		t.Fatalf("meshes short of the triangles: %v", err)
	}
}

func icoScene(t *testing.T, spec string) *scenes.Scene {
	t.Helper()
	s, err := scenes.Procedural(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTreeFileRoundTripEmpty: a scene without kept triangles has no nodes.
func TestTreeFileRoundTripEmpty(t *testing.T) {
	s, err := scenes.Procedural("soup:0")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s, RandomRays(scenes.Bounds{}, 10), true)
}

// TestTreeFileRoundTripShared: every shared scene, build → save → load,
// identical nodes, refs, stats and hits on strided ANCHORS rays.
func TestTreeFileRoundTripShared(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, file := range sharedFiles {
		t.Run(file, func(t *testing.T) {
			s := loadShared(t, file)
			rays := append(strided(PrimaryRays(s.Bounds), 20000), strided(RandomRays(s.Bounds, anchorRandomRays), 20000)...)
			roundTrip(t, s, rays, false)
		})
	}
}

// TestTreeFileTruncated: every prefix of a saved tree is rejected, both
// with a known size and as a stream.
func TestTreeFileTruncated(t *testing.T) {
	s, err := scenes.Procedural("soup:60:3")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := saveTree(t, tree)
	for n := 0; n < len(data); n++ {
		if _, err := ReadTree(bytes.NewReader(data[:n])); err == nil {
			t.Fatalf("prefix of %d of %d bytes accepted", n, len(data))
		}
		if _, err := ReadTree(io.MultiReader(bytes.NewReader(data[:n]))); err == nil {
			t.Fatalf("stream prefix of %d of %d bytes accepted", n, len(data))
		}
	}
}

// bunnyTreeFile returns the bunny's saved tree (Go executor), or skips.
func bunnyTreeFile(tb testing.TB) (*Tree, []byte) {
	s := loadShared(tb, "stanford-bunny.obj")
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return tree, saveTree(tb, tree)
}

// byteFlip is one damage of bunnyDamage: the byte at `at` xor `xor`.
type byteFlip struct {
	at  int
	xor byte
}

// bunnyDamage returns the damage that the bunny tests do to a file of
// size bytes (fixed seed): 208 truncation points and 300 byte flips; the
// first 100 flips hit the header and the meta section, where little
// damage is worst.
func bunnyDamage(size int) (cuts []int, flips []byteFlip) {
	g := splitMix64{state: 23}
	cuts = []int{0, 1, 7, 8, 127, 128, 129, size - 1}
	for i := 0; i < 200; i++ {
		cuts = append(cuts, int(g.next()%uint64(size)))
	}
	for i := 0; i < 300; i++ {
		var at int
		switch {
		case i < 50:
			at = int(g.next() % treeHeaderSize)
		case i < 100:
			at = size - 1 - int(g.next()%512)
		default:
			at = int(g.next() % uint64(size))
		}
		flips = append(flips, byteFlip{at, byte(g.next()%255) + 1})
	}
	return cuts, flips
}

// TestTreeFileBunnyDamage: sampled truncation points and random byte flips
// (fixed seed) of the bunny's tree file are all rejected.
func TestTreeFileBunnyDamage(t *testing.T) {
	_, data := bunnyTreeFile(t)
	cuts, flips := bunnyDamage(len(data))
	for _, n := range cuts {
		if _, err := ReadTree(bytes.NewReader(data[:n])); err == nil {
			t.Fatalf("prefix of %d of %d bytes accepted", n, len(data))
		}
	}
	bad := bytes.Clone(data)
	for _, fl := range flips {
		bad[fl.at] ^= fl.xor
		if _, err := ReadTree(bytes.NewReader(bad)); err == nil {
			t.Fatalf("byte %d of %d xor %#x accepted", fl.at, len(data), fl.xor)
		}
		bad[fl.at] ^= fl.xor
	}
	if _, err := ReadTree(bytes.NewReader(bad)); err != nil {
		t.Fatalf("undamaged copy rejected: %v", err)
	}
}

// TestTreeFileErrors: foreign, newer and lying files give clear errors.
func TestTreeFileErrors(t *testing.T) {
	s, _ := scenes.Procedural("icosphere:1")
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	good := saveTree(t, tree)
	patch := func(off int, v ...byte) []byte {
		b := bytes.Clone(good)
		copy(b[off:], v)
		return b
	}
	withCRC := func(b []byte) []byte { // re-seal a patched header
		h := crcHeader(b)
		copy(b[124:], h)
		return b
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a kdbuild tree file"},
		{"obj text", []byte("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"), "not a kdbuild tree file"},
		{"long foreign", bytes.Repeat([]byte("x"), 4096), "bad magic"},
		{"newer", patch(8, TreeFileVersion+1, 0, 0, 0), "newer than this kdbuild reads"},
		{"header bit", patch(20, good[20]^4), "header corrupt"},
		{"huge nodes", withCRC(patch(16, 0, 0, 0, 0x40)), "over the limit"},
		{"lying refs", withCRC(patch(24, 0, 0, 0, 0x10)), "truncated"},
		{"faces mismatch", withCRC(patch(48, 1)), "face indices"},
		{"section bit", patch(treeHeaderSize+3, good[treeHeaderSize+3]^1), "nodes section checksum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadTree(bytes.NewReader(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
			// The same error from a file, mapped where the system allows.
			_, ferr := readFileOf(t, filepath.Join(t.TempDir(), "t.kdt"), c.data)
			if ferr == nil || ferr.Error() != err.Error() {
				t.Fatalf("from a file: %v, ReadTree says %v", ferr, err)
			}
		})
	}
	if _, err := ReadTree(bytes.NewReader(nil)); !errors.Is(err, ErrNotTreeFile) {
		t.Fatalf("empty input: %v, want ErrNotTreeFile", err)
	}
}

// crcHeader returns the header checksum bytes of b.
func crcHeader(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b[:124], castagnoli))
}

// TestTreeFileUntraversable: a file whose checksums are right but whose
// nodes point out of range is rejected by the structural check.
func TestTreeFileUntraversable(t *testing.T) {
	s, _ := scenes.Procedural("icosphere:2")
	tree, err := Build(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(n []Node, r []uint32){
		"above out of range": func(n []Node, r []uint32) { n[0].W1 = uint32(len(n))<<2 | n[0].W1&3 },
		"above backwards":    func(n []Node, r []uint32) { n[0].W1 = 1<<2 | n[0].W1&3 },
		"leaf past refs": func(n []Node, r []uint32) {
			for i := range n {
				if n[i].IsLeaf() {
					n[i] = LeafNode(uint32(len(r)), 1)
					return
				}
			}
		},
		"ref past tris": func(n []Node, r []uint32) { r[0] = uint32(len(s.Tris)) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			nodes, refs := append([]Node(nil), tree.Nodes...), append([]uint32(nil), tree.Refs...)
			damage(nodes, refs)
			bad := NewTree(s, nodes, refs, tree.Bounds, tree.Stats())
			var buf bytes.Buffer
			if _, err := bad.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadTree(&buf); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestTreeFileFromDisk: writing and reading an *os.File (the sized
// path, in parallel chunks for the larger tree): two trees written one
// after the other read back in turn, so each read leaves the file offset
// at the end of its tree.
func TestTreeFileFromDisk(t *testing.T) {
	var trees []*Tree
	for _, spec := range []string{"icosphere:6", "icosphere:2"} {
		s, err := scenes.Procedural(spec)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := Build(context.Background(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		trees = append(trees, tree)
	}
	path := filepath.Join(t.TempDir(), "t.kdt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, tree := range trees {
		n, err := tree.WriteTo(f)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if sizes[0] < 2*parallelReadChunk+treeHeaderSize {
		t.Fatalf("first tree file %d bytes: too small to read in parallel", sizes[0])
	}
	f, err = os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tree := range trees {
		got, err := ReadTree(f)
		if err != nil {
			t.Fatal(err)
		}
		checkSameTree(t, tree, got, RandomRays(tree.Scene.Bounds, 500))
	}
	if _, err := ReadTree(f); !errors.Is(err, ErrNotTreeFile) {
		t.Fatalf("read past the last tree: %v", err)
	}
	// Cut inside the first tree's body: refused before reading.
	if err := os.Truncate(path, sizes[0]-1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTree(f); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated file: %v", err)
	}
}

// BenchmarkReadTreeBunny loads the bunny's tree file from disk (page
// cache), read (ReadTree of the opened file: a copy in fresh memory) and
// mapped (ReadTreeFile; the Unmap inside the timed loop): compare with
// the bunny's build time (kdbuild, or BenchmarkBuild/stanford-bunny).
func BenchmarkReadTreeBunny(b *testing.B) {
	_, data := bunnyTreeFile(b)
	path := filepath.Join(b.TempDir(), "bunny.kdt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ReadTree(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("mapped", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			tree, err := ReadTreeFile(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := tree.Unmap(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
