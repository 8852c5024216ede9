package exec

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// The GPU suite: every test runs the same steps on the CUDA executor and on
// the Go executor and requires identical results. The runtime kernels of
// runtime.cu get a Go twin here, written as a primitive is (one path per
// executor).

// gpuSizes are the lengths every test covers: the edges of a warp and of a
// 256-thread block, then 2^k-1, 2^k, 2^k+1 up to 2^24 (2^16 with -short).
func gpuSizes() []int {
	s := []int{0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025}
	top := 24
	if testing.Short() {
		top = 16
	}
	for k := 11; k <= top; k++ {
		s = append(s, 1<<k-1, 1<<k, 1<<k+1)
	}
	return s
}

// guard is the number of elements on each side of an output that must stay
// untouched.
const guard = 67

func needGPU(t *testing.T) Executor {
	t.Helper()
	ex, why := TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	return ex
}

// guarded allocates n+2*guard elements on ex filled with sentinel, runs op
// on the middle n, and returns them after checking that the guards are
// intact.
func guarded[T cuda.Elem](t *testing.T, ex Executor, n int, sentinel T, op func(out *Buf[T]) error) []T {
	t.Helper()
	init := make([]T, n+2*guard)
	for i := range init {
		init[i] = sentinel
	}
	b, err := FromHost(ex, init)
	if err != nil {
		t.Fatalf("%s: allocating %d: %v", ex.Name(), n+2*guard, err)
	}
	defer b.Free()
	if err := op(b.Slice(guard, n)); err != nil {
		t.Fatalf("%s: n=%d: %v", ex.Name(), n, err)
	}
	all, err := b.ToHost()
	if err != nil {
		t.Fatalf("%s: n=%d: reading back: %v", ex.Name(), n, err)
	}
	for i := 0; i < guard; i++ {
		if all[i] != sentinel || all[guard+n+i] != sentinel {
			t.Fatalf("%s: n=%d: guard overwritten: before[%d]=%v after[%d]=%v, want %v",
				ex.Name(), n, i, all[i], i, all[guard+n+i], sentinel)
		}
	}
	return all[guard : guard+n]
}

// sameAsGo runs op guarded on the GPU and on the Go executor and requires
// bit-identical outputs.
func sameAsGo[T cuda.Elem](t *testing.T, gpu Executor, n int, sentinel T, op func(ex Executor, out *Buf[T]) error) {
	t.Helper()
	want := guarded(t, Go(0), n, sentinel, func(out *Buf[T]) error { return op(Go(0), out) })
	got := guarded(t, gpu, n, sentinel, func(out *Buf[T]) error { return op(gpu, out) })
	requireSame(t, fmt.Sprintf("n=%d", n), got, want)
}

// requireSame compares element bits (so NaN and -0 count too).
func requireSame[T cuda.Elem](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	size := int(unsafe.Sizeof(*new(T)))
	if len(got) == 0 {
		return
	}
	gb := unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), len(got)*size)
	wb := unsafe.Slice((*byte)(unsafe.Pointer(&want[0])), len(want)*size)
	for i := range gb {
		if gb[i] != wb[i] {
			e := i / size
			t.Fatalf("%s: element %d: GPU %v, Go %v", what, e, got[e], want[e])
		}
	}
}

func block() cuda.Dim3 { return cuda.Linear(256) }

// fillU32 sets every element of out to v (kernel fill_u32).
func fillU32(ex Executor, out *Buf[uint32], v uint32) error {
	if ctx := ex.CUDA(); ctx != nil {
		return ctx.Launch("fill_u32", cuda.GridFor(out.Len(), 256), block(), 0, out.Ptr(), uint32(out.Len()), v)
	}
	h := out.Host()
	for i := range h {
		h[i] = v
	}
	return nil
}

