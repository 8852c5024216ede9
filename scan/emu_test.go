package scan

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestEmulatedKernels compiles kernels/scan.cu, compact.cu and sort.cu for
// the CPU with testdata/emu/emu.h (every CUDA thread a fiber, blocks one
// after another, warp collectives as barriers) and runs them against
// reference loops, withholding look-back prefixes so that the look-back
// walks back over aggregates and across 32-tile windows. It needs g++ with
// C++20 and takes minutes, so it runs only with KDBUILD_EMU=1 (optionally
// KDBUILD_EMU_PART=quick|scan|seg|segoff|compact|sort; all by default).
func TestEmulatedKernels(t *testing.T) {
	if os.Getenv("KDBUILD_EMU") != "1" {
		t.Skip("set KDBUILD_EMU=1 to run the kernels on the CPU emulator (minutes)")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	bin := filepath.Join(t.TempDir(), "emu")
	src, _ := filepath.Abs("testdata/emu/kernels_test.cpp")
	inc, _ := filepath.Abs("../kernels")
	cmd := exec.Command(gxx, "-std=c++20", "-O1", "-I", inc, "-I", filepath.Dir(src), "-o", bin, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	run := exec.Command(bin, os.Getenv("KDBUILD_EMU_PART"))
	out, err := run.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("emulated kernels: %v", err)
	}
}
