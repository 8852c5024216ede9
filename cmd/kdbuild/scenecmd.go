package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// sceneFlags are the flags of kdbuild [scene].
type sceneFlags struct {
	json, quiet, version, noBuild bool
	attributes, weld              bool
	device, cpuProfile            string
	out                           string // -o: write the tree file
	force                         bool
	bench                         int
	builder                       builderFlags
	load                          loadFlags
	parts                         partsFlags
}

func newSceneFlagSet(f *sceneFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("kdbuild", flag.ContinueOnError)
	fs.BoolVar(&f.json, "json", false, "print one JSON object on stdout (stable keys)")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no progress bars, no notes on stderr")
	fs.BoolVar(&f.quiet, "quiet", false, "same as -q")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.StringVar(&f.device, "device", "", "executor: auto, cpu or gpu (default $KDBUILD_DEVICE, else auto)")
	fs.BoolVar(&f.noBuild, "no-build", false, "load the scene only, do not build the tree")
	fs.BoolVar(&f.attributes, "attributes", false, "keep normals, texture coordinates, colours and group/object/material names (reported under scene.attributes)")
	fs.BoolVar(&f.weld, "weld", false, "merge vertices of identical positions (STL files share no vertices)")
	fs.StringVar(&f.out, "o", "", "write the tree to `file.kdt` (a tree file; kdbuild file.kdt loads it)")
	fs.BoolVar(&f.force, "force", false, "let -o replace an existing file")
	fs.IntVar(&f.bench, "bench", 1, "build `N` times and report the median build time")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the builds to `file` (a new file; for go tool pprof)")
	b := &f.builder
	fs.Float64Var(&b.traversalCost, "traversal-cost", 0, fmt.Sprintf("SAH cost of an interior node (0: the default, %v)", kdtree.DefaultTraversalCost))
	fs.Float64Var(&b.intersectCost, "intersect-cost", 0, fmt.Sprintf("SAH cost of a ray-triangle test (0: the default, %v)", kdtree.DefaultIntersectCost))
	fs.Float64Var(&b.emptyBonus, "empty-bonus", 0, fmt.Sprintf("SAH bonus for splits with an empty side, below 1 (0: the default, %v; negative: none)", kdtree.DefaultEmptyBonus))
	fs.IntVar(&b.smallNode, "small-node", 0, fmt.Sprintf("references at or below which a node gets exact SAH, 1..64 (0: the default, %d)", kdtree.DefaultSmallNode))
	fs.IntVar(&b.bins, "bins", 0, fmt.Sprintf("SAH bins per axis for large nodes, 2..%d (0: the default, %d)", kdtree.MaxBins, kdtree.DefaultBins))
	fs.IntVar(&b.maxDepth, "max-depth", 0, "maximum tree depth, up to 64 (0: the default, from the triangle count)")
	fs.IntVar(&b.maxDuplication, "max-duplication", 0, fmt.Sprintf("duplication budget of the large nodes, references per triangle (0: the default, %d; negative: none)", kdtree.DefaultMaxDuplication))
	addLoadFlags(fs, &f.load)
	addPartsFlags(fs, &f.parts)
	return fs
}

