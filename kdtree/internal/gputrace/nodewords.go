package gputrace

// NodeWords downloads the node words the kernels read: for tests that
// compare a kept tree's nodes, the build's own buffer, with an uploaded
// one's.
func (t *Tree) NodeWords() ([]uint32, error) {
	w := make([]uint32, len(t.hostNodes))
	if len(w) == 0 {
		return w, nil
	}
	return w, t.nodes.Slice(0, len(w)).CopyToHost(w)
}
