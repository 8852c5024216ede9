package refbuild

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/scenes"
)

// BuildResult is the finished tree's arrays.
type BuildResult struct {
	Nodes  []Node
	Refs   []uint32
	Bounds scenes.Bounds
}

// Builder holds one build's state, the part the Go reference and the
// CUDA build (gpuBuild) share.
type Builder struct {
	Ctx   context.Context
	Scene *scenes.Scene
	Opt   Options
	Ex    exec.Executor

	// Start, when set, makes the build one node of a larger build's tree
	// (BuildParts): the root's box and the references' first boxes.
	Start *Start

	Tris    []Triangle // vertices of every scene triangle (dropped ones too)
	kept    []uint32   // indices of the kept triangles, ascending
	Dropped int

	// OnLevel, when set (tests), sees every large-phase level's nodes and
	// their decisions, to compare executors level by level.
	OnLevel func(nodes []LNode, dec []Decision)

	// red is the build's reducer (the nodes' tight bounds on the Go
	// executor; the CUDA path keeps its own in devLevel). onReduce, when set
	// (ReductionWorkload), sees the boxes (6 floats each) and offsets of
	// every such reduction before it runs; it must copy what it keeps.
	red      *reduce.Reducer
	OnReduce func(boxes []float32, offsets []uint32)

	Phases   map[string]float64
	Phase    time.Time
	Levels   int
	reported int     // large-phase levels reported to Progress (levelProgress)
	fraction float64 // the last Progress.Fraction reported
	RootRefs int     // the root's references (levelPart's measure)
	Limited  string  // the memory guard's part of Stats.Limited (LimitedText)
	budget   budgetTally
	HostPeak uint64
	DevPeak  uint64
}

// StartPhase and EndPhase time a phase into b.phases (accumulating).
func (b *Builder) StartPhase() { b.Phase = time.Now() }

func (b *Builder) EndPhase(name string) {
	b.Phases[name] += float64(time.Since(b.Phase).Nanoseconds()) / 1e6
}

// SampleHost records the Go heap in use (MemStats.HeapAlloc) as a peak
// candidate, read from runtime/metrics: runtime.ReadMemStats stops the
// world, and a CUDA build samples between its phases, with the device
// idle.
func (b *Builder) SampleHost() {
	s := []metrics.Sample{{Name: heapObjectsMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		b.HostPeak = max(b.HostPeak, s[0].Value.Uint64())
	}
}

// heapObjectsMetric is the runtime/metrics name of MemStats.HeapAlloc.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// prepare gathers the triangles' vertices and drops the degenerate ones
// (see nonDegenerate).
func (b *Builder) prepare() error {
	s := b.Scene
	nv := uint32(len(s.Verts))
	b.Tris = make([]Triangle, len(s.Tris))
	keep := make([]bool, len(s.Tris))
	var bad error
	var mu sync.Mutex
	exec.ParallelFor(b.HostWorkers(), len(s.Tris), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			t := s.Tris[i]
			if t[0] >= nv || t[1] >= nv || t[2] >= nv {
				mu.Lock()
				if bad == nil {
					bad = fmt.Errorf("kdtree: triangle %d has vertex index %v out of range (%d vertices)", i, t, nv)
				}
				mu.Unlock()
				continue
			}
			for k := 0; k < 3; k++ {
				b.Tris[i][k] = [3]float32(s.Verts[t[k]])
			}
			keep[i] = nonDegenerate(s, i, &b.Tris[i])
		}
	})
	if bad != nil {
		return bad
	}
	b.kept = make([]uint32, 0, len(s.Tris))
	for i, k := range keep {
		if k {
			b.kept = append(b.kept, uint32(i))
		}
	}
	b.Dropped = len(s.Tris) - len(b.kept)
	return nil
}

