package launch

import (
	"strings"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

func TestNamed(t *testing.T) {
	k, err := Named[ScanCopyU32Args]("scan_copy_u32")
	if err != nil || k.Name() != "scan_copy_u32" {
		t.Fatalf("Named(scan_copy_u32) = %v, %v", k, err)
	}
	// A kernel of the same fields is found under either alias.
	if _, err := Named[CopyU32Args]("scan_copy_u32"); err != nil {
		t.Errorf("alias: %v", err)
	}
	if _, err := Named[ScanCopyU32Args]("split_dest_u32"); err == nil || !strings.Contains(err.Error(), "does not take") {
		t.Errorf("wrong arguments: %v", err)
	}
	if _, err := Named[ScanCopyU32Args]("no_such_kernel"); err == nil {
		t.Error("unknown kernel: no error")
	}
}

func TestTable(t *testing.T) {
	if len(byName) < 100 {
		t.Fatalf("%d kernels", len(byName))
	}
	for name, k := range byName {
		if n := k.(interface{ Name() string }).Name(); n != name {
			t.Errorf("byName[%q] is %q", name, n)
		}
	}
	a := SplitDestU32Args{Flags: 1, N: 2, DstR: 9}
	got := a.args()
	if len(got) != 9 || got[0] != cuda.DevPtr(1) || got[2] != uint32(2) || got[8] != cuda.DevPtr(9) {
		t.Errorf("args %v", got)
	}
}
