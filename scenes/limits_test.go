package scenes

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// endless repeats pattern for ever, counting the bytes handed out.
type endless struct {
	pattern []byte
	off     int
	n       int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.pattern[e.off]
		e.off = (e.off + 1) % len(e.pattern)
	}
	e.n += int64(len(p))
	return len(p), nil
}

// junk is an endless stream of pseudo-random bytes (xorshift, fixed seed).
type junk struct {
	x uint64
	n int64
}

func (j *junk) Read(p []byte) (int, error) {
	for i := range p {
		j.x ^= j.x << 13
		j.x ^= j.x >> 7
		j.x ^= j.x << 17
		p[i] = byte(j.x)
	}
	j.n += int64(len(p))
	return len(p), nil
}

// gzipped returns a reader of src gzipped on the fly (src may be endless);
// stop ends the compressing goroutine.
func gzipped(src io.Reader) (r io.Reader, stop func()) {
	pr, pw := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
		_, err := io.Copy(zw, src)
		if err == nil {
			err = zw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, func() { pr.Close() }
}

// requireLimit checks err is a *ParseError naming file and wrapping a
// *LimitError of field, whose text names the flag.
func requireLimit(t *testing.T, err error, file, field string) {
	t.Helper()
	require.Error(t, err)
	var pe *ParseError
	require.True(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Equal(t, file, pe.File)
	var le *LimitError
	require.True(t, errors.As(err, &le), "no LimitError in %v", err)
	assert.Equal(t, field, le.Field, "%v", err)
	assert.Contains(t, err.Error(), le.Flag)
}

func TestHostileStreams(t *testing.T) {
	small := Limits{MaxLine: 1 << 16, MaxHeader: 1 << 14, MaxSceneBytes: 1 << 20}
	plyHead := func(format string) string {
		return "ply\nformat " + format + " 1.0\nelement vertex 2147483648\nproperty float x\nproperty float y\nproperty float z\n" +
			"element face 1\nproperty list uchar int vertex_indices\nend_header\n"
	}
	for _, c := range []struct {
		name   string
		file   string
		src    func() io.Reader
		gz     bool
		lim    Limits
		field  string // the limit that stops it; "" for a plain parse error
		msg    string // in the error
		before int64  // input bytes read before the error, at most
	}{
		{"zeros as obj", "z.obj", func() io.Reader { return &endless{pattern: []byte{0}} }, false, Limits{}, "MaxLine", "line", 2 << 20},
		{"zeros as obj.gz", "z.obj.gz", func() io.Reader { return &endless{pattern: []byte{0}} }, true, Limits{}, "MaxLine", "line", 2 << 20},
		{"newlines as obj.gz", "n.obj.gz", func() io.Reader { return &endless{pattern: []byte{'\n'}} }, true, Limits{}, "MaxRatio", "gzip", 64 << 20},
		{"zeros as obj.gz without a line limit", "z.obj.gz", func() io.Reader { return &endless{pattern: []byte{0}} }, true, Limits{MaxLine: -1}, "MaxRatio", "gzip", 64 << 20},
		{"zeros as ply", "z.ply", func() io.Reader { return &endless{pattern: []byte{0}} }, false, Limits{}, "", "not a PLY file", 1 << 20},
		{"zeros as ply.gz", "z.ply.gz", func() io.Reader { return &endless{pattern: []byte{0}} }, true, Limits{}, "", "not a PLY file", 1 << 20},
		{"endless first line as ply", "l.ply", func() io.Reader {
			return io.MultiReader(strings.NewReader("ply"), &endless{pattern: []byte{' '}})
		}, false, Limits{}, "MaxLine", "line", 2 << 20},
		{"zeros as stl", "z.stl", func() io.Reader { return &endless{pattern: []byte{0}} }, false, Limits{}, "", "0 triangles but data follows", 1 << 20},
		{"solid and zeros as stl", "s.stl", func() io.Reader {
			return io.MultiReader(strings.NewReader("solid x\n"), &endless{pattern: []byte{0}})
		}, false, Limits{}, "", "0 triangles but data follows", 1 << 20},
		{"solid and zeros as stl.gz", "s.stl.gz", func() io.Reader {
			return io.MultiReader(strings.NewReader("solid x\n"), &endless{pattern: []byte{0}})
		}, true, Limits{}, "", "0 triangles but data follows", 1 << 20},
		{"one triangle and endless zeros as stl", "t.stl", func() io.Reader {
			return io.MultiReader(bytes.NewReader(binarySTL("x", [][9]float32{{0, 0, 0, 1, 0, 0, 0, 1, 0}})), &endless{pattern: []byte{0}})
		}, false, Limits{}, "MaxLine", "after the last element", 2 << 20},
		{"endless ply header", "h.ply", func() io.Reader {
			return io.MultiReader(strings.NewReader("ply\nformat ascii 1.0\n"), &endless{pattern: []byte("comment again\n")})
		}, false, Limits{}, "MaxHeader", "header", 2 << 20},
		{"2^31 vertices binary, endless data", "v.ply", func() io.Reader {
			return io.MultiReader(strings.NewReader(plyHead("binary_little_endian")), &endless{pattern: []byte{0, 0, 128, 63}})
		}, false, small, "MaxSceneBytes", "scene", 2 << 20},
		{"2^31 vertices ascii, endless data", "v.ply", func() io.Reader {
			return io.MultiReader(strings.NewReader(plyHead("ascii")), &endless{pattern: []byte("1 2 3\n")})
		}, false, small, "MaxSceneBytes", "scene", 2 << 20},
		{"a face of 2^31 indices, endless data", "l.ply", func() io.Reader {
			return io.MultiReader(strings.NewReader("ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"+
				"element face 1\nproperty list uint int vertex_indices\nend_header\n"), bytes.NewReader(make([]byte, 12)),
				bytes.NewReader([]byte{0, 0, 0, 128}), &endless{pattern: []byte{0}})
		}, false, Limits{}, "MaxLine", "list vertex_indices", 1 << 20},
		{"endless vertices in one facet", "p.stl", func() io.Reader {
			return io.MultiReader(strings.NewReader("solid x\nfacet normal 0 0 1\nouter loop\n"), &endless{pattern: []byte("vertex 1 2 3\n")})
		}, false, small, "MaxSceneBytes", "scene", 2 << 20},
		{"endless huge faces as obj", "h.obj", func() io.Reader {
			return io.MultiReader(strings.NewReader("v 0 0 0\nv 1 0 0\nv 0 1 0\n"), &endless{pattern: []byte("f " + strings.Repeat("1 2 3 ", 10000) + "\n")})
		}, false, small, "MaxSceneBytes", "scene", 2 << 20},
		{"endless vertices as obj", "v.obj", func() io.Reader { return &endless{pattern: []byte("v 1 2 3\n")} }, false, small, "MaxSceneBytes", "scene", 2 << 20},
		{"endless facets as stl", "f.stl", func() io.Reader {
			return io.MultiReader(strings.NewReader("solid x\n"),
				&endless{pattern: []byte("facet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\n")})
		}, false, small, "MaxSceneBytes", "scene", 8 << 20},
		{"endless input, MaxBytes", "b.obj", func() io.Reader { return &endless{pattern: []byte("# comment\n")} }, false, Limits{MaxBytes: 1 << 20}, "MaxBytes", "input bytes", 2 << 20},
		{"junk as obj", "j.obj", func() io.Reader { return &junk{x: 1} }, false, Limits{}, "", "not an OBJ file", 1 << 20},
		{"junk as ply", "j.ply", func() io.Reader { return &junk{x: 1} }, false, Limits{}, "", "", 1 << 20},
		{"junk as stl", "j.stl", func() io.Reader { return &junk{x: 1} }, false, Limits{}, "", "", 2 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.src()
			counted := &countingReader{r: src}
			var in io.Reader = counted
			if c.gz {
				r, stop := gzipped(counted)
				defer stop()
				in = r
			}
			start := time.Now()
			_, err := LoadReaderWith(in, c.file, LoadOptions{Limits: c.lim})
			require.Error(t, err)
			if c.field != "" {
				requireLimit(t, err, c.file, c.field)
			} else {
				var pe *ParseError
				require.True(t, errors.As(err, &pe), "%T %v", err, err)
			}
			assert.Contains(t, err.Error(), c.msg)
			assert.True(t, counted.n <= c.before, "read %d bytes before %v", counted.n, err)
			t.Logf("%v after %d bytes in %v", err, counted.n, time.Since(start).Round(time.Millisecond))
		})
	}
}

func TestMalformedFiles(t *testing.T) {
	vertsFace := "element vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
	body := "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"
	for _, c := range []struct {
		name, file, in string
		tris           int    // triangles when it loads
		warn           string // a warning it must carry
		err            string // the error it must give instead
	}{
		{"ply CR-only ascii", "cr.ply", strings.ReplaceAll("ply\nformat ascii 1.0\n"+vertsFace+body, "\n", "\r"), 1, "", ""},
		{"ply CRLF ascii", "crlf.ply", strings.ReplaceAll("ply\nformat ascii 1.0\n"+vertsFace+body, "\n", "\r\n"), 1, "", ""},
		{"ply duplicate element", "dup.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n" + vertsFace + body, 0, "", "declared twice"},
		{"ply empty", "e.ply", "", 0, "empty", ""},
		{"obj empty", "e.obj", "", 0, "no statements", ""},
		{"obj comments only", "c.obj", "# a\n\n# b\n", 0, "no statements", ""},
		{"obj no geometry statement", "n.obj", "hello world\nthis is text\n", 0, "", "not an OBJ file"},
		{"obj materials only", "m.obj", "mtllib a.mtl\nusemtl b\n", 0, "no v or f", ""},
		{"stl empty", "e.stl", "", 0, "empty", ""},
		{"stl solid without facets", "s.stl", "solid x\nendsolid x\n", 0, "", "without a facet"},
		{"stl solid alone", "s.stl", "solid", 0, "", "without a facet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := LoadReader(strings.NewReader(c.in), c.file)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			assert.Len(t, s.Tris, c.tris)
			if c.warn != "" {
				require.True(t, len(s.Warnings) > 0)
				assert.Contains(t, strings.Join(s.Warnings, "\n"), c.warn)
			}
		})
	}
}

