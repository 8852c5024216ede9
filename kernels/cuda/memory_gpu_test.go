//go:build cgo && linux

package cuda

import (
	"testing"
)

// TestGPULargeCopyToHost: copies from stageMin bytes up go through the pinned
// staging buffers (staging.go); every byte must arrive, at chunk edges, in
// the last partial chunk and from an offset view.
func TestGPULargeCopyToHost(t *testing.T) {
	c := gpu(t)
	const n = (2*stageChunk+stageChunk/2)/4 + 3 // uint32 words: 2.5 chunks and a bit
	host, b := wordsOnDevice(t, c, n, 2654435761, 7)
	for _, tc := range []struct{ off, len int }{
		{0, n}, {0, stageMin / 4}, {0, stageChunk / 4}, {5, stageChunk/4 + 1}, {3, n - 3}, {0, stageMin/4 - 1},
	} {
		got := make([]uint32, tc.len)
		if err := b.Slice(tc.off, tc.len).CopyToHost(got); err != nil {
			t.Fatalf("off %d len %d: %v", tc.off, tc.len, err)
		}
		for i, v := range got {
			if v != host[tc.off+i] {
				t.Fatalf("off %d len %d: word %d = %d, want %d", tc.off, tc.len, i, v, host[tc.off+i])
			}
		}
	}
}

