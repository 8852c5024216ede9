package gputrace

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// Chunk is the most rays a host-slice call traces in one launch: chunks
// are staged in page-locked memory, two at a time, so that the host
// copies one chunk's rays in and the previous chunk's results out while
// the device traces; cancellation is checked between chunks.
const Chunk = 1 << 18

// HostMode is how the host-slice calls (IntersectHost, OccludedHost) move
// rays and results between the caller's slices and the device. Either
// way each chunk passes through page-locked memory, copied on every core.
type HostMode int

const (
	// HostMapped: the kernels read the rays from, and write the results
	// into, the page-locked blocks themselves (mapped into the device's
	// address space), so the transfers overlap the trace.
	HostMapped HostMode = iota
	// HostCopy: each chunk is copied into device buffers and its results
	// back, asynchronously, around the launch.
	HostCopy
)

var hostModeNames = [...]string{"mapped", "copy"}

func (m HostMode) String() string {
	if int(m) < len(hostModeNames) {
		return hostModeNames[m]
	}
	return fmt.Sprintf("HostMode(%d)", int(m))
}

// IntersectHost traces rays (host memory) into hits, Chunk rays at a
// time, checking ctx before each chunk; the kernels write HostHit's
// layout, so the hits come back as they are. The kernel is t.HostKernel.
func (t *Tree) IntersectHost(ctx context.Context, rays []Ray, hits []HostHit) error {
	if len(rays) != len(hits) {
		return fmt.Errorf("gputrace: %d rays and %d hits", len(rays), len(hits))
	}
	return t.hostRun(ctx, rays, false, asBytes(hits))
}

// OccludedHost traces rays (host memory) for any hit into occluded, Chunk
// rays at a time, checking ctx before each chunk, with t.HostKernel. The
// kernels write only 0 and 1: valid bools.
func (t *Tree) OccludedHost(ctx context.Context, rays []Ray, occluded []bool) error {
	if len(rays) != len(occluded) {
		return fmt.Errorf("gputrace: %d rays and %d answers", len(rays), len(occluded))
	}
	return t.hostRun(ctx, rays, true, asBytes(occluded))
}

// stage is one chunk's page-locked block (the rays, then the results) and
// the event recorded after its results are in it; dRays and dOut are its
// device buffers in HostCopy mode.
type stage struct {
	pin       *cuda.Pinned
	ev        *cuda.Event
	dRays     *cuda.Buffer[float32]
	dOut      *cuda.Buffer[uint8]
	lo, m     int // the chunk it holds: rays [lo, lo+m); m == 0: none
	outAt     int // byte offset of the results in pin
	outPerRay int
	mapped    bool
}

// hostRun traces rays in chunks through two stages, results into out
// (outPer bytes a ray: HostHitWords·4, or 1 for anyHit). It waits for the
// device before it returns, also on error.
func (t *Tree) hostRun(ctx context.Context, rays []Ray, anyHit bool, out []byte) (err error) {
	if t.nodes == nil {
		return fmt.Errorf("gputrace: tree is closed")
	}
	if len(rays) == 0 {
		return ctx.Err()
	}
	outPer := len(out) / len(rays)
	m := min(len(rays), Chunk)
	var st [2]*stage
	defer func() {
		// Every queued chunk ends before its memory goes back.
		if serr := t.ctx.Synchronize(); err == nil {
			err = serr
		}
		for _, s := range st {
			if s != nil {
				err = errors.Join(err, s.free(t.ctx))
			}
		}
	}()
	for k := range st {
		if st[k], err = t.newStage(m, outPer); err != nil {
			return err
		}
	}
	k := t.HostKernel
	raw := asBytes(rays)
	const rayBytes = 4 * RayWords
	for c, lo := 0, 0; lo < len(rays); c, lo = c+1, lo+m {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := st[c%2]
		if err := s.drain(out); err != nil {
			return err
		}
		s.lo, s.m = lo, min(m, len(rays)-lo)
		parallelCopy(s.bytes(0, s.m*rayBytes), raw[lo*rayBytes:(lo+s.m)*rayBytes])
		if err := t.traceStage(s, k, anyHit); err != nil {
			return err
		}
	}
	for c := range st {
		if err := st[c].drain(out); err != nil {
			return err
		}
	}
	return nil
}

