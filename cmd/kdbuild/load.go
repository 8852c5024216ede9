package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kdbuild/kdbuild/scenes"
)

// procPrefix introduces a procedural scene on the command line.
const procPrefix = "proc:"

// loaded is a scene with what loading it cost.
type loaded struct {
	scene *scenes.Scene
	file  string  // as given: a path, proc:<spec>, or "" for the default scene
	ms    float64 // wall time of loading or generating
	bytes int64   // input bytes parsed (decompressed); 0 for procedural scenes
}

// mbPerSec is the parsing throughput in MB/s (10^6 bytes), 0 when unknown.
func (l *loaded) mbPerSec() float64 {
	if l.bytes <= 0 || l.ms <= 0 {
		return 0
	}
	return float64(l.bytes) / (l.ms * 1e3)
}

// loadScene loads arg: a mesh file, proc:<spec>, standard input for "-",
// or the built-in default scene when arg is empty, keeping what opts asks for
// (format, limits, attributes from files only; Weld for every scene). A progress bar is shown for long loads when stderr is a
// terminal and quiet is false.
func loadScene(e *env, arg string, quiet bool, opts scenes.LoadOptions) (*loaded, error) {
	t0 := time.Now()
	switch {
	case arg == "":
		s := scenes.Default()
		if opts.Weld {
			s.Weld()
		}
		return &loaded{scene: s, ms: msSince(t0)}, nil
	case strings.HasPrefix(arg, procPrefix):
		s, err := scenes.Procedural(strings.TrimPrefix(arg, procPrefix))
		if err != nil {
			return nil, err // the error names the spec
		}
		if opts.Weld {
			s.Weld()
		}
		return &loaded{scene: s, file: arg, ms: msSince(t0)}, nil
	}
	var in io.Reader = e.stdin
	size := int64(-1)
	if arg != stdinArg {
		f, err := scenes.OpenInput(arg, opts.Limits)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
		in = f
	}
	cr := newLoadProgress(e, quiet, in, size, filepath.Base(arg))
	if arg != stdinArg && opts.Dir == "" {
		opts.Dir = filepath.Dir(arg)
	}
	s, err := scenes.LoadReaderWith(cr, arg, opts)
	cr.done()
	if err != nil {
		return nil, err
	}
	l := &loaded{scene: s, file: arg, ms: msSince(t0), bytes: s.Stats.Bytes}
	if l.bytes == 0 {
		l.bytes = cr.n
	}
	return l, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }
