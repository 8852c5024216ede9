package gputrace

import (
	"strings"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// chain returns the node words of a tree that is a path of depth interior
// nodes (each with an empty leaf as its below child) ending in a leaf of
// refs references.
func chain(depth int, refs uint32) []uint32 {
	var w []uint32
	for d := 0; d < depth; d++ {
		i := uint32(len(w) / 2)
		w = append(w, 0, (i+2)<<2|uint32(d%3)) // interior: above child i+2
		w = append(w, 0, 3)                    // below child: empty leaf
	}
	return append(w, 0, refs<<2|3)
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want string // "" for a valid tree
	}{
		{"empty", Input{}, ""},
		{"one leaf", Input{Nodes: []uint32{0, 2<<2 | 3}, Refs: []uint32{0, 1}, Tris: 2}, ""},
		{"deepest", Input{Nodes: chain(MaxDepth, 1), Refs: []uint32{0}, Tris: 1}, ""},
		{"too deep", Input{Nodes: chain(MaxDepth+1, 1), Refs: []uint32{0}, Tris: 1}, "deeper"},
		{"odd words", Input{Nodes: []uint32{0}}, "two per node"},
		{"leaf past refs", Input{Nodes: []uint32{1, 1<<2 | 3}, Refs: []uint32{0}, Tris: 1}, "leaf 0"},
		{"ref past tris", Input{Nodes: []uint32{0, 1<<2 | 3}, Refs: []uint32{3}, Tris: 3}, "triangle 3 of 3"},
		{"above past end", Input{Nodes: []uint32{0, 3 << 2, 0, 3}, Tris: 1}, "children"},
		{"above is below", Input{Nodes: []uint32{0, 1 << 2, 0, 3, 0, 3}, Tris: 1}, "children"},
		{"interior last", Input{Nodes: []uint32{0, 3, 0, 1 << 2}, Tris: 1}, "children"},
	}
	for _, c := range cases {
		err := check(c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestUploadNeedsDevice(t *testing.T) {
	if _, err := Upload(exec.Go(1), Input{}); err != ErrNoDevice {
		t.Fatalf("Upload on the Go executor: %v, want ErrNoDevice", err)
	}
}

func TestCloseIdempotent(t *testing.T) {
	var nilTree *Tree
	if err := nilTree.Close(); err != nil {
		t.Fatal(err)
	}
	tr := &Tree{}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
}
