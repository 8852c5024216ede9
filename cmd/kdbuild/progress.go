package main

import (
	"fmt"
	"io"
	"os"
	"time"

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
// longer than progressDelay, shows them against size on stderr.
type loadProgress struct {
	r     io.Reader
	n     int64
	size  int64
	name  string
	start time.Time
	w     io.Writer // nil: never show a bar
	bar   *progressbar.ProgressBar
}

// newLoadProgress wraps r; the bar is drawn only when stderr is a terminal
// and quiet is false.
func newLoadProgress(e *env, quiet bool, r io.Reader, size int64, name string) *loadProgress {
	p := &loadProgress{r: r, size: size, name: name, start: time.Now()}
	if e.tty && !quiet {
		p.w = e.stderr
	}
	return p
}

func (p *loadProgress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.w != nil && n > 0 {
		if p.bar == nil && time.Since(p.start) > progressDelay {
			p.bar = progressbar.NewOptions64(p.size,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription("loading "+p.name),
				progressbar.OptionShowBytes(true),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
			)
			_ = p.bar.Set64(p.n)
		} else if p.bar != nil {
			_ = p.bar.Add(n)
		}
	}
	return n, err
}

// done removes the bar.
func (p *loadProgress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}

// levelBar shows the build's progress over tree levels, once the build has
// run longer than progressDelay. The number of levels is not known in
// advance, so it is a spinner that names the level and its active nodes.
type levelBar struct {
	w     io.Writer
	start time.Time
	bar   *progressbar.ProgressBar
}

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
func (l *levelBar) update(level, activeNodes int) {
	if l == nil {
		return
	}
	if l.bar == nil {
		if time.Since(l.start) < progressDelay {
			return
		}
		l.bar = progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(l.w),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionThrottle(50*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	l.bar.Describe(fmt.Sprintf("building: level %d, %d active nodes", level, activeNodes))
	_ = l.bar.Add(1)
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
