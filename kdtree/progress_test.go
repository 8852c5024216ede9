package kdtree

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// checkProgress checks a successful build's Progress calls against the
// contract (phases in order, Fraction non-decreasing in [0, 1] and 1 at
// the end, the large levels numbered from 0 one after the other) and
// returns the large levels' (Level, Nodes).
func checkProgress(t *testing.T, calls []Progress) [][2]int {
	t.Helper()
	require.NotEmpty(t, calls)
	order := []string{"prepare", "large", "small", "layout"}
	var levels [][2]int
	rank, last := 0, 0.0
	for i, p := range calls {
		r := slices.Index(order, p.Phase)
		require.GreaterOrEqual(t, r, rank, "call %d: phase %q after %q", i, p.Phase, order[rank])
		rank = r
		require.True(t, p.Fraction >= last && p.Fraction <= 1, "call %d: fraction %v after %v", i, p.Fraction, last)
		last = p.Fraction
		if p.Phase == "large" {
			require.Equal(t, len(levels), p.Level, "call %d", i)
			require.Positive(t, p.Nodes)
			levels = append(levels, [2]int{p.Level, p.Nodes})
		}
	}
	end := calls[len(calls)-1]
	require.Equal(t, Progress{Phase: "layout", Fraction: 1, Level: end.Level}, end)
	return levels
}

// settle waits (up to a second) for the goroutines to come back to n:
// a cancelled build leaves nothing running.
func settle(t *testing.T, n int, what string) {
	t.Helper()
	for i := 0; runtime.NumGoroutine() > n; i++ {
		if i == 100 {
			buf := make([]byte, 1<<16)
			t.Fatalf("%s: %d goroutines, %d before:\n%s", what, runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cancelEveryCall cancels a build of s at each of its Progress calls in
// turn: every such build but one cancelled at the last call (the build is
// done) returns context.Canceled and leaves no goroutine behind.
func cancelEveryCall(t *testing.T, s *scenes.Scene, o Options) {
	var calls int
	o.Progress = func(Progress) { calls++ }
	_, err := Build(context.Background(), s, o)
	require.NoError(t, err)
	base := runtime.NumGoroutine()
	for k := 1; k < calls; k++ {
		ctx, cancel := context.WithCancel(context.Background())
		seen, done := 0, true
		o.Progress = func(p Progress) {
			if seen++; seen == k {
				cancel()
				// (The Go small phase's calls depend on time: this
				// build's k-th call may be the last.)
				done = p.Fraction == 1
			}
		}
		tr, err := Build(ctx, s, o)
		cancel()
		if done {
			require.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, context.Canceled, "%s: cancelled at call %d of %d", s.Name, k, calls)
		require.Nil(t, tr)
		settle(t, base, s.Name)
	}
}

// cancelAfter cancels builds of s after delays spread over an uncancelled
// build's time: each returns context.Canceled or (cancelled too late) a
// valid tree, soon after the cancel, leaving no goroutine behind.
func cancelAfter(t *testing.T, s *scenes.Scene, o Options, points int) {
	t0 := time.Now()
	want, err := Build(context.Background(), s, o)
	require.NoError(t, err)
	full := time.Since(t0)
	base := runtime.NumGoroutine()
	var late time.Duration
	for k := range points {
		delay := full * time.Duration(k) / time.Duration(points)
		ctx, cancel := context.WithCancel(context.Background())
		var at time.Time
		timer := time.AfterFunc(delay, func() { at = time.Now(); cancel() })
		tr, err := Build(ctx, s, o)
		timer.Stop()
		cancel()
		if err == nil {
			require.Equal(t, len(want.Nodes), len(tr.Nodes))
			continue
		}
		require.True(t, errors.Is(err, context.Canceled), "%s: cancelled after %v: %v", s.Name, delay, err)
		late = max(late, time.Since(at))
		settle(t, base, s.Name)
	}
	t.Logf("%s on %s: build %v, at most %v from the cancel to the return", s.Name, o.Executor.Name(), full, late)
}

// Cancelled at any of its progress calls, or at any time, a build on the
// Go executor returns ctx.Err() and nothing of it is left running.
func TestBuildCancel(t *testing.T) {
	list := []*scenes.Scene{scenes.Soup(3000, 5), scenes.Grid(scenes.Icosphere(3), 3, 2, 2)}
	for _, s := range list {
		cancelEveryCall(t, s, Options{Executor: exec.Go(0)})
	}
	// 2.2·10^6 triangles (3.5·10^4 with -short).
	s, points := scenes.Grid(scenes.Icosphere(6), 3, 3, 3), 4
	if testing.Short() {
		s, points = scenes.Grid(scenes.Icosphere(3), 3, 3, 3), 8
	}
	cancelAfter(t, s, Options{Executor: exec.Go(0)}, points)
}

// The same on the CUDA executor, on the pipelined path and level by level.
func TestBuildGPUCancel(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	for _, off := range []gpubuild.Paths{0, gpubuild.PathPipeline, gpubuild.PathDeviceSmall} {
		for _, s := range []*scenes.Scene{scenes.Soup(3000, 5), scenes.Grid(scenes.Icosphere(3), 3, 2, 2)} {
			cancelEveryCall(t, s, btGPUOptions(Options{}, ex, func(c *gpubuild.Config) { c.Off = off }))
		}
	}
	cancelAfter(t, scenes.Grid(scenes.Icosphere(6), 3, 3, 3), Options{Executor: ex}, 12)
}
