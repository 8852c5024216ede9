package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runWith runs kdbuild [args] in-process with stdin, an injected
// cancellation source and exit function.
func runWith(t *testing.T, stdin string, interrupt func() (context.Context, context.CancelFunc), args ...string) (result, []int) {
	t.Helper()
	return runCmdWith(t, runScene, stdin, interrupt, args...)
}

// runCmdWith is runWith for any command's run function.
func runCmdWith(t *testing.T, cmd func(*env, []string) int, stdin string, interrupt func() (context.Context, context.CancelFunc), args ...string) (result, []int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := newEnv(&out, &errb)
	e.stdin = strings.NewReader(stdin)
	exits := make(chan int, 4)
	e.exit = func(code int) { exits <- code }
	e.interrupt = interrupt
	code := cmd(e, args)
	var ex []int
	for len(exits) > 0 {
		ex = append(ex, <-exits)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}, ex
}

// TestInterruptedBuildPrintsNoReport: a cancelled context (Ctrl-C) ends
// kdbuild with exit 130 and nothing on stdout, whether it comes before
// the build or during it, and whatever Build returns.
func TestInterruptedBuildPrintsNoReport(t *testing.T) {
	for _, c := range []struct {
		name  string
		after time.Duration
		scene string
	}{
		{"before the build", 0, smallScene},
		{"during the build", 30 * time.Millisecond, "proc:soup:200000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				interrupt := func() (context.Context, context.CancelFunc) {
					ctx, cancel := context.WithCancel(context.Background())
					if c.after == 0 {
						cancel()
					} else {
						time.AfterFunc(c.after, cancel)
					}
					return ctx, cancel
				}
				args := []string{"--device", "cpu", c.scene}
				if asJSON {
					args = append(args, "--json")
				}
				r, _ := runWith(t, "", interrupt, args...)
				assert.Equal(t, exitInterrupted, r.code, "stderr %s", r.stderr)
				assert.Empty(t, r.stdout, "no report after an interruption")
				assert.Contains(t, r.stderr, "interrupted")
			}
		})
	}
}

// TestHelperKdbuild is kdbuild itself when the test binary is started by
// TestCtrlCExits130 (not a test of its own).
func TestHelperKdbuild(t *testing.T) {
	if os.Getenv("KDBUILD_HELPER_ARGS") == "" {
		t.Skip("helper process only")
	}
	os.Exit(run(strings.Split(os.Getenv("KDBUILD_HELPER_ARGS"), "\x1f"), os.Stdout, os.Stderr))
}

// TestCtrlCExits130 sends SIGINT to a kdbuild process that waits for a
// FIFO's writer (a load that would take 10 s): it must end within half a
// second with exit 130 and print no report.
func TestCtrlCExits130(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "scene.obj")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKdbuild$")
	cmd.Env = append(os.Environ(), "KDBUILD_HELPER_ARGS="+strings.Join([]string{"--device", "cpu", fifo}, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	// The process is up and reading once a non-blocking writer can open
	// the FIFO (ENXIO while no reader has it open); closing that writer
	// at once leaves the reader waiting for another.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
			break
		}
		require.Less(t, time.Since(start), 10*time.Second, "kdbuild never opened the FIFO")
	}
	sent := time.Now()
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	took := time.Since(sent)
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "exit: %v, stderr %s", err, errb.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode(), "stderr %s", errb.String())
	// The tool's bound is interruptGrace (250 ms) after the signal, within
	// half a second on an idle machine; the test allows a loaded machine's
	// scheduling on top.
	t.Logf("exit %v after the signal", took)
	assert.Less(t, took, interruptGrace+time.Second)
	assert.Empty(t, out.String())
	assert.Contains(t, errb.String(), "interrupted")
}

func TestStdinScene(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(quadOBJ))
	zw.Close()
	for _, in := range []string{quadOBJ, gz.String()} {
		r, _ := runWith(t, in, nil, "-", "--format", "obj", "--json", "--no-build")
		require.Equal(t, exitOK, r.code, "stderr %s", r.stderr)
		m := decode(t, r.stdout)
		tris, _ := lookup(m, "scene.triangles")
		assert.Equal(t, 2.0, tris)
	}
	r, _ := runWith(t, quadOBJ, nil, "-")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--format")
	r, _ = runWith(t, quadOBJ, nil, "-", "--format", "dxf")
	assert.Equal(t, exitUsage, r.code)
}

func TestLoadLimitFlags(t *testing.T) {
	obj := writeFile(t, "long.obj", "v 0 0 0 "+strings.Repeat(" ", 5000)+"\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
	r := kdbuild(t, "--no-build", "--max-line", "1000", obj)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "--max-line")
	assert.Contains(t, r.stderr, obj+":1:")
	r = kdbuild(t, "--no-build", "--max-line", "10000", obj)
	assert.Equal(t, exitOK, r.code, "stderr %s", r.stderr)
	r = kdbuild(t, "--no-build", "--max-scene-bytes", "10", obj)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "--max-scene-bytes")
}

