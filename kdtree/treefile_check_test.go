package kdtree

import (
	"context"
	"hash/crc32"
	"slices"
	"testing"
)

// TestCRC32Combine: the checksum of two pieces joined equals the checksum
// of the whole, at every split of short inputs and at a few of a long one.
func TestCRC32Combine(t *testing.T) {
	g := splitMix64{state: 7}
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(g.next())
	}
	check := func(b []byte, k int) {
		got := crc32Combine(crc32.Checksum(b[:k], castagnoli), crc32.Checksum(b[k:], castagnoli), uint64(len(b)-k))
		if want := crc32.Checksum(b, castagnoli); got != want {
			t.Fatalf("%d bytes split at %d: %08x, want %08x", len(b), k, got, want)
		}
	}
	for n := 0; n <= 70; n++ {
		for k := 0; k <= n; k++ {
			check(data[:n], k)
		}
	}
	for _, k := range []int{0, 1, 4095, checkPiece, 1 << 20, len(data) - 1, len(data)} {
		check(data, k)
	}
}

// chainTree is a valid tree of depth d: interior nodes 0..d-1 each with
// the next as below child, then d+1 leaves (2d+1 nodes, no references).
func chainTree(d int) []Node {
	nodes := make([]Node, 0, 2*d+1)
	for k := 0; k < d; k++ {
		nodes = append(nodes, Node{W1: uint32(2*d-k)<<2 | uint32(k%3)})
	}
	for k := 0; k <= d; k++ {
		nodes = append(nodes, LeafNode(0, 0))
	}
	return nodes
}

// TestNodeRunsMatchPlainWalk: the node check cut into runs of every
// length accepts exactly the node arrays the plain walk (describeBadNodes)
// accepts: built trees, chains at and past MaxTreeDepth, and built trees
// with random damage to one or two words (fixed seed).
func TestNodeRunsMatchPlainWalk(t *testing.T) {
	type input struct {
		name  string
		nodes []Node
		nrefs int
	}
	var inputs []input
	for _, spec := range []string{"icosphere:2", "soup:300:5", "coplanar:200", "icosphere:0"} {
		tree, err := Build(context.Background(), icoScene(t, spec), Options{})
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{spec, tree.Nodes, len(tree.Refs)})
	}
	for _, d := range []int{0, 1, MaxTreeDepth - 1, MaxTreeDepth, MaxTreeDepth + 1, MaxTreeDepth + 5} {
		inputs = append(inputs, input{"chain", chainTree(d), 0})
	}
	g := splitMix64{state: 11}
	base := inputs[:4]
	for k := 0; k < 600; k++ {
		in := base[k%len(base)]
		nodes := slices.Clone(in.nodes)
		for range 1 + k%2 {
			i := g.next() % uint64(len(nodes))
			switch g.next() % 4 {
			case 0: // a nearby above child or count
				nodes[i].W1 = uint32(int64(nodes[i].W1>>2)+int64(g.next()%5)-2)<<2 | nodes[i].W1&3
			case 1: // leaf becomes interior or back
				nodes[i].W1 ^= uint32(g.next()%3) + 1
			case 2:
				nodes[i].W0 ^= 1 << (g.next() % 32)
			default:
				nodes[i].W1 ^= 1 << (g.next() % 32)
			}
		}
		inputs = append(inputs, input{"damaged " + in.name, nodes, in.nrefs})
	}
	rejected := 0
	for k, in := range inputs {
		want := describeBadNodes(in.nodes, in.nrefs)
		if want != nil {
			rejected++
		}
		for _, per := range []int{1, 2, 3, 7, 64, 1000, len(in.nodes) + 1} {
			var runs []nodeRun
			for lo := 0; lo < len(in.nodes); lo += per {
				runs = append(runs, checkNodeRun(in.nodes, uint64(lo), uint64(min(lo+per, len(in.nodes))), uint64(in.nrefs)))
			}
			got := joinNodeRuns(in.nodes, runs, in.nrefs)
			if (got == nil) != (want == nil) {
				t.Fatalf("input %d (%s), runs of %d: %v, plain walk %v", k, in.name, per, got, want)
			}
		}
	}
	if rejected < 300 || rejected == len(inputs) {
		t.Fatalf("%d of %d inputs rejected: the damage does not test both answers", rejected, len(inputs))
	}
	if describeBadNodes(chainTree(MaxTreeDepth), 0) != nil || describeBadNodes(chainTree(MaxTreeDepth+1), 0) == nil {
		t.Fatal("a chain of depth MaxTreeDepth must be accepted, one deeper refused")
	}
}

// TestMaxIndex: one more than the largest value, at every length and
// position around the four-way unrolling.
func TestMaxIndex(t *testing.T) {
	if got := maxIndex(nil); got != 0 {
		t.Fatalf("empty: %d", got)
	}
	for n := 1; n <= 13; n++ {
		for at := 0; at < n; at++ {
			idx := make([]uint32, n)
			for i := range idx {
				idx[i] = uint32(i % 3)
			}
			idx[at] = 1 << 31
			if got := maxIndex(idx); got != 1<<31+1 {
				t.Fatalf("n %d, largest at %d: %d", n, at, got)
			}
		}
	}
}
