package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal. Progress bars are drawn only
// then, so redirected or captured stderr never receives them.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressDelay is how long work runs before it gets a progress bar, so
// that quick loads and builds do not flash one.
const progressDelay = 300 * time.Millisecond

// loadProgress counts the bytes read through it and, once reading has taken
// longer than progressDelay, shows them against size on stderr (a byte
// count when the size is unknown: standard input, a FIFO). The rate shown
// is the bytes over the time since the load began (the bar's own clock
// starts at its first frame, which made its first rate absurd).
type loadProgress struct {
	r     io.Reader
	n     int64
	size  int64 // -1: unknown
	name  string
	start time.Time
	w     io.Writer // nil: never show a bar
	bar   *progressbar.ProgressBar
	shown time.Time // when the description was last written
}

// newLoadProgress wraps r; the bar is drawn only when stderr is a terminal
// and quiet is false.
func newLoadProgress(e *env, quiet bool, r io.Reader, size int64, name string) *loadProgress {
	p := &loadProgress{r: r, size: size, name: termSafe(name), start: time.Now()}
	if e.tty && !quiet {
		p.w = e.stderr
	}
	return p
}

func (p *loadProgress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.w == nil || n == 0 {
		return n, err
	}
	if p.bar == nil {
		if time.Since(p.start) <= progressDelay {
			return n, err
		}
		p.bar = progressbar.NewOptions64(p.size,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	if time.Since(p.shown) >= 100*time.Millisecond {
		p.shown = time.Now()
		p.bar.Describe(p.describe())
	}
	if p.size >= 0 {
		_ = p.bar.Set64(min(p.n, p.size))
	} else {
		_ = p.bar.Add(n)
	}
	return n, err
}

// describe is the bar's text: "loading x.obj 12.0 MiB of 40.0 MiB, 85.1 MB/s".
func (p *loadProgress) describe() string {
	of := ""
	if p.size >= 0 {
		of = " of " + bytesText(uint64(p.size))
	}
	rate := float64(p.n) / time.Since(p.start).Seconds() / 1e6
	return fmt.Sprintf("loading %s %s%s, %.1f MB/s", p.name, bytesText(uint64(p.n)), of, rate)
}

// done removes the bar.
func (p *loadProgress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}

// levelBar shows a build's progress (kdtree.Progress) once the build has
// run longer than progressDelay: the phase, its level and nodes, and the
// build's fraction done as a bar (a spinner while the builder reports no
// fraction).
type levelBar struct {
	w        io.Writer
	start    time.Time
	bar      *progressbar.ProgressBar
	shown    time.Time // last frame
	phase    string    // of the last frame
	fraction bool      // the bar shows a fraction (else a spinner)
}

// barFrame is the least time between two frames of the build bar (a new
// phase is shown at once).
const barFrame = 50 * time.Millisecond

// barSteps is the resolution of the build bar (Fraction × barSteps).
const barSteps = 1000

// newLevelBar returns nil (no bar) unless stderr is a terminal and quiet is
// false.
func newLevelBar(e *env, quiet bool) *levelBar {
	if !e.tty || quiet {
		return nil
	}
	return &levelBar{w: e.stderr}
}

// begin starts the clock of one build.
func (l *levelBar) begin() {
	if l != nil {
		l.start = time.Now()
	}
}

// update is the builder's progress callback.
func (l *levelBar) update(p kdtree.Progress) {
	if l == nil {
		return
	}
	if l.bar == nil && time.Since(l.start) < progressDelay {
		return
	}
	known := p.Fraction > 0
	if l.bar != nil && known && !l.fraction {
		_ = l.bar.Clear() // the spinner gives way to the bar
		l.bar = nil
	}
	if l.bar == nil {
		// A spinner until the builder reports a fraction.
		steps := -1
		if known {
			steps = barSteps
		}
		l.fraction = known
		l.bar = progressbar.NewOptions(steps,
			progressbar.OptionSetWriter(l.w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionClearOnFinish(),
		)
	} else if p.Phase == l.phase && time.Since(l.shown) < barFrame {
		return
	}
	l.shown, l.phase = time.Now(), p.Phase
	desc := "building: " + p.Phase
	switch p.Phase {
	case "large":
		desc = fmt.Sprintf("building: level %d, %s active nodes", p.Level, commas(p.Nodes))
	case "small":
		desc = fmt.Sprintf("building: small phase, %s small roots", commas(p.Nodes))
	}
	if l.fraction {
		_ = l.bar.Set(int(min(max(p.Fraction, 0), 1) * barSteps))
	} else {
		_ = l.bar.Add(1)
	}
	l.bar.Describe(desc) // the frame: the new fraction and text
}

// done removes the bar.
func (l *levelBar) done() {
	if l == nil || l.bar == nil {
		return
	}
	_ = l.bar.Finish()
	_ = l.bar.Clear()
	l.bar = nil
}
