package exec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// FakeDriverEnv is set in the child process that runs against the fake.
const fakeChildEnv = "KDBUILD_FAKE_CUDA_CHILD"

// TestFakeDriver runs the GPU suite of this package (sizes up to 2^16)
// against ../cuda/testdata/fakecuda.c, a host-side stand-in for
// libcuda.so.1, so that the executor paths are exercised on machines
// without a GPU. It needs gcc.
func TestFakeDriver(t *testing.T) {
	out := runWithFakeDriver(t, "../cuda/testdata/fakecuda.c", nil, "^TestGPU", "-test.short")
	if n := strings.Count(out, "--- PASS: TestGPU"); n < 10 {
		t.Errorf("only %d GPU tests passed against the fake driver:\n%s", n, out)
	}
}

// runWithFakeDriver builds the fake driver from src (with cflags), runs
// this test binary again with it first on the library path, and returns the
// verbose output.
func runWithFakeDriver(t *testing.T, src string, cflags []string, run string, extra ...string) string {
	t.Helper()
	if os.Getenv(fakeChildEnv) != "" {
		t.Skip("already running against the fake driver")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	if !cuda.Cgo {
		t.Skip("built without the driver binding (cgo)")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build the fake driver")
	}
	if _, err := os.Stat(src); err != nil {
		t.Skipf("fake driver source: %v", err)
	}
	dir := t.TempDir()
	ccArgs := append([]string{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, "libcuda.so.1"), src}, cflags...)
	if b, err := exec.Command(cc, ccArgs...).CombinedOutput(); err != nil {
		t.Fatalf("building the fake driver: %v\n%s", err, b)
	}
	args := append([]string{"-test.run", run, "-test.v", "-test.count=1"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1", "LD_LIBRARY_PATH="+dir, cuda.DebugEnv+"=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tests against the fake driver failed: %v\n%s", err, b)
	}
	if strings.Contains(string(b), "--- SKIP") {
		t.Fatalf("tests skipped against the fake driver:\n%s", b)
	}
	return string(b)
}
