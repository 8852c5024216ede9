package scenes

import (
	"fmt"
	"io"
	"os"
	"time"
)

// LoadOptions are the options of LoadWith and LoadReaderWith; the zero
// value loads as Load does.
type LoadOptions struct {
	// Format is "obj", "ply", "stl" or "gltf" (or "glb") to read the input as that format
	// whatever its name (standard input has no extension); "" takes the
	// format from the name. Gzip is recognised by its magic bytes either way.
	Format string
	// Limits bound the input read and the scene kept (zero: DefaultLimits).
	Limits  Limits
	Normals bool // per-corner normals
	UVs     bool // per-corner texture coordinates
	Colors  bool // per-vertex colours (PLY red green blue [alpha], OBJ v x y z r g b, glTF COLOR_0)
	Names   bool // groups, objects and material names per triangle
	// Weld merges vertices of bit-identical positions (+0 and -0 alike)
	// after loading, so that STL triangles share their corners; per-vertex
	// colours of the first vertex of each position are kept.
	Weld bool
	// Dir is the folder against which a glTF file's relative buffer URIs
	// are resolved; Load sets it to the file's folder when empty. With
	// Dir empty, LoadReaderWith refuses external buffers.
	Dir string
}

// openInput opens path for reading. Regular files open as usual. The open
// itself never blocks (a FIFO without a writer would block it for ever):
// a FIFO or character device comes back wrapped in a waitReader, which
// waits up to wait for a writer and for every read's first byte.
func openInput(path string, wait time.Duration) (io.ReadCloser, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, &ParseError{File: path, Msg: "is a directory, not a mesh file"}
	case fi.Mode().IsRegular():
		return f, nil
	}
	return &waitReader{f: f, wait: wait, fifo: fi.Mode()&os.ModeNamedPipe != 0}, nil
}

// waitReader reads a FIFO or character device with a deadline per read:
// a read that brings no byte within wait is an error, and so is a FIFO that
// no writer opens within wait (a FIFO without a writer reads as EOF). Where
// the file does not support deadlines (most character devices) reads block
// as usual; such devices either have data at once (/dev/zero, /dev/urandom,
// whose endless bytes the other limits stop) or are terminals.
type waitReader struct {
	f     *os.File
	wait  time.Duration
	fifo  bool
	got   bool      // some byte was read
	since time.Time // when waiting for a writer began
}

// writerPoll is how often a FIFO without a writer is checked for one.
const writerPoll = 20 * time.Millisecond

func (w *waitReader) Read(p []byte) (int, error) {
	for {
		deadlined := w.f.SetReadDeadline(time.Now().Add(w.wait)) == nil
		n, err := w.f.Read(p)
		if n > 0 {
			w.got = true
		}
		switch {
		case err == io.EOF && w.fifo && !w.got && n == 0:
			// No writer yet: poll for one until wait has passed.
			if w.since.IsZero() {
				w.since = time.Now()
			}
			if time.Since(w.since) >= w.wait {
				return 0, fmt.Errorf("%s: no writer opened the FIFO within %v (Limits.Wait; raise it with --read-timeout)", w.f.Name(), w.wait)
			}
			time.Sleep(writerPoll)
			continue
		case deadlined && os.IsTimeout(err):
			return n, fmt.Errorf("%s: no data for %v (Limits.Wait; raise it with --read-timeout)", w.f.Name(), w.wait)
		}
		return n, err
	}
}

func (w *waitReader) Close() error { return w.f.Close() }

// OpenInput opens path as LoadWith does, for callers that wrap the stream
// (a progress bar) before LoadReaderWith: the open never blocks on a FIFO
// without a writer, and FIFOs and devices are read with lim.Wait.
func OpenInput(path string, lim Limits) (io.ReadCloser, error) {
	return openInput(path, lim.resolved().Wait)
}
