package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
)

// traceFlags are the flags of kdbuild trace.
type traceFlags struct {
	rays, device string
	n            int
	json, quiet  bool
	builder      builderFlags
}

// traceJSON is the --json output of kdbuild trace. Its keys are stable.
type traceJSON struct {
	Scene  sceneJSON  `json:"scene"`
	Device string     `json:"device"` // where the tree was built: "cpu" or the GPU's name
	Build  *buildJSON `json:"build"`
	Rays   string     `json:"rays"` // primary, random or the ray file
	// TraceBytes is the memory traversal adds to the tree (kdtree.Stats.TraceBytes).
	TraceBytes uint64         `json:"trace_bytes"`
	Trace      traceQueryJSON `json:"trace"`
	Occluded   traceQueryJSON `json:"occluded"`
	Notes      []string       `json:"notes"` // never null
}

// traceQueryJSON is one batch query: closest hit (trace) or any hit
// (occluded), on every core.
type traceQueryJSON struct {
	Rays      int     `json:"rays"`
	Hits      int     `json:"hits"`
	Ms        float64 `json:"ms"` // wall time of the batch
	MRaysPerS float64 `json:"mrays_per_s"`
	Device    string  `json:"device"`  // where the rays were traced: "cpu" (the Go executor) or "gpu"
	Threads   int     `json:"threads"` // goroutines of the batch (GOMAXPROCS); 0 on the GPU
	// ResidentMs and ResidentMRaysPerS time the same query with rays and
	// hits already in device memory (Tree.IntersectDevice, the median of
	// residentRuns, the device synchronised); 0 on the Go executor.
	ResidentMs        float64 `json:"resident_ms"`
	ResidentMRaysPerS float64 `json:"resident_mrays_per_s"`
}

// defaultRandomRays is the size of ANCHORS' random ray set.
const defaultRandomRays = 1_000_000

func newTraceFlagSet(f *traceFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("kdbuild trace", flag.ContinueOnError)
	fs.StringVar(&f.rays, "rays", "primary", "rays: primary (1024×1024 camera), random (ANCHORS random rays) or a raw `FILE` of float32 ox oy oz dx dy dz per ray")
	fs.IntVar(&f.n, "n", 0, "number of rays: the first N of the set (0: all; random: 1,000,000)")
	fs.StringVar(&f.device, "device", "", "executor: auto, cpu or gpu (default $KDBUILD_DEVICE, else auto)")
	fs.BoolVar(&f.json, "json", false, "print one JSON object on stdout (stable keys)")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no notes on stderr")
	b := &f.builder
	fs.Float64Var(&b.traversalCost, "traversal-cost", 0, "SAH cost of an interior node (0: the default)")
	fs.Float64Var(&b.intersectCost, "intersect-cost", 0, "SAH cost of a ray-triangle test (0: the default)")
	fs.Float64Var(&b.emptyBonus, "empty-bonus", 0, "SAH bonus for splits with an empty side (0: the default)")
	fs.IntVar(&b.smallNode, "small-node", 0, "references at or below which a node gets exact SAH (0: the default)")
	fs.IntVar(&b.bins, "bins", 0, "SAH bins per axis for large nodes (0: the default)")
	fs.IntVar(&b.maxDepth, "max-depth", 0, "maximum tree depth (0: the default)")
	return fs
}

