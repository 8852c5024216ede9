//go:build cgo && linux

package cuda

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kdbuild/kdbuild/kernels"
)

var (
	testOnce sync.Once
	testCtx  *Context
	testErr  error
)

// gpu returns the shared test context or skips with the reason.
func gpu(t *testing.T) *Context {
	t.Helper()
	testOnce.Do(func() { testCtx, testErr = Open(0) })
	if testErr != nil {
		t.Skip("no usable GPU: " + testErr.Error())
	}
	return testCtx
}

// TestGPULaunchMixedArgs checks that arguments of every type, size and
// alignment arrive in order, by having a kernel write back their bits.
func TestGPULaunchMixedArgs(t *testing.T) {
	c := gpu(t)
	out, err := NewBuffer[uint64](c, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	p, err := NewBuffer[uint32](c, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Free()
	cases := []struct {
		a uint32
		b float64
		c int32
		d float32
		e uint64
		f int64
	}{
		{1, 2.5, -3, 4.25, 5, -6},
		{math.MaxUint32, -math.MaxFloat64, math.MinInt32, float32(math.Inf(-1)), math.MaxUint64, math.MinInt64},
		{0, math.SmallestNonzeroFloat64, math.MaxInt32, float32(math.Copysign(0, -1)), 1 << 63, math.MaxInt64},
	}
	for i, k := range cases {
		// The pointer argument once as a DevPtr, once as a *Buffer (Ptr method).
		var ptr any = p.Slice(1, 2).Ptr()
		if i%2 == 1 {
			ptr = p.Slice(1, 2)
		}
		if err := c.Launch("args_mixed_u64", Linear(1), Linear(32), 0, out.Ptr(), k.a, k.b, k.c, k.d, k.e, k.f, ptr); err != nil {
			t.Fatal(err)
		}
		got, err := out.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		want := []uint64{uint64(k.a), math.Float64bits(k.b), uint64(int64(k.c)), uint64(math.Float32bits(k.d)),
			k.e, uint64(k.f), uint64(p.Ptr()) + 4}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("case %d argument %d: kernel saw %#x, want %#x", i, j, got[j], want[j])
			}
		}
	}
}

func TestGPULaunchErrors(t *testing.T) {
	c := gpu(t)
	err := c.Launch("no_such_kernel_u32", Linear(1), Linear(1), 0)
	if err == nil || !strings.Contains(err.Error(), "no_such_kernel_u32") || !errors.Is(err, Result(500)) {
		t.Errorf("unknown kernel: %v, want CUDA_ERROR_NOT_FOUND naming the kernel", err)
	}
	err = c.Launch("fill_u32", Linear(1), Linear(1), 0, DevPtr(0), int(3), uint32(1))
	if err == nil || !strings.Contains(err.Error(), "argument 1 has type int") {
		t.Errorf("Go int argument: %v, want a refusal naming argument 1", err)
	}
	err = c.Launch("fill_u32", Linear(1), Linear(4096), 0, DevPtr(0), uint32(0), uint32(1))
	if err == nil || !strings.Contains(err.Error(), "fill_u32") || !strings.Contains(err.Error(), "4096 threads") {
		t.Errorf("block of 4096 threads: %v, want an error naming fill_u32", err)
	}
	err = c.Launch("fill_u32", Dim3{X: 0, Y: 1, Z: 1}, Linear(32), 0, DevPtr(0), uint32(0), uint32(1))
	if err == nil || !strings.Contains(err.Error(), "fill_u32") {
		t.Errorf("grid of 0 blocks: %v, want an error naming fill_u32", err)
	}
	if err := c.Synchronize(); err != nil {
		t.Fatalf("context unusable after refused launches: %v", err)
	}
}

