package scenes

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Load reads a mesh file, positions only. The format comes from the
// extension (.obj, .ply, .stl, .gltf, .glb, each optionally followed by .gz);
// gzip input is also recognised by its magic bytes whatever the name, and
// decompressed while streaming. Parse problems are returned as *ParseError
// naming path and line (or element, byte offset or glTF accessor). Load
// uses DefaultLimits; LoadWith takes other limits and attributes.
func Load(path string) (*Scene, error) {
	return LoadWith(path, LoadOptions{})
}

// LoadWith is Load keeping what opt asks for, within opt.Limits; a glTF
// file's relative buffer URIs are resolved against the file's folder unless
// opt.Dir is set. A FIFO or character device is read without waiting for
// ever: see Limits.Wait.
func LoadWith(path string, opt LoadOptions) (*Scene, error) {
	f, err := openInput(path, opt.Limits.resolved().Wait)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opt.Dir == "" {
		opt.Dir = filepath.Dir(path)
	}
	return LoadReaderWith(f, path, opt)
}

// LoadReader is Load for an already open stream; name supplies the extension
// and the file name used in errors.
func LoadReader(r io.Reader, name string) (*Scene, error) {
	return LoadReaderWith(r, name, LoadOptions{})
}

// LoadAll loads every path with opt and merges them (Merge): one mesh per
// file, or the file's own meshes. The first error is returned.
func LoadAll(paths []string, opt LoadOptions) (*Scene, error) {
	parts := make([]*Scene, 0, len(paths))
	for _, p := range paths {
		s, err := LoadWith(p, opt)
		if err != nil {
			return nil, err
		}
		parts = append(parts, s)
	}
	return Merge(parts...)
}

// LoadReaderWith is LoadWith for an already open stream; name supplies the
// extension and the file name used in errors. opt.Format, when set, names
// the format instead of name's extension (standard input); opt.Limits bound
// the input read and the scene kept (a *LimitError inside the *ParseError
// says which limit stopped the load).
func LoadReaderWith(r io.Reader, name string, opt LoadOptions) (*Scene, error) {
	format := formatOf(name)
	if opt.Format != "" {
		format = formatOf("." + opt.Format)
		if format == "" {
			return nil, &ParseError{File: name, Msg: fmt.Sprintf("unknown mesh format %q (want obj, ply, stl or gltf)", opt.Format)}
		}
	}
	if format == "" {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("unknown mesh format %q (want .obj, .ply, .stl, .gltf or .glb, optionally .gz)", filepath.Ext(name))}
	}
	lim := opt.Limits.resolved()
	raw := &countingReader{r: r}
	br := bufio.NewReaderSize(raw, 1<<16)
	magic, _ := br.Peek(2)
	src := &boundedReader{r: br, lim: lim, name: name}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &ParseError{File: name, Msg: "gzip: " + err.Error()}
		}
		defer zr.Close()
		src.r, src.compressed = zr, raw
	}
	var s *Scene
	var err error
	switch format {
	case "obj":
		s, err = loadOBJ(src, name, &opt)
	case "ply":
		s, err = loadPLY(src, name, &opt)
	case "stl":
		s, err = loadSTL(src, name, lim)
	case "gltf":
		s, err = loadGLTF(src, name, &opt)
	}
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			err = &ParseError{File: name, Msg: err.Error(), Err: err}
		}
		return nil, err
	}
	if err := lim.checkScene(s, 0); err != nil {
		return nil, err // the loaders check every few thousand elements
	}
	if opt.Weld {
		s.Weld()
	}
	return s, nil
}

// formatOf maps a file name to "obj", "ply", "stl", "gltf" (also for .glb)
// or "".
func formatOf(name string) string {
	n := strings.ToLower(name)
	n = strings.TrimSuffix(n, ".gz")
	switch filepath.Ext(n) {
	case ".obj":
		return "obj"
	case ".ply":
		return "ply"
	case ".stl":
		return "stl"
	case ".gltf", ".glb":
		return "gltf"
	}
	return ""
}
