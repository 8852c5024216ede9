package scan

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// checkWith runs every ...With function through one Scanner over growing
// and shrinking sizes (the scratch is reused and grown).
func checkWith(t *testing.T, ex exec.Executor) {
	sc, err := NewScanner(ex, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Free()
	if sc.Executor() != ex {
		t.Fatal("Scanner.Executor is not the executor it was made for")
	}
	for _, n := range []int{1000, 5, 70001, 4097, 300000, 1} {
		src := randomValues[uint32](n, uint64(n)+9)
		heads := randomHeads(n, 50, uint64(n))
		_, in := upload(t, ex, src)
		_, h := upload(t, ex, heads)
		ow, out := upload(t, ex, make([]uint32, n))
		what := fmt.Sprintf("n=%d", n)
		if err := ExclusiveWith(sc, out, in); err != nil {
			t.Fatal(err)
		}
		equalExact(t, "ExclusiveWith "+what, download(t, what, ow), refExclusive(src))
		if err := InclusiveWith(sc, out, in); err != nil {
			t.Fatal(err)
		}
		equalExact(t, "InclusiveWith "+what, download(t, what, ow), refInclusive(src))
		if err := SegmentedExclusiveWith(sc, out, in, h); err != nil {
			t.Fatal(err)
		}
		equalExact(t, "SegmentedExclusiveWith "+what, download(t, what, ow), refSegmented(src, heads, false))
		if err := SegmentedInclusiveWith(sc, out, in, h); err != nil {
			t.Fatal(err)
		}
		equalExact(t, "SegmentedInclusiveWith "+what, download(t, what, ow), refSegmented(src, heads, true))
		k, err := CompactWith(sc, out, in, h)
		if err != nil {
			t.Fatal(err)
		}
		want := refCompact(src, heads)
		equalExact(t, "CompactWith "+what, download(t, what, ow)[:k], want)
		if err := sc.ReserveSort(n); err != nil {
			t.Fatal(err)
		}
		kw, keys := upload(t, ex, src)
		if err := SortPairsWith(sc, keys, nil); err != nil {
			t.Fatal(err)
		}
		wantK, _ := refSortPairs(src, make([]uint32, n))
		equalExact(t, "SortPairsWith "+what, download(t, what, kw), wantK)
	}
	// Free is idempotent and the Scanner still works afterwards.
	if err := sc.Free(); err != nil {
		t.Fatal(err)
	}
	if err := sc.Free(); err != nil {
		t.Fatal(err)
	}
	src := randomValues[uint32](10000, 1)
	_, in := upload(t, ex, src)
	ow, out := upload(t, ex, make([]uint32, len(src)))
	if err := ExclusiveWith(sc, out, in); err != nil {
		t.Fatal(err)
	}
	equalExact(t, "after Free", download(t, "after Free", ow), refExclusive(src))
}

func TestScannerCPU(t *testing.T) { checkWith(t, goEx) }

func TestGPUScanner(t *testing.T) { checkWith(t, gpuOrSkip(t)) }

// TestGPUConcurrent calls the plain functions from several goroutines at
// once: they share the cached Scanner.
func TestGPUConcurrent(t *testing.T) {
	ex := gpuOrSkip(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			n := 100000 + 4099*g
			src := randomValues[uint32](n, uint64(g))
			in, err := exec.FromHost(ex, src)
			if err != nil {
				errs <- err
				return
			}
			defer in.Free()
			out, err := exec.Alloc[uint32](ex, n)
			if err != nil {
				errs <- err
				return
			}
			defer out.Free()
			want := refInclusive(src)
			for i := 0; i < 20; i++ {
				if err := Inclusive(ex, out, in); err != nil {
					errs <- err
					return
				}
				got, err := out.ToHost()
				if err != nil {
					errs <- err
					return
				}
				for j := range want {
					if got[j] != want[j] {
						errs <- fmt.Errorf("goroutine %d run %d: [%d] = %d, want %d", g, i, j, got[j], want[j])
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestReleaseCPU(t *testing.T) {
	if err := Release(goEx); err != nil {
		t.Fatal(err)
	}
}

// checkTotals tests ExclusiveTotal and ExclusiveTotalTo against the
// reference sum.
func checkTotals[T Value](t *testing.T, ex exec.Executor) {
	sc, err := NewScanner(ex, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Free()
	for _, n := range []int{0, 1, 33, 4096, 4097, 100003} {
		src := randomValues[T](n, uint64(n)+17)
		var want T
		for _, v := range src {
			want += v
		}
		_, in := upload(t, ex, src)
		ow, out := upload(t, ex, make([]T, n))
		got, err := ExclusiveTotal(ex, out, in)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s ExclusiveTotal n=%d: total %v, want %v", typeName[T](), n, got, want)
		}
		equalExact(t, "ExclusiveTotal", download(t, "ExclusiveTotal", ow), refExclusive(src))
		tw, tot := upload(t, ex, []T{guardValue[T]()})
		if err := ExclusiveTotalTo(sc, out, in, tot); err != nil {
			t.Fatal(err)
		}
		if g := download(t, "total", tw)[0]; g != want {
			t.Fatalf("%s ExclusiveTotalTo n=%d: total %v, want %v", typeName[T](), n, g, want)
		}
		equalExact(t, "ExclusiveTotalTo", download(t, "ExclusiveTotalTo", ow), refExclusive(src))
	}
}

func TestTotalsCPU(t *testing.T) {
	checkTotals[uint32](t, goEx)
	checkTotals[int32](t, goEx)
	checkTotals[float32](t, goEx)
}

func TestGPUTotals(t *testing.T) {
	ex := gpuOrSkip(t)
	checkTotals[uint32](t, ex)
	checkTotals[int32](t, ex)
	checkTotals[float32](t, ex)
}

// checkSortBits tests SortPairsBitsWith with keys below 2^bits.
func checkSortBits(t *testing.T, ex exec.Executor) {
	sc, err := NewScanner(ex, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Free()
	for _, bits := range []int{0, 1, 7, 8, 9, 20, 32} {
		for _, n := range []int{2, 2049, 100003} {
			keys := sortKeys(n, "full", uint64(n+bits))
			for i := range keys {
				keys[i] &= uint32(1<<bits - 1)
			}
			vals := make([]uint32, n)
			for i := range vals {
				vals[i] = uint32(i)
			}
			wantK, wantV := refSortPairs(keys, vals)
			kw, kb := upload(t, ex, keys)
			vw, vb := upload(t, ex, vals)
			if err := SortPairsBitsWith(sc, kb, vb, bits); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("SortPairsBitsWith bits=%d n=%d", bits, n)
			equalExact(t, what+" keys", download(t, what, kw), wantK)
			equalExact(t, what+" values", download(t, what, vw), wantV)
		}
	}
	if err := SortPairsBitsWith(sc, exec.Wrap([]uint32{}), nil, 33); err == nil {
		t.Error("bits 33: no error")
	}
}

func TestSortBitsCPU(t *testing.T) { checkSortBits(t, goEx) }

func TestGPUSortBits(t *testing.T) { checkSortBits(t, gpuOrSkip(t)) }
