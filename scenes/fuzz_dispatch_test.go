package scenes

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// fuzzNames are the names FuzzLoadReader dispatches on.
var fuzzNames = []string{"f.obj", "f.ply", "f.stl", "f.obj.gz", "F.PLY.GZ", "f.stl.gz", "f.txt"}

// FuzzLoadReader: the format dispatch (name, gzip magic, Format), under
// small limits, never panics; errors are *ParseErrors naming the input;
// scenes validate and stay within the limits.
func FuzzLoadReader(f *testing.F) {
	tri := "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(tri))
	zw.Close()
	for i, d := range [][]byte{[]byte(tri), z.Bytes(), []byte(asciiSTL), binarySTL("solid", [][9]float32{{0, 0, 0, 1, 0, 0, 0, 1, 0}}),
		[]byte("ply\rformat ascii 1.0\relement vertex 0\rend_header\r"), {0x1f, 0x8b, 0, 0}, nil} {
		f.Add(d, uint8(i), uint8(0))
	}
	lim := Limits{MaxLine: 4096, MaxHeader: 2048, MaxRatio: 50, MaxBytes: 1 << 20, MaxSceneBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, data []byte, sel, format uint8) {
		name := fuzzNames[int(sel)%len(fuzzNames)]
		o := LoadOptions{Limits: lim, Format: []string{"", "", "obj", "ply", "stl"}[int(format)%5]}
		s, err := LoadReaderWith(bytes.NewReader(data), name, o)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != name {
				t.Fatalf("error %T %v does not name %s", err, err, name)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		if b := sceneBytes(s); b > lim.MaxSceneBytes {
			t.Fatalf("scene of %d bytes, limit %d", b, lim.MaxSceneBytes)
		}
	})
}

// fuzzSpecSmall reports whether every number in spec is at most 64 or at
// least 10^18 (counts that large are refused at once), so that the fuzzer
// explores the parser without generating huge scenes; grids must nest
// procedural scenes (no file access).
func fuzzSpecSmall(spec string) bool {
	if i := strings.Index(spec, "grid"); i >= 0 && !strings.Contains(spec[i:], "proc:") {
		return false
	}
	for _, run := range strings.FieldsFunc(spec, func(r rune) bool { return !unicode.IsDigit(r) }) {
		if len(run) >= 19 {
			continue
		}
		if v, err := strconv.ParseUint(run, 10, 64); err == nil && v > 64 {
			return false
		}
	}
	return true
}

// FuzzProcedural: the proc: spec parser never panics; an error names the
// spec; a scene validates.
func FuzzProcedural(f *testing.F) {
	for _, s := range []string{"default", "icosphere:2", "soup:10:3", "coplanar:5", "identical:4", "huge:9:1",
		"slivers:7:2", "grid:2:1:1:proc:soup:3", "proc:grid:1:1:2:proc:grid:2:1:1:proc:icosphere:1", "soup:",
		"grid:1:1", "icosphere:99", "soup:-1", "soup:1:2:3", "identical:3:1", "soup:99999999999999999999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if !fuzzSpecSmall(spec) {
			return
		}
		s, err := Procedural(spec)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "procedural scene ") {
				t.Fatalf("error does not name the spec: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}
