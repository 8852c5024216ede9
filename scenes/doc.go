// Package scenes loads triangle meshes (OBJ, PLY, STL, optionally gzipped)
// by streaming from an io.Reader with exact errors (file, line, what was
// wrong), and makes deterministic procedural scenes from a seed.
//
// Loading: Load(path) picks the format from the extension (.obj, .ply, .stl,
// .gltf, .glb, each optionally .gz; gzip is also recognised by its magic
// bytes); LoadOBJ, LoadPLY, LoadSTL and LoadGLTF read one format from any
// io.Reader. Every loader returns a *Scene whose triangles index Verts,
// whose Faces map each triangle to the face of the file it came from, whose
// Meshes tile the triangles (MeshOf maps a triangle to its mesh), with
// Bounds, Stats and Warnings filled, or a *ParseError ("file:line: msg");
// no input makes a loader panic (the Fuzz targets check this).
//
// Attributes: LoadWith and LoadReaderWith take LoadOptions; by default only
// positions are kept (the fastest load) and Stats.Attributes counts what the
// file had. Asked for, normals, texture coordinates, colours and group,
// object and material names come in Scene.Attr, indexed per triangle
// corner or per triangle. LoadOptions.Weld (or Scene.Weld) shares vertices
// of identical positions. Merge and LoadAll join scenes into one whose
// meshes are the parts'.
//
// Procedural scenes: Icosphere, Soup, Grid, Coplanar, Identical,
// HugeAmongTiny, Slivers, Default (the tool's scene when given no file), and
// Procedural(spec) to build any of them from a string such as "soup:1000:42".
//
// Files: scene.go (types), finish.go (bounds, degenerate triangles,
// Validate), load.go (format choice, gzip), obj.go, ply.go, stl.go (the
// parsers), obj_attr.go, obj_floats.go, ply_attr.go (attributes), gltf*.go
// (glTF: document walk, container and buffers, accessors, transforms,
// attributes), attributes.go (Attributes, LoadOptions), mesh.go (Mesh,
// MeshOf, Merge), weld.go, chunks.go, number.go (exact float32 and integer
// parsing), procedural.go, errors.go.
package scenes
