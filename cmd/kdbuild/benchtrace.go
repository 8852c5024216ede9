package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// benchTraceJSON is the --json output of kdbuild bench trace.
type benchTraceJSON struct {
	Op       string          `json:"op"`     // "trace"
	Device   string          `json:"device"` // where the rays were traced: "cpu" or the GPU's name
	Runs     int             `json:"runs"`
	Rows     []traceBenchRow `json:"rows"`  // never null
	Notes    []string        `json:"notes"` // never null
	PlotFile string          `json:"plot,omitempty"`
}

// traceBenchRow is one measurement: a scene, a ray set, a query and a
// number of threads; Mrays/s from the median wall time of runs passes.
type traceBenchRow struct {
	Scene   string `json:"scene"`
	Rays    string `json:"rays"`    // primary or random
	Query   string `json:"query"`   // closest or any
	Threads int    `json:"threads"` // goroutines: 1, or GOMAXPROCS for the batch calls; 0 on a GPU
	// Calls is how the rays are traced: "single" (Intersect/Occluded ray
	// by ray, one goroutine) or "batch" (IntersectBatch/OccludedBatch).
	Calls string `json:"calls"`
	// From is where the rays and hits live: "host" (the batch calls, copies
	// included; always on the CPU) or "device" (IntersectDevice, rays and
	// hits in device memory).
	From      string  `json:"from"`
	RayCount  int     `json:"ray_count"`
	Hits      int     `json:"hits"`
	Ms        float64 `json:"ms"` // median wall time of one pass over the rays (CPU rows: the tracing alone)
	MRaysPerS float64 `json:"mrays_per_s"`
}

type benchTraceFlags struct {
	runs               int
	plot, device       string
	json, force, quiet bool
}

// runBenchTrace is kdbuild bench trace [scene ...]: for every scene the
// ANCHORS ray sets (primary, random), closest and any hit, on one goroutine
// and with the batch calls on every core.
func runBenchTrace(e *env, args []string) int {
	var f benchTraceFlags
	fs := flag.NewFlagSet("kdbuild bench trace", flag.ContinueOnError)
	fs.IntVar(&f.runs, "runs", 3, "passes over each ray set, the median is reported")
	fs.StringVar(&f.plot, "plot", "", "also write a PNG bar chart of Mrays/s to `file.png`")
	fs.BoolVar(&f.force, "force", false, "let --plot replace an existing file")
	fs.BoolVar(&f.json, "json", false, "print one JSON object on stdout instead of the table")
	fs.StringVar(&f.device, "device", "", "where to trace: auto, cpu or gpu (default $KDBUILD_DEVICE, else auto); on a GPU the rows are device rows")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no notes on stderr")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(e.stdout, "Usage: kdbuild bench trace [scene ...] [flags]\n%s", flagDefaults(fs))
		return exitOK
	}
	asJSON := f.json || jsonRequested(args)
	if err == nil && f.runs < 1 {
		err = usagef("--runs %d: want at least 1", f.runs)
	}
	var mode string
	if err == nil {
		mode, err = deviceMode(e, f.device)
	}
	if err == nil && f.plot != "" {
		err = checkWritable(f.plot, f.force)
	}
	if err != nil {
		return fail(e, asJSON, "", err)
	}
	quiet := f.quiet || asJSON
	out := benchTraceJSON{Op: "trace", Device: "cpu", Runs: f.runs, Rows: []traceBenchRow{}, Notes: []string{}}
	ex, _, _, err := openExecutor(e, mode, quiet)
	if err != nil {
		return fail(e, asJSON, "", err)
	}
	defer ex.Close()
	if ex.CUDA() != nil {
		out.Device = executorName(ex)
	}
	if len(pos) == 0 {
		pos = []string{""}
		out.Notes = append(out.Notes, "no scene given: the built-in default scene (pass the shared scenes, e.g. stanford-bunny.obj conference.obj.gz)")
	}
	ctx, stop := interruptContext(e)
	defer stop()
	for _, arg := range pos {
		l, err := loadScene(e, arg, quiet, scenes.LoadOptions{})
		if ctx.Err() != nil {
			return interrupted(e)
		}
		if err != nil {
			return fail(e, asJSON, arg, err)
		}
		// Built by the Go executor: the same tree as on a GPU, and no
		// device is held while the CPU traces.
		tree, err := kdtree.Build(ctx, l.scene, kdtree.Options{})
		if ctx.Err() != nil {
			return interrupted(e)
		}
		if err != nil {
			return fail(e, asJSON, arg, fmt.Errorf("%s: build: %w", sceneLabel(l), err))
		}
		var rows []traceBenchRow
		if ex.CUDA() != nil {
			rows, err = benchTraceSceneGPU(ctx, tree, ex, sceneLabel(l), f.runs)
		} else {
			rows, err = benchTraceScene(ctx, tree, sceneLabel(l), f.runs)
		}
		if ctx.Err() != nil {
			return interrupted(e)
		}
		if err != nil {
			return fail(e, asJSON, arg, err)
		}
		out.Rows = append(out.Rows, rows...)
	}
	if f.plot != "" {
		if err := writeTracePlot(f.plot, f.force, &out); err != nil {
			return fail(e, asJSON, "", err)
		}
		out.PlotFile = f.plot
	}
	if asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
			return fail(e, false, "", err)
		}
		return exitOK
	}
	writeTraceBenchTable(e.stdout, &out)
	if f.plot != "" && !quiet {
		fmt.Fprintf(e.stderr, "kdbuild: wrote %s\n", f.plot)
	}
	return exitOK
}

