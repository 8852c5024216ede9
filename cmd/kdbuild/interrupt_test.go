package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestInterruptedTraceAndRender: Ctrl-C (a cancelled context) before or
// during kdbuild trace, bench trace and render ends them soon after with
// exit 130, nothing on stdout and no image; the "during" runs would take
// seconds uninterrupted, and must return within interruptGrace of the
// cancellation (plus a loaded machine's scheduling).
func TestInterruptedTraceAndRender(t *testing.T) {
	img := filepath.Join(t.TempDir(), "img.png")
	cases := []struct {
		name string
		cmd  func(*env, []string) int
		args []string
	}{
		{"trace", runTrace, []string{"proc:soup:3000", "--device", "cpu"}},
		{"bench trace", runBench, []string{"trace", "proc:icosphere:3", "--runs", "1"}},
		{"render", runRender, []string{"proc:icosphere:2", "--device", "cpu", "--size", "3000x2000", "--out", img}},
	}
	for _, c := range cases {
		for _, after := range []time.Duration{0, 300 * time.Millisecond} {
			for _, asJSON := range []bool{false, true} {
				interrupt := func() (context.Context, context.CancelFunc) {
					ctx, cancel := context.WithCancel(context.Background())
					if after == 0 {
						cancel()
					} else {
						time.AfterFunc(after, cancel)
					}
					return ctx, cancel
				}
				args := append([]string{}, c.args...)
				if asJSON {
					args = append(args, "--json")
				}
				start := time.Now()
				r, _ := runCmdWith(t, c.cmd, "", interrupt, args...)
				took := time.Since(start) - after // from the cancellation
				what := c.name + " " + after.String()
				t.Logf("%s: returned %v after the cancellation", what, took)
				if took < 0 && r.code == exitOK {
					// A fast machine finished before the cancellation: no
					// interruption to check.
					continue
				}
				assert.Equal(t, exitInterrupted, r.code, "%s: stderr %s", what, r.stderr)
				assert.Empty(t, r.stdout, "%s: no report after an interruption", what)
				assert.Contains(t, r.stderr, "interrupted", what)
				assert.Less(t, took, interruptGrace+time.Second, what)
				_, err := os.Stat(img)
				assert.True(t, os.IsNotExist(err), "%s: an image was written", what)
			}
		}
	}
}
