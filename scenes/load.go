package scenes

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Load reads a mesh file. The format comes from the extension (.obj, .ply,
// .stl, each optionally followed by .gz); gzip input is also recognised by its
// magic bytes whatever the name, and decompressed while streaming.
// Parse problems are returned as *ParseError naming path and line.
func Load(path string) (*Scene, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadReader(f, path)
}

// LoadReader is Load for an already open stream; name supplies the extension
// and the file name used in errors.
func LoadReader(r io.Reader, name string) (*Scene, error) {
	format := formatOf(name)
	if format == "" {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("unknown mesh format %q (want .obj, .ply or .stl, optionally .gz)", filepath.Ext(name))}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(2)
	var src io.Reader = br
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &ParseError{File: name, Msg: "gzip: " + err.Error()}
		}
		defer zr.Close()
		src = zr
	}
	var s *Scene
	var err error
	switch format {
	case "obj":
		s, err = LoadOBJ(src, name)
	case "ply":
		s, err = LoadPLY(src, name)
	case "stl":
		s, err = LoadSTL(src, name)
	}
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			err = &ParseError{File: name, Msg: err.Error()}
		}
		return nil, err
	}
	return s, nil
}

// formatOf maps a file name to "obj", "ply", "stl" or "".
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
	}
	return ""
}