// TestGPULaunchQueue: launches queue on the host (Launch) and reach the
// driver in order when the queue is full, at Flush and before copies: a
// run of fills and copies longer than the queue, each reading what the one
// before wrote, ends in the last value; a launch the driver refuses is
// reported by the call that submits it, naming the kernel, and the
// launches queued after it are dropped.
func TestGPULaunchQueue(t *testing.T) {
	c := gpu(t)
	a, err := NewBuffer[uint32](c, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := NewBuffer[uint32](c, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	for _, runs := range []int{1, batchCap - 1, batchCap, batchCap + 1, 3*batchCap + 5} {
		// Fill a with i, copy it to b, fill a with i+1 where b holds i: a
		// launch that ran out of order leaves a different value.
		for i := 0; i < runs; i++ {
			if err := c.Launch("fill_u32", GridFor(a.Len(), 256), Linear(256), 0, a, uint32(a.Len()), uint32(i)); err != nil {
				t.Fatal(err)
			}
			if err := c.Launch("copy_u32", GridFor(a.Len(), 256), Linear(256), 0, b, a, uint64(a.Len())); err != nil {
				t.Fatal(err)
			}
		}
		if runs%2 == 1 {
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range got {
			if v != uint32(runs-1) {
				t.Fatalf("%d runs: b[%d] = %d, want %d", runs, j, v, runs-1)
			}
		}
	}
	// A batch long enough for a launch graph, three times (the second
	// makes the graph, the third reuses it), the third with a launch the
	// driver refuses: it is named, the launches before it ran.
	for round := 0; round < 3; round++ {
		for i := 0; i < 10; i++ {
			var shared uint32
			if round == 2 && i == 4 {
				shared = 1 << 30
			}
			if err := c.Launch("fill_u32", Linear(1), Linear(32), shared, a, uint32(a.Len()), uint32(100*round+i)); err != nil {
				t.Fatal(err)
			}
		}
		err := c.Flush()
		if round < 2 && err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round == 2 && (err == nil || !strings.Contains(err.Error(), "queued launch 5 of 10")) {
			t.Fatalf("refused launch in a batch of 10: %v, want an error naming launch 5 of 10", err)
		}
	}
	if got, err := a.ToHost(); err != nil || got[0] != 203 {
		t.Fatalf("a[0] = %v (%v), want 203 (the last launch before the refused one)", got[0], err)
	}
	// Too much shared memory: queued, refused when submitted.
	if err := c.Launch("fill_u32", Linear(1), Linear(32), 0, a, uint32(a.Len()), uint32(7)); err != nil {
		t.Fatal(err)
	}
	if err := c.Launch("fill_u32", Linear(1), Linear(32), 1<<30, a, uint32(a.Len()), uint32(8)); err != nil {
		t.Fatalf("launch refused before it was submitted: %v", err)
	}
	if err := c.Launch("fill_u32", Linear(1), Linear(32), 0, a, uint32(a.Len()), uint32(9)); err != nil {
		t.Fatal(err)
	}
	err = c.Flush()
	if err == nil || !strings.Contains(err.Error(), "fill_u32") || !strings.Contains(err.Error(), "queued launch 2 of 3") {
		t.Fatalf("Flush after a refused launch: %v, want an error naming fill_u32, launch 2 of 3", err)
	}
	if err := c.Flush(); err != nil {
		t.Fatalf("second Flush: %v, want nothing left to submit", err)
	}
	got, err := a.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 7 {
		t.Errorf("a[0] = %d after the refused launch, want 7 (the launch before it ran, the one after was dropped)", got[0])
	}
}

// TestGPUImageEnv: KDBUILD_KERNEL_IMAGE loads the image from a file (here
// a copy of the embedded one, whose kernels then run), a missing file is
// an error naming the variable, and a file that is no image is refused by
// the driver.
func TestGPUImageEnv(t *testing.T) {
	gpu(t) // skips without a GPU
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "copy.fatbin"), filepath.Join(dir, "bad.fatbin")
	if err := os.WriteFile(good, kernels.Image, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a kernel image"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ImageEnv, good)
	c, err := Open(0)
	if err != nil {
		t.Fatalf("Open with %s=%s: %v", ImageEnv, good, err)
	}
	b, err := NewBuffer[uint32](c, 33)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Launch("fill_u32", Linear(1), Linear(64), 0, b, uint32(b.Len()), uint32(5)); err != nil {
		t.Fatal(err)
	}
	got, err := b.ToHost()
	if err != nil || got[32] != 5 {
		t.Fatalf("fill from the file's image: %v, %v", got, err)
	}
	b.Free()
	c.Close()
	for _, path := range []string{filepath.Join(dir, "missing.fatbin"), bad} {
		t.Setenv(ImageEnv, path)
		if c, err := Open(0); err == nil {
			c.Close()
			t.Errorf("Open with %s=%s: no error", ImageEnv, path)
		} else if path != bad && !strings.Contains(err.Error(), ImageEnv) {
			t.Errorf("Open with a missing image: %v, want an error naming %s", err, ImageEnv)
		}
	}
}

// TestGPUDebugTimes turns debugging on and checks that launches are counted
// per kernel.
func TestGPUDebugTimes(t *testing.T) {
	c := gpu(t)
	b, err := NewBuffer[float32](c, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	was := c.Debug()
	c.SetDebug(true)
	defer c.SetDebug(was)
	c.ResetKernelTimes()
	for i := 0; i < 3; i++ {
		if err := c.Launch("fill_f32", GridFor(b.Len(), 256), Linear(256), 0, b, uint32(b.Len()), float32(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Launch("iota_u32", Linear(1), Linear(32), 0, b, uint32(10), uint32(0)); err != nil {
		t.Fatal(err)
	}
	times := c.KernelTimes()
	got := map[string]int{}
	for _, kt := range times {
		got[kt.Kernel] = kt.Launches
		if kt.TotalMs <= 0 {
			t.Errorf("%s: %v ms", kt.Kernel, kt.TotalMs)
		}
	}
	if got["fill_f32"] != 3 || got["iota_u32"] != 1 || len(got) != 2 {
		t.Errorf("KernelTimes = %+v, want fill_f32 ×3 and iota_u32 ×1", times)
	}
}

func TestGPUPeakBytes(t *testing.T) {
	c := gpu(t)
	c.ResetPeak()
	base := c.AllocatedBytes()
	a, err := NewBuffer[byte](c, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuffer[byte](c, 3<<20)
	if err != nil {
		t.Fatal(err)
	}
	a.Free()
	b.Free()
	if got := c.PeakBytes() - base; got != 4<<20 {
		t.Errorf("peak grew by %d, want %d", got, 4<<20)
	}
	if c.AllocatedBytes() != base {
		t.Errorf("AllocatedBytes %d, want %d", c.AllocatedBytes(), base)
	}
	c.ResetPeak()
	if c.PeakBytes() != base {
		t.Errorf("after ResetPeak: %d, want %d", c.PeakBytes(), base)
	}
}

func TestGPUEvents(t *testing.T) {
	c := gpu(t)
	b, err := NewBuffer[uint32](c, 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	start, err := c.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer start.Destroy()
	end, err := c.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer end.Destroy()
	if err := start.Record(); err != nil {
		t.Fatal(err)
	}
	if err := b.Memset32(7); err != nil {
		t.Fatal(err)
	}
	if err := end.Record(); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Fatal(err)
	}
	ms, err := Elapsed(start, end)
	if err != nil || ms < 0 || ms > 10000 {
		t.Fatalf("Elapsed = %v ms, %v", ms, err)
	}
	if err := end.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := end.Destroy(); err != nil {
		t.Fatalf("second Destroy: %v", err)
	}
}

func TestGPUDevicesAndInfo(t *testing.T) {
	c := gpu(t)
	devs, err := Devices()
	if err != nil || len(devs) == 0 {
		t.Fatalf("Devices() = %v, %v", devs, err)
	}
	info := c.Info()
	d := devs[0]
	if d.Name != info.Name || d.SMs != info.SMs || d.TotalMem != info.TotalMem || !d.Usable {
		t.Errorf("Devices()[0] = %+v, Info() = %+v", d, info)
	}
	if info.SMs <= 0 || info.Major < 7 || info.L2Bytes <= 0 || info.MaxSharedPerBlock < 48<<10 ||
		info.MaxSharedPerBlockOptin < info.MaxSharedPerBlock || info.TotalMem < 1<<30 {
		t.Errorf("implausible device info %+v", info)
	}
	if v, err := DriverVersion(); err != nil || v < 11080 {
		t.Errorf("DriverVersion() = %d, %v", v, err)
	}
	free, total, err := c.MemInfo()
	if err != nil || free == 0 || free > total || total > info.TotalMem {
		t.Errorf("MemInfo() = %d, %d, %v (TotalMem %d)", free, total, err, info.TotalMem)
	}
}

func TestGPUHostAlloc(t *testing.T) {
	c := gpu(t)
	p, err := c.HostAlloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.HostFree(p); err != nil {
		t.Fatal(err)
	}
}

// TestGPUClosedContext opens a second handle on the primary context, closes
// it, and checks that it refuses work while the shared one keeps working.
func TestGPUClosedContext(t *testing.T) {
	shared := gpu(t)
	c, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Alloc(16); !errors.Is(err, ErrClosed) {
		t.Errorf("Alloc after Close: %v", err)
	}
	if err := c.Launch("fill_u32", Linear(1), Linear(1), 0, DevPtr(0), uint32(0), uint32(0)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch after Close: %v", err)
	}
	b, err := NewBuffer[uint32](shared, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := shared.Launch("fill_u32", Linear(1), Linear(32), 0, b, uint32(5), uint32(9)); err != nil {
		t.Fatal(err)
	}
	got, err := b.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 9 {
			t.Fatalf("element %d = %d after fill with 9", i, v)
		}
	}
}

// BenchmarkLaunch measures the host cost of one launch (an empty fill) on
// the default stream, the device synchronised every 1024 launches.
func BenchmarkLaunch(b *testing.B) {
	c, err := Open(0)
	if err != nil {
		b.Skip("no usable GPU: " + err.Error())
	}
	defer c.Close()
	buf, err := NewBuffer[uint32](c, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Launch("fill_u32", Linear(1), Linear(32), 0, buf.Ptr(), uint32(0), uint32(i)); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			if err := c.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := c.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLaunchSync measures a launch followed by a synchronisation.
func BenchmarkLaunchSync(b *testing.B) {
	c, err := Open(0)
	if err != nil {
		b.Skip("no usable GPU: " + err.Error())
	}
	defer c.Close()
	buf, err := NewBuffer[uint32](c, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Launch("fill_u32", Linear(1), Linear(32), 0, buf.Ptr(), uint32(0), uint32(i)); err != nil {
			b.Fatal(err)
		}
		if err := c.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
}
