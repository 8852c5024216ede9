package reduce

import (
	"fmt"
	"math"
	"strings"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// ThesisRow is one line of the thesis's reduction table.
type ThesisRow struct {
	Variant     string  // r0 … r7, or "go" on the Go executor
	Label       string  // Reduce0 … Reduce7
	TotalUs     float64 // time of the whole workload (median of thesisReps repetitions)
	DecreasePct float64 // 100·(1 − TotalUs/TotalUs of Reduce0)
	Reductions  int     // reductions in the workload
	N           int     // elements per reduction
	Workload    string  // what was timed, in words
}

// thesisReps is how often the whole workload is repeated; the median counts.
const thesisReps = 21

// ThesisTable reproduces the table of the thesis (total time of the reduce
// kernels during a kd-tree build of a scene, per design, and the decrease
// against Reduce0). Until the kd-tree builder reports its reductions, the
// workload is defined as: runs times the scene's triangle bounds, where one
// triangle-bounds computation is the minimum over the triangles of the
// per-triangle box minima on x, y and z and the maximum of the box maxima on
// x, y and z: 6 reductions (3 min, 3 max) of len(scene.Tris) floats, the
// six per-triangle arrays built once on the host and uploaded before
// timing. So runs = 20 times 6 = 120 reductions per design, each one launched
// like Min/Max (all its passes) with the result left on the device. The
// total is the median over thesisReps repetitions of the whole workload
// (CUDA events around it on a GPU). Every design's six results are checked
// against the Go executor first.
func ThesisTable(ex exec.Executor, scene *scenes.Scene, runs int) ([]ThesisRow, error) {
	if runs < 1 {
		runs = 20
	}
	nt := len(scene.Tris)
	var arrays [6][]float32
	for j := range arrays {
		arrays[j] = make([]float32, nt)
	}
	for i, t := range scene.Tris {
		for a := range 3 {
			lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
			for _, vi := range t {
				if int(vi) >= len(scene.Verts) {
					return nil, fmt.Errorf("reduce: triangle %d uses vertex %d of %d", i, vi, len(scene.Verts))
				}
				c := scene.Verts[vi][a]
				lo, hi = Min2(lo, c), Max2(hi, c)
			}
			arrays[a][i], arrays[3+a][i] = lo, hi
		}
	}
	var bufs [6]*exec.Buf[float32]
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	for j := range bufs {
		b, err := exec.FromHost(ex, arrays[j])
		if err != nil {
			return nil, fmt.Errorf("reduce: thesis table input: %w", err)
		}
		bufs[j] = b
	}
	var want [6]float32
	for a := range 3 {
		want[a], _, _ = MinMax(exec.Go(0), exec.Wrap(arrays[a]))
		_, want[3+a], _ = MinMax(exec.Go(0), exec.Wrap(arrays[3+a]))
	}
	workload := fmt.Sprintf("%d x the triangle bounds of %s: min over the %d per-triangle box minima on x, y, z and max over the box maxima on x, y, z = %d reductions of %d floats (results left on the device)",
		runs, scene.Name, nt, 6*runs, nt)

	r := NewReducer(ex)
	defer r.Free()
	var rows []ThesisRow
	if r.ctx == nil {
		t, err := exec.Time(ex, thesisReps, func() error {
			for range runs {
				for a := range 3 {
					if _, err := r.Min(bufs[a]); err != nil {
						return err
					}
					if _, err := r.Max(bufs[3+a]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return []ThesisRow{{Variant: "go", Label: "Go executor", TotalUs: 1000 * t.Median, Reductions: 6 * runs, N: nt, Workload: workload}}, nil
	}
	for _, v := range variants {
		one := func() error {
			for a := range 3 {
				if err := r.enqueue(v, opMin, bufs[a], r.result, a, 0); err != nil {
					return err
				}
				if err := r.enqueue(v, opMax, bufs[3+a], r.result, 0, 3+a); err != nil {
					return err
				}
			}
			return nil
		}
		r.mu.Lock()
		err := r.fixed() // r.result must exist before one() passes it
		if err == nil {
			err = one()
		}
		if err == nil {
			err = r.result.Slice(0, 6).CopyToHost(r.host[:6])
		}
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		for j := range want {
			if !sameBits(r.host[j], want[j]) {
				return nil, fmt.Errorf("reduce: thesis workload with %s: result %d is %v, the Go executor's %v", v.Name, j, r.host[j], want[j])
			}
		}
		t, err := exec.Time(ex, thesisReps, func() error {
			r.mu.Lock()
			defer r.mu.Unlock()
			for range runs {
				if err := one(); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		rows = append(rows, ThesisRow{Variant: v.Name, Label: v.Label(), TotalUs: 1000 * t.Median, Reductions: 6 * runs, N: nt, Workload: workload})
	}
	for i := range rows {
		if rows[0].TotalUs > 0 {
			rows[i].DecreasePct = 100 * (1 - rows[i].TotalUs/rows[0].TotalUs)
		}
	}
	return rows, nil
}

// FormatThesisTable prints rows in the thesis's layout: algorithm, total
// execution time in µs, decrease in execution time against the first row.
func FormatThesisTable(rows []ThesisRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s | %22s | %28s |\n", "Algorithm:", "Total execution time:", "Decrease in execution time:")
	b.WriteString(strings.Repeat("=", 12) + "=|=" + strings.Repeat("=", 22) + "=|=" + strings.Repeat("=", 28) + "=|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-12s | %20.1fµs | %27.1f%% |\n", r.Label+":", r.TotalUs, r.DecreasePct)
	}
	if len(rows) > 0 && rows[0].Workload != "" {
		fmt.Fprintf(&b, "Workload: %s\n", rows[0].Workload)
	}
	return b.String()
}
