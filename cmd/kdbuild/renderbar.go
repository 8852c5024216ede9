package main

import (
	"time"

	"github.com/schollz/progressbar/v3"
)

// rowBar shows a render's rows done, once it has run longer than
// progressDelay, on a terminal and unless quiet. A nil *rowBar does
// nothing.
type rowBar struct {
	e        *env
	rows     int
	rowsDone int
	start    time.Time
	bar      *progressbar.ProgressBar
}

func newRowBar(e *env, quiet bool, rows int) *rowBar {
	if !e.tty || quiet {
		return nil
	}
	return &rowBar{e: e, rows: rows, start: time.Now()}
}

// update counts n more rows done (called from one goroutine at a time).
func (b *rowBar) update(n int) {
	if b == nil {
		return
	}
	b.rowsDone += n
	if b.bar == nil {
		if time.Since(b.start) < progressDelay {
			return
		}
		b.bar = progressbar.NewOptions(b.rows,
			progressbar.OptionSetWriter(b.e.stderr),
			progressbar.OptionSetDescription("rendering"),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		_ = b.bar.Set(b.rowsDone)
		return
	}
	_ = b.bar.Add(n)
}

// done removes the bar.
func (b *rowBar) done() {
	if b == nil || b.bar == nil {
		return
	}
	_ = b.bar.Finish()
	_ = b.bar.Clear()
}
