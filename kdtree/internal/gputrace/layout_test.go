package gputrace

import (
	"math/rand"
	"testing"
)

// randomTree returns the node words (kdtree's depth-first layout) of a
// random valid tree of about n nodes whose leaves are empty with
// probability pEmpty, and the number of references its leaves hold.
func randomTree(rng *rand.Rand, n int, pEmpty float64) ([]uint32, uint32) {
	var words []uint32
	refs := uint32(0)
	var grow func(depth int)
	grow = func(depth int) {
		i := len(words) / 2
		if depth >= MaxDepth || len(words)/2 >= n || rng.Intn(3) == 0 {
			cnt := uint32(0)
			if rng.Float64() >= pEmpty {
				cnt = uint32(1 + rng.Intn(4))
			}
			words = append(words, refs, cnt<<2|3)
			refs += cnt
			return
		}
		words = append(words, rng.Uint32(), 0)
		grow(depth + 1)
		words[2*i+1] = uint32(len(words)/2)<<2 | uint32(rng.Intn(3))
		grow(depth + 1)
	}
	grow(0)
	return words, refs
}

// The elided layout keeps every leaf and split word, and an interior
// node's word 1 names the same above child and axis, with its flags set
// exactly for children that are empty leaves.
func TestElide(t *testing.T) {
	// A root over an empty below leaf and an interior above node whose
	// children are a full leaf and an empty one.
	small := []uint32{
		7, 2<<2 | 1, // 0: interior, axis 1, above 2
		0, 3, // 1: empty leaf
		9, 4<<2 | 2, // 2: interior, axis 2, above 4
		0, 2<<2 | 3, // 3: leaf of 2
		2, 3, // 4: empty leaf
	}
	want := []uint32{
		7, 2<<aboveShift | emptyBelow | 1,
		0, 3,
		9, 4<<aboveShift | emptyAbove | 2,
		0, 2<<2 | 3,
		2, 3,
	}
	got := elide(small)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("word %d: %#x, want %#x", i, got[i], want[i])
		}
	}
	if w := elide(nil); w == nil || len(w) != 0 {
		t.Fatalf("empty tree: %v", w)
	}
	if w := elideBelow(small, 5); w != nil {
		t.Fatalf("5 nodes at a limit of 5: %v, want the plain layout (nil)", w)
	}
	if w := elideBelow(small, 6); w == nil {
		t.Fatal("5 nodes at a limit of 6: nil")
	}

	rng := rand.New(rand.NewSource(21))
	for _, c := range []struct {
		n      int
		pEmpty float64
	}{{1, 0}, {1, 1}, {3, 0.5}, {100, 0}, {1000, 0.4}, {5000, 1}} {
		words, refs := randomTree(rng, c.n, c.pEmpty)
		if err := check(Input{Nodes: words, Refs: make([]uint32, refs), Tris: 1}); err != nil {
			t.Fatalf("random tree: %v", err)
		}
		e := elide(words)
		for i := 0; i < len(words)/2; i++ {
			w0, w1, e1 := words[2*i], words[2*i+1], e[2*i+1]
			if e[2*i] != w0 {
				t.Fatalf("n=%d node %d: word 0 %#x, want %#x", c.n, i, e[2*i], w0)
			}
			if w1&3 == 3 {
				if e1 != w1 {
					t.Fatalf("n=%d leaf %d: word 1 %#x, want %#x", c.n, i, e1, w1)
				}
				continue
			}
			above := w1 >> 2
			eb, ea := words[2*(i+1)+1] == 3, words[2*above+1] == 3
			if e1>>aboveShift != above || e1&3 != w1&3 || (e1&emptyBelow != 0) != eb || (e1&emptyBelow != 0 && e1&emptyBelow != emptyBelow) || (e1&emptyAbove != 0) != ea {
				t.Fatalf("n=%d node %d: word 1 %#x from %#x (empty below %v, above %v)", c.n, i, e1, w1, eb, ea)
			}
		}
	}
}
