package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/kdbuild/kdbuild/scenes"
)

// stdinArg is the scene argument that reads standard input (with --format).
const stdinArg = "-"

// loadFlags are the scenes.LoadOptions fields as flags, one to one; zero
// means the documented default (scenes.DefaultLimits), negative no limit.
type loadFlags struct {
	format                                                string
	maxLine, maxHeader, maxRatio, maxBytes, maxSceneBytes int64
	readTimeout                                           time.Duration
}

func addLoadFlags(fs *flag.FlagSet, l *loadFlags) {
	d := scenes.DefaultLimits
	fs.StringVar(&l.format, "format", "", "read the scene as `obj`, ply or stl whatever its name (needed for - , standard input)")
	fs.Int64Var(&l.maxLine, "max-line", 0, fmt.Sprintf("longest line in bytes (0: %d; negative: no limit)", d.MaxLine))
	fs.Int64Var(&l.maxHeader, "max-header", 0, fmt.Sprintf("longest PLY header in bytes (0: %d)", d.MaxHeader))
	fs.Int64Var(&l.maxRatio, "max-gzip-ratio", 0, fmt.Sprintf("most decompressed bytes per gzip byte (0: %d)", d.MaxRatio))
	fs.Int64Var(&l.maxBytes, "max-input-bytes", 0, fmt.Sprintf("most input bytes after decompression (0: %d)", d.MaxBytes))
	fs.Int64Var(&l.maxSceneBytes, "max-scene-bytes", 0, fmt.Sprintf("most bytes of the scene's arrays, 12 per vertex and 16 per triangle (0: %d)", d.MaxSceneBytes))
	fs.DurationVar(&l.readTimeout, "read-timeout", 0, fmt.Sprintf("how long to wait for data from a FIFO or device (0: %v)", d.Wait))
}

// options returns the flags as scenes.LoadOptions, or a usage error.
func (l loadFlags) options(arg string) (scenes.LoadOptions, error) {
	switch l.format {
	case "", "obj", "ply", "stl", "gltf", "glb":
	default:
		return scenes.LoadOptions{}, usagef("--format %q: want obj, ply, stl, gltf or glb", l.format)
	}
	if arg == stdinArg && l.format == "" {
		return scenes.LoadOptions{}, usagef("reading the scene from standard input (-) needs --format obj, ply, stl or glb")
	}
	return scenes.LoadOptions{Format: l.format, Limits: scenes.Limits{
		MaxLine: l.maxLine, MaxHeader: l.maxHeader, MaxRatio: l.maxRatio,
		MaxBytes: l.maxBytes, MaxSceneBytes: l.maxSceneBytes, Wait: l.readTimeout,
	}}, nil
}
