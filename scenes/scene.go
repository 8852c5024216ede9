package scenes

import "github.com/go-gl/mathgl/mgl32"

// Bounds is an axis-aligned box. An empty box has Min > Max on every axis
// (see EmptyBounds).
type Bounds struct {
	Min, Max mgl32.Vec3
}

// Scene is a triangle mesh as loaded: float32 vertex positions, triangles as
// three vertex indices, and for every triangle the index of the face of the
// source file it came from (fan triangulation turns one face into several
// triangles), so that a hit maps back to the file.
type Scene struct {
	Name     string       // file name or procedural description
	Format   string       // "obj", "ply", "stl" or "procedural"
	Verts    []mgl32.Vec3 // vertex positions
	Tris     [][3]uint32  // vertex indices per triangle, in file order
	Faces    []uint32     // source face (0-based, in file order) of each triangle
	Bounds   Bounds       // min/max over all vertices
	Stats    Stats
	Warnings []string // one line per warning, with file and line where known
	// Meshes tile Tris in order: one mesh for a plain file, one per glTF
	// mesh instance or OBJ object (when Names are kept), one per file and
	// more after Merge. See MeshOf.
	Meshes []Mesh
	// Attr holds normals, texture coordinates, colours and names when
	// LoadOptions asked for them; nil otherwise.
	Attr *Attributes
}

// Stats counts what loading saw.
type Stats struct {
	Bytes               int64          // bytes read from the (decompressed) input
	Faces               int            // faces in the file (statements or elements)
	SkippedFaces        int            // faces of fewer than 3 vertices, skipped
	DegenerateTriangles int            // triangles of zero area (kept)
	Skipped             map[string]int // statements or elements skipped, by keyword
	// Attributes counts, by kind (KindNormals, ...), the attributes the
	// file had and those kept; nil when the file had none.
	Attributes     map[string]AttrStat
	Primitives     int // glTF primitive instances read (0 for other formats)
	WeldedVertices int // vertices removed by LoadOptions.Weld
}