func TestCROnlyBinaryPLY(t *testing.T) {
	tri := buildPLY(t, "binary_little_endian", []testElem{
		{"vertex", []string{"float x", "float y", "float z"}, [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}},
		{"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 2}}},
	})
	i := bytes.Index(tri, []byte("end_header\n")) + len("end_header\n")
	head := bytes.ReplaceAll(tri[:i], []byte("\n"), []byte("\r"))
	// The body's first byte is what a LF-or-CR reader would misread.
	s, err := LoadPLY(bytes.NewReader(append(head, tri[i:]...)), "cr.ply")
	require.NoError(t, err)
	assert.Len(t, s.Tris, 1)
	assert.Equal(t, float32(1), s.Bounds.Max[0])
}

func TestSkippedKindsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
	for i := 0; i < 1000; i++ {
		b.WriteString("kw")
		b.WriteString(strings.Repeat("x", i%200))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(" 1\n")
	}
	s, err := LoadOBJ(strings.NewReader(b.String()), "k.obj")
	require.NoError(t, err)
	assert.True(t, len(s.Stats.Skipped) <= maxSkippedKinds+1, "%d kinds", len(s.Stats.Skipped))
	assert.True(t, s.Stats.Skipped[otherSkipped] > 0)
	total := 0
	for _, n := range s.Stats.Skipped {
		total += n
	}
	assert.Equal(t, 1000, total)
}