// TestGPULargeCopyFromHost: uploads from stageMin bytes up go through the
// staging buffers the other way (htodStaged); every word must arrive, at
// chunk edges (upChunk's sizes and the staging buffers'), in a last partial
// chunk and into an offset view, and nothing past the copy may change.
func TestGPULargeCopyFromHost(t *testing.T) {
	c := gpu(t)
	const n = (2*stageChunk+stageChunk/2)/4 + 3 // uint32 words: 2.5 chunks and a bit
	host := make([]uint32, n)
	for i := range host {
		host[i] = uint32(i)*2246822519 + 11
	}
	b, err := NewBuffer[uint32](c, n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	for _, tc := range []struct{ off, len int }{
		{0, n}, {0, stageMin / 4}, {0, stageMin/4 - 1}, {7, stageChunk/4 + 1}, {3, n - 3},
		{0, 4 * stageChunk / 4}, {1, int(upChunk(stageMin+4096)/4) + 1},
	} {
		if tc.off+tc.len > n {
			tc.len = n - tc.off
		}
		if err := b.Memset32(0xDEADBEEF); err != nil {
			t.Fatal(err)
		}
		src := host[tc.off : tc.off+tc.len]
		if err := b.Slice(tc.off, tc.len).CopyFromHost(src); err != nil {
			t.Fatalf("off %d len %d: %v", tc.off, tc.len, err)
		}
		got := make([]uint32, n)
		if err := b.CopyToHost(got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			want := uint32(0xDEADBEEF)
			if i >= tc.off && i < tc.off+tc.len {
				want = host[i]
			}
			if v != want {
				t.Fatalf("off %d len %d: word %d = %#x, want %#x", tc.off, tc.len, i, v, want)
			}
		}
	}
}

// TestGPUMemCache checks the device memory cache (memcache.go): a freed
// block is kept and handed out again for the same size only, the counts
// leave it out, SetCacheLimit and FreeCache give it back, and an
// allocation that fails for want of memory releases the cache and retries.
func TestGPUMemCache(t *testing.T) {
	c := gpu(t)
	if err := c.FreeCache(); err != nil {
		t.Fatal(err)
	}
	defer c.SetCacheLimit(c.Info().TotalMem / 4)
	if err := c.SetCacheLimit(8 << 20); err != nil {
		t.Fatal(err)
	}
	base := c.AllocatedBytes()
	a, err := c.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FreePtr(a); err != nil {
		t.Fatal(err)
	}
	if got := c.CachedBytes(); got != 1<<20 {
		t.Fatalf("CachedBytes %d after freeing 1 MiB, want %d", got, 1<<20)
	}
	if got := c.AllocatedBytes(); got != base {
		t.Fatalf("AllocatedBytes %d, want %d (the cache is not counted)", got, base)
	}
	b, err := c.Alloc(1<<20 + 4) // another size: a new block
	if err != nil {
		t.Fatal(err)
	}
	if b == a {
		t.Fatal("a cached block of another size was handed out")
	}
	a2, err := c.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if a2 != a || c.CachedBytes() != 0 {
		t.Fatalf("Alloc(1 MiB) = %#x (cached %d), want the cached block %#x", a2, c.CachedBytes(), a)
	}
	if got := c.AllocatedBytes() - base; got != 2<<20+4 {
		t.Fatalf("AllocatedBytes grew by %d, want %d", got, 2<<20+4)
	}
	// A Buffer of the same size reuses the block, which works as memory.
	if err := c.FreePtr(a2); err != nil {
		t.Fatal(err)
	}
	buf, err := NewBuffer[uint32](c, 1<<18)
	if err != nil {
		t.Fatal(err)
	}
	if buf.Ptr() != a {
		t.Errorf("NewBuffer of 1 MiB got %#x, want the cached %#x", buf.Ptr(), a)
	}
	want := make([]uint32, 1<<18)
	for i := range want {
		want[i] = uint32(3*i + 1)
	}
	if err := buf.CopyFromHost(want); err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, 1<<18)
	if err := buf.CopyToHost(got); err != nil || got[12345] != want[12345] || got[1<<18-1] != want[1<<18-1] {
		t.Fatalf("reused block read back wrong (%v)", err)
	}
	buf.Free()
	if a2, err = c.Alloc(1 << 20); err != nil {
		t.Fatal(err)
	}
	for _, p := range []DevPtr{a2, b} {
		if err := c.FreePtr(p); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.CachedBytes(); got != 2<<20+4 {
		t.Fatalf("CachedBytes %d, want %d", got, 2<<20+4)
	}
	if err := c.SetCacheLimit(1<<20 + 4); err != nil {
		t.Fatal(err)
	}
	if got := c.CachedBytes(); got > 1<<20+4 {
		t.Fatalf("CachedBytes %d after SetCacheLimit(%d)", got, 1<<20+4)
	}
	if err := c.FreeCache(); err != nil || c.CachedBytes() != 0 {
		t.Fatalf("FreeCache: %v, %d cached", err, c.CachedBytes())
	}
	// Out of memory with the cache full: Alloc releases it and retries.
	free, _, err := c.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	big := (free/2 + (1 << 20)) &^ 4095
	if err := c.SetCacheLimit(big); err != nil {
		t.Fatal(err)
	}
	p, err := c.Alloc(big)
	if err != nil {
		t.Skipf("cannot allocate %d bytes for the out-of-memory case: %v", big, err)
	}
	if err := c.FreePtr(p); err != nil || c.CachedBytes() != big {
		t.Fatalf("free of the big block: %v, %d cached", err, c.CachedBytes())
	}
	q, err := c.Alloc(big + 4096) // does not fit beside the cached block
	if err != nil {
		t.Fatalf("Alloc with the cache holding the memory: %v", err)
	}
	if c.CachedBytes() != 0 {
		t.Errorf("CachedBytes %d after the retried allocation, want 0", c.CachedBytes())
	}
	if err := c.FreePtr(q); err != nil {
		t.Fatal(err)
	}
	if err := c.FreeCache(); err != nil {
		t.Fatal(err)
	}
}

// TestGPUPinnedAsyncCopy checks Pinned (rounded sizes, reuse after
// PutPinned) and CopyToHostAsync: the words arrive at the offset once an
// event recorded after the copy has happened, and copies past the block
// are refused.
func TestGPUPinnedAsyncCopy(t *testing.T) {
	c := gpu(t)
	const n = 5000
	host, b := wordsOnDevice(t, c, n, 2246822519, 3)
	p, err := c.Pinned(4*n + 100)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bytes() != pinnedMin {
		t.Fatalf("pinned block of %d bytes, want %d", p.Bytes(), pinnedMin)
	}
	ev, err := c.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Destroy()
	for _, tc := range []struct{ off, src, len int }{{0, 0, n}, {16, 7, 1}, {4 * 100, 33, n - 33}} {
		if err := c.CopyToHostAsync(p, uint64(tc.off), b.Slice(tc.src, tc.len).Ptr(), uint64(4*tc.len)); err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(); err != nil {
			t.Fatal(err)
		}
		if err := ev.Synchronize(); err != nil {
			t.Fatal(err)
		}
		got := p.U32(tc.off/4 + tc.len)[tc.off/4:]
		for i, v := range got {
			if v != host[tc.src+i] {
				t.Fatalf("off %d src %d: word %d = %d, want %d", tc.off, tc.src, i, v, host[tc.src+i])
			}
		}
	}
	if err := c.CopyToHostAsync(p, pinnedMin-4, b.Ptr(), 8); err == nil {
		t.Fatal("a copy past the pinned block was queued")
	}
	c.PutPinned(p)
	q, err := c.Pinned(100)
	if err != nil {
		t.Fatal(err)
	}
	if q != p {
		t.Fatal("the block given back was not reused")
	}
	c.PutPinned(q)
}

// TestGPUCopyToDeviceAsync checks CopyToDeviceAsync: words written into a
// pinned block arrive at the device offset once the device has done the
// work queued before a read-back, a copy past the block is refused, and
// a copy of nothing queues nothing.
func TestGPUCopyToDeviceAsync(t *testing.T) {
	c := gpu(t)
	const n = 3000
	_, b := wordsOnDevice(t, c, n, 0, 0)
	p, err := c.Pinned(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer c.PutPinned(p)
	w := p.U32(n)
	for i := range w {
		w[i] = uint32(i)*2654435761 + 7
	}
	for _, tc := range []struct{ off, dst, len int }{{0, 0, n}, {4 * 9, 100, 1}, {4 * 17, 33, n - 40}} {
		if err := b.Memset32(0); err != nil {
			t.Fatal(err)
		}
		if err := c.CopyToDeviceAsync(b.Slice(tc.dst, tc.len).Ptr(), p, uint64(tc.off), uint64(4*tc.len)); err != nil {
			t.Fatal(err)
		}
		got, err := b.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			want := uint32(0)
			if i >= tc.dst && i < tc.dst+tc.len {
				want = w[tc.off/4+i-tc.dst]
			}
			if v != want {
				t.Fatalf("off %d dst %d len %d: word %d = %d, want %d", tc.off, tc.dst, tc.len, i, v, want)
			}
		}
	}
	if err := c.CopyToDeviceAsync(b.Ptr(), p, p.Bytes()-4, 8); err == nil {
		t.Fatal("a copy past the pinned block was queued")
	}
	if err := c.CopyToDeviceAsync(0, p, 0, 0); err != nil {
		t.Fatalf("a copy of nothing: %v", err)
	}
}

// wordsOnDevice returns n words i*mul+add on the host and a device buffer
// holding them (freed when the test ends).
func wordsOnDevice(t *testing.T, c *Context, n int, mul, add uint32) ([]uint32, *Buffer[uint32]) {
	t.Helper()
	host := make([]uint32, n)
	for i := range host {
		host[i] = uint32(i)*mul + add
	}
	b, err := NewBuffer[uint32](c, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Free() })
	if err := b.CopyFromHost(host); err != nil {
		t.Fatal(err)
	}
	return host, b
}