// benchTraceScene measures one tree: primary and random rays × closest and
// any hit × one thread and every core. For each ray set and query the
// passes of its rows take turns (one pass of each row, runs times), so
// that a machine whose pace drifts from minute to minute slows every row
// alike and the rows' ratios (every core against one) hold.
func benchTraceScene(ctx context.Context, tree *kdtree.Tree, scene string, runs int) ([]traceBenchRow, error) {
	var rows []traceBenchRow
	b := tree.Scene.Bounds
	all := runtime.GOMAXPROCS(0)
	modes := []traceMode{{1, "single"}, {1, "batch"}}
	if all > 1 { // one core: the batch row is there already
		modes = append(modes, traceMode{all, "batch"})
	}
	for _, set := range []string{"primary", "random"} {
		rays := kdtree.PrimaryRays(b)
		if set == "random" {
			rays = kdtree.RandomRays(b, defaultRandomRays)
		}
		hits, occ := make([]kdtree.Hit, len(rays)), make([]bool, len(rays))
		// A collection now, not a concurrent one during the passes.
		runtime.GC()
		for _, query := range []string{"closest", "any"} {
			ms := make([][]float64, len(modes))
			for r := 0; r < runs; r++ {
				for i, m := range modes {
					t, err := timePass(ctx, tree, rays, hits, occ, query == "any", m)
					if err != nil {
						return nil, err
					}
					ms[i] = append(ms[i], t)
				}
			}
			n := countHits(hits, occ, query == "any")
			for i, m := range modes {
				sort.Float64s(ms[i])
				med := ms[i][len(ms[i])/2]
				rows = append(rows, traceBenchRow{
					Scene: scene, Rays: set, Query: query, Threads: m.threads, Calls: m.calls, From: "host", RayCount: len(rays), Hits: n,
					Ms: round3(med), MRaysPerS: round3(float64(len(rays)) / med / 1e3),
				})
			}
		}
	}
	return rows, nil
}

// traceMode is how a row traces: goroutines, and "single" or "batch" calls.
type traceMode struct {
	threads int
	calls   string
}

// timePass traces rays once as m says and returns the wall time of the
// tracing in ms (the batch calls on m.threads goroutines).
func timePass(ctx context.Context, tree *kdtree.Tree, rays []kdtree.Ray, hits []kdtree.Hit, occ []bool, anyHit bool, m traceMode) (float64, error) {
	serial := m.calls == "single"
	if !serial {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(m.threads))
	}
	t0 := time.Now()
	err := traceOnce(ctx, tree, rays, hits, occ, anyHit, serial)
	return msSince(t0), err
}