// fillF32 sets every element of out to v (kernel fill_f32).
func fillF32(ex Executor, out *Buf[float32], v float32) error {
	if ctx := ex.CUDA(); ctx != nil {
		return ctx.Launch("fill_f32", cuda.GridFor(out.Len(), 256), block(), 0, out.Ptr(), uint32(out.Len()), v)
	}
	h := out.Host()
	for i := range h {
		h[i] = v
	}
	return nil
}

// iotaU32 sets out[i] = start + i mod 2^32 (kernel iota_u32), with a small
// grid so that the grid-stride loop runs several rounds.
func iotaU32(ex Executor, out *Buf[uint32], start uint32) error {
	if ctx := ex.CUDA(); ctx != nil {
		return ctx.Launch("iota_u32", cuda.Linear(7), cuda.Linear(96), 0, out.Ptr(), uint32(out.Len()), start)
	}
	h := out.Host()
	for i := range h {
		h[i] = start + uint32(i)
	}
	return nil
}

// copyU32 copies src into out (kernel copy_u32).
func copyU32(ex Executor, out, src *Buf[uint32]) error {
	if ctx := ex.CUDA(); ctx != nil {
		return ctx.Launch("copy_u32", cuda.GridFor((out.Len()+3)/4, 256), block(), 0, out.Ptr(), src.Ptr(), uint64(out.Len()))
	}
	copy(out.Host(), src.Host())
	return nil
}

// addScalar sets out[i] = src[i] + v with the add_scalar_<suffix> kernel,
// whose n parameter is 32 or 64 bits wide as wide64 says.
func addScalar[T cuda.Elem](ex Executor, kernel string, wide64 bool, out, src *Buf[T], v T) error {
	if ctx := ex.CUDA(); ctx != nil {
		var n any = uint32(out.Len())
		if wide64 {
			n = uint64(out.Len())
		}
		return ctx.Launch(kernel, cuda.GridFor(out.Len(), 256), block(), 0, out.Ptr(), src.Ptr(), n, v)
	}
	o, s := out.Host(), src.Host()
	for i := range o {
		o[i] = s[i] + v
	}
	return nil
}

func TestGPUFill(t *testing.T) {
	gpu := needGPU(t)
	for _, n := range gpuSizes() {
		sameAsGo(t, gpu, n, 0xdeadbeef, func(ex Executor, out *Buf[uint32]) error { return fillU32(ex, out, 0x01234567) })
		sameAsGo(t, gpu, n, float32(-7), func(ex Executor, out *Buf[float32]) error {
			return fillF32(ex, out, float32(math.Pi))
		})
	}
}

func TestGPUIota(t *testing.T) {
	gpu := needGPU(t)
	for _, n := range gpuSizes() {
		// A start near 2^32 checks the wrap-around.
		sameAsGo(t, gpu, n, 7, func(ex Executor, out *Buf[uint32]) error { return iotaU32(ex, out, math.MaxUint32-40) })
	}
}

func TestGPUCopyKernel(t *testing.T) {
	gpu := needGPU(t)
	rng := rand.New(rand.NewSource(3))
	for _, n := range gpuSizes() {
		src := make([]uint32, n+3)
		for i := range src {
			src[i] = rng.Uint32()
		}
		// Offsets 0 (16-byte aligned: the uint4 path) and 1..3 (scalar path;
		// up to 2^20 only, to keep the suite quick).
		for off := 0; off < 4 && (off == 0 || n <= 1<<20); off++ {
			sameAsGo(t, gpu, n, 0xa5a5a5a5, func(ex Executor, out *Buf[uint32]) error {
				s, err := FromHost(ex, src)
				if err != nil {
					return err
				}
				defer s.Free()
				return copyU32(ex, out, s.Slice(off, n))
			})
		}
	}
}

