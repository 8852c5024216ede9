package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCPUProfile: --cpuprofile writes a profile of the builds into a new
// file and refuses to replace an existing one.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "build.pprof")
	r := kdbuild(t, "--device", "cpu", "-q", "--cpuprofile", p, smallScene)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	st, err := os.Stat(p)
	if err != nil || st.Size() == 0 {
		t.Fatalf("profile %s: %v, %d bytes", p, err, st.Size())
	}
	old := []byte("keep me")
	kept := filepath.Join(dir, "kept.pprof")
	if err := os.WriteFile(kept, old, 0o644); err != nil {
		t.Fatal(err)
	}
	r = kdbuild(t, "--device", "cpu", "-q", "--cpuprofile", kept, smallScene)
	if r.code != exitError || !strings.Contains(r.stderr, "exists") {
		t.Fatalf("existing file: exit %d, stderr %q", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(kept); string(got) != string(old) {
		t.Fatalf("existing file changed to %q", got)
	}
}
