package reduce

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tuning variants' shapes, kernels and launch counts, stated
// independently of tuned.
func TestTuningVariantTable(t *testing.T) {
	want := []struct {
		name, label, design                       string
		threads, perBlock, finalThreads           int
		kernel, final                             string
		launches69451, launches2p24, launches2p28 int
	}{
		{"r0-t128", "Reduce0-t128", "r0", 128, 128, 128, "reduce_min_r0_t128_f32", "reduce_min_r0_t128_f32", 2, 3, 4},
		{"r0-t512", "Reduce0-t512", "r0", 512, 512, 512, "reduce_min_r0_t512_f32", "reduce_min_r0_t512_f32", 2, 3, 3},
		{"r4-t64", "Reduce4-t64", "r4", 64, 128, 1024, "reduce_min_r4_t64_f32", "reduce_min_r4final_f32", 2, 3, 3},
		{"r4-t128", "Reduce4-t128", "r4", 128, 256, 1024, "reduce_min_r4_t128_f32", "reduce_min_r4final_f32", 2, 3, 3},
		{"r4-t512", "Reduce4-t512", "r4", 512, 1024, 1024, "reduce_min_r4_t512_f32", "reduce_min_r4final_f32", 2, 2, 3},
		{"r5-t128", "Reduce5-t128", "r5", 128, 256, 1024, "reduce_min_r5_t128_f32", "reduce_min_r5final_f32", 2, 3, 3},
	}
	tv := TuningVariants()
	require.Len(t, tv, len(want))
	cIdent := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for i, w := range want {
		v := tv[i]
		require.Equal(t, w.name, v.Name)
		require.Equal(t, w.label, v.Label())
		require.Equal(t, w.design, v.design())
		require.Equal(t, [3]int{w.threads, w.perBlock, w.finalThreads}, [3]int{v.Threads, v.PerBlock, v.FinalThreads}, v.Name)
		require.Equal(t, w.kernel, v.Kernel("min"))
		require.Equal(t, w.final, v.finalKernel("min"))
		for _, op := range []string{"min", "max", "minmax"} {
			require.Regexp(t, cIdent, v.Kernel(op))
			require.Regexp(t, cIdent, v.finalKernel(op))
		}
		require.NotEmpty(t, v.Idea)
		require.Equal(t, [3]int{w.launches69451, w.launches2p24, w.launches2p28},
			[3]int{v.Launches(69451), v.Launches(1 << 24), v.Launches(1 << 28)}, v.Name)
		for _, n := range []int{0, 1, 127, 128, 129, 4096, 4097, 32768, 32769, 1<<20 + 1, maxLen} {
			require.Equal(t, launchesOf(v, n), v.Launches(n), "%s n=%d", v.Name, n)
		}
	}
}

// Tuning variants are found by name and label, are not among Variants,
// and come after them in the bench rows.
func TestTuningVariantsLookup(t *testing.T) {
	names := map[string]bool{}
	for _, v := range Variants() {
		names[v.Name] = true
	}
	for _, v := range TuningVariants() {
		require.False(t, names[v.Name], "%s also in Variants", v.Name)
		names[v.Name] = true
		for _, name := range []string{v.Name, v.Label()} {
			got, err := lookup(name)
			require.NoError(t, err, name)
			require.Equal(t, v, got)
		}
	}
	bv := benchVariants()
	require.Equal(t, append(Variants(), TuningVariants()...), bv)
	_, err := lookup("r4-t96")
	require.Error(t, err)
}

// reduce.cu instantiates exactly the tuning variants' kernels
// (KD_REDUCE_TUNINGS): each named variant has its min, max and minmax
// entry points, and no instantiation lacks a variant.
func TestTuningKernelsInstantiated(t *testing.T) {
	src, err := os.ReadFile("../kernels/reduce.cu")
	require.NoError(t, err)
	var inCU []string
	for _, m := range regexp.MustCompile(`(?m)^\s*KD_REDUCE_TUNING\(OP, R, (\d+), (\d+)\)`).FindAllSubmatch(src, -1) {
		inCU = append(inCU, "r"+string(m[1])+"-t"+string(m[2]))
	}
	var named []string
	for _, v := range TuningVariants() {
		named = append(named, v.design()+"-t"+strconv.Itoa(v.Threads))
		require.Equal(t, v.Name, named[len(named)-1])
	}
	require.ElementsMatch(t, named, inCU)
	for _, op := range []string{"min", "max", "minmax"} {
		require.Contains(t, string(src), "KD_REDUCE_TUNINGS("+op+", ")
	}
}