func TestNonRegularFiles(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		for _, name := range []string{"obj", "ply", "stl"} {
			t.Run("/dev/zero as "+name, func(t *testing.T) {
				start := time.Now()
				_, err := LoadWith("/dev/zero", LoadOptions{Format: name})
				require.Error(t, err)
				assert.True(t, time.Since(start) < 5*time.Second, "took %v", time.Since(start))
			})
		}
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.obj")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	t.Run("FIFO without a writer", func(t *testing.T) {
		start := time.Now()
		_, err := LoadWith(fifo, LoadOptions{Limits: Limits{Wait: 200 * time.Millisecond}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no writer")
		assert.Contains(t, err.Error(), "--read-timeout")
		assert.True(t, time.Since(start) < 3*time.Second, "took %v", time.Since(start))
	})
	t.Run("FIFO with a writer", func(t *testing.T) {
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer w.Close()
			w.WriteString("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
		}()
		s, err := LoadWith(fifo, LoadOptions{Limits: Limits{Wait: 5 * time.Second}})
		require.NoError(t, err)
		assert.Len(t, s.Tris, 1)
	})
	t.Run("FIFO whose writer stalls", func(t *testing.T) {
		done := make(chan struct{})
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer w.Close()
			w.WriteString("v 0 0 0\n")
			<-done
		}()
		defer close(done)
		start := time.Now()
		_, err := LoadWith(fifo, LoadOptions{Limits: Limits{Wait: 300 * time.Millisecond}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no data")
		assert.True(t, time.Since(start) < 3*time.Second, "took %v", time.Since(start))
	})
}