// runScene is kdbuild [flags] [scene]: load, build, print.
func runScene(e *env, args []string) int {
	var f sceneFlags
	fs := newSceneFlagSet(&f)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(e.stdout)
		fmt.Fprintf(e.stdout, "\nFlags of kdbuild [scene]:\n%s", flagDefaults(fs))
		return exitOK
	}
	if err == nil && f.bench < 1 {
		err = usagef("--bench %d: want a number of builds >= 1", f.bench)
	}
	var mode string
	if err == nil {
		mode, err = deviceMode(e, f.device)
	}
	arg := ""
	if len(pos) == 1 {
		arg = pos[0]
	}
	var lopts scenes.LoadOptions
	if err == nil {
		lopts, err = f.load.options(arg)
	}
	if err == nil {
		err = refuseExisting(f.cpuProfile) // before a long load, not after
	}
	if err != nil {
		return fail(e, f.json || jsonRequested(args), "", err)
	}
	if f.version {
		fmt.Fprintln(e.stdout, versionString())
		return exitOK
	}
	arg = strings.Join(pos, " ")
	quiet := f.quiet || f.json
	ctx, stop := interruptContext(e)
	defer stop()
	if isTreeFile(arg) {
		return runTreeFile(e, f, arg)
	}
	if f.out != "" {
		if err := checkNewFile(f.out, "-o", f.force); err != nil {
			return fail(e, f.json, arg, err)
		}
	}

	l, err := loadScenes(e, pos, f.loadOptions(lopts), quiet)
	if ctx.Err() != nil {
		return interrupted(e)
	}
	if err != nil {
		return fail(e, f.json, arg, err)
	}
	if f.noBuild {
		r := newReport(l, "none", nil)
		return output(e, f.json, r, "")
	}

	ex, note, fallback, err := openExecutor(e, mode, quiet)
	if err != nil {
		return fail(e, f.json, arg, fmt.Errorf("%s: %w", deviceSource(e, f.device), err))
	}
	defer ex.Close()
	defer writeKernelTimes(e, ex)
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return fail(e, f.json, arg, err)
	}
	var b *built
	var parts *partsJSON
	if f.parts.active() {
		b, parts, err = runParts(ctx, l.scene, ex, f.parts, f.builder, f.bench)
	} else {
		b, err = buildTree(ctx, l.scene, ex, f.builder, f.bench, newLevelBar(e, quiet))
	}
	if perr := stopProfile(); err == nil && perr != nil {
		err = fmt.Errorf("--cpuprofile: %w", perr)
	}
	if ctx.Err() != nil {
		// Cancelled: whatever Build returned, no report of it.
		return interrupted(e)
	}
	if err != nil {
		return fail(e, f.json, arg, fmt.Errorf("%s: build: %w", sceneLabel(l), err))
	}
	r := newReport(l, executorName(ex), b)
	r.DeviceFallback = fallback
	if f.out != "" {
		if r.TreeFile, err = saveTree(b.tree, f.out, f.force); err != nil {
			return fail(e, f.json, arg, err)
		}
		r.TreeFile.Written = true
	}
	if parts != nil {
		r.Device, r.Parts = b.stats.Device, parts
	}
	return output(e, f.json, r, note)
}

// openExecutor opens the executor for mode. With auto and no usable GPU it
// says once on stderr why the Go executor runs (unless quiet) and returns
// that reason as fallback (the JSON key device_fallback). The note
// describes the Go executor for the text report ("" on a GPU).
func openExecutor(e *env, mode string, quiet bool) (ex exec.Executor, note, fallback string, err error) {
	ex, fb, err := exec.Open(mode)
	if err != nil {
		return nil, "", "", err
	}
	if ex.CUDA() == nil {
		note = fmt.Sprintf("Go executor, %d workers", ex.Workers())
	}
	if fb != nil {
		fallback = fb.Error()
		if !quiet {
			fmt.Fprintf(e.stderr, "kdbuild: no usable GPU, running the Go executor: %s\n", termSafe(fallback))
		}
	}
	return ex, note, fallback, nil
}

// deviceSource names where the device choice came from, for its errors:
// "--device gpu" or "KDBUILD_DEVICE=gpu".
func deviceSource(e *env, flagValue string) string {
	if flagValue != "" {
		return "--device " + strings.ToLower(strings.TrimSpace(flagValue))
	}
	return "KDBUILD_DEVICE=" + strings.ToLower(strings.TrimSpace(e.getenv("KDBUILD_DEVICE")))
}

// executorName is the JSON "device": "cpu" or the GPU's name.
func executorName(ex exec.Executor) string {
	if ex.CUDA() == nil {
		return "cpu"
	}
	return ex.Name()
}

func sceneLabel(l *loaded) string {
	if l.file != "" {
		return l.file
	}
	return "default scene"
}

func output(e *env, asJSON bool, r *report, deviceNote string) int {
	if asJSON {
		if err := writeJSON(e.stdout, r); err != nil {
			fmt.Fprintf(e.stderr, "kdbuild: %v\n", err)
			return exitError
		}
		return exitOK
	}
	writeText(e.stdout, r, deviceNote)
	return exitOK
}

// jsonRequested reports whether args ask for --json, for errors found
// before the flags are fully parsed.
func jsonRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-json", "--json", "-json=true", "--json=true":
			return true
		}
	}
	return false
}

// fail reports err on stderr (and as a JSON object on stdout with --json)
// and returns its exit code: 2 for usage errors, else 1.
func fail(e *env, asJSON bool, file string, err error) int {
	code := exitError
	if isUsage(err) {
		code = exitUsage
	}
	fmt.Fprintf(e.stderr, "kdbuild: %s\n", termSafe(err.Error()))
	if code == exitUsage {
		fmt.Fprintln(e.stderr, `Run "kdbuild -h" for usage.`)
	}
	if asJSON {
		r := errorReport{Error: err.Error(), File: file, Usage: code == exitUsage, Warnings: []string{}}
		var pe *scenes.ParseError
		if errors.As(err, &pe) {
			r.File = pe.File
		}
		_ = writeJSON(e.stdout, r)
	}
	return code
}
