package reduce

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
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

// gridScene is a small procedural scene: a w×w grid of squares, two
// triangles each, z = x·y.
func gridScene(w int) *scenes.Scene {
	sc := &scenes.Scene{Name: fmt.Sprintf("grid %dx%d", w, w), Format: "procedural"}
	for y := 0; y <= w; y++ {
		for x := 0; x <= w; x++ {
			sc.Verts = append(sc.Verts, mgl32.Vec3{float32(x), float32(y) - 3, float32(x * y)})
		}
	}
	for y := 0; y < w; y++ {
		for x := 0; x < w; x++ {
			i := uint32(y*(w+1) + x)
			sc.Tris = append(sc.Tris, [3]uint32{i, i + 1, i + uint32(w) + 1}, [3]uint32{i + 1, i + uint32(w) + 2, i + uint32(w) + 1})
		}
	}
	return sc
}

func TestThesisTableOnGoExecutor(t *testing.T) {
	rows, err := ThesisTable(exec.Go(2), gridScene(20), 3)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, 18, rows[0].Reductions)
	require.Equal(t, 800, rows[0].N)
	out := FormatThesisTable(rows)
	require.True(t, strings.Contains(out, "Go executor:"), out)
	require.True(t, strings.Contains(out, "Workload: 3 x the triangle bounds"), out)
}

func TestThesisTableRejectsBadIndex(t *testing.T) {
	sc := gridScene(2)
	sc.Tris[1][2] = 999
	_, err := ThesisTable(exec.Go(1), sc, 1)
	require.Error(t, err)
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
