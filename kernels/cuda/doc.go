// Package cuda is kdbuild's binding of the CUDA driver, and the only package
// of the module that uses cgo.
//
// The driver is opened, not linked: libcuda.so.1 is loaded with dlopen
// (RTLD_NOW|RTLD_LOCAL) the first time it is needed, and every call is
// resolved once by its versioned name (cuMemAlloc_v2, ...), declared in the
// hand-written driver.h; no CUDA toolkit is needed to build or run. When the
// library, a symbol or a device is missing, Open and Devices return errors
// wrapping ErrNoDriver or ErrNoDevice with the reason (the dlerror text, the
// symbol, the driver's message); a build without cgo (stub.go) always
// returns ErrNoDriver.
//
// A Context is the primary context of one device with the embedded kernel
// image (package kernels) loaded once; kernels are looked up by name on
// first use and cached. Every method makes the context current on the
// calling thread inside the same driver call, so any goroutine may use it.
// Launch writes its arguments into a queue in C memory, typed by their Go
// types (DevPtr, uint32, int32, uint64, int64, float32, float64); the queue
// reaches the driver in one cgo call, in order on the default stream, at
// Flush, at every call that must see the work (copies, memsets, events,
// Synchronize, freeing memory) and when 64 launches wait. A batch of 8 or
// more whose length came before runs as a CUDA graph (a chain of kernel
// nodes made once per length and given the batch's kernels and arguments;
// the graph calls are optional: without them, or with KDBUILD_CUDA_GRAPHS=0,
// the launches go one by one). A launch the driver refuses is reported,
// naming the kernel, by the call that submitted it; errors of the kernel
// itself come back from a later call, or from Launch when debugging is on
// (SetDebug, or KDBUILD_CUDA_DEBUG=1: synchronise after each launch, name
// the failing kernel, accumulate KernelTimes). KDBUILD_KERNEL_IMAGE loads
// the image from a file instead (say, one built with -lineinfo to profile).
//
// Device memory: Buffer[T] (one owner, idempotent Free, views by Slice) over
// Alloc/FreePtr, which track the bytes allocated and their peak; freed
// blocks are kept for reuse by allocations of the same size (memcache.go:
// CachedBytes, SetCacheLimit, FreeCache). An
// allocation the device cannot satisfy wraps ErrOutOfMemory and says how
// much was asked and how much is free. Driver statuses are Result values,
// named from a table that works without the driver.
package cuda
