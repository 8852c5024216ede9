package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestImageIsCurrent fails when a kernel source changed (or was added or
// removed) since kdbuild.fatbin was built: run `make kernels`. It needs no
// nvcc: it recomputes the hashes that kernels/gen recorded.
func TestImageIsCurrent(t *testing.T) {
	var names []string
	for _, pat := range []string{"*.cu", "*.cuh"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m...)
	}
	sort.Strings(names)
	got := map[string]string{}
	var list bytes.Buffer
	for _, f := range names {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		got[f] = hex.EncodeToString(h[:])
		fmt.Fprintf(&list, "%s  %s\n", got[f], f)
	}
	var stale []string
	for f, h := range got {
		if want, ok := SourceSHA256[f]; !ok {
			stale = append(stale, f+" is not in the image")
		} else if want != h {
			stale = append(stale, f+" changed since the image was built")
		}
	}
	for f := range SourceSHA256 {
		if _, ok := got[f]; !ok {
			stale = append(stale, f+" is in the image but no longer exists")
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Fatalf("kdbuild.fatbin is stale (run make kernels):\n  %s", strings.Join(stale, "\n  "))
	}
	all := sha256.Sum256(list.Bytes())
	if h := hex.EncodeToString(all[:]); h != SourcesSHA256 {
		t.Fatalf("combined source hash %s, image_gen.go records %s (run make kernels)", h, SourcesSHA256)
	}
}

// TestImageRecordsBuild checks that the image exists and its record names
// every architecture the runtime expects.
func TestImageRecordsBuild(t *testing.T) {
	if len(Image) == 0 {
		t.Fatal("kdbuild.fatbin is empty")
	}
	// A fatbin starts with the magic 0xBA55ED50, little-endian.
	if !bytes.HasPrefix(Image, []byte{0x50, 0xed, 0x55, 0xba}) {
		t.Fatalf("kdbuild.fatbin does not start with the fatbin magic: % x", Image[:min(4, len(Image))])
	}
	for _, want := range []string{"--fmad=false", "sm_70", "compute_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"} {
		if !strings.Contains(NvccFlags, want) {
			t.Errorf("NvccFlags %q lacks %s", NvccFlags, want)
		}
	}
	if !strings.HasPrefix(NvccVersion, "Cuda compilation tools") {
		t.Errorf("NvccVersion %q", NvccVersion)
	}
}