func TestSkippedStatementsShown(t *testing.T) {
	obj := writeFile(t, "skips.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\nl 2 3\np 1\ncurv 0 1 1 2\nf 1 2 3\n")
	r := kdbuild(t, "--no-build", "--json", obj)
	require.Equal(t, exitOK, r.code)
	m := decode(t, r.stdout)
	for k, want := range map[string]float64{"l": 2, "p": 1, "curv": 1} {
		got, _ := lookup(m, "scene.skipped."+k)
		assert.Equal(t, want, got, k)
	}
	r = kdbuild(t, "--no-build", obj)
	assert.Contains(t, r.stdout, "skipped     2 l, 1 curv, 1 p")
}

func TestControlCharactersEscaped(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a\x1b]0;owned\x07\r.obj")
	require.NoError(t, os.WriteFile(name, []byte("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\nf 1 2 3\n"), 0o644))
	r := kdbuild(t, "--no-build", name)
	require.Equal(t, exitOK, r.code, "stderr %q", r.stderr)
	assert.NotContains(t, r.stdout+r.stderr, "\x1b")
	assert.NotContains(t, r.stdout+r.stderr, "\x07")
	assert.Contains(t, r.stdout, `a\x1b]0;owned\a\r.obj`)
	r = kdbuild(t, filepath.Join(dir, "missing\x1b[2J.obj"))
	assert.Equal(t, exitError, r.code)
	assert.NotContains(t, r.stderr, "\x1b")
	assert.Contains(t, r.stderr, `missing\x1b[2J.obj`)
}

func TestCPUProfileRefusedBeforeLoading(t *testing.T) {
	prof := writeFile(t, "cpu.pprof", "keep me")
	// A scene that does not exist: the profile's error must come first.
	r := kdbuild(t, "--cpuprofile", prof, filepath.Join(t.TempDir(), "missing.obj"))
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "--cpuprofile")
	assert.NotContains(t, r.stderr, "missing.obj")
}

func TestDeviceErrorsNameTheirSource(t *testing.T) {
	d := kdbuild(t, "devices", "--json")
	if usable, _ := decode(t, d.stdout)["gpu_usable"].(bool); usable {
		t.Skip("this machine has a usable GPU")
	}
	t.Setenv("KDBUILD_DEVICE", "gpu")
	r := kdbuild(t, smallScene)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "KDBUILD_DEVICE=gpu")
	assert.NotContains(t, r.stderr, "--device")
	r = kdbuild(t, "--device", "gpu", smallScene)
	assert.Contains(t, r.stderr, "--device gpu")

	t.Setenv("KDBUILD_DEVICE", "auto")
	r = kdbuild(t, "--json", smallScene)
	require.Equal(t, exitOK, r.code)
	fb, _ := lookup(decode(t, r.stdout), "device_fallback")
	assert.NotEmpty(t, fb, "--json says why the GPU was not used")
}

// TestLimitedIsReported: a tree a builder guard cut short says so in
// --json (tree.limited) and in the text report.
func TestLimitedIsReported(t *testing.T) {
	l := &loaded{scene: scenes.Icosphere(0), file: "proc:icosphere:0", ms: 1}
	why := "memory guard: 9 references at one level, above the cap of 8"
	r := newReport(l, "cpu", &built{stats: kdtree.Stats{Limited: why}, runs: 1, ms: 1})
	var js, text bytes.Buffer
	require.NoError(t, writeJSON(&js, r))
	got, _ := lookup(decode(t, js.String()), "tree.limited")
	assert.Equal(t, why, got)
	writeText(&text, r, "")
	assert.Contains(t, text.String(), "limited     "+why)

	r = newReport(l, "cpu", &built{runs: 1, ms: 1})
	text.Reset()
	writeText(&text, r, "")
	assert.NotContains(t, text.String(), "limited")
}

// TestMemoryGuardIsReported builds slivers with a near-free traversal
// cost and no duplication budget, so that the builder's memory guard (64
// references per triangle at one level) cuts the tree; with the default
// budget the budget acts instead, and the guard does not. --json must say
// which in tree.limited.
func TestMemoryGuardIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("a build of several seconds")
	}
	args := []string{"--device", "cpu", "--json", "--small-node", "1", "--max-depth", "64", "--traversal-cost", "0.01", "proc:slivers:20000"}
	r := kdbuild(t, append([]string{"--max-duplication", "-1"}, args...)...)
	require.Equal(t, exitOK, r.code, "stderr %s", r.stderr)
	got, _ := lookup(decode(t, r.stdout), "tree.limited")
	assert.Contains(t, got, "memory guard")

	r = kdbuild(t, args...)
	require.Equal(t, exitOK, r.code, "stderr %s", r.stderr)
	got, _ = lookup(decode(t, r.stdout), "tree.limited")
	assert.Contains(t, got, "duplication budget: ")
	assert.NotContains(t, got, "memory guard")
}
