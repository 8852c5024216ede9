package scenes

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"
)

// Limits bound what one load may read and keep, so that a hostile or broken
// input (an endless line, a gzip bomb, a header that claims billions of
// elements followed by endless data, /dev/zero) ends in an error naming the
// limit instead of exhausting memory or hanging. The zero value of a field
// means its default (DefaultLimits); a negative value means no limit.
//
// With these limits the memory of a load is at most about 4 × the bytes of
// the scene's arrays (growing a slice briefly holds the old and the new
// array, append over-allocates by up to 25% for large slices, and the
// garbage collector lets the old arrays linger until its next cycle;
// measured: 3.5 × for a 256 MiB scene) plus 2 × MaxLine + 1 MiB of
// buffers, so never much more than 4 × MaxSceneBytes. A PLY list (a face's
// indices) may have at most MaxLine items.
type Limits struct {
	// MaxLine is the longest line in bytes: an OBJ statement with its `\`
	// continuations, an ascii PLY element, an ascii STL line, a PLY header
	// line; also the most bytes read after the last element of a binary
	// file. Default 1 MiB; flag --max-line.
	MaxLine int64
	// MaxHeader is the most bytes of a PLY header. Default 1 MiB; flag
	// --max-header.
	MaxHeader int64
	// MaxRatio is the most decompressed bytes per compressed byte of a
	// gzip input (after its first ratioSlack bytes). Real meshes compress 3 to
	// 20 times; gzip's own limit is about 1032 (long runs of one byte).
	// Default 100; flag --max-gzip-ratio.
	MaxRatio int64
	// MaxBytes is the most input bytes read, after decompression. Default
	// 64 GiB; flag --max-input-bytes.
	MaxBytes int64
	// MaxSceneBytes is the most bytes the scene's arrays may take: 12 per
	// vertex and 16 per triangle (indices and source face). Default 4 GiB
	// (about 200 million triangles with their vertices); flag
	// --max-scene-bytes.
	MaxSceneBytes int64
	// Wait is how long Load waits for data from a FIFO or a character
	// device before giving up: for a writer to open a FIFO, and for each
	// read that brings no byte. Regular files are never waited for.
	// Default 10 s; flag --read-timeout.
	Wait time.Duration
}

// DefaultLimits are the limits a zero Limits field stands for.
var DefaultLimits = Limits{
	MaxLine:       1 << 20,
	MaxHeader:     1 << 20,
	MaxRatio:      100,
	MaxBytes:      64 << 30,
	MaxSceneBytes: 4 << 30,
	Wait:          10 * time.Second,
}

// resolved returns l with zero fields replaced by the defaults and negative
// ones by "no limit".
func (l Limits) resolved() Limits {
	d := DefaultLimits
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 1<<63 - 1
		}
		return v
	}
	l.MaxLine = pick(l.MaxLine, d.MaxLine)
	l.MaxHeader = pick(l.MaxHeader, d.MaxHeader)
	l.MaxRatio = pick(l.MaxRatio, d.MaxRatio)
	l.MaxBytes = pick(l.MaxBytes, d.MaxBytes)
	l.MaxSceneBytes = pick(l.MaxSceneBytes, d.MaxSceneBytes)
	l.Wait = time.Duration(pick(int64(l.Wait), int64(d.Wait)))
	return l
}

// LimitError is a load stopped by one of Limits; it is returned wrapped in
// a *ParseError (errors.As finds it). Field names the Limits field, Flag
// the tool's flag that raises it.
type LimitError struct {
	Field string // "MaxLine", "MaxHeader", ...
	Flag  string // "--max-line", ...
	Limit int64  // the limit in force
	What  string // what went over it
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: over the limit of %d (Limits.%s; raise it with %s)", e.What, e.Limit, e.Field, e.Flag)
}

// limitErr is a *ParseError at file:line wrapping a *LimitError.
func limitErr(file string, line int, le *LimitError) *ParseError {
	return &ParseError{File: file, Line: line, Msg: le.Error(), Err: le}
}

func lineLimit(l Limits) *LimitError {
	return &LimitError{Field: "MaxLine", Flag: "--max-line", Limit: l.MaxLine, What: "line longer than the limit"}
}

// inputErr is a load's error for a failed read at line: the parse and
// limit errors of the input layers (boundedReader, lineSource) keep their
// type, given the line when they have none; other errors become
// "read: ..." parse errors.
func inputErr(name string, line int, err error) *ParseError {
	var pe *ParseError
	var le *LimitError
	switch {
	case errors.As(err, &pe):
		if pe.Line == 0 && line > 0 {
			c := *pe
			c.Line = line
			return &c
		}
		return pe
	case errors.As(err, &le):
		return limitErr(name, line, le)
	}
	return &ParseError{File: name, Line: line, Msg: fmt.Sprintf("read: %v", err), Err: err}
}

