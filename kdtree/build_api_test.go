package kdtree

import (
	"testing"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
)

// The builders' node encoding (refbuild) is Node's: the constructors agree
// word for word, and treeNodes views the builders' arrays as Nodes.
func TestBuilderNodesAreNodes(t *testing.T) {
	type pair struct{ want, got Node }
	cases := []pair{
		{InteriorNode(0, 0.5, 2), Node(refbuild.InteriorNode(0, 0.5, 2))},
		{InteriorNode(2, -3, MaxChildIndex-1), Node(refbuild.InteriorNode(2, -3, refbuild.MaxChildIndex-1))},
		{LeafNode(0, 0), Node(refbuild.LeafNode(0, 0))},
		{LeafNode(1<<31, MaxChildIndex-1), Node(refbuild.LeafNode(1<<31, refbuild.MaxChildIndex-1))},
	}
	for i, c := range cases {
		if c.want != c.got {
			t.Errorf("case %d: refbuild encodes %v, Node %v", i, c.got, c.want)
		}
		if c.want.IsLeaf() != refbuild.Node(c.want).IsLeaf() {
			t.Errorf("case %d: IsLeaf differs", i)
		}
	}
	in := []refbuild.Node{refbuild.InteriorNode(1, 2, 2), refbuild.LeafNode(0, 1), refbuild.LeafNode(1, 0)}
	out := treeNodes(in)
	for i := range in {
		if out[i] != Node(in[i]) {
			t.Errorf("treeNodes[%d] = %v, want %v", i, out[i], Node(in[i]))
		}
	}
	if treeNodes(nil) != nil {
		t.Error("treeNodes(nil) is not nil")
	}
}

func TestBuilderMaxTreeDepth(t *testing.T) {
	if MaxTreeDepth != refbuild.MaxTreeDepth {
		t.Fatalf("MaxTreeDepth %d, the builders' %d", MaxTreeDepth, refbuild.MaxTreeDepth)
	}
}
