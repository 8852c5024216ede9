package gputrace

// NodeWords downloads the node words the kernels read, in the pair layout
// (PairLayout): for tests that compare a kept tree's device copy with an
// uploaded one's.
func (t *Tree) NodeWords() ([]uint32, error) {
	w := make([]uint32, t.nodes.Len())
	if len(w) == 0 {
		return w, nil
	}
	return w, t.nodes.CopyToHost(w)
}
