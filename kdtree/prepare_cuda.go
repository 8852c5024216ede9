package kdtree

import (
	"fmt"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scan"
)

// prepareCUDA is prepare on the device. The scene's vertices and vertex
// indices are uploaded as they are (phase "upload", which it ends and then
// restarts the phase timer); kdtree_gather_f32 gathers every triangle's
// vertices into d.tv (9 floats per scene triangle) and keeps it or not as
// nonDegenerate does; scan.Compact lists the kept triangles, ascending, in
// d.kept. It returns how many are kept and sets b.dropped; b.tris and
// b.kept stay nil (gatherTris fills b.tris when a host step needs them).
// An out-of-range vertex index is an error naming the smallest such
// triangle.
func (b *builder) prepareCUDA(d *devLevel) (int, error) {
	s := b.scene
	nt, nv := len(s.Tris), len(s.Verts)
	if nt == 0 {
		b.endPhase("upload")
		b.startPhase()
		return 0, nil
	}
	var verts *exec.Buf[float32]
	var err error
	if nv > 0 {
		verts, err = exec.FromHost(b.ex, unsafe.Slice(&s.Verts[0][0], 3*nv))
	} else {
		verts, err = exec.Alloc[float32](b.ex, 3) // never read: every index is out of range
	}
	if err != nil {
		return 0, err
	}
	defer verts.Free()
	idx, err := exec.FromHost(b.ex, unsafe.Slice(&s.Tris[0][0], 3*nt))
	if err != nil {
		return 0, err
	}
	defer idx.Free()
	b.endPhase("upload")
	b.startPhase()

	// Gather and test: keep flags, the list 0..nt-1 and the error word.
	if d.tv, err = exec.Alloc[float32](b.ex, 9*nt); err != nil {
		return 0, err
	}
	w, err := exec.Alloc[uint32](b.ex, 2*nt+1)
	if err != nil {
		return 0, err
	}
	defer w.Free()
	keep, all, bad := w.Slice(0, nt), w.Slice(nt, nt), w.Slice(2*nt, 1)
	if err := bad.Dev().Memset32(0xFFFFFFFF); err != nil {
		return 0, err
	}
	if err := d.launch("kdtree_gather_f32", nt, verts.Ptr(), uint32(nv), idx.Ptr(), uint32(nt), d.tv.Ptr(),
		keep.Ptr(), all.Ptr(), bad.Ptr()); err != nil {
		return 0, err
	}
	// The error word comes home with the count of kept triangles: copied
	// into pinned memory before the compaction, whose read-back of the
	// count then waits for both (one wait instead of two; without pinned
	// memory, a read-back of its own).
	word, pin := d.hostWords(1)
	if pin != nil {
		if err := d.ctx.CopyToHostAsync(pin, 0, bad.Ptr(), 4); err != nil {
			return 0, err
		}
	}
	if d.kept, err = exec.Alloc[uint32](b.ex, nt); err != nil {
		return 0, err
	}
	k, err := scan.Compact(b.ex, d.kept, all, keep)
	if err != nil {
		return 0, fmt.Errorf("kdtree: kept triangles: %w", err)
	}
	if pin == nil {
		if err := bad.CopyToHost(word); err != nil {
			return 0, err
		}
	}
	if i := word[0]; i != 0xFFFFFFFF {
		if int(i) >= nt {
			return 0, fmt.Errorf("kdtree: kdtree_gather_f32 reported triangle %d of %d", i, nt)
		}
		return 0, fmt.Errorf("kdtree: triangle %d has vertex index %v out of range (%d vertices)", i, s.Tris[i], nv)
	}
	b.dropped = nt - k
	return k, nil
}

// gatherTris fills b.tris from the scene (after prepareCUDA checked the
// indices) for the host steps of a CUDA build: the Go small phase.
func (b *builder) gatherTris() {
	if b.tris != nil {
		return
	}
	s := b.scene
	b.tris = make([]triangle, len(s.Tris))
	exec.ParallelFor(b.hostWorkers(), len(s.Tris), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for k := 0; k < 3; k++ {
				b.tris[i][k] = [3]float32(s.Verts[s.Tris[i][k]])
			}
		}
	})
}
