package scan

import (
	"fmt"
	"sync"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Scanner holds the scratch memory of the scans, segmented scans,
// compactions and sorts of one executor, so that a hot loop (the kd-tree
// builder scans at every level) allocates nothing once the scratch is large
// enough. Scratch grows on demand to the largest size used and is kept until
// Free.
//
// A Scanner is not safe for concurrent use: two calls at once would share the
// tile state. The plain functions (Exclusive, Compact, SortPairs, …) use one
// cached Scanner per executor behind a mutex, so they are safe to call from
// several goroutines; their work is queued in call order on the executor's
// default stream.
type Scanner struct {
	ex   exec.Executor
	mu   sync.Mutex // held by the per-executor cache while a call uses the Scanner
	bufs map[string]*cuda.Buffer[byte]
	// Go executor sort scratch.
	hostKeys, hostVals []uint32
}

// NewScanner returns a Scanner for ex with scratch for scans, segmented scans
// and compactions of up to n elements (sorts reserve theirs on first use or
// with ReserveSort).
func NewScanner(ex exec.Executor, n int) (*Scanner, error) {
	sc := &Scanner{ex: ex, bufs: map[string]*cuda.Buffer[byte]{}}
	if ex.CUDA() != nil && n > 0 {
		if _, err := sc.scratch(scratchTiles, ScratchBytes(n)); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// Executor returns the executor the Scanner belongs to.
func (sc *Scanner) Executor() exec.Executor { return sc.ex }

// ReserveSort allocates the scratch SortPairsWith needs for n keys (with
// values), so that later sorts of up to n pairs allocate nothing.
func (sc *Scanner) ReserveSort(n int) error {
	if sc.ex.CUDA() == nil {
		if cap(sc.hostKeys) < n {
			sc.hostKeys = make([]uint32, n)
			sc.hostVals = make([]uint32, n)
		}
		return nil
	}
	for name, bytes := range sortScratch(sc.ex.CUDA(), n) {
		if _, err := sc.scratch(name, bytes); err != nil {
			return err
		}
	}
	return nil
}

// Free releases the scratch. It is idempotent; the Scanner can be used again
// afterwards (it reallocates).
func (sc *Scanner) Free() error {
	var first error
	if len(sc.bufs) > 0 {
		// Queued work may still use the scratch.
		first = sc.ex.CUDA().Synchronize()
	}
	for name, b := range sc.bufs {
		if err := b.Free(); err != nil && first == nil {
			first = err
		}
		delete(sc.bufs, name)
	}
	sc.hostKeys, sc.hostVals = nil, nil
	return first
}

// scratch returns a device buffer of at least bytes bytes kept under name,
// growing (reallocating, contents lost) when it is smaller.
func (sc *Scanner) scratch(name string, bytes uint64) (cuda.DevPtr, error) {
	if bytes == 0 {
		bytes = 8
	}
	if b, ok := sc.bufs[name]; ok && b.Bytes() >= bytes {
		return b.Ptr(), nil
	} else if ok {
		// Queued work may still use the old buffer: wait before freeing it.
		if err := sc.ex.CUDA().Synchronize(); err != nil {
			return 0, err
		}
		if err := b.Free(); err != nil {
			return 0, err
		}
		delete(sc.bufs, name)
	}
	// Round up to 8 bytes so 64-bit views are whole, and leave headroom so
	// slowly growing sizes do not reallocate every call.
	bytes = (bytes + bytes/8 + 255) &^ 255
	b, err := cuda.NewBuffer[byte](sc.ex.CUDA(), int(bytes))
	if err != nil {
		return 0, fmt.Errorf("scan: scratch %s of %d bytes: %w", name, bytes, err)
	}
	sc.bufs[name] = b
	return b.Ptr(), nil
}

// scratchBuf returns the buffer behind scratch(name, bytes).
func (sc *Scanner) scratchBuf(name string, bytes uint64) (*cuda.Buffer[byte], error) {
	if _, err := sc.scratch(name, bytes); err != nil {
		return nil, err
	}
	return sc.bufs[name], nil
}

// Names of the scratch buffers.
const (
	scratchTiles    = "tiles"    // decoupled look-back state (+ tile counter)
	scratchFlags    = "flags"    // scanned flags / temporary values
	scratchTemp     = "temp"     // double buffers and block sums of the teaching variants
	scratchKeys     = "keys"     // sort: alternate keys
	scratchVals     = "vals"     // sort: alternate values
	scratchHist     = "hist"     // sort: digit histograms
	scratchResult   = "result"   // one word read back (count, max)
	scratchMask     = "mask"     // mask compaction: one bit per item
	scratchCounts   = "counts"   // mask compaction: kept items per chunk, then chunk offsets
	scratchSegTiles = "segtiles" // segmented scan, offsets form: first segment entry per tile
)

var (
	cacheMu sync.Mutex
	cache   = map[exec.Executor]*Scanner{}
)

// cached returns the per-executor Scanner, locked; the caller calls unlock
// when its work is queued.
func cached(ex exec.Executor) (sc *Scanner, unlock func(), err error) {
	cacheMu.Lock()
	sc, ok := cache[ex]
	if !ok {
		sc, err = NewScanner(ex, 0)
		if err != nil {
			cacheMu.Unlock()
			return nil, nil, err
		}
		cache[ex] = sc
	}
	cacheMu.Unlock()
	sc.mu.Lock()
	return sc, sc.mu.Unlock, nil
}

// scannerFor returns sc when the caller gave one (its owner serialises its
// use) and otherwise the executor's cached Scanner, locked until unlock is
// called.
func scannerFor(ex exec.Executor, sc *Scanner) (_ *Scanner, unlock func(), err error) {
	if sc != nil {
		return sc, func() {}, nil
	}
	return cached(ex)
}

// Release frees the scratch cached for ex by the plain functions (call it
// before closing a CUDA executor that is not used again).
func Release(ex exec.Executor) error {
	cacheMu.Lock()
	sc, ok := cache[ex]
	delete(cache, ex)
	cacheMu.Unlock()
	if !ok {
		return nil
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.Free()
}
