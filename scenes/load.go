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

// Load reads a mesh file. The format comes from the extension (.obj, .ply,
// .stl, each optionally followed by .gz); gzip input is also recognised by its
// magic bytes whatever the name, and decompressed while streaming.
// Parse problems are returned as *ParseError naming path and line.
// Load uses DefaultLimits; LoadWith takes other limits.
func Load(path string) (*Scene, error) {
	return LoadWith(path, LoadOptions{})
}

// LoadWith is Load with options. A FIFO or character device is read
// without waiting for ever: see Limits.Wait.
func LoadWith(path string, o LoadOptions) (*Scene, error) {
	f, err := openInput(path, o.Limits.resolved().Wait)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadReaderWith(f, path, o)
}

// LoadReader is Load for an already open stream; name supplies the extension
// and the file name used in errors.
func LoadReader(r io.Reader, name string) (*Scene, error) {
	return LoadReaderWith(r, name, LoadOptions{})
}

// LoadReaderWith is LoadReader with options: o.Format, when set, names the
// format instead of name's extension (standard input); o.Limits bound the
// input read and the scene kept (a *LimitError inside the *ParseError says
// which limit stopped the load).
func LoadReaderWith(r io.Reader, name string, o LoadOptions) (*Scene, error) {
	format := formatOf(name)
	if o.Format != "" {
		format = formatOf("." + o.Format)
		if format == "" {
			return nil, &ParseError{File: name, Msg: fmt.Sprintf("unknown mesh format %q (want obj, ply or stl)", o.Format)}
		}
	}
	if format == "" {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("unknown mesh format %q (want .obj, .ply or .stl, optionally .gz)", filepath.Ext(name))}
	}
	lim := o.Limits.resolved()
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
		s, err = loadOBJ(src, name, lim)
	case "ply":
		s, err = loadPLY(src, name, lim)
	case "stl":
		s, err = loadSTL(src, name, lim)
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
