package gpubuild

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
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
//
// With queued, it waits for nothing: it returns the scene's triangle count
// as a bound, the count of kept triangles and the error word stay on the
// device (d.prep), the first level is laid out for the bound and completed
// from the count on the device (kdtree_first_level_u32), and the host
// takes both with the root box (keptCount). The read-back of the count
// was the prepare phase's one wait (0.06-0.09 ms of the bunny's, with the
// device idle while the host then queued the first level).
func (b *gpuBuild) prepareCUDA(d *devLevel, queued bool) (int, error) {
	s := b.Scene
	nt, nv := len(s.Tris), len(s.Verts)
	if nt == 0 {
		b.EndPhase("upload")
		b.StartPhase()
		return 0, nil
	}
	var verts *exec.Buf[float32]
	var err error
	if nv > 0 {
		verts, err = exec.FromHost(b.Ex, unsafe.Slice(&s.Verts[0][0], 3*nv))
	} else {
		verts, err = exec.Alloc[float32](b.Ex, 3) // never read: every index is out of range
	}
	if err != nil {
		return 0, err
	}
	defer verts.Free()
	idx, err := exec.FromHost(b.Ex, unsafe.Slice(&s.Tris[0][0], 3*nt))
	if err != nil {
		return 0, err
	}
	defer idx.Free()
	b.EndPhase("upload")
	b.StartPhase()

	// Gather and test: keep flags, the list 0..nt-1 and the error word.
	if d.tv, err = exec.Alloc[float32](b.Ex, 9*nt); err != nil {
		return 0, err
	}
	w, err := exec.Alloc[uint32](b.Ex, 2*nt+1)
	if err != nil {
		return 0, err
	}
	defer w.Free()
	keep, all, bad := w.Slice(0, nt), w.Slice(nt, nt), w.Slice(2*nt, 1)
	if queued {
		// The count, then the error word: kept until keptCount.
		if d.prep, err = exec.Alloc[uint32](b.Ex, 2); err != nil {
			return 0, err
		}
		bad = d.prep.Slice(1, 1)
	}
	if err := bad.Dev().Memset32(0xFFFFFFFF); err != nil {
		return 0, err
	}
	if err := launchN(d, launch.KdtreeGatherF32, nt, launch.KdtreeGatherF32Args{
		Verts: verts.Ptr(), Nv: uint32(nv), Idx: idx.Ptr(), Nt: uint32(nt), Tv: d.tv.Ptr(),
		Keep: keep.Ptr(), Iota: all.Ptr(), Err: bad.Ptr()}); err != nil {
		return 0, err
	}
	if d.kept, err = exec.Alloc[uint32](b.Ex, nt); err != nil {
		return 0, err
	}
	if queued {
		if err := scan.CompactQueued(b.Ex, d.kept, all, keep, d.prep.Slice(0, 1)); err != nil {
			return 0, fmt.Errorf("kdtree: kept triangles: %w", err)
		}
		d.countPending = true
		return nt, nil
	}
	k, err := b.compactKept(d, all, keep, bad)
	if err != nil {
		return 0, err
	}
	b.Dropped = nt - k
	return k, nil
}

// compactKept compacts the kept triangles of all (flags keep) into d.kept
// and returns their count, or the error kdtree_gather_f32's word bad
// reports.
func (b *gpuBuild) compactKept(d *devLevel, all, keep, bad *exec.Buf[uint32]) (int, error) {
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
	k, err := scan.Compact(b.Ex, d.kept, all, keep)
	if err != nil {
		return 0, fmt.Errorf("kdtree: kept triangles: %w", err)
	}
	if pin == nil {
		if err := bad.CopyToHost(word); err != nil {
			return 0, err
		}
	}
	if err := b.gatherError(word[0]); err != nil {
		return 0, err
	}
	return k, nil
}

// gatherError is the error kdtree_gather_f32's error word i reports: none
// when it is 0xFFFFFFFF, else triangle i has a vertex index out of range.
func (b *gpuBuild) gatherError(i uint32) error {
	s := b.Scene
	if i == 0xFFFFFFFF {
		return nil
	}
	if int(i) >= len(s.Tris) {
		return fmt.Errorf("kdtree: kdtree_gather_f32 reported triangle %d of %d", i, len(s.Tris))
	}
	return fmt.Errorf("kdtree: triangle %d has vertex index %v out of range (%d vertices)", i, s.Tris[i], len(s.Verts))
}

// keptCount returns the count of kept triangles of a queued prepareCUDA
// (takeRoot brings it home with the root box) after checking the error
// word, and sets b.dropped.
func (b *gpuBuild) keptCount(d *devLevel) (int, error) {
	if _, err := d.takeRoot(); err != nil {
		return 0, err
	}
	if !d.keptKnown {
		return 0, errors.New("kdtree: the count of kept triangles was never queued")
	}
	if err := b.gatherError(d.keptBad); err != nil {
		return 0, err
	}
	if d.keptN > len(b.Scene.Tris) {
		return 0, fmt.Errorf("kdtree: %d triangles kept of %d", d.keptN, len(b.Scene.Tris))
	}
	b.Dropped = len(b.Scene.Tris) - d.keptN
	return d.keptN, nil
}

// gatherTris fills b.tris from the scene (after prepareCUDA checked the
// indices) for the host steps of a CUDA build: the Go small phase.
func (b *gpuBuild) gatherTris() {
	if b.Tris != nil {
		return
	}
	s := b.Scene
	b.Tris = make([]refbuild.Triangle, len(s.Tris))
	exec.ParallelFor(b.HostWorkers(), len(s.Tris), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for k := 0; k < 3; k++ {
				b.Tris[i][k] = [3]float32(s.Verts[s.Tris[i][k]])
			}
		}
	})
}
