package gputrace

import (
	"math/rand"
	"testing"
)

// randomTree returns the node words of a random tree of about n nodes in
// depth-first order (below child i+1, above child later), leaves of
// distinct words, interior nodes of distinct planes.
func randomTree(rng *rand.Rand, n int) []uint32 {
	var w []uint32
	var grow func(depth int)
	grow = func(depth int) {
		i := len(w) / 2
		if depth >= MaxDepth || len(w)/2 >= n || (depth > 0 && rng.Intn(4) == 0) {
			w = append(w, uint32(i), uint32(rng.Intn(5))<<2|3)
			return
		}
		w = append(w, uint32(1000+i), uint32(rng.Intn(3)))
		grow(depth + 1)
		w[2*i+1] |= uint32(len(w)/2) << 2
		grow(depth + 1)
	}
	grow(0)
	return w
}

// samePairTree walks the depth-first tree from node i and the pair layout
// from place p together: the same words (w1's child index apart) at every
// node, both children of a pair's node in its slot.
func samePairTree(t *testing.T, nodes, pairs []uint32, i, p uint32, seen map[uint32]bool) {
	t.Helper()
	if seen[p] {
		t.Fatalf("place %d used twice", p)
	}
	seen[p] = true
	w0, w1 := nodes[2*i], nodes[2*i+1]
	pw0, pw1 := pairs[2*p], pairs[2*p+1]
	if w0 != pw0 || w1&3 != pw1&3 || (w1&3 == 3 && w1 != pw1) {
		t.Fatalf("node %d (%d %d) at place %d has words %d %d", i, w0, w1, p, pw0, pw1)
	}
	if w1&3 == 3 {
		return
	}
	s := pw1 >> 2
	if s == 0 || int(4*s) >= len(pairs) {
		t.Fatalf("node %d: slot %d of %d", i, s, len(pairs)/4)
	}
	samePairTree(t, nodes, pairs, i+1, 2*s, seen)
	samePairTree(t, nodes, pairs, w1>>2, 2*s+1, seen)
}

func TestPairLayout(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	cases := []struct {
		name  string
		nodes []uint32
	}{
		{"one leaf", []uint32{5, 2<<2 | 3}},
		{"one split", []uint32{1000, 2<<2 | 1, 0, 1<<2 | 3, 1, 3}},
		{"deepest chain", chain(MaxDepth, 1)},
		{"random 50", randomTree(rng, 50)},
		{"random 5000", randomTree(rng, 5000)},
		{"random 100000", randomTree(rng, 100000)},
	}
	for _, c := range cases {
		if err := check(Input{Nodes: c.nodes, Refs: make([]uint32, 1<<17), Tris: 1}); err != nil {
			t.Fatalf("%s: the input tree: %v", c.name, err)
		}
		pairs, err := PairLayout(c.nodes)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n := len(c.nodes) / 2
		interior := 0
		for i := 0; i < n; i++ {
			if c.nodes[2*i+1]&3 != 3 {
				interior++
			}
		}
		if len(pairs) != 4*(interior+1) {
			t.Errorf("%s: %d words for %d interior nodes, want a slot each and the root's", c.name, len(pairs), interior)
		}
		if pairs[2] != 0 || pairs[3] != 3 {
			t.Errorf("%s: place 1 holds %d %d, want an empty leaf", c.name, pairs[2], pairs[3])
		}
		seen := map[uint32]bool{1: true}
		samePairTree(t, c.nodes, pairs, 0, 0, seen)
		if len(seen) != 2*(interior+1) {
			t.Errorf("%s: %d places reached of %d", c.name, len(seen), 2*(interior+1))
		}
		// Treelets: most interior nodes find their children's slot in the
		// line of their own slot.
		if interior >= 1000 {
			same := 0
			for p := uint32(2); p < uint32(len(pairs)/2); p++ {
				if w1 := pairs[2*p+1]; w1&3 != 3 && (w1>>2)/PairLineSlots == (p/2)/PairLineSlots {
					same++
				}
			}
			frac := float64(same) / float64(interior-1)
			t.Logf("%s: %.3f of the children slots in their parent's line", c.name, frac)
			if frac < 0.6 {
				t.Errorf("%s: %.2f of the children slots in their parent's line", c.name, frac)
			}
		}
	}
}

func BenchmarkPairLayout(b *testing.B) {
	nodes := randomTree(rand.New(rand.NewSource(3)), 300_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := PairLayout(nodes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(nodes)/2), "nodes")
}
