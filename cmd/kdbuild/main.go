// Command kdbuild loads a triangle scene, builds a kd-tree over it (on the
// GPU when there is one, else with the Go executor) and prints what it did.
//
//	kdbuild [flags] [scene.{obj,ply,stl,gltf,glb}[.gz] | proc:<spec> | - --format F]... [-o tree.kdt]
//	kdbuild [flags] tree.kdt
//	kdbuild render <scene | tree.kdt> --out image.png [flags]
//	kdbuild devices [--json]
//	kdbuild bench copy|scan|segscan|compact|sort|reduce|thesis [flags]
//	kdbuild trace <scene> [--rays primary|random|FILE] [--n N] [--json]
//	kdbuild bench trace [scenes] [flags]
//
// Exit codes: 0 success, 1 input or runtime error, 2 usage error, 130
// interrupted (Ctrl-C).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// Exit codes of every kdbuild command.
const (
	exitOK    = 0 // success
	exitError = 1 // bad input or a runtime failure; the message is on stderr
	exitUsage = 2 // unknown flag, too many arguments, bad flag value
	// exitInterrupted (interrupt.go): Ctrl-C
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); without it
// the module version or VCS revision recorded by the Go toolchain is used.
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole tool: it parses args, writes results to stdout and
// messages to stderr, and returns the exit code. Tests call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	env := newEnv(stdout, stderr)
	if len(args) > 0 {
		switch args[0] {
		case "devices":
			return runDevices(env, args[1:])
		case "bench":
			return runBench(env, args[1:])
		case "render":
			return runRender(env, args[1:])
		case "trace":
			return runTrace(env, args[1:])
		case "help":
			writeUsage(stdout)
			return exitOK
		}
	}
	return runScene(env, args)
}

// env is what a command writes to and reads from outside its arguments.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// tty reports whether stderr is a terminal (progress bars only then).
	tty bool
	// stdin is the scene argument "-"; exit ends the process (the Ctrl-C
	// watchdog); interrupt, when set (tests), replaces the signals as the
	// source of cancellation.
	stdin     io.Reader
	exit      func(code int)
	interrupt func() (context.Context, context.CancelFunc)
	// saidInterrupted: the watchdog and the command both may report an
	// interruption; stderr gets it once.
	saidInterrupted sync.Once
}

func newEnv(stdout, stderr io.Writer) *env {
	return &env{stdout: stdout, stderr: stderr, getenv: os.Getenv, tty: isTerminal(stderr), stdin: os.Stdin, exit: os.Exit}
}

// versionString is the one line --version prints.
func versionString() string {
	v := version
	bi, ok := debug.ReadBuildInfo()
	if v == "" && ok {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 && (v == "" || v == "(devel)") {
				v = s.Value[:12]
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	gov := "unknown Go"
	if ok {
		gov = bi.GoVersion
	}
	return fmt.Sprintf("kdbuild %s (%s)", v, gov)
}

func writeUsage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  kdbuild [flags] [scene.{obj,ply,stl,gltf,glb}[.gz] | proc:<spec> | - --format F]...
      Load a scene (the built-in default scene when none is given; several
      make one tree; - reads standard input), build its kd-tree and print
      statistics. Flags may come before or after the files. -o tree.kdt saves
      the tree; "kdbuild tree.kdt" loads one and prints its statistics.
  kdbuild render <scene | tree.kdt> --out image.png [--size WxH] [--ao N] [--heat]
      Render the scene through its tree: shaded, with ambient occlusion, or
      as a heat map of the traversal cost per pixel. A scene file's normals
      (OBJ vn, PLY nx ny nz, glTF NORMAL) shade smoothly; a tree file keeps
      no normals, so its render shows the flat triangles.
  kdbuild devices [--json]
      List the CUDA driver and GPUs, or say why no GPU can be used.
  kdbuild bench copy|scan|segscan|compact|sort|reduce|thesis [flags]
      Benchmark a primitive over a ladder of sizes (markdown table, --plot PNG).
  kdbuild trace <scene> [--rays primary|random|FILE] [--n N] [--device ...] [--json]
      Build the tree, trace rays (closest and any hit, every core), report Mrays/s.
  kdbuild bench trace [scene ...] [--runs N] [--plot out.png] [--json]
      Trace primary and random rays, closest and any hit, one and all threads.

Run "kdbuild -h" or "kdbuild bench -h" for the flags.
Exit codes: 0 success, 1 input or runtime error, 2 usage error, 130 interrupted.
`)
}
