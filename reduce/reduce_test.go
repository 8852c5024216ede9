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
	for _, v := range Variants() {
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
