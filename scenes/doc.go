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
// Hostile input: every load is bounded by Limits (line and header length,
// gzip expansion, input and scene size; LoadWith and LoadReaderWith take
// them, with LoadOptions); FIFOs and devices are opened without blocking
// and waited for at most Limits.Wait. MaxExactCoordinate and
// MinExactExtent bound the coordinates for which kdtree's hits are exact;
// a load outside them warns.
//
// Files: scene.go (types), finish.go (bounds, degenerate triangles,
// Validate), load.go (format choice, gzip), input.go (LoadOptions, opening
// FIFOs and devices), limits.go (Limits, the bounded reader), obj.go,
// obj_junk.go (input that is not OBJ), ply.go, ply_header.go (header lines,
// CR endings), stl.go (the parsers), obj_attr.go, obj_floats.go,
// ply_attr.go (attributes), gltf*.go (glTF: document walk, container and
// buffers, accessors, transforms, attributes), attributes.go (Attributes),
// mesh.go (Mesh, MeshOf, Merge), weld.go, chunks.go, number.go (exact
// float32 and integer parsing), coordrange.go (the exact coordinate range),
// procedural.go, errors.go.
package scenes
