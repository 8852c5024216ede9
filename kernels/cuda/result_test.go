package cuda

import (
	"errors"
	"strings"
	"testing"
)

func TestResultNames(t *testing.T) {
	cases := []struct {
		r    Result
		name string
	}{
		{0, "CUDA_SUCCESS"},
		{1, "CUDA_ERROR_INVALID_VALUE"},
		{2, "CUDA_ERROR_OUT_OF_MEMORY"},
		{100, "CUDA_ERROR_NO_DEVICE"},
		{209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
		{500, "CUDA_ERROR_NOT_FOUND"},
		{700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{719, "CUDA_ERROR_LAUNCH_FAILED"},
		{999, "CUDA_ERROR_UNKNOWN"},
		{12345, "CUDA_ERROR_12345"},
	}
	for _, c := range cases {
		if got := c.r.Name(); got != c.name {
			t.Errorf("Result(%d).Name() = %q, want %q", int(c.r), got, c.name)
		}
		if !strings.Contains(c.r.Error(), c.name) {
			t.Errorf("Result(%d).Error() = %q lacks %q", int(c.r), c.r.Error(), c.name)
		}
	}
}

func TestResultIs(t *testing.T) {
	cases := []struct {
		r      Result
		target error
		want   bool
	}{
		{2, ErrOutOfMemory, true},
		{1, ErrOutOfMemory, false},
		{100, ErrNoDevice, true},
		{100, ErrNoDriver, false},
		{34, ErrNoDriver, true},
		{209, ErrNoKernelImage, true},
		{200, ErrNoKernelImage, true},
		{700, ErrNoKernelImage, false},
	}
	for _, c := range cases {
		if got := errors.Is(c.r, c.target); got != c.want {
			t.Errorf("errors.Is(%v, %v) = %v, want %v", c.r, c.target, got, c.want)
		}
		// Through the Error wrapper and another layer of wrapping.
		e := error(&Error{Op: "cuMemAlloc", Code: c.r})
		if got := errors.Is(reason(errors.New("outer"), e), c.target); got != c.want {
			t.Errorf("errors.Is(wrapped %v, %v) = %v, want %v", c.r, c.target, got, c.want)
		}
	}
	var r Result
	if !errors.As(&Error{Op: "launch", Kernel: "fill_u32", Code: 719}, &r) || r != 719 {
		t.Errorf("errors.As to Result gave %v", r)
	}
}

func TestErrorMessage(t *testing.T) {
	e := &Error{Op: "cuLaunchKernel", Kernel: "reduce_min_r4_f32", Code: 1, Detail: "invalid argument"}
	if want := "cuda: cuLaunchKernel reduce_min_r4_f32: CUDA_ERROR_INVALID_VALUE: invalid argument"; e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
	w := reason(ErrNoDevice, &Error{Op: "cuInit", Code: 100})
	if want := "cuda: no device: cuInit: CUDA_ERROR_NO_DEVICE"; w.Error() != want {
		t.Errorf("got %q, want %q", w.Error(), want)
	}
	if !errors.Is(w, ErrNoDevice) || !errors.Is(w, Result(100)) {
		t.Errorf("%v does not match ErrNoDevice and Result(100)", w)
	}
}

func TestGridFor(t *testing.T) {
	cases := []struct{ n, block, want int }{
		{0, 256, 1}, {1, 256, 1}, {255, 256, 1}, {256, 256, 1}, {257, 256, 2},
		{1 << 20, 256, 4096}, {1<<20 + 1, 256, 4097}, {31, 32, 1}, {33, 32, 2},
	}
	for _, c := range cases {
		if got := GridFor(c.n, c.block); got != (Dim3{uint32(c.want), 1, 1}) {
			t.Errorf("GridFor(%d, %d) = %v, want %d blocks", c.n, c.block, got, c.want)
		}
	}
	if got := Linear(7); got != (Dim3{7, 1, 1}) {
		t.Errorf("Linear(7) = %v", got)
	}
}

func TestHuman(t *testing.T) {
	cases := []struct {
		b    uint64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {3 << 29, "1.5 GiB"}, {1 << 50, "1.0 PiB"}}
	for _, c := range cases {
		if got := human(c.b); got != c.want {
			t.Errorf("human(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}

// TestOpenWithoutGPU runs where there is no usable GPU (CI, a build without
// cgo): Open must fail with a sentinel error and say why.
func TestOpenWithoutGPU(t *testing.T) {
	c, err := Open(0)
	if err == nil {
		c.Close()
		t.Skip("a GPU is present; this test covers machines without one")
	}
	if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) && !errors.Is(err, ErrNoKernelImage) {
		t.Fatalf("Open(0) = %v, want an error wrapping ErrNoDriver, ErrNoDevice or ErrNoKernelImage", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "cuda: ") {
		t.Errorf("message %q does not start with cuda:", msg)
	}
	// The reason follows the sentinel's text.
	for _, s := range []error{ErrNoDriver, ErrNoDevice, ErrNoKernelImage} {
		if errors.Is(err, s) {
			if len(msg) <= len(s.Error())+2 {
				t.Errorf("message %q carries no reason", msg)
			}
		}
	}
	if devs, derr := Devices(); derr == nil && len(devs) > 0 && devs[0].Usable {
		t.Errorf("Open failed (%v) but Devices lists a usable device 0", err)
	}
}

// TestGraphMin: KDBUILD_CUDA_GRAPHS's values: 0 turns graphs off, 2 to 64
// set the shortest graph batch, anything else keeps the default (1).
func TestGraphMin(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
	}{{"", 1}, {"0", 0}, {"1", 1}, {"2", 2}, {"7", 7}, {"64", 64}, {"65", 1}, {"-3", 1}, {"yes", 1}, {" 5", 1}} {
		if got := graphMin(c.v); got != c.want {
			t.Errorf("graphMin(%q) = %d, want %d", c.v, got, c.want)
		}
	}
}
