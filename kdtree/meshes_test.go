package kdtree

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/kdbuild/kdbuild/scenes"
)

// TestTwoSceneHitsNameTheirMesh builds one tree over two scenes joined by
// scenes.Merge and checks, for random rays, that every hit equals the
// brute-force hit and that MeshOf names the mesh, and the triangle within
// it, of the part that brute force over that part alone finds nearest.
func TestTwoSceneHitsNameTheirMesh(t *testing.T) {
	pairs := [][2]func(testing.TB) *scenes.Scene{
		{func(testing.TB) *scenes.Scene { return scenes.Icosphere(3) }, func(testing.TB) *scenes.Scene { return scenes.Soup(3000, 9) }},
		{func(tb testing.TB) *scenes.Scene { return loadShared(tb, "spot.obj") }, func(tb testing.TB) *scenes.Scene {
			return loadShared(tb, filepath.Join("gltf", "OrientationTest.glb"))
		}},
	}
	for _, pair := range pairs {
		a, b := pair[0](t), pair[1](t)
		t.Run(filepath.Base(a.Name)+"+"+filepath.Base(b.Name), func(t *testing.T) {
			checkMergedHits(t, a, b)
		})
	}
}

func checkMergedHits(t *testing.T, parts ...*scenes.Scene) {
	merged, err := scenes.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := merged.Validate(); err != nil {
		t.Fatal(err)
	}
	tree, err := Build(context.Background(), merged, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Which part each mesh came from, and where that part starts.
	var partOf, partFirst []int
	first := 0
	for pi, p := range parts {
		n := max(len(p.Meshes), 1)
		for range n {
			partOf = append(partOf, pi)
		}
		partFirst = append(partFirst, first)
		first += len(p.Tris)
	}
	hits := 0
	perPart := make([]int, len(parts))
	for _, r := range RandomRays(merged.Bounds, 3000) {
		got, ok := tree.Intersect(r)
		want, wok := IntersectBrute(merged, r)
		if ok != wok || got.T != want.T || got.Prim != want.Prim {
			t.Fatalf("ray %v: tree %v %v, brute force %v %v", r, got, ok, want, wok)
		}
		if !ok {
			continue
		}
		hits++
		mesh, local := merged.MeshOf(got.Prim)
		if mesh < 0 {
			t.Fatalf("MeshOf(%d) = %d", got.Prim, mesh)
		}
		pi := partOf[mesh]
		perPart[pi]++
		// The part alone must see the same nearest distance...
		alone, aok := IntersectBrute(parts[pi], r)
		if !aok || alone.T != got.T {
			t.Fatalf("ray %v hit mesh %d (part %d) at t=%v; the part alone: %v %v", r, mesh, pi, got.T, alone, aok)
		}
		// ...and nearer than or as near as every other part.
		for qi, q := range parts {
			if h, hok := IntersectBrute(q, r); hok && h.T < got.T {
				t.Fatalf("part %d is nearer (%v) than the hit mesh's part %d (%v)", qi, h.T, pi, got.T)
			}
		}
		// The mesh and the local index lead back to the part's triangle.
		src := merged.Meshes[mesh].FirstTri + local - partFirst[pi]
		for k := 0; k < 3; k++ {
			if merged.Verts[merged.Tris[got.Prim][k]] != parts[pi].Verts[parts[pi].Tris[src][k]] {
				t.Fatalf("hit %d: mesh %d local %d is not the part's triangle %d", got.Prim, mesh, local, src)
			}
		}
	}
	if perPart[0] == 0 || perPart[1] == 0 {
		t.Errorf("hits per part %v: the test should hit both", perPart)
	}
	t.Logf("%d rays hit, per part %v", hits, perPart)
}

// TestTreeMeshOf: a hit names its mesh and local triangle through the tree
// alone, before and after a tree file round trip; a miss and a triangle
// past the scene name none; a scene without Meshes is one mesh.
func TestTreeMeshOf(t *testing.T) {
	a, b := scenes.Icosphere(2), scenes.Soup(500, 4)
	merged, err := scenes.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Build(context.Background(), merged, Options{})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadTree(bytes.NewReader(saveTree(t, tree)))
	if err != nil {
		t.Fatal(err)
	}
	perMesh := make([]int, len(merged.Meshes))
	for _, r := range RandomRays(merged.Bounds, 2000) {
		h, hit := tree.Intersect(r)
		for _, tr := range []*Tree{tree, loaded} {
			mesh, local, ok := tr.MeshOf(h)
			if ok != hit {
				t.Fatalf("hit %v: MeshOf ok %v", h, ok)
			}
			if !hit {
				if mesh != -1 || local != -1 {
					t.Fatalf("miss: MeshOf %d, %d", mesh, local)
				}
				continue
			}
			part := []*scenes.Scene{a, b}[mesh]
			first := merged.Meshes[mesh].FirstTri
			if int(h.Prim) != first+local || local >= len(part.Tris) {
				t.Fatalf("prim %d: mesh %d (%q) local %d", h.Prim, mesh, tr.Scene.Meshes[mesh].Name, local)
			}
			for k := 0; k < 3; k++ { // the part's own triangle
				if tr.Scene.Verts[tr.Scene.Tris[h.Prim][k]] != part.Verts[part.Tris[local][k]] {
					t.Fatalf("prim %d: not triangle %d of mesh %d", h.Prim, local, mesh)
				}
			}
			if tr == tree {
				perMesh[mesh]++
			}
		}
	}
	if perMesh[0] == 0 || perMesh[1] == 0 {
		t.Fatalf("hits per mesh %v: the test should hit both", perMesh)
	}
	if _, _, ok := tree.MeshOf(Hit{Prim: uint32(len(merged.Tris))}); ok {
		t.Fatal("a prim past the triangles named a mesh")
	}
	hand := &scenes.Scene{Verts: a.Verts, Tris: a.Tris, Bounds: a.Bounds}
	one := NewTree(hand, nil, nil, a.Bounds, Stats{})
	if mesh, local, ok := one.MeshOf(Hit{Prim: 7}); mesh != 0 || local != 7 || !ok {
		t.Fatalf("scene without Meshes: %d, %d, %v", mesh, local, ok)
	}
	if _, _, ok := (&Tree{}).MeshOf(Hit{Prim: 0}); ok {
		t.Fatal("a tree without a scene named a mesh")
	}
}
