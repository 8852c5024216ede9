package gpubuild

import (
	"fmt"
	"math"
	"slices"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// The small phase started from the small roots the device listed. The
// host's list of small roots (rs.small and its arrays) is the booker's,
// which books a level after its log reaches the host, on its own
// goroutine; the small phase used to wait for it to book the last level,
// then for the roots' words to be made and sent (0.05-0.2 ms of the
// bunny's build with the device idle). The pipelined levels also list the
// roots on the device: NodeWords (kernels/kdtree.cu) numbers a level's
// small roots as the booker does (level after level, node order within
// one), kdtree_tail_f32 writes each root's parked offset, count, depth
// and box at its number and the running count into the level's sizes.
// When the sizes show the last level, startSmallEarly orders the roots
// on the device (kdtree_small_order_u32) and launches the small phase;
// runSmallCUDA then checks the count (and, in tests, every entry) against
// the booker's list before it uses the output.

// rootsFor is the room of the device's small-root list for n references:
// the shared scenes have n/19 (bunny) and n/31 (conference) small roots.
// A build with more uses the host's list.
func rootsFor(n int) int { return n/8 + 1024 }

// ensureRoots makes d.roots the words of a smallRun of stride rootsFor(n)
// (see smallRun), then the list of large-phase nodes (topAt), which
// kdtree_tail_f32 fills. Nothing when the early start is off.
func (d *devLevel) ensureRoots(n int) error {
	if !d.cfg.earlySmall() {
		return nil
	}
	c := rootsFor(n)
	if d.roots != nil && d.rootCap == c {
		return nil
	}
	d.roots.Free()
	d.rootCap = c
	var err error
	d.roots, err = exec.Alloc[uint32](d.ex, topAt(c)+3*topCap(c))
	return err
}

// startSmallEarly launches the small phase once the pipelined levels are
// done on the device: roots small roots listed, pk references parked (a
// bound on the roots' references, which the output's room is made for).
// It frees the level buffers first (as buildCUDA would: the output must
// not add to their peak; without waiting, so that the small phase is
// queued right behind the last level) and leaves the run in d.early.
// Without a list (room too small, the early start off) or without roots it
// does nothing.
func (b *gpuBuild) startSmallEarly(d *devLevel, roots, pk int) error {
	if d.roots == nil || !d.cfg.earlySmall() || roots == 0 || roots > d.rootCap {
		return nil
	}
	if err := d.freeLevel(false); err != nil {
		return err
	}
	ctrAt, _, orderAt, _ := smallAt(d.rootCap)
	w := d.roots
	run := &smallRun{so: &smallDev{roots: roots}, w: w, stride: d.rootCap, total: pk}
	if err := launch.KdtreeSmallOrderU32.Launch(d.ctx, cuda.Linear(1), cuda.Linear(1024), 0, launch.KdtreeSmallOrderU32Args{
		Cnt: w.Slice(d.rootCap, roots).Ptr(), Roots: uint32(roots), Order: w.Slice(orderAt, roots).Ptr(),
		Ctr: w.Slice(ctrAt, smallCtrs).Ptr()}); err != nil {
		return fmt.Errorf("kdtree: kdtree_small_order_u32: %w", err)
	}
	if d.deviceTop {
		// The plan of the large-phase nodes' layout, beside the small
		// phase (top_cuda.go).
		if err := d.queueTopPlan(roots); err != nil {
			return err
		}
		run.dependent = true
	}
	if err := b.smallLaunch(d, run); err != nil {
		run.so.free()
		return err
	}
	d.early = run
	return d.ctx.Flush()
}

// checkEarly checks the device's list of small roots against the booker's:
// the same count and references within the bound the room was made for,
// and with Config.CheckEarlyRoots every entry (offset, count, depth, box bits).
func (b *gpuBuild) checkEarly(d *devLevel, run *smallRun, rs *refbuild.Records, smallOff, smallCnt []uint32) error {
	R := len(rs.Small)
	if run.so.roots != R {
		return fmt.Errorf("kdtree: the device listed %d small roots, the host booked %d", run.so.roots, R)
	}
	total := 0
	for _, c := range smallCnt {
		total += int(c)
	}
	if total > run.total {
		return fmt.Errorf("kdtree: the small roots hold %d references, more than the %d parked", total, run.total)
	}
	if !b.cfg.CheckEarlyRoots {
		return nil
	}
	c := run.stride
	h := make([]uint32, run.w.Len())
	if err := run.w.CopyToHost(h); err != nil {
		return err
	}
	boxAt := 3 * c
	for q := range R {
		got := []uint32{h[q], h[c+q], h[2*c+q]}
		want := []uint32{smallOff[q], smallCnt[q], rs.SmallDepth[q]}
		for k := range 6 {
			got = append(got, h[boxAt+6*q+k])
			want = append(want, math.Float32bits(rs.SmallBox[6*q+k]))
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("kdtree: small root %d listed on the device as %v, booked as %v", q, got, want)
		}
	}
	return nil
}