// sceneBytes is the memory of s's arrays as MaxSceneBytes counts it.
func sceneBytes(s *Scene) int64 {
	return 12*int64(len(s.Verts)) + 16*int64(len(s.Tris))
}

// checkScene returns a limit error when s's arrays have outgrown
// MaxSceneBytes. Loaders call it every few thousand elements.
func (l Limits) checkScene(s *Scene, line int) error {
	if b := sceneBytes(s); b > l.MaxSceneBytes {
		return limitErr(s.Name, line, &LimitError{Field: "MaxSceneBytes", Flag: "--max-scene-bytes", Limit: l.MaxSceneBytes,
			What: fmt.Sprintf("scene of %d vertices and %d triangles (%d bytes) so far", len(s.Verts), len(s.Tris), b)})
	}
	return nil
}

// ratioSlack is how many decompressed bytes a gzip input may have before
// MaxRatio applies (a small file's ratio says little).
const ratioSlack = 1 << 20

// sceneGuard checks MaxSceneBytes as a scene grows: cheap enough to call
// for every statement or element, it checks whenever the scene (plus extra,
// data held for the element being read) has grown by a step since the last
// check, so that no element, however large, passes unchecked for long.
type sceneGuard struct {
	lim     Limits
	checked int64 // bytes at the last check
}

func (g *sceneGuard) grow(s *Scene, extra int64, line int) error {
	b := sceneBytes(s) + extra
	if b-g.checked < min(1<<20, g.lim.MaxSceneBytes/8+1) {
		return nil
	}
	g.checked = b
	if b > g.lim.MaxSceneBytes {
		return limitErr(s.Name, line, &LimitError{Field: "MaxSceneBytes", Flag: "--max-scene-bytes", Limit: g.lim.MaxSceneBytes,
			What: fmt.Sprintf("scene of %d vertices and %d triangles (%d bytes with the element being read) so far", len(s.Verts), len(s.Tris), b)})
	}
	return nil
}

// boundedReader is the decompressed input of a load: it counts the bytes
// read and fails once they pass MaxBytes or, for gzip input, MaxRatio times
// the compressed bytes consumed (after ratioSlack bytes).
type boundedReader struct {
	r          io.Reader
	n          int64
	compressed *countingReader // nil unless the input is gzip
	lim        Limits
	name       string
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.lim.MaxBytes {
		return n, limitErr(b.name, 0, &LimitError{Field: "MaxBytes", Flag: "--max-input-bytes", Limit: b.lim.MaxBytes,
			What: "input bytes (after decompression)"})
	}
	if c := b.compressed; c != nil && b.n > ratioSlack && b.n/b.lim.MaxRatio > c.n {
		return n, limitErr(b.name, 0, &LimitError{Field: "MaxRatio", Flag: "--max-gzip-ratio", Limit: b.lim.MaxRatio,
			What: fmt.Sprintf("gzip expansion (%d bytes from %d)", b.n, c.n)})
	}
	return n, err
}

// drainTail reads what follows the last element of a file, up to MaxLine
// bytes, and returns how many bytes there were; more than MaxLine is an
// error (an endless stream after a complete file).
func drainTail(r io.Reader, l Limits, name string) (int64, error) {
	n, err := io.Copy(io.Discard, io.LimitReader(r, l.MaxLine+1))
	if err != nil {
		return n, err
	}
	if n > l.MaxLine {
		return n, limitErr(name, 0, &LimitError{Field: "MaxLine", Flag: "--max-line", Limit: l.MaxLine,
			What: "bytes after the last element"})
	}
	return n, nil
}

// lineSource reads lines ended by '\n' (a '\r' before it is dropped) of at
// most MaxLine bytes each, from a bufio.Reader.
type lineSource struct {
	br   *bufio.Reader
	max  int64
	long []byte // a line longer than the bufio buffer, assembled
}

// next returns the next line without its terminator, valid until the next
// call; io.EOF after the last line. An over-long line is a *LimitError.
func (ls *lineSource) next() ([]byte, error) {
	ln, err := ls.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		ls.long = append(ls.long[:0], ln...)
		for err == bufio.ErrBufferFull {
			if int64(len(ls.long)) > ls.max {
				return nil, &LimitError{Field: "MaxLine", Flag: "--max-line", Limit: ls.max, What: "line longer than the limit"}
			}
			ln, err = ls.br.ReadSlice('\n')
			ls.long = append(ls.long, ln...)
		}
		ln = ls.long
	}
	if int64(len(ln)) > ls.max {
		return nil, &LimitError{Field: "MaxLine", Flag: "--max-line", Limit: ls.max, What: "line longer than the limit"}
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(ln) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	return trimEOL(ln), nil
}
