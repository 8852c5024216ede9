package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/pprof"
)

// refuseExisting returns the error startCPUProfile would give for an
// existing file, so that the tool says so before a long load.
func refuseExisting(path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("--cpuprofile %s: the file exists; remove it or name another", path)
	}
	return nil
}

// startCPUProfile starts a Go CPU profile of the builds (--cpuprofile) into
// a new file at path; it never replaces an existing file. The returned stop
// ends the profile and closes the file. An empty path profiles nothing.
// The profile covers the host side of a build (Go code, the waits on the
// device included); `go tool pprof` reads it.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("--cpuprofile %s: the file exists; remove it or name another", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
