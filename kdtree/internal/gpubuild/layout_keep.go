package gpubuild

import (
	"errors"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Kept is a CUDA build's tree left on the device for tracing: the laid-out
// node words and references (the same as the result's host copy, in
// buffers that may be longer) and the build's triangle corners, 9 floats
// per scene triangle (kdtree_gather_f32's tv). The caller owns the
// buffers: Free frees them.
type Kept struct {
	Nodes, Refs *exec.Buf[uint32]
	Corners     *exec.Buf[float32]
}

// Free frees the buffers; it is idempotent.
func (k *Kept) Free() error {
	if k == nil {
		return nil
	}
	return errors.Join(k.Nodes.Free(), k.Refs.Free(), k.Corners.Free())
}

// BuildKept is Build that, with keep, also hands over the tree's device
// buffers (nil when the build did not lay the tree out on the device: the
// Go small phase, or no triangle kept). The host copy is made either way.
func BuildKept(b *refbuild.Builder, cfg *Config, keep bool) (*refbuild.BuildResult, *Kept, error) {
	g := &gpuBuild{Builder: b, cfg: cfg, keep: keep}
	res, err := g.buildCUDA()
	if err != nil {
		g.kept.Free()
		return nil, nil, err
	}
	return res, g.kept, nil
}

// keepOrFree ends the life of a laid-out tree's device buffers: handed to
// b.kept with the corners (d.tv, which d.free then leaves alone) when the
// build keeps its tree and the layout finished (*done), else freed.
func (b *gpuBuild) keepOrFree(d *devLevel, nodes, refs *exec.Buf[uint32], done *bool) {
	if b.keep && *done && d.tv != nil {
		b.kept.Free() // a retried build's earlier tree
		b.kept = &Kept{Nodes: nodes, Refs: refs, Corners: d.tv}
		d.tv = nil
		return
	}
	nodes.Free()
	refs.Free()
}

// freeCorners frees d.tv once the small phase is over, unless the build
// keeps its tree (the trace's triangles are gathered from it).
func (b *gpuBuild) freeCorners(d *devLevel) {
	if !b.keep {
		d.tv.Free()
	}
}
