// Package scenes loads triangle meshes (OBJ, PLY, STL, optionally gzipped)
// by streaming from an io.Reader with exact errors (file, line, what was
// wrong), and makes deterministic procedural scenes from a seed.
//
// Loading: Load(path) picks the format from the extension (.obj, .ply, .stl,
// each optionally .gz; gzip is also recognised by its magic bytes);
// LoadOBJ, LoadPLY and LoadSTL read one format from any io.Reader. Every
// loader returns a *Scene whose triangles index Verts, whose Faces map each
// triangle to the face of the file it came from, with Bounds, Stats and
// Warnings filled, or a *ParseError ("file:line: msg"); no input makes a
// loader panic (the Fuzz targets check this).
//
// Procedural scenes: Icosphere, Soup, Grid, Coplanar, Identical,
// HugeAmongTiny, Slivers, Default (the tool's scene when given no file), and
// Procedural(spec) to build any of them from a string such as "soup:1000:42".
//
// Files: scene.go (types), finish.go (bounds, degenerate triangles,
// Validate), load.go (format choice, gzip), obj.go, ply.go, stl.go (the
// parsers), number.go (exact float32 and integer parsing), procedural.go,
// errors.go.
package scenes
