// Package scan owns the prefix-sum family: exclusive and inclusive scans in
// every variant of the seed write-ups plus a production one, segmented scans,
// stream compaction and radix sort, each on the Go and the CUDA executor.
//
// # Contracts
//
// Every primitive states its contract as the reference loop in its doc
// comment; the Go executor runs that loop (or a parallel form with the same
// result) and every CUDA kernel is tested against it. Integer sums (int32,
// uint32) wrap modulo 2^32: int32 is two's complement, so int32 and uint32
// scans are the same bits. float32 sums are rounded after each addition in
// an order that depends on the variant; only cpu-serial adds strictly left
// to right, and the production GPU scan's order also depends on timing (the
// look-back may combine a predecessor's aggregate or its prefix), so float32
// results may differ in the last bits from run to run. Lengths that must
// match and do not are programmer errors and panic; unknown variant names,
// buffers on the wrong side of the executor and invalid offsets are errors.
// The GPU kernels take at most 2^32-1 items.
//
// # Variants
//
//	scan (ExclusiveVariant, InclusiveVariant; Variants lists them, default first)
//	  cpu-serial              Go  one loop
//	  cpu-parallel            Go  one pass: 32768-item blocks round-robin over the workers; each block is summed
//	                              (AVX2 where there is one), its carry found from the other workers' published
//	                              block sums (a CPU decoupled look-back), and scanned again from the cache with
//	                              non-temporal AVX2 stores (default)
//	  naive                   GPU Hillis–Steele in global memory, double-buffered, one launch per level
//	  work-efficient          GPU Blelloch up-/down-sweep in global memory over a power-of-two copy
//	  work-efficient-threads  GPU the same, launching only the threads a level needs
//	  shared-naive            GPU Hillis–Steele per 512-item block in shared memory, block sums scanned recursively
//	  shared-work-efficient   GPU Blelloch per block in shared memory with bank-conflict padding, recursive block sums
//	  production-bid          GPU production with the tile number from blockIdx.x instead of an atomic ticket,
//	                              as CUB does, ≤ 80 registers: 3 blocks per SM; every tile also asks the L2
//	                              to fetch the rows 2 tiles per SM further on (prefetch.global.L2), so that
//	                              the memory keeps streaming while blocks scan, look back and store (default)
//	  production              GPU single pass, decoupled look-back, 256 threads × 32 items, uint4 loads and
//	                              stores with evict-first hints, look-back polling with backoff, ≤ 64
//	                              registers: 4 blocks per SM
//	  production-24           GPU the same with 24 items, ≤ 48 registers: 5 blocks per SM
//	  production-16           GPU the same with 16 items, ≤ 32 registers: 8 blocks per SM
//	  production-v1           GPU the first production kernel: 256 threads × 16 items, busy polling
//	  tuning (tuning.go): production-bid's kernel with other tilings, threads × items per thread, at most
//	  the registers that __launch_bounds__' blocks per SM allow; all uint4 loads and stores, backoff, streaming
//	  production-bid-32x4     GPU 256 × 32 (tile 8192), 4 blocks per SM (≤ 64 registers)
//	  production-bid-24       GPU 256 × 24 (tile 6144), 5 blocks per SM
//	  production-bid-noahead  GPU production-bid without the L2 prefetch
//	  production-bid-ahead1   GPU production-bid prefetching 1 tile per SM ahead
//	  production-bid-ahead3   GPU the same 3 tiles per SM ahead (one wave of resident blocks)
//	  production-bid-ahead6   GPU the same 6 tiles per SM ahead
//	  measured on an H200 at 2^28 and dropped: 512 × 16 (0.873 ms), 512 × 24 (0.775), 256 × 20 (0.78),
//	  256 × 16 (0.80)
//	segmented scan, heads form: the production kernel with the (head, sum) operator, 256 × 16 items,
//	  ≤ 64 registers (4 blocks per SM), backoff, the values (and heads) 4 tiles per SM ahead prefetched
//	  into the L2 as production-bid does; the v1 kernels (80 registers) stay in the image; Go: two passes
//	segmented scan, offsets form: its own kernels (segscan_off_*), reading the values and the offsets only:
//	  a small kernel finds every 4096-item tile's first segment entry, and each tile sets its heads as bits
//	  in shared memory while its values load; the same tiling and L2 prefetch with the tile numbers from
//	  blockIdx.x; Go: one loop per segment; tuning (segscan bench): production-offsets-ticket (the
//	  ticket), production-offsets-bid-ahead2, production-offsets-ahead8 (ticket, 8 tiles ahead);
//	  SegmentedExclusivePrepared leaves the small kernel's work (tile starts, zeroed state) to a caller
//	  whose own kernel writes the offsets (split's unpacking: one launch less a kd-tree level)
//	compaction (CompactVariants): cpu-parallel, cpu-no-scan, cpu-scan; GPU mask (default: three
//	  launches: one reads the flags and writes a bit per item and the count of every 1024-item chunk,
//	  the production scan turns the counts into the chunks' output places and the total, one reads the
//	  bits and the values of the rows that keep something and writes each chunk's kept items through
//	  shared memory as one run; n/8 bytes of bits written and read again buy passes over the data
//	  with no look-back wait and no block barrier), fused-async (single pass: each tile's values
//	  copied to shared memory by cp.async beside the flag loads, so that they arrive during the scan
//	  and the look-back; while warp 0 looks back, every thread records its kept items' 16-bit places
//	  in the tile; then the block writes dst[carry + k] = value[place[k]] as one run with streaming
//	  stores; 256 × 16 items, 8 blocks per SM, tile numbers from blockIdx.x; plain loads before
//	  sm_80), fused-prefetch (fused-staged with 256 × 16 items and the values loaded into registers
//	  with the flags), fused-staged (fused, with each tile's kept items gathered in shared memory and
//	  written as one run), fused (the production scan's 256 × 32 tiling, ≤ 64 registers), fused-v1,
//	  scan-scatter
//	  tuning (tuning.go): fused-async-24-bid (256 × 24, places after the look-back: 1.02–1.04 ms at
//	  2^28 on an H200), fused-async-nobackoff (the look-back polls without sleeping: within 1% of
//	  fused-async). Measured and dropped: fused-async-8x512 (1.20 ms), fused-staged-24 (1.07),
//	  fused-staged-bid-wide (uint4 run stores, 1.08), fused-async-16 (the ticket, late places),
//	  256 × 20 with early places (0.97–0.98); fused-async with warp 0 publishing the tile's aggregate
//	  before recording its places (0.94–0.95, as fused-async), that at 7 blocks per SM (0.95), at
//	  256 × 24 (0.97–0.99), with .L2::256B load hints (0.97)
//	sort (SortVariants): Go cpu-lsd8; GPU onesweep (default: one histogram read of the keys, one
//	  launch per 8-bit pass with 256×15-key tiles ranked by ballots, per-digit decoupled look-back,
//	  contiguous digit runs; n < 2^30, else lsd8-prefetch), lsd8-prefetch (lsd8 whose scatter
//	  loads a whole sub-tile at once and the next one during the write-out), lsd8, split
//
// The GPU defaults are one-line switches in defaults.go (defaultScan,
// defaultCompact, defaultSegmented, defaultSort). The tuning variants exist
// to be measured against them (kdbuild bench scan, kdbuild bench compact
// print every variant); none is a default.
//
// # Scratch
//
// The CUDA paths need scratch memory (the look-back state: ScratchBytes; the
// teaching variants, compaction and sort more). A Scanner owns it and grows
// it on demand, so a loop of calls through the ...With functions allocates
// nothing once the largest size has been seen. The plain functions use one
// Scanner per executor, cached by the package and guarded by a mutex (safe
// for concurrent use; the work is queued in call order on the default
// stream); Release frees it. Work is queued asynchronously except where a
// count must come back (Compact reads 4 bytes, SortPairs reads the maximum
// key).
//
// # Testing
//
// Every variant is compared exactly with the reference loops on the edge
// sizes (0, 1, 2, 31–33, around the 512-item shared block, the 4096-,
// 6144- and 8192-item tiles and powers of two), with guard items around device outputs. The GPU
// tests (go test -run GPU) skip without a device. Without one, the kernels
// can still be run on the CPU: KDBUILD_EMU=1 go test -run Emulated compiles
// them with g++ against testdata/emu/emu.h, an emulation of the CUDA subset
// they use, and withholds look-back prefixes so that every look-back path
// runs.
package scan
