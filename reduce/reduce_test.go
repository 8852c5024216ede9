package reduce

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

func TestGoMinMaxMatchesOracle(t *testing.T) {
	for _, workers := range []int{1, 3, 4} {
		ex := exec.Go(workers)
		for _, kind := range dataKinds {
			for _, n := range testSizes(17) {
				s := genData(kind, n, 7)
				src := exec.Wrap(s)
				name := fmt.Sprintf("w%d/%s/%d", workers, kind, n)
				lo, err := Min(ex, src)
				require.NoError(t, err)
				bitsEqual(t, name+" Min", lo, refMin(s))
				hi, err := Max(ex, src)
				require.NoError(t, err)
				bitsEqual(t, name+" Max", hi, refMax(s))
				lo2, hi2, err := MinMax(ex, src)
				require.NoError(t, err)
				bitsEqual(t, name+" MinMax lo", lo2, refMin(s))
				bitsEqual(t, name+" MinMax hi", hi2, refMax(s))
			}
		}
	}
}

func TestVariantsOnGoExecutor(t *testing.T) {
	ex := exec.Go(2)
	s := genData("special", 5000, 3)
	for _, v := range benchVariants() {
		for _, name := range []string{v.Name, v.Label()} {
			lo, err := MinVariant(ex, name, exec.Wrap(s))
			require.NoError(t, err)
			bitsEqual(t, name, lo, refMin(s))
			hi, err := MaxVariant(ex, name, exec.Wrap(s))
			require.NoError(t, err)
			bitsEqual(t, name, hi, refMax(s))
		}
	}
	_, err := MinVariant(ex, "r9", exec.Wrap(s))
	require.Error(t, err)
}

func TestVariantTable(t *testing.T) {
	vs := Variants()
	require.Len(t, vs, 8)
	for i, v := range vs {
		require.Equal(t, fmt.Sprintf("r%d", i), v.Name)
		require.Equal(t, fmt.Sprintf("Reduce%d", i), v.Label())
		require.Equal(t, fmt.Sprintf("reduce_minmax_r%d_f32", i), v.Kernel("minmax"))
		require.NotEmpty(t, v.Idea)
	}
	for i := 0; i < 5; i++ {
		require.Equal(t, vs[i].Label(), vs[i].Thesis)
	}
}

// launchesOf counts the launches of design v over n elements by following
// the levels directly (the Variant doc's rule), independently of Launches.
func launchesOf(v Variant, n int) int {
	switch {
	case v.PerBlock > 0:
		k := 1
		for n > finalPerThread*v.FinalThreads {
			n = (n + v.PerBlock - 1) / v.PerBlock
			k++
		}
		return k
	case v.Name == "r6" && n > 16*blockSize:
		return 2
	}
	return 1
}

func TestVariantLaunches(t *testing.T) {
	for _, v := range Variants() {
		for _, n := range []int{0, 1, 255, 256, 257, 8192, 8193, 16384, 16385, 69451, 1 << 20, 1 << 24, 1<<24 + 1, 1 << 28, maxLen} {
			require.Equal(t, launchesOf(v, n), v.Launches(n), "%s n=%d", v.Name, n)
		}
	}
	// The counts the Variant doc states.
	want := map[string][3]int{"r0": {2, 3, 3}, "r1": {2, 3, 3}, "r2": {2, 3, 3}, "r3": {2, 3, 3}, "r4": {2, 2, 3}, "r5": {2, 2, 3}, "r6": {2, 2, 2}, "r7": {1, 1, 1}}
	for _, v := range Variants() {
		require.Equal(t, want[v.Name], [3]int{v.Launches(69451), v.Launches(1 << 24), v.Launches(1 << 28)}, v.Name)
	}
}