// nonDegenerate reports whether triangle i is kept: finite vertices and a
// non-zero area as scenes.Scene.Degenerate defines it (the definition
// Validate and the ray oracle share).
func nonDegenerate(s *scenes.Scene, i int, t *Triangle) bool {
	for k := 0; k < 3; k++ {
		for a := 0; a < 3; a++ {
			if v := float64(t[k][a]); math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return !s.Degenerate(i)
}

// ToBounds converts a box to scenes.Bounds.
func ToBounds(b AABB) scenes.Bounds {
	return scenes.Bounds{Min: b.Lo, Max: b.Hi}
}

// BuildGo is the whole build on the Go executor.
func (b *Builder) BuildGo() (*BuildResult, error) {
	res, rs, err := b.RecordsGo()
	if err != nil || rs == nil {
		return res, err
	}
	if err := b.Enter("layout", b.Levels, 0); err != nil {
		return nil, err
	}
	b.StartPhase()
	res.Nodes, res.Refs, err = LayoutGo(rs)
	if err != nil {
		return nil, err
	}
	b.EndPhase("layout")
	return res, b.Ctx.Err()
}

// RecordsGo runs the Go build up to the layout: the result's bounds and
// the records (nil when no triangle is kept).
func (b *Builder) RecordsGo() (*BuildResult, *Records, error) {
	b.Report("prepare", 0, 0, 0)
	b.StartPhase()
	if err := b.prepare(); err != nil {
		return nil, nil, err
	}
	// Initial references: the kept triangles, ascending, with their boxes.
	cur, next := &refList{}, &refList{}
	cur.resize(len(b.kept))
	copy(cur.tri, b.kept)
	if b.Start != nil {
		if err := b.Start.check(len(b.Tris)); err != nil {
			return nil, nil, err
		}
	}
	exec.ParallelFor(b.Ex.Workers(), len(b.kept), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if b.Start != nil {
				cur.box[i] = b.Start.Boxes[cur.tri[i]]
			} else {
				cur.box[i] = b.Tris[cur.tri[i]].bounds()
			}
		}
	})
	root := b.tightBounds(cur.box)
	if b.Start != nil {
		root = b.Start.Box
	}
	CanonZero(&root)
	b.EndPhase("prepare")
	b.SampleHost()
	if err := b.Ctx.Err(); err != nil {
		return nil, nil, err
	}
	b.RootRefs = len(b.kept)
	res := &BuildResult{}
	if len(b.kept) == 0 {
		// No triangle can be hit: a tree without nodes misses every ray.
		return res, nil, nil
	}
	res.Bounds = ToBounds(root)

	// Large nodes, level by level.
	b.StartPhase()
	rs := &Records{}
	nodes := []LNode{{Box: root, Off: 0, Cnt: uint32(len(cur.tri)), Depth: 0, Rec: rs.Add(),
		Budget: b.StartBudget(len(cur.tri))}}
	sc := &levelScratch{}
	capRefs := max(64*len(b.kept), 1<<20)
	for level := 0; len(nodes) > 0; level++ {
		if err := b.Ctx.Err(); err != nil {
			return nil, nil, err
		}
		b.LevelProgress(level, len(nodes))
		var err error
		nodes, err = b.levelGo(nodes, cur, next, sc, rs)
		if err != nil {
			return nil, nil, err
		}
		cur, next = next, cur
		b.Levels++
		if len(cur.tri) > capRefs {
			// Memory guard: no tree needs this; make the rest leaves.
			b.Limited = MemoryGuardText(len(cur.tri), capRefs)
			for _, n := range nodes {
				rs.SetLeaf(n.Rec, cur.tri[n.Off:n.Off+n.Cnt])
			}
			nodes = nil
		}
		b.SampleHost()
	}
	b.EndPhase("large")

	// Small roots, each independently (depth first in Go; every node's
	// split depends only on its root, set, box and depth).
	if err := b.Ctx.Err(); err != nil {
		return nil, nil, err
	}
	b.StartPhase()
	if err := b.SmallGo(rs); err != nil {
		return nil, nil, err
	}
	b.EndPhase("small")
	b.SampleHost()

	return res, rs, nil
}

// HostWorkers is the number of goroutines for host work: the Go
// executor's workers, or GOMAXPROCS beside a GPU.
func (b *Builder) HostWorkers() int {
	if b.Ex.CUDA() != nil {
		return runtime.GOMAXPROCS(0)
	}
	return b.Ex.Workers()
}

// MemoryGuardText is Stats.Limited when the memory guard stops the large
// phase: refs references at a level, above the cap of 64 per triangle.
func MemoryGuardText(refs, capRefs int) string {
	return fmt.Sprintf("memory guard: %d references at one level, above the cap of %d (64 per triangle); the remaining large nodes became leaves", refs, capRefs)
}

// SmallGo builds the subtrees of every small root in Go, in parallel, and
// reports its progress from the calling goroutine; it returns ctx.Err()
// (its workers stopped) when the build is cancelled.
func (b *Builder) SmallGo(rs *Records) error {
	R := len(rs.Small)
	b.Report("small", 0, b.Levels, 0)
	p := NewSAH(&b.Opt)
	rs.SmallOut = make([][]Record, R)
	var stop atomic.Bool
	var done atomic.Int64
	return b.watch(&stop, func() {
		dynamicFor(b.HostWorkers(), R, 8, func() func(lo, hi int) {
			sb := &smallBuilder{b: b, p: &p}
			return func(lo, hi int) {
				if stop.Load() {
					return
				}
				for i := lo; i < hi; i++ {
					rs.SmallOut[i] = sb.build(&rs.Small[i])
				}
				done.Add(int64(hi - lo))
			}
		})
	}, func() {
		d := int(done.Load())
		b.Report("small", float64(d)/float64(max(R, 1)), b.Levels, d)
	})
}

// dynamicFor runs body over [0, n) in chunks of chunk items handed out to
// workers goroutines as they finish the previous one (load balance for
// items of uneven cost); newBody makes each goroutine's body. The results
// must not depend on which goroutine runs which chunk.
func dynamicFor(workers, n, chunk int, newBody func() func(lo, hi int)) {
	if n <= 0 {
		return
	}
	var next atomic.Int64
	exec.ParallelFor(workers, workers, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			body := newBody()
			for {
				i := int(next.Add(int64(chunk))) - chunk
				if i >= n {
					break
				}
				body(i, min(i+chunk, n))
			}
		}
	})
}
