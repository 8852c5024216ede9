package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// partsFlags are the flags of a build in parts (kdtree.BuildParts).
type partsFlags struct {
	devices string // "", "all" or ordinals "0,1"
	parts   int
	budget  string // bytes, with an optional k, M, G or T suffix (powers of 1024)
}

func addPartsFlags(fs *flag.FlagSet, p *partsFlags) {
	fs.StringVar(&p.devices, "devices", "", "build in parts on these GPUs: `all` or ordinals such as 0,1 (one part at a time each)")
	fs.IntVar(&p.parts, "parts", 0, "split the scene into at least `K` parts and join their trees (default: one per device)")
	fs.StringVar(&p.budget, "memory-budget", "", "memory one part's build may use, `bytes` with an optional k, M, G or T suffix (default: 90% of a GPU's free memory; no limit on the CPU)")
}

// active reports whether the build goes through kdtree.BuildParts.
func (p partsFlags) active() bool { return p.devices != "" || p.parts != 0 || p.budget != "" }

// partsJSON is the "parts" object of the JSON report.
type partsJSON struct {
	Count            int               `json:"count"`
	TopDepth         int               `json:"top_depth"`
	Resplits         int               `json:"resplits"`
	MaxPartTriangles int               `json:"max_part_triangles"`
	BudgetTriangles  int               `json:"budget_triangles"`
	SplitMs          float64           `json:"split_ms"`
	PartsMs          float64           `json:"parts_ms"`
	JoinMs           float64           `json:"join_ms"`
	Devices          []partsDeviceJSON `json:"devices"`
}

type partsDeviceJSON struct {
	Name      string  `json:"name"`
	Parts     int     `json:"parts"`
	Triangles int     `json:"triangles"`
	BusyMs    float64 `json:"busy_ms"`
	PeakBytes uint64  `json:"peak_bytes"`
	// Phases sums the phases of its builds and the making of its part
	// scenes (part_scene), in ms.
	Phases map[string]float64 `json:"phases"`
}

func newPartsJSON(r *kdtree.PartsReport) *partsJSON {
	p := &partsJSON{Count: r.Parts, TopDepth: r.TopDepth, Resplits: r.Resplits, MaxPartTriangles: r.MaxPartTris,
		BudgetTriangles: r.MaxTris, SplitMs: round3(r.SplitMs), PartsMs: round3(r.PartsMs), JoinMs: round3(r.JoinMs),
		Devices: []partsDeviceJSON{}}
	for _, d := range r.Devices {
		ph := map[string]float64{}
		for k, v := range d.Phases {
			ph[k] = round3(v)
		}
		p.Devices = append(p.Devices, partsDeviceJSON{Name: d.Name, Parts: d.Parts, Triangles: d.Triangles,
			BusyMs: round3(d.BusyMs), PeakBytes: d.PeakBytes, Phases: ph})
	}
	return p
}

// openDevices opens the executors of --devices: every usable GPU for all,
// else the listed ordinals, each once.
func openDevices(spec string) ([]exec.Executor, error) {
	var ords []int
	if spec == "all" {
		infos, err := cuda.Devices()
		if err != nil {
			return nil, fmt.Errorf("--devices all: %w", err)
		}
		for _, d := range infos {
			if d.Usable {
				ords = append(ords, d.Ordinal)
			}
		}
		if len(ords) == 0 {
			return nil, fmt.Errorf("--devices all: no usable GPU")
		}
	} else {
		seen := map[int]bool{}
		for _, f := range strings.Split(spec, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 || seen[n] {
				return nil, usagef("--devices %q: want all or distinct GPU ordinals such as 0,1", spec)
			}
			seen[n] = true
			ords = append(ords, n)
		}
	}
	var exs []exec.Executor
	for _, o := range ords {
		ex, err := exec.GPUOn(o)
		if err != nil {
			closeAll(exs)
			return nil, fmt.Errorf("--devices: GPU %d: %w", o, err)
		}
		exs = append(exs, ex)
	}
	return exs, nil
}

func closeAll(exs []exec.Executor) {
	for _, ex := range exs {
		ex.Close()
	}
}

// parseBytes reads a byte count with an optional k, M, G or T suffix
// (powers of 1024).
func parseBytes(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	num, mult := s, int64(1)
	if i := strings.IndexAny(s, "kKmMgGtT"); i >= 0 && i == len(s)-1 {
		mult = map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40}[strings.ToLower(s[i:])[0]]
		num = s[:i]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, usagef("--memory-budget %q: want a positive byte count such as 8G", s)
	}
	return n * mult, nil
}

// buildInParts builds scene runs times with kdtree.BuildParts on exs (ex
// alone when empty) and returns the median build as buildTree does, with
// its parts' report.
func buildInParts(ctx context.Context, scene *scenes.Scene, ex exec.Executor, exs []exec.Executor,
	bf builderFlags, pf partsFlags, runs int) (*built, *partsJSON, error) {
	budget, err := parseBytes(pf.budget)
	if err != nil {
		return nil, nil, err
	}
	if pf.parts < 0 {
		return nil, nil, usagef("--parts %d: want a number of parts >= 1", pf.parts)
	}
	if len(exs) == 0 {
		exs = []exec.Executor{ex}
	}
	type run struct {
		stats kdtree.Stats
		rep   *kdtree.PartsReport
	}
	all := make([]run, 0, runs)
	var last *kdtree.Tree
	for i := 0; i < max(runs, 1); i++ {
		last = nil // no tree of an earlier run stays alive during a build
		tree, rep, err := kdtree.BuildParts(ctx, scene, bf.options(exs[0], nil),
			kdtree.PartOptions{Executors: exs, Parts: pf.parts, MemoryBudget: budget})
		if err != nil {
			return nil, nil, err
		}
		last = tree
		all = append(all, run{tree.BuildStats(), rep})
	}
	// The median run by time, the lower middle one for an even count; the
	// tree-shape figures from the last tree (every run makes the same).
	sort.SliceStable(all, func(a, b int) bool { return all[a].stats.BuildMs < all[b].stats.BuildMs })
	med := all[(len(all)-1)/2]
	st, shape := med.stats, last.Stats()
	st.Nodes, st.Leaves, st.EmptyLeaves, st.MaxDepth = shape.Nodes, shape.Leaves, shape.EmptyLeaves, shape.MaxDepth
	st.References, st.ReferencesPerTriangle, st.SAHCost = shape.References, shape.ReferencesPerTriangle, shape.SAHCost
	return &built{stats: st, runs: len(all), ms: st.BuildMs}, newPartsJSON(med.rep), nil
}

// runParts opens the GPUs of pf.devices (ex alone when none) and builds
// scene in parts runs times (--bench).
func runParts(ctx context.Context, scene *scenes.Scene, ex exec.Executor, pf partsFlags, bf builderFlags, runs int) (*built, *partsJSON, error) {
	var exs []exec.Executor
	if pf.devices != "" {
		var err error
		if exs, err = openDevices(pf.devices); err != nil {
			return nil, nil, err
		}
		defer closeAll(exs)
	}
	return buildInParts(ctx, scene, ex, exs, bf, pf, runs)
}
