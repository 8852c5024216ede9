package kdtree

import (
	"math"
	"sync/atomic"
	"time"
)

// Progress is how far a build is, as Options.Progress receives it.
type Progress struct {
	// Phase is "prepare", "large" (the large-node levels), "small" (the
	// small-node subtrees) or "layout" (the final arrays).
	Phase string
	// Fraction estimates the part of the whole build done, in [0, 1],
	// never lower than the call before; the last call of a build that
	// succeeds has 1.
	Fraction float64
	// Level is the large phase's level (the root's is 0); in the small
	// phase and after, the number of large levels.
	Level int
	// Nodes is the large level's nodes; in the small phase the small
	// roots (their subtrees built so far on the Go executor, all of them
	// on the CUDA one), and 0 elsewhere.
	Nodes int
}

// progressSpans are where each phase starts in Progress.Fraction: the
// large phase up to 0.5, the small phase up to 0.95 (the shares of the
// Go executor's build time on the shared scenes, roughly).
var progressSpans = map[string][2]float64{
	"prepare": {0, 0.05},
	"large":   {0.05, 0.5},
	"small":   {0.5, 0.95},
	"layout":  {0.95, 1},
}

// progressEvery is the longest a phase that reports as it goes (the Go
// small phase) waits between two reports and two looks at ctx.
const progressEvery = 2 * time.Millisecond

// report calls Options.Progress, if any, for phase at part (in [0, 1]) of
// it, keeping Fraction non-decreasing.
func (b *builder) report(phase string, part float64, level, nodes int) {
	if b.opt.Progress == nil {
		return
	}
	sp := progressSpans[phase]
	f := sp[0] + (sp[1]-sp[0])*min(max(part, 0), 1)
	b.fraction = max(b.fraction, f)
	b.opt.Progress(Progress{Phase: phase, Fraction: b.fraction, Level: level, Nodes: nodes})
}

// enter reports the start of phase and returns ctx.Err(): a build
// cancelled at any Progress call stops before the work that follows it.
func (b *builder) enter(phase string, level, nodes int) error {
	b.report(phase, 0, level, nodes)
	return b.ctx.Err()
}

// levelPart estimates the part of the large phase done when level starts:
// about 2·log2(n/SmallNode) levels for n kept triangles, fewer than 0.99.
func (b *builder) levelPart(level int) float64 {
	n := float64(max(b.rootRefs, 1))
	est := 2 * math.Log2(max(n/float64(b.opt.SmallNode), 2))
	return min(float64(level)/est, 0.99)
}

// levelProgress reports large-phase level `level` of nodes nodes, once per
// level (a build again after a fallback does not report its levels
// twice).
func (b *builder) levelProgress(level, nodes int) {
	if b.opt.Progress == nil || level < b.reported {
		return
	}
	b.reported = level + 1
	b.report("large", b.levelPart(level), level, nodes)
}

// watch runs work on another goroutine and, until it returns, looks at
// the build's ctx every progressEvery on this one: when ctx is done it
// sets stop (which work must look at often and return on) and, once work
// returned, returns ctx.Err(). tick, when not nil, is called at every
// look (the progress report).
func (b *builder) watch(stop *atomic.Bool, work func(), tick func()) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		work()
	}()
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return b.ctx.Err()
		case <-b.ctx.Done():
			stop.Store(true)
			<-done
			return b.ctx.Err()
		case <-t.C:
			if tick != nil {
				tick()
			}
		}
	}
}
