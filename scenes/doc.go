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
// CR endings), stl.go (the parsers), number.go (exact float32 and integer
// parsing), coordrange.go (the exact coordinate range), procedural.go,
// errors.go.
package scenes
