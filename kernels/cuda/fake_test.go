package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// FakeDriverEnv is set in the child process that runs against the fake.
const fakeChildEnv = "KDBUILD_FAKE_CUDA_CHILD"

// TestFakeDriver runs the GPU tests of this package against
// testdata/fakecuda.c, a host-side stand-in for libcuda.so.1, so that the
// driver binding (symbols, contexts, argument marshalling, copies, errors)
// is exercised on machines without a GPU. It needs gcc.
func TestFakeDriver(t *testing.T) {
	out := runWithFakeDriver(t, "testdata/fakecuda.c", nil,
		"^TestGPU(LaunchMixedArgs|LaunchErrors|LaunchQueue|ImageEnv|DebugTimes|PeakBytes|Events|DevicesAndInfo|HostAlloc|ClosedContext|LargeCopyToHost|MemCache)$")
	for _, name := range []string{"TestGPULaunchMixedArgs", "TestGPULaunchErrors", "TestGPULaunchQueue", "TestGPUImageEnv", "TestGPUClosedContext", "TestGPUDevicesAndInfo", "TestGPULargeCopyToHost", "TestGPUMemCache"} {
		if !strings.Contains(out, "--- PASS: "+name) {
			t.Errorf("%s did not pass against the fake driver:\n%s", name, out)
		}
	}
}

// TestFakeDriverMissingSymbol loads a fake driver that lacks
// cuMemsetD32_v2: Open must fail with ErrNoDriver naming the symbol.
func TestFakeDriverMissingSymbol(t *testing.T) {
	out := runWithFakeDriver(t, "testdata/fakecuda.c", []string{"-DFAKE_OMIT_MEMSET32"}, "^TestMissingSymbolChild$")
	if !strings.Contains(out, "--- PASS: TestMissingSymbolChild") {
		t.Errorf("child did not pass:\n%s", out)
	}
}

// TestMissingSymbolChild is the child of TestFakeDriverMissingSymbol.
func TestMissingSymbolChild(t *testing.T) {
	if os.Getenv(fakeChildEnv) == "" {
		t.Skip("runs as the child of TestFakeDriverMissingSymbol")
	}
	_, err := Open(0)
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "dlsym cuMemsetD32_v2") {
		t.Fatalf("Open with a driver lacking cuMemsetD32_v2: %v", err)
	}
	t.Log(err)
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
	if !Cgo {
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
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1", "LD_LIBRARY_PATH="+dir, DebugEnv+"=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tests against the fake driver failed: %v\n%s", err, b)
	}
	if strings.Contains(string(b), "--- SKIP") {
		t.Fatalf("tests skipped against the fake driver:\n%s", b)
	}
	return string(b)
}
