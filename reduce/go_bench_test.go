package reduce

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

func TestBenchOnGoExecutor(t *testing.T) {
	rows, err := Bench(exec.Go(2), []int{1 << 10, 5000}, 1, 0)
	require.NoError(t, err)
	require.Len(t, rows, 3) // copy row + one per size
	require.Equal(t, "copy", rows[0].Op)
	for _, r := range rows[1:] {
		require.Equal(t, "reduce_min", r.Op)
		require.Equal(t, "go", r.Variant)
	}
}

func TestThesisTableOnGoExecutor(t *testing.T) {
	wl := synthWorkload(5000, 6)
	boxes := 0
	for _, l := range wl {
		boxes += l.Elements()
	}
	rows, err := ThesisTable(exec.Go(2), wl, 3)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, 3*len(wl), rows[0].Reductions)
	require.Equal(t, boxes, rows[0].N)
	out := FormatThesisTable(rows)
	require.True(t, strings.Contains(out, "Go executor:"), out)
	require.True(t, strings.Contains(out, fmt.Sprintf("Workload: 3 x the node-bounds reductions of a kd-tree build: %d levels", len(wl))), out)
}

func TestThesisTableRejectsBadWorkload(t *testing.T) {
	ok := BoxLevel{Boxes: make([]float32, 12), Offsets: []uint32{0, 2}}
	for name, wl := range map[string][]BoxLevel{
		"empty":          nil,
		"not-6-per-box":  {ok, {Boxes: make([]float32, 7), Offsets: []uint32{0, 1}}},
		"no-segment":     {{Boxes: make([]float32, 6), Offsets: []uint32{0}}},
		"decreasing":     {{Boxes: make([]float32, 18), Offsets: []uint32{0, 2, 1}}},
		"past-the-boxes": {{Boxes: make([]float32, 18), Offsets: []uint32{0, 4}}},
	} {
		_, err := ThesisTable(exec.Go(1), wl, 1)
		require.Error(t, err, name)
	}
}

func BenchmarkGoMin(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 20, 1 << 24} {
		s := exec.Wrap(benchData(n))
		ex := exec.Go(0)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Min(ex, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
