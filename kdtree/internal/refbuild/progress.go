package refbuild

import (
	"math"
	"sync/atomic"
	"time"
)

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

// Report calls Options.Progress, if any, for phase at part (in [0, 1]) of
// it, keeping Fraction non-decreasing.
func (b *Builder) Report(phase string, part float64, level, nodes int) {
	if b.Opt.Progress == nil {
		return
	}
	sp := progressSpans[phase]
	f := sp[0] + (sp[1]-sp[0])*min(max(part, 0), 1)
	b.fraction = max(b.fraction, f)
	b.Opt.Progress(Progress{Phase: phase, Fraction: b.fraction, Level: level, Nodes: nodes})
}

// Enter reports the start of phase and returns ctx.Err(): a build
// cancelled at any Progress call stops before the work that follows it.
func (b *Builder) Enter(phase string, level, nodes int) error {
	b.Report(phase, 0, level, nodes)
	return b.Ctx.Err()
}

// levelPart estimates the part of the large phase done when level starts:
// about 2·log2(n/SmallNode) levels for n kept triangles, fewer than 0.99.
func (b *Builder) levelPart(level int) float64 {
	n := float64(max(b.RootRefs, 1))
	est := 2 * math.Log2(max(n/float64(b.Opt.SmallNode), 2))
	return min(float64(level)/est, 0.99)
}

// LevelProgress reports large-phase level `level` of nodes nodes, once per
// level (a build again after a fallback does not report its levels
// twice).
func (b *Builder) LevelProgress(level, nodes int) {
	if b.Opt.Progress == nil || level < b.reported {
		return
	}
	b.reported = level + 1
	b.Report("large", b.levelPart(level), level, nodes)
}

// watch runs work on another goroutine and, until it returns, looks at
// the build's ctx every progressEvery on this one: when ctx is done it
// sets stop (which work must look at often and return on) and, once work
// returned, returns ctx.Err(). tick, when not nil, is called at every
// look (the progress report).
func (b *Builder) watch(stop *atomic.Bool, work func(), tick func()) error {
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
			return b.Ctx.Err()
		case <-b.Ctx.Done():
			stop.Store(true)
			<-done
			return b.Ctx.Err()
		case <-t.C:
			if tick != nil {
				tick()
			}
		}
	}
}