// runTrace is kdbuild trace <scene> [flags]: build the tree, trace a ray
// set with IntersectBatch and OccludedBatch, report hits and Mrays/s.
// Ctrl-C ends it like the scene command (interruptContext): exit 130, no
// report.
func runTrace(e *env, args []string) int {
	var f traceFlags
	fs := newTraceFlagSet(&f)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(e.stdout, "Usage: kdbuild trace <scene> [--rays primary|random|FILE] [--n N] [--device auto|cpu|gpu] [--json]\n%s", flagDefaults(fs))
		return exitOK
	}
	asJSON := f.json || jsonRequested(args)
	switch {
	case err != nil:
	case len(pos) != 1:
		err = usagef("trace: name one scene, got %d arguments", len(pos))
	case f.n < 0:
		err = usagef("--n %d: want a number of rays >= 0", f.n)
	}
	var mode string
	if err == nil {
		mode, err = deviceMode(e, f.device)
	}
	if err != nil {
		return fail(e, asJSON, "", err)
	}
	quiet := f.quiet || asJSON
	arg := pos[0]
	ctx, stop := interruptContext(e)
	defer stop()
	l, err := loadScene(e, arg, quiet, scenes.LoadOptions{})
	if ctx.Err() != nil {
		return interrupted(e)
	}
	if err != nil {
		return fail(e, asJSON, arg, err)
	}
	rays, err := traceRays(f.rays, f.n, l.scene.Bounds)
	if ctx.Err() != nil {
		return interrupted(e)
	}
	if err != nil {
		return fail(e, asJSON, f.rays, err)
	}
	ex, _, _, err := openExecutor(e, mode, quiet)
	if err != nil {
		return fail(e, asJSON, arg, err)
	}
	defer ex.Close()
	t0 := time.Now()
	opts := f.builder.options(ex, nil)
	opts.KeepOnDevice = ex.CUDA() != nil // the batch calls below run there
	tree, err := kdtree.Build(ctx, l.scene, opts)
	if ctx.Err() != nil {
		return interrupted(e)
	}
	if err != nil {
		return fail(e, asJSON, arg, fmt.Errorf("%s: build: %w", sceneLabel(l), err))
	}
	buildMs := msSince(t0)
	out := traceJSON{
		Scene: newReport(l, "", nil).Scene, Device: executorName(ex), Rays: f.rays, Notes: []string{},
		Build: &buildJSON{Ms: round3(buildMs), DeviceMs: round3(tree.BuildStats().DeviceMs()), Runs: 1, Phases: map[string]float64{}},
	}
	out.TraceBytes = tree.Stats().TraceBytes
	defer tree.Close() // the device copy, if any
	if ex.CUDA() != nil && !tree.OnDevice() {
		if err := tree.Upload(ex); err != nil {
			return fail(e, asJSON, arg, fmt.Errorf("%s: upload: %w", sceneLabel(l), err))
		}
	}
	if out.Trace, err = timeBatch(ctx, tree, rays, false); err == nil {
		out.Occluded, err = timeBatch(ctx, tree, rays, true)
	}
	if err == nil && tree.OnDevice() {
		err = timeResident(ctx, tree, ex, rays, &out)
	}
	if ctx.Err() != nil {
		return interrupted(e)
	}
	if err != nil {
		return fail(e, asJSON, arg, err)
	}
	if asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
			return fail(e, false, "", err)
		}
		return exitOK
	}
	writeTraceText(e.stdout, &out, sceneLabel(l))
	return exitOK
}

// timeBatch traces rays once with IntersectBatch (anyHit false) or
// OccludedBatch and returns the counts and the wall time.
func timeBatch(ctx context.Context, tree *kdtree.Tree, rays []kdtree.Ray, anyHit bool) (traceQueryJSON, error) {
	q := traceQueryJSON{Rays: len(rays), Device: "cpu", Threads: runtime.GOMAXPROCS(0)}
	if tree.OnDevice() {
		q.Device, q.Threads = "gpu", 0
	}
	var t0 time.Time
	if anyHit {
		occ := make([]bool, len(rays))
		t0 = time.Now()
		if err := tree.OccludedBatch(ctx, rays, occ); err != nil {
			return q, err
		}
		q.Ms = msSince(t0)
		for _, o := range occ {
			if o {
				q.Hits++
			}
		}
	} else {
		hits := make([]kdtree.Hit, len(rays))
		t0 = time.Now()
		if err := tree.IntersectBatch(ctx, rays, hits); err != nil {
			return q, err
		}
		q.Ms = msSince(t0)
		for _, h := range hits {
			if h.Prim != kdtree.NoHit {
				q.Hits++
			}
		}
	}
	if q.Ms > 0 {
		q.MRaysPerS = round3(float64(len(rays)) / q.Ms / 1e3)
	}
	q.Ms = round3(q.Ms)
	return q, nil
}

func writeTraceText(w io.Writer, out *traceJSON, scene string) {
	fmt.Fprintf(w, "scene       %s (%s triangles)\n", scene, commas(out.Scene.Triangles))
	fmt.Fprintf(w, "build       %.1f ms on %s\n", out.Build.Ms, out.Device)
	fmt.Fprintf(w, "rays        %s: %s rays\n", out.Rays, commas(out.Trace.Rays))
	for _, q := range []struct {
		name string
		q    traceQueryJSON
	}{{"closest hit", out.Trace}, {"any hit", out.Occluded}} {
		fmt.Fprintf(w, "%-11s %s hits, %.1f ms, %.2f Mrays/s (%s, %d threads)\n",
			q.name, commas(q.q.Hits), q.q.Ms, q.q.MRaysPerS, q.q.Device, q.q.Threads)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(w, "note        %s\n", n)
	}
}