// serialCheck is how many rays a serial pass traces between looks at its
// context (a few milliseconds of work at most).
const serialCheck = 4096

// tracePass traces rays once and returns the number of hits: with serial,
// Intersect or Occluded ray by ray on this goroutine, else the batch calls.
func tracePass(ctx context.Context, tree *kdtree.Tree, rays []kdtree.Ray, hits []kdtree.Hit, occ []bool, anyHit, serial bool) (int, error) {
	if err := traceOnce(ctx, tree, rays, hits, occ, anyHit, serial); err != nil {
		return 0, err
	}
	return countHits(hits, occ, anyHit), nil
}

// traceOnce is tracePass without the count.
func traceOnce(ctx context.Context, tree *kdtree.Tree, rays []kdtree.Ray, hits []kdtree.Hit, occ []bool, anyHit, serial bool) error {
	switch {
	case serial && anyHit:
		for i := range rays {
			if i%serialCheck == 0 && ctx.Err() != nil {
				break
			}
			occ[i] = tree.Occluded(rays[i])
		}
	case serial:
		for i := range rays {
			if i%serialCheck == 0 && ctx.Err() != nil {
				break
			}
			hits[i], _ = tree.Intersect(rays[i])
		}
	case anyHit:
		return tree.OccludedBatch(ctx, rays, occ)
	default:
		return tree.IntersectBatch(ctx, rays, hits)
	}
	return ctx.Err()
}

// countHits counts the hits of a pass: occ's trues with anyHit, else the
// hits that are not misses.
func countHits(hits []kdtree.Hit, occ []bool, anyHit bool) int {
	n := 0
	if anyHit {
		for _, o := range occ {
			if o {
				n++
			}
		}
		return n
	}
	for i := range hits {
		if hits[i].Prim != kdtree.NoHit {
			n++
		}
	}
	return n
}

// medianMs runs pass runs times and returns the median wall time in ms and
// the last pass's result.
func medianMs(runs int, pass func() (int, error)) (float64, int, error) {
	ms := make([]float64, 0, runs)
	n := 0
	for r := 0; r < runs; r++ {
		t0 := time.Now()
		var err error
		if n, err = pass(); err != nil {
			return 0, 0, err
		}
		ms = append(ms, msSince(t0))
	}
	sort.Float64s(ms)
	return ms[len(ms)/2], n, nil
}

func writeTraceBenchTable(w io.Writer, b *benchTraceJSON) {
	fmt.Fprintf(w, "kdbuild bench trace on %s, median of %d passes (wall time)\n\n", b.Device, b.Runs)
	for _, n := range b.Notes {
		fmt.Fprintf(w, "%s\n\n", n)
	}
	fmt.Fprintln(w, "| scene | rays | query | from | threads | calls | rays traced | hits | ms | Mrays/s |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---|---:|---:|---:|---:|")
	for _, r := range b.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s | %s | %s | %.2f |\n",
			r.Scene, r.Rays, r.Query, r.From, r.Threads, r.Calls, commas(r.RayCount), commas(r.Hits), msText(r.Ms), r.MRaysPerS)
	}
}

// writeTracePlot draws one bar per row (Mrays/s), labelled scene/rays/query/threads.
func writeTracePlot(path string, force bool, b *benchTraceJSON) error {
	if len(b.Rows) == 0 {
		return fmt.Errorf("--plot %s: nothing measured to draw", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("kdbuild bench trace on %s (median of %d passes)", b.Device, b.Runs)
	p.Y.Label.Text = "Mrays/s"
	vals := make(plotter.Values, len(b.Rows))
	names := make([]string, len(b.Rows))
	for i, r := range b.Rows {
		vals[i] = r.MRaysPerS
		names[i] = fmt.Sprintf("%s %s %s %s %s %dT", r.Scene, r.Rays, r.Query, r.From, r.Calls, r.Threads)
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(12))
	if err != nil {
		return err
	}
	p.Add(bars)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 1.2
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
	return savePlot(p, path, force)
}
