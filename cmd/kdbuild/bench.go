package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/scan"
	"github.com/kdbuild/kdbuild/scenes"
)

// benchOps are the benchmarks of kdbuild bench, in the order of the help.
var benchOps = []string{"copy", "scan", "segscan", "compact", "sort", "reduce", "thesis"}

// Default size ladders (exponents of two). The Go executor stops earlier:
// 2^28 elements take minutes per variant on a small machine.
const (
	gpuSizes = "10..28"
	goSizes  = "10..24"
)

// minLibraryRuns is the least number of timed runs scan.Bench and
// reduce.Bench take, whatever --runs asks for.
const minLibraryRuns = 20

type benchFlags struct {
	sizes, plot, device string
	runs                int
	json, force, quiet  bool
}

// benchJSON is the --json output of kdbuild bench.
type benchJSON struct {
	Op        string          `json:"op"`
	Device    string          `json:"device"`
	Runs      int             `json:"runs"`
	Sizes     []int           `json:"sizes"`
	CopyGBps  float64         `json:"copy_gb_per_s"` // device-to-device copy at the largest size, same run
	Rows      []exec.BenchRow `json:"rows"`          // never null
	Notes     []string        `json:"notes"`         // never null
	Thesis    string          `json:"thesis,omitempty"`
	PlotFile  string          `json:"plot,omitempty"`
	CopyTable []exec.BenchRow `json:"copy_rows,omitempty"`
}

func newBenchFlagSet(f *benchFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("kdbuild bench", flag.ContinueOnError)
	fs.StringVar(&f.sizes, "sizes", "", "sizes as exponents of two: `10..28`, 16 or 10,16,20 (default "+gpuSizes+" on a GPU, "+goSizes+" on the Go executor)")
	fs.IntVar(&f.runs, "runs", 20, "timed runs per size and variant, the median is reported (scan and reduce benchmarks take at least 20)")
	fs.StringVar(&f.plot, "plot", "", "also write a PNG chart of time against size to `file.png`")
	fs.BoolVar(&f.force, "force", false, "let --plot replace an existing file")
	fs.BoolVar(&f.json, "json", false, "print one JSON object on stdout instead of the table")
	fs.StringVar(&f.device, "device", "", "executor: auto, cpu or gpu (default $KDBUILD_DEVICE, else auto)")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no notes on stderr")
	return fs
}

// runBench is kdbuild bench <op> [scene] [flags].
func runBench(e *env, args []string) int {
	if len(args) > 0 && args[0] == "trace" {
		return runBenchTrace(e, args[1:])
	}
	var f benchFlags
	fs := newBenchFlagSet(&f)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(e.stdout, "Usage: kdbuild bench %s [flags]\n       kdbuild bench thesis [scene] [flags]\n%s",
			strings.Join(benchOps[:len(benchOps)-1], "|"), flagDefaults(fs))
		return exitOK
	}
	asJSON := f.json || jsonRequested(args)
	op := ""
	if err == nil {
		switch {
		case len(pos) == 0:
			err = usagef("bench: name a benchmark: %s", strings.Join(benchOps, ", "))
		case !slices.Contains(benchOps, pos[0]):
			err = usagef("bench: unknown benchmark %q (want one of %s)", pos[0], strings.Join(benchOps, ", "))
		case pos[0] != "thesis" && len(pos) > 1:
			err = usagef("bench %s: unexpected argument %q", pos[0], pos[1])
		case len(pos) > 2:
			err = usagef("bench thesis: one scene at most, got %q", pos[1:])
		case f.runs < 1:
			err = usagef("--runs %d: want at least 1", f.runs)
		}
	}
	if err == nil {
		op = pos[0]
		if op == "thesis" && f.plot != "" {
			err = usagef("bench thesis prints a table; --plot is for the size ladders")
		}
	}
	var sizes []int
	if err == nil && f.sizes != "" {
		sizes, err = parseSizes(f.sizes)
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

	ex, _, _, err := openExecutor(e, mode, quiet)
	if err != nil {
		return fail(e, asJSON, "", fmt.Errorf("%s: %w", deviceSource(e, f.device), err))
	}
	defer ex.Close()
	defer writeKernelTimes(e, ex)
	out := benchJSON{Op: op, Device: executorName(ex), Runs: f.runs, Rows: []exec.BenchRow{}, Notes: []string{}}
	if op != "copy" && op != "thesis" {
		out.Runs = max(f.runs, minLibraryRuns)
	}

	if op == "thesis" {
		return benchThesis(e, ex, pos[1:], &out, asJSON, quiet)
	}

	if sizes == nil {
		spec := gpuSizes
		if ex.CUDA() == nil {
			spec = goSizes
			out.Notes = append(out.Notes, "Go executor: default sizes 2^10..2^24 (a GPU runs 2^10..2^28; --sizes to change)")
		}
		sizes, _ = parseSizes(spec)
	}
	out.Sizes = sizes

	// The copy bandwidth first, in the same run: the physical reference every
	// percentage below is quoted against.
	copyRows, err := exec.CopyBandwidth(ex, sizes, f.runs)
	if err != nil {
		return fail(e, asJSON, "", err)
	}
	out.CopyGBps = referenceCopy(copyRows)
	if op == "copy" {
		for _, r := range copyRows {
			if r.PctCopy == 0 && r.GBps > 0 && out.CopyGBps > 0 {
				r.PctCopy = 100 * r.GBps / out.CopyGBps
			}
			out.Rows = append(out.Rows, r)
		}
	} else {
		rows, err := benchPrimitive(ex, op, sizes, f.runs, out.CopyGBps)
		if err != nil {
			return fail(e, asJSON, "", err)
		}
		out.Rows = append(out.Rows, rows...)
		out.CopyTable = copyRows
	}
	if f.plot != "" {
		title := fmt.Sprintf("kdbuild bench %s on %s (median of %d runs)", op, out.Device, out.Runs)
		if err := writePlot(f.plot, f.force, title, out.Rows); err != nil {
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
	writeBenchTable(e.stdout, &out)
	if f.plot != "" && !quiet {
		fmt.Fprintf(e.stderr, "kdbuild: wrote %s\n", f.plot)
	}
	return exitOK
}

func benchThesis(e *env, ex exec.Executor, pos []string, out *benchJSON, asJSON, quiet bool) int {
	arg := ""
	if len(pos) == 1 {
		arg = pos[0]
	} else {
		out.Notes = append(out.Notes, "no scene given: the thesis table runs on the built-in default scene, not the bunny (pass stanford-bunny.obj)")
	}
	l, err := loadScene(e, arg, quiet, scenes.LoadOptions{})
	if err != nil {
		return fail(e, asJSON, arg, err)
	}
	// The workload: the node-bounds reductions of a build of the scene
	// (recorded on the Go executor, with the default options).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	workload, err := kdtree.ReductionWorkload(ctx, l.scene, kdtree.Options{})
	if err != nil {
		return fail(e, asJSON, arg, err)
	}
	rows, err := reduce.ThesisTable(ex, workload, out.Runs)
	if err != nil {
		return fail(e, asJSON, arg, err)
	}
	for i := range rows {
		rows[i].Workload = fmt.Sprintf("scene %s (%d triangles): %s", l.scene.Name, len(l.scene.Tris), rows[i].Workload)
	}
	text := reduce.FormatThesisTable(rows)
	out.Thesis = text
	if asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
			return fail(e, false, "", err)
		}
		return exitOK
	}
	for _, n := range out.Notes {
		fmt.Fprintf(e.stdout, "%s\n\n", n)
	}
	fmt.Fprint(e.stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(e.stdout)
	}
	return exitOK
}