// addScalarCase runs one add_scalar kernel over every size.
func addScalarCase[T cuda.Elem](t *testing.T, gpu Executor, kernel string, wide64 bool, gen func(*rand.Rand) T, v, sentinel T) {
	t.Run(kernel, func(t *testing.T) {
		rng := rand.New(rand.NewSource(11))
		for _, n := range gpuSizes() {
			src := make([]T, n)
			for i := range src {
				src[i] = gen(rng)
			}
			sameAsGo(t, gpu, n, sentinel, func(ex Executor, out *Buf[T]) error {
				s, err := FromHost(ex, src)
				if err != nil {
					return err
				}
				defer s.Free()
				return addScalar(ex, kernel, wide64, out, s, v)
			})
		}
	})
}

// TestGPULaunchArgTypes passes each scalar argument type through Launch.
func TestGPULaunchArgTypes(t *testing.T) {
	gpu := needGPU(t)
	addScalarCase(t, gpu, "add_scalar_u32", false, func(r *rand.Rand) uint32 { return r.Uint32() }, uint32(0x80000001), 1)
	addScalarCase(t, gpu, "add_scalar_i32", false, func(r *rand.Rand) int32 { return int32(r.Uint32()) }, int32(-123456789), 1)
	addScalarCase(t, gpu, "add_scalar_f32", false, func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }, float32(0.1), 1)
	addScalarCase(t, gpu, "add_scalar_u64", true, func(r *rand.Rand) uint64 { return r.Uint64() }, uint64(1<<40+3), 1)
	addScalarCase(t, gpu, "add_scalar_i64", true, func(r *rand.Rand) int64 { return int64(r.Uint64()) }, int64(-1<<41-5), 1)
	addScalarCase(t, gpu, "add_scalar_f64", true, func(r *rand.Rand) float64 { return r.NormFloat64() }, 1.0/3, 1)
}

// TestGPUMemset sets bytes and words of a view and compares with the same
// bytes set in Go.
func TestGPUMemset(t *testing.T) {
	gpu := needGPU(t)
	for _, n := range gpuSizes() {
		sameAsGo(t, gpu, n, 0x11111111, func(ex Executor, out *Buf[uint32]) error {
			if ctx := ex.CUDA(); ctx != nil {
				return out.Dev().Memset32(0xcafef00d)
			}
			for i := range out.Host() {
				out.Host()[i] = 0xcafef00d
			}
			return nil
		})
		sameAsGo(t, gpu, n, byte(0x11), func(ex Executor, out *Buf[byte]) error {
			if ctx := ex.CUDA(); ctx != nil {
				return out.Dev().Memset8(0x9c)
			}
			for i := range out.Host() {
				out.Host()[i] = 0x9c
			}
			return nil
		})
	}
}

// TestGPUCopies moves data through every copy of Buf — host to device,
// device to device between views, device to host — with the same calls on
// both executors.
func TestGPUCopies(t *testing.T) {
	gpu := needGPU(t)
	rng := rand.New(rand.NewSource(5))
	for _, n := range gpuSizes() {
		data := make([]float32, 2*n+5)
		for i := range data {
			data[i] = rng.Float32()
		}
		sameAsGo(t, gpu, n, float32(-1), func(ex Executor, out *Buf[float32]) error {
			a, err := FromHost(ex, data) // host to device
			if err != nil {
				return err
			}
			defer a.Free()
			b, err := Alloc[float32](ex, 2*n+5)
			if err != nil {
				return err
			}
			defer b.Free()
			if err := b.CopyFrom(a); err != nil { // device to device, whole
				return err
			}
			// Into a view at an odd offset, then from a view to the output.
			if err := b.Slice(3, n).CopyFrom(a.Slice(n+5, n)); err != nil {
				return err
			}
			if err := out.CopyFrom(b.Slice(3, n)); err != nil {
				return err
			}
			// Device to host of a view must agree with what went in.
			back := make([]float32, n)
			if err := b.Slice(3, n).CopyToHost(back); err != nil {
				return err
			}
			for i := range back {
				if back[i] != data[n+5+i] {
					return fmt.Errorf("view element %d: %v, want %v", i, back[i], data[n+5+i])
				}
			}
			return nil
		})
	}
}

