package main

// The calls kdbuild makes into the library, in one place. A part of the
// library that this build lacks answers errNotAvailable (exit code 1).

import (
	"errors"
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/scan"
	"github.com/kdbuild/kdbuild/scenes"
)

// errNotAvailable marks a feature whose library part is not in this build.
var errNotAvailable = errors.New("not available in this build")

func notAvailable(what string) error { return fmt.Errorf("%s: %w", what, errNotAvailable) }

// defaultScene is the built-in scene used when no file is given.
func defaultScene() (*scenes.Scene, error) { return scenes.Default(), nil }

// proceduralScene generates the scene named by spec (the text after proc:).
func proceduralScene(spec string) (*scenes.Scene, error) { return scenes.Procedural(spec) }

// copyBandwidth measures device-to-device copy over sizes (elements of 4 bytes).
func copyBandwidth(ex exec.Executor, sizes []int, runs int) ([]exec.BenchRow, error) {
	return exec.CopyBandwidth(ex, sizes, runs)
}

// benchPrimitive runs the benchmark of one primitive family (scan, segscan,
// compact, sort, reduce) over sizes, quoting copyGBps.
func benchPrimitive(ex exec.Executor, op string, sizes []int, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	if op == "reduce" {
		return reduce.Bench(ex, sizes, runs, copyGBps)
	}
	return scan.Bench(ex, op, sizes, runs, copyGBps)
}

// thesisTable runs the thesis's reduction table on scene and formats it.
func thesisTable(ex exec.Executor, scene *scenes.Scene, runs int) (string, error) {
	rows, err := reduce.ThesisTable(ex, scene, runs)
	if err != nil {
		return "", err
	}
	return reduce.FormatThesisTable(rows), nil
}
