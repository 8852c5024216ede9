package scan

import (
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// checkBench runs Bench for every operation and checks the rows' shape:
// one per variant and size, positive times, bytes as documented.
func checkBench(t *testing.T, ex exec.Executor, sizes []int) {
	for _, op := range BenchOps {
		rows, err := Bench(ex, op, sizes, 20, 100)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		var variants []string
		switch op {
		case "scan":
			variants = Variants(ex)
		case "segscan":
			variants = []string{VariantCPUSerial + "-offsets", DefaultVariant(ex) + "-heads"}
			if ex.CUDA() != nil { // the offsets form and its tuning kernels, then the two kernel families of the heads form
				variants = []string{VariantProduction + "-offsets"}
				for _, tv := range tuningSegOffsets {
					variants = append(variants, tv.variant)
				}
				variants = append(variants, VariantProduction+"-heads", VariantProductionV1+"-heads")
			}
		case "compact":
			variants = CompactVariants(ex)
		case "sort":
			variants = SortVariants(ex)
		}
		if len(rows) != len(variants)*len(sizes) {
			t.Fatalf("%s: %d rows, want %d", op, len(rows), len(variants)*len(sizes))
		}
		for i, r := range rows {
			if want := variants[i%len(variants)]; r.Variant != want {
				t.Errorf("%s: row %d is %q, want %q", op, i, r.Variant, want)
			}
		}
		for _, r := range rows {
			if r.Op != op || r.Ms < 0 || r.Bytes <= 0 {
				t.Errorf("%s: bad row %+v", op, r)
			}
			if op == "scan" && r.Bytes != 8*int64(r.N) {
				t.Errorf("scan row bytes %d for n=%d", r.Bytes, r.N)
			}
		}
	}
	if _, err := Bench(ex, "nonsense", sizes, 20, 0); err == nil {
		t.Error("unknown op: no error")
	}
}

func TestBenchCPU(t *testing.T) { checkBench(t, goEx, []int{1000, 4097}) }

func TestGPUBench(t *testing.T) {
	ex := gpuOrSkip(t)
	sizes := []int{1 << 10, 1<<16 + 3}
	if !testing.Short() {
		sizes = append(sizes, 1<<22)
	}
	checkBench(t, ex, sizes)
}