// newStage makes a stage for chunks of m rays with outPer bytes of result
// each: its page-locked block from the context's keep, mapped unless
// t.Host is HostCopy or the driver did not map it (device buffers then).
func (t *Tree) newStage(m, outPer int) (*stage, error) {
	rayBytes := m * 4 * RayWords
	outAt := (rayBytes + 255) &^ 255
	pin, err := t.ctx.Pinned(uint64(outAt + m*outPer))
	if err != nil {
		return nil, err
	}
	s := &stage{pin: pin, outAt: outAt, outPerRay: outPer}
	s.mapped = t.Host == HostMapped && pin.Dev() != 0
	if s.ev, err = t.ctx.SyncEvent(); err == nil && !s.mapped {
		if s.dRays, err = cuda.NewBuffer[float32](t.ctx, m*RayWords); err == nil {
			s.dOut, err = cuda.NewBuffer[uint8](t.ctx, m*outPer)
		}
	}
	if err != nil {
		return nil, errors.Join(err, s.free(t.ctx))
	}
	return s, nil
}

// traceStage queues the trace of s's chunk (its rays already in s.pin) and
// the record of s.ev after its results are in s.pin.
func (t *Tree) traceStage(s *stage, k Kernel, anyHit bool) error {
	words := uint32(HostHitWords)
	rays, out := s.pin.Dev(), s.pin.Dev()+cuda.DevPtr(s.outAt)
	if !s.mapped {
		if err := t.ctx.CopyToDeviceAsync(s.dRays.Ptr(), s.pin, 0, uint64(s.m*4*RayWords)); err != nil {
			return err
		}
		rays, out = s.dRays.Ptr(), s.dOut.Ptr()
	}
	if err := t.launch(k, anyHit, rays, out, words, s.m); err != nil {
		return err
	}
	if !s.mapped {
		if err := t.ctx.CopyToHostAsync(s.pin, uint64(s.outAt), s.dOut.Ptr(), uint64(s.m*s.outPerRay)); err != nil {
			return err
		}
	}
	return s.ev.Record()
}

// drain waits for s's chunk, if any, and copies its results into out.
func (s *stage) drain(out []byte) error {
	if s.m == 0 {
		return nil
	}
	if err := s.ev.Synchronize(); err != nil {
		return err
	}
	parallelCopy(out[s.lo*s.outPerRay:(s.lo+s.m)*s.outPerRay], s.bytes(s.outAt, s.m*s.outPerRay))
	s.m = 0
	return nil
}

// bytes views n bytes of s's page-locked block from byte off.
func (s *stage) bytes(off, n int) []byte {
	words := s.pin.U32((off + n + 3) / 4)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 4*len(words))[off : off+n]
}

// free gives s's memory back (the caller waited for the device first).
func (s *stage) free(c *cuda.Context) error {
	c.PutPinned(s.pin)
	s.pin = nil
	return errors.Join(c.PutEvent(s.ev), s.dRays.Free(), s.dOut.Free())
}

// parallelCopy copies src into dst (of the same length) on up to
// GOMAXPROCS goroutines, in pieces of at least copyPiece bytes: one core
// copies to and from page-locked memory at a fraction of the memory
// bandwidth.
func parallelCopy(dst, src []byte) {
	const copyPiece = 1 << 20
	n := len(src)
	parts := min(runtime.GOMAXPROCS(0), (n+copyPiece-1)/copyPiece)
	if parts <= 1 {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	per := (n + parts - 1) / parts
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}

// asBytes views a slice of plain values as its bytes.
func asBytes[T Ray | HostHit | bool](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}