func TestGPUFreeIdempotent(t *testing.T) {
	gpu := needGPU(t)
	ctx := gpu.CUDA()
	before := ctx.AllocatedBytes()
	b, err := Alloc[uint32](gpu, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx.AllocatedBytes() - before; got != 4000 {
		t.Fatalf("AllocatedBytes grew by %d, want 4000", got)
	}
	v := b.Slice(10, 20)
	if err := v.Free(); err != nil { // a view never frees
		t.Fatal(err)
	}
	if err := fillU32(gpu, b, 9); err != nil {
		t.Fatalf("buffer unusable after freeing a view: %v", err)
	}
	for i := 0; i < 3; i++ {
		if err := b.Free(); err != nil {
			t.Fatalf("Free #%d: %v", i+1, err)
		}
	}
	if got := ctx.AllocatedBytes(); got != before {
		t.Fatalf("AllocatedBytes %d after Free, want %d", got, before)
	}
	if err := ctx.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

func TestGPUOutOfMemory(t *testing.T) {
	gpu := needGPU(t)
	const huge = 1 << 50
	b, err := Alloc[byte](gpu, huge)
	if err == nil {
		b.Free()
		t.Fatal("allocating 1 PiB succeeded")
	}
	if !errors.Is(err, cuda.ErrOutOfMemory) {
		t.Fatalf("error %v does not wrap ErrOutOfMemory", err)
	}
	if !strings.Contains(err.Error(), strconv.Itoa(huge)) {
		t.Errorf("error %q does not say how many bytes were asked", err)
	}
	// The device still works afterwards.
	sameAsGo(t, gpu, 33, 0, func(ex Executor, out *Buf[uint32]) error { return fillU32(ex, out, 1) })
}

func TestGPUCopyBandwidth(t *testing.T) {
	gpu := needGPU(t)
	rows, err := CopyBandwidth(gpu, []int{1 << 20, 1 << 22}, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkCopyRows(t, rows, 2, []string{CopyMemcpy, CopyKernel})
	for _, r := range rows {
		t.Logf("%s %-12s n=%-8d %8.4f ms %8.1f GB/s %s", r.Op, r.Variant, r.N, r.Ms, r.GBps, r.Note)
	}
	// The copy kernel's result equals the source.
	sameAsGo(t, gpu, 1<<20+1, 0, func(ex Executor, out *Buf[uint32]) error {
		s, err := Alloc[uint32](ex, out.Len())
		if err != nil {
			return err
		}
		defer s.Free()
		if err := iotaU32(ex, s, 5); err != nil {
			return err
		}
		return copyU32(ex, out, s)
	})
}

// checkCopyRows checks the shape of a copy benchmark table: per size one
// best row plus one per variant, the best the fastest.
func checkCopyRows(t *testing.T, rows []BenchRow, sizes int, variants []string) {
	t.Helper()
	if len(rows) != sizes*(1+len(variants)) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), sizes*(1+len(variants)), rows)
	}
	bestAt := map[int]float64{}
	maxAt := map[int]float64{}
	largest := 0
	for _, r := range rows {
		if r.Op != "copy" || r.GBps <= 0 || r.Bytes != int64(8*r.N) {
			t.Fatalf("bad row %+v", r)
		}
		if r.Variant == CopyBest {
			bestAt[r.N] = r.GBps
		} else if r.GBps > maxAt[r.N] {
			maxAt[r.N] = r.GBps
		}
		largest = max(largest, r.N)
	}
	for n, g := range bestAt {
		if g != maxAt[n] {
			t.Errorf("n=%d: best %v GB/s, fastest variant %v", n, g, maxAt[n])
		}
	}
	if g := CopyGBps(rows); g != bestAt[largest] {
		t.Errorf("CopyGBps = %v, want the best at n=%d: %v", g, largest, bestAt[largest])
	}
}