// benchPrimitive runs the benchmark of one primitive family over sizes,
// quoting copyGBps: reduce in package reduce, the others in package scan.
func benchPrimitive(ex exec.Executor, op string, sizes []int, runs int, copyGBps float64) ([]exec.BenchRow, error) {
	if op == "reduce" {
		return reduce.Bench(ex, sizes, runs, copyGBps)
	}
	return scan.Bench(ex, op, sizes, runs, copyGBps)
}

// referenceCopy picks the copy bandwidth that percentages are quoted
// against: the fastest copy variant at the largest size measured (a large
// copy runs at the memory's speed, a small one partly from cache).
func referenceCopy(rows []exec.BenchRow) float64 {
	nmax, best := 0, 0.0
	for _, r := range rows {
		if r.GBps <= 0 {
			continue
		}
		if r.N > nmax {
			nmax, best = r.N, 0
		}
		if r.N == nmax {
			best = max(best, r.GBps)
		}
	}
	return best
}

// writeBenchTable prints the measurements as a markdown table.
func writeBenchTable(w io.Writer, b *benchJSON) {
	fmt.Fprintf(w, "kdbuild bench %s on %s, median of %d runs", b.Op, b.Device, b.Runs)
	if b.CopyGBps > 0 {
		fmt.Fprintf(w, "; copy bandwidth %.1f GB/s (read+write, largest size)", b.CopyGBps)
	}
	fmt.Fprint(w, "\n\n")
	for _, n := range b.Notes {
		fmt.Fprintf(w, "%s\n\n", n)
	}
	fmt.Fprintln(w, "| variant | n | ms | GB/s | % of copy |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range b.Rows {
		pct := "–"
		if r.PctCopy > 0 {
			pct = fmt.Sprintf("%.1f", r.PctCopy)
		}
		variant := r.Variant
		if r.Note != "" {
			variant += " (" + r.Note + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.1f | %s |\n", variant, sizeText(r.N), msText(r.Ms), r.GBps, pct)
	}
}

// sizeText writes a power of two as 2^k, other sizes in full.
func sizeText(n int) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bits.TrailingZeros(uint(n)))
	}
	return commas(n)
}

// msText keeps three significant digits for small times.
func msText(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.1f", ms)
	case ms >= 1:
		return fmt.Sprintf("%.3f", ms)
	default:
		return fmt.Sprintf("%.4f", ms)
	}
}
