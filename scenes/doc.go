// Package scenes loads triangle meshes (OBJ, PLY, STL, optionally gzipped)
// by streaming from an io.Reader with exact errors (file, line, what was
// wrong), and makes deterministic procedural scenes from a seed.
package scenes
