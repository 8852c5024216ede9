package exec

import "testing"

func TestCopyBandwidthGo(t *testing.T) {
	rows, err := CopyBandwidth(Go(2), []int{1000, 1 << 16}, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkCopyRows(t, rows, 2, []string{CopyGo, CopyParallel})
}

func TestCopySizes(t *testing.T) {
	s := CopySizes()
	if len(s) != 9 || s[0] != 1<<20 || s[8] != 1<<28 {
		t.Fatalf("CopySizes() = %v", s)
	}
	if CopyGBps(nil) != 0 {
		t.Fatal("CopyGBps(nil) != 0")
	}
}

// TestOpenWithoutGPU: where there is no GPU, auto falls back to Go and says
// why, and gpu is an error.
func TestOpenWithoutGPU(t *testing.T) {
	if ex, _ := TestGPU(); ex != nil {
		t.Skip("a GPU is present")
	}
	ex, fallback, err := Open("auto")
	if err != nil || ex == nil || ex.CUDA() != nil {
		t.Fatalf("Open(auto) = %v, %v, %v; want the Go executor", ex, fallback, err)
	}
	if !IsNoGPU(fallback) {
		t.Fatalf("fallback reason %v is not a no-GPU error", fallback)
	}
	if _, _, err := Open("gpu"); !IsNoGPU(err) {
		t.Fatalf("Open(gpu) error %v is not a no-GPU error", err)
	}
}

// BenchmarkCopy copies 2^24 float32 device to device (or with copy() on the
// Go executor when $KDBUILD_DEVICE selects it); bytes count read+write.
func BenchmarkCopy(b *testing.B) {
	ex, err := FromEnv()
	if err != nil {
		b.Skip(err)
	}
	const n = 1 << 24
	src, err := Alloc[float32](ex, n)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	dst, err := Alloc[float32](ex, n)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Free()
	b.SetBytes(8 * n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := dst.CopyFrom(src); err != nil {
			b.Fatal(err)
		}
	}
	if ctx := ex.CUDA(); ctx != nil {
		if err := ctx.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
}
