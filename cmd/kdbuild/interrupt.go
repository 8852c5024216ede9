package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// exitInterrupted is the exit code after Ctrl-C (128 + SIGINT, as shells
// report it).
const exitInterrupted = 130

// interruptGrace is how long the tool waits, after Ctrl-C, for the work in
// progress to return before it exits anyway: the tool ends within half a
// second whatever it was doing (a load, a build on either executor).
const interruptGrace = 250 * time.Millisecond

// interruptContext returns a context cancelled by SIGINT or SIGTERM (or
// e.interrupt, in tests) and a stop function to call when the work is
// done. Once the context is cancelled, a watchdog gives the work
// interruptGrace to return and then exits with exitInterrupted through
// e.exit; a second signal exits at once.
func interruptContext(e *env) (context.Context, func()) {
	var ctx context.Context
	var cancel context.CancelFunc
	if e.interrupt != nil {
		ctx, cancel = e.interrupt()
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	sig := make(chan os.Signal, 2)
	if e.interrupt == nil {
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	}
	finished := make(chan struct{})
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		case <-finished:
			return
		}
		timer := time.NewTimer(interruptGrace)
		defer timer.Stop()
		select {
		case <-finished:
		case <-sig:
			e.exit(exitInterrupted)
		case <-timer.C:
			e.exit(interrupted(e))
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(finished)
		cancel()
	}
}

// interrupted reports an interruption on stderr and returns its exit
// code; nothing goes to stdout (no report of unfinished work).
func interrupted(e *env) int {
	e.saidInterrupted.Do(func() { fmt.Fprintln(e.stderr, "kdbuild: interrupted") })
	return exitInterrupted
}