// TestGPUSyncEventPool checks SyncEvent and PutEvent: a sync event given
// back is handed out again and still records and waits; a timing event
// given back is destroyed, not kept; Elapsed refuses a sync event.
func TestGPUSyncEventPool(t *testing.T) {
	c := gpu(t)
	e, err := c.SyncEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Record(); err != nil {
		t.Fatal(err)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := c.PutEvent(e); err != nil {
		t.Fatal(err)
	}
	e2, err := c.SyncEvent()
	if err != nil {
		t.Fatal(err)
	}
	if e2 != e {
		t.Errorf("SyncEvent after PutEvent made a new event, want the one given back")
	}
	buf, err := NewBuffer[uint32](c, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if err := buf.Memset32(7); err != nil {
		t.Fatal(err)
	}
	if err := e2.Record(); err != nil {
		t.Fatal(err)
	}
	if err := e2.Synchronize(); err != nil {
		t.Fatal(err)
	}
	timing, err := c.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := timing.Record(); err != nil {
		t.Fatal(err)
	}
	if _, err := Elapsed(e2, timing); err == nil {
		t.Error("Elapsed accepted a sync event")
	}
	if err := c.PutEvent(timing); err != nil {
		t.Fatal(err)
	}
	if timing.ev != nil {
		t.Error("PutEvent kept a timing event")
	}
	if err := c.PutEvent(e2); err != nil {
		t.Fatal(err)
	}
}
