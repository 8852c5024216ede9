package gputrace

import (
	"math"
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

// traceBox: the root box, then per axis the largest |coordinate| of the box
// and of the split planes on that axis; leaves' words are not splits.
func TestTraceBox(t *testing.T) {
	f := math.Float32bits
	cases := []struct {
		name  string
		nodes []uint32
		box   [6]float32
		want  [3]float32
	}{
		{"no nodes", nil, [6]float32{-1, 2, -3, 4, -5, 6}, [3]float32{4, 5, 6}},
		{"leaf only", []uint32{f(100), 7<<2 | 3}, [6]float32{-1, 2, -3, 4, -5, 6}, [3]float32{4, 5, 6}},
		{"splits past box", []uint32{f(-9), 2<<2 | 1, 0, 3, f(7), 4<<2 | 2, 0, 3, 0, 3},
			[6]float32{-1, -2, -3, 1, 2, 3}, [3]float32{1, 9, 7}},
		{"split inside box", []uint32{f(0.5), 2 << 2, 0, 3, 0, 3}, [6]float32{-2, 0, 0, 1, 1, 1}, [3]float32{2, 1, 1}},
	}
	for _, c := range cases {
		got := traceBox(Input{Nodes: c.nodes, Box: c.box})
		if [6]float32(got[:6]) != c.box || [3]float32(got[6:]) != c.want {
			t.Errorf("%s: traceBox = %v, want box %v then %v", c.name, got, c.box, c.want)
		}
	}
}
