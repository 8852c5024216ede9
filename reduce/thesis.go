package reduce

import (
	"fmt"
	"strings"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// ThesisRow is one line of the thesis's reduction table.
type ThesisRow struct {
	Variant     string  // r0 … r7, "go" on the Go executor, "aos" for SegmentedBoxesAoS
	Label       string  // Reduce0 … Reduce7
	TotalUs     float64 // time of the whole workload (median of thesisReps repetitions)
	DecreasePct float64 // 100·(1 − TotalUs/TotalUs of Reduce0)
	Reductions  int     // segmented box reductions timed (levels × runs)
	N           int     // boxes of one run of the workload (all levels)
	Launches    int     // kernel launches of one run of the workload (0 on the Go executor)
	Workload    string  // what was timed, in words
}

// thesisReps is how often the whole workload is repeated; the median counts.
const thesisReps = 21

// ThesisTable reproduces the table of the thesis: the total time of the
// reduce kernels during a kd-tree build, per design, and the decrease
// against Reduce0. The workload is the builder's own node-bounds
// reductions, one BoxLevel per level (kdtree.ReductionWorkload records
// them), each a segmented reduction of interleaved boxes
// (SegmentedBoxesAoS). The whole list runs `runs` times (the thesis ran 20;
// runs < 1 means 20); the total is the median over thesisReps repetitions
// (CUDA events around it on a GPU).
//
// On a GPU every design r0 … r7 runs in its segmented form (see doc.go,
// "Segmented forms of the designs"): per level, host-built block lists
// (each block at most the design's span of one segment), uploaded before
// timing, the design's block reduction over each span and further passes of
// the same design over the per-block boxes until one box per segment is
// left (r7: one launch per level, the last block of a segment reduces its
// blocks' boxes). A last row times SegmentedBoxesAoS itself (the builder's
// kernel). Every design's results of every level are checked against
// SegmentedBoxesAoS on the Go executor before timing; a mismatch is an
// error. On the Go executor there is one row, SegmentedBoxesAoS.
func ThesisTable(ex exec.Executor, workload []BoxLevel, runs int) ([]ThesisRow, error) {
	if runs < 1 {
		runs = 20
	}
	if len(workload) == 0 {
		return nil, fmt.Errorf("reduce: thesis table: empty workload")
	}
	boxes, segs := 0, 0
	want := make([][]float32, len(workload))
	for i, l := range workload {
		if len(l.Boxes)%6 != 0 {
			return nil, fmt.Errorf("reduce: thesis workload level %d: %d floats, not 6 per box", i, len(l.Boxes))
		}
		if len(l.Offsets) < 2 {
			return nil, fmt.Errorf("reduce: thesis workload level %d: %d offsets, want at least 2", i, len(l.Offsets))
		}
		if err := checkOffsets(l.Offsets, l.Elements()); err != nil {
			return nil, fmt.Errorf("reduce: thesis workload level %d: %w", i, err)
		}
		if l.Elements() > maxLen/6 || l.Segments() > maxLen/32 {
			return nil, fmt.Errorf("reduce: thesis workload level %d too large (%d boxes)", i, l.Elements())
		}
		boxes += l.Elements()
		segs += l.Segments()
		want[i] = make([]float32, 6*l.Segments())
		if err := SegmentedBoxesAoS(exec.Go(0), exec.Wrap(want[i]), exec.Wrap(l.Boxes), exec.Wrap(l.Offsets)); err != nil {
			return nil, err
		}
	}
	text := fmt.Sprintf("%d x the node-bounds reductions of a kd-tree build: %d levels = %d segmented box reductions per run, %d boxes and %d segments per run (%d reductions, %d boxes in all)",
		runs, len(workload), len(workload), boxes, segs, runs*len(workload), runs*boxes)
	row := func(variant, label string, t exec.Timing, launches int) ThesisRow {
		return ThesisRow{Variant: variant, Label: label, TotalUs: 1000 * t.Median, Reductions: runs * len(workload),
			N: boxes, Launches: launches, Workload: text}
	}

	if ex.CUDA() == nil {
		in := make([]*exec.Buf[float32], len(workload))
		out := make([]*exec.Buf[float32], len(workload))
		off := make([]*exec.Buf[uint32], len(workload))
		for i, l := range workload {
			in[i], off[i], out[i] = exec.Wrap(l.Boxes), exec.Wrap(l.Offsets), exec.Wrap(make([]float32, 6*l.Segments()))
		}
		t, err := exec.Time(ex, thesisReps, func() error {
			for range runs {
				for i := range workload {
					if err := SegmentedBoxesAoS(ex, out[i], in[i], off[i]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return []ThesisRow{row("go", "Go executor", t, 0)}, nil
	}

	tw, err := newThesisWork(ex, workload)
	if err != nil {
		return nil, err
	}
	defer tw.free()
	var rows []ThesisRow
	for _, v := range variants {
		plans, err := tw.plan(v)
		if err != nil {
			return nil, err
		}
		launches := 0
		for _, p := range plans {
			launches += len(p.passes)
		}
		for i := range workload { // check every level once
			if err := tw.runLevel(v, i, plans[i]); err != nil {
				return nil, err
			}
			if err := tw.check(v.Name, i, want[i]); err != nil {
				return nil, err
			}
		}
		t, err := exec.Time(ex, thesisReps, func() error {
			for range runs {
				for i := range workload {
					if err := tw.runLevel(v, i, plans[i]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		for _, p := range plans {
			p.free()
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row(v.Name, v.Label(), t, launches))
	}
	// The builder's kernel on the same workload.
	for i := range workload {
		if err := tw.r.SegmentedBoxesAoS(tw.out[i], tw.in[i], tw.off[i]); err != nil {
			return nil, err
		}
		if err := tw.check("SegmentedBoxesAoS", i, want[i]); err != nil {
			return nil, err
		}
	}
	t, err := exec.Time(ex, thesisReps, func() error {
		for range runs {
			for i := range workload {
				if err := tw.r.SegmentedBoxesAoS(tw.out[i], tw.in[i], tw.off[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows = append(rows, row("aos", "AoS kernel", t, 2*len(workload)))
	for i := range rows {
		if rows[0].TotalUs > 0 {
			rows[i].DecreasePct = 100 * (1 - rows[i].TotalUs/rows[0].TotalUs)
		}
	}
	return rows, nil
}

// thesisWork holds the device side of the thesis workload: every level's
// boxes, offsets and output, and the designs' scratch.
type thesisWork struct {
	ex     exec.Executor
	ctx    *cuda.Context
	r      *Reducer
	inBase []*exec.Buf[float32]
	in     []*exec.Buf[float32] // views of inBase holding the level's boxes
	off    []*exec.Buf[uint32]
	out    []*exec.Buf[float32]
	lv     []BoxLevel
	part   [2]*exec.Buf[float32] // per-block boxes of the passes (ping-pong)
	work   *exec.Buf[uint32]     // r0/r1 work arrays
	ctr    *exec.Buf[uint32]     // r7 per-segment counters (zero between launches)
}

func newThesisWork(ex exec.Executor, workload []BoxLevel) (*thesisWork, error) {
	tw := &thesisWork{ex: ex, ctx: ex.CUDA(), r: NewReducer(ex), lv: workload}
	maxSeg := 0
	for _, l := range workload {
		b := l.Boxes
		if len(b) == 0 {
			b = make([]float32, 6) // a valid pointer; no block reads it
		}
		in, err := exec.FromHost(ex, b)
		if err != nil {
			tw.free()
			return nil, fmt.Errorf("reduce: thesis workload upload: %w", err)
		}
		tw.inBase = append(tw.inBase, in)
		tw.in = append(tw.in, in.Slice(0, len(l.Boxes)))
		off, err := exec.FromHost(ex, l.Offsets)
		if err != nil {
			tw.free()
			return nil, fmt.Errorf("reduce: thesis workload upload: %w", err)
		}
		tw.off = append(tw.off, off)
		out, err := exec.Alloc[float32](ex, 6*l.Segments())
		if err != nil {
			tw.free()
			return nil, fmt.Errorf("reduce: thesis workload output: %w", err)
		}
		tw.out = append(tw.out, out)
		maxSeg = max(maxSeg, l.Segments())
	}
	if err := ensureU32(ex, &tw.ctr, maxSeg+1); err != nil {
		tw.free()
		return nil, err
	}
	if err := tw.ctr.Dev().Memset32(0); err != nil {
		tw.free()
		return nil, fmt.Errorf("reduce: thesis counters: %w", err)
	}
	return tw, nil
}

func (tw *thesisWork) free() {
	for _, b := range tw.inBase {
		b.Free()
	}
	for _, b := range tw.off {
		b.Free()
	}
	for _, b := range tw.out {
		b.Free()
	}
	tw.part[0].Free()
	tw.part[1].Free()
	tw.work.Free()
	tw.ctr.Free()
	tw.r.Free()
}

// check reads level i's output back and compares it with want.
func (tw *thesisWork) check(name string, i int, want []float32) error {
	got, err := tw.out[i].ToHost()
	if err != nil {
		return fmt.Errorf("reduce: thesis workload with %s, level %d: %w", name, i, err)
	}
	for j := range want {
		if !sameBits(got[j], want[j]) {
			return fmt.Errorf("reduce: thesis workload with %s, level %d: segment %d component %d is %v, the Go executor's %v",
				name, i, j/6, j%6, got[j], want[j])
		}
	}
	return nil
}

// boxPlan is one design's passes over one level.
type boxPlan struct {
	passes   []boxPass
	segFirst *exec.Buf[uint32] // r7: first block of every segment, and the block count last
}

type boxPass struct {
	blocks  *exec.Buf[uint32] // 4 words per block: first element, count, segment, 0
	nblocks int
}

func (p boxPlan) free() {
	for _, q := range p.passes {
		q.blocks.Free()
	}
	p.segFirst.Free()
}

// boxSpan is the most elements one block of design v takes in the
// segmented box form (reduce.cu, reduce_box_*).
func boxSpan(v Variant) int {
	if v.PerBlock > 0 {
		return v.PerBlock
	}
	return 16 * blockSize // kBoxSpan67
}

// planBoxPasses builds the block lists of design span over segments given
// by offsets: pass 0 covers every segment with max(1, ⌈len/span⌉) blocks;
// pass k+1 covers, per segment, the boxes its blocks wrote in pass k (they
// are consecutive), until a pass has one block per segment (the last pass,
// whose block b is segment b). With onePass only pass 0 is built; first
// then gives every segment's first block and the block count last.
func planBoxPasses(offsets []uint32, span int, onePass bool) (passes [][]uint32, first []uint32) {
	if span < 2 {
		panic(fmt.Sprintf("reduce: block span %d: passes would not shrink", span))
	}
	ns := len(offsets) - 1
	start := make([]int, ns)
	length := make([]int, ns)
	for s := range ns {
		start[s], length[s] = int(offsets[s]), int(offsets[s+1]-offsets[s])
	}
	for {
		var e []uint32
		pos, last := 0, true
		first = first[:0]
		for s := range ns {
			nb := max(1, ceilDiv(length[s], span))
			first = append(first, uint32(pos))
			for j := range nb {
				e = append(e, uint32(start[s]+j*span), uint32(min(span, length[s]-j*span)), uint32(s), 0)
			}
			if nb > 1 {
				last = false
			}
			start[s], length[s] = pos, nb
			pos += nb
		}
		first = append(first, uint32(pos))
		passes = append(passes, e)
		if last || onePass {
			return passes, first
		}
	}
}

// plan uploads design v's block lists for every level and grows the
// scratch they need.
func (tw *thesisWork) plan(v Variant) ([]boxPlan, error) {
	plans := make([]boxPlan, 0, len(tw.lv))
	fail := func(err error) ([]boxPlan, error) {
		for _, p := range plans {
			p.free()
		}
		return nil, fmt.Errorf("reduce: thesis block lists of %s: %w", v.Name, err)
	}
	for _, l := range tw.lv {
		lists, first := planBoxPasses(l.Offsets, boxSpan(v), v.Name == "r7")
		var p boxPlan
		for k, e := range lists {
			b, err := exec.FromHost(tw.ex, e)
			if err != nil {
				plans = append(plans, p)
				return fail(err)
			}
			nb := len(e) / 4
			p.passes = append(p.passes, boxPass{blocks: b, nblocks: nb})
			if k < len(lists)-1 || v.Name == "r7" { // writes per-block boxes
				if err := ensureF32(tw.ex, &tw.part[k%2], 6*nb); err != nil {
					plans = append(plans, p)
					return fail(err)
				}
			}
			if v.Name == "r0" || v.Name == "r1" {
				if err := ensureU32(tw.ex, &tw.work, 6*(v.Threads/2)*nb); err != nil {
					plans = append(plans, p)
					return fail(err)
				}
			}
		}
		if v.Name == "r7" {
			b, err := exec.FromHost(tw.ex, first)
			if err != nil {
				plans = append(plans, p)
				return fail(err)
			}
			p.segFirst = b
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// runLevel enqueues design v's passes over level i.
func (tw *thesisWork) runLevel(v Variant, i int, p boxPlan) error {
	kernel := "reduce_box_" + v.Name + "_f32"
	threads := cuda.Linear(v.Threads)
	in := tw.inBase[i].Ptr()
	if v.Name == "r7" {
		q := p.passes[0]
		if err := tw.ctx.Launch(kernel, cuda.Linear(q.nblocks), threads, 0,
			in, q.blocks.Ptr(), tw.part[0].Ptr(), p.segFirst.Ptr(), tw.ctr.Ptr(), tw.out[i].Ptr()); err != nil {
			return fmt.Errorf("reduce: %s, level %d: %w", kernel, i, err)
		}
		return nil
	}
	work := cuda.DevPtr(0)
	if tw.work != nil && (v.Name == "r0" || v.Name == "r1") {
		work = tw.work.Ptr()
	}
	for k, q := range p.passes {
		out := tw.out[i].Ptr()
		if k < len(p.passes)-1 {
			out = tw.part[k%2].Ptr()
		}
		if err := tw.ctx.Launch(kernel, cuda.Linear(q.nblocks), threads, 0, in, q.blocks.Ptr(), out, work); err != nil {
			return fmt.Errorf("reduce: %s, level %d pass %d: %w", kernel, i, k, err)
		}
		in = out
	}
	return nil
}

// FormatThesisTable prints rows in the thesis's layout: algorithm, total
// execution time in µs, decrease in execution time against the first row,
// then the workload.
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
