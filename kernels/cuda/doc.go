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
// Launch copies its arguments into C memory, typed by their Go types
// (DevPtr, uint32, int32, uint64, int64, float32, float64), and enqueues the
// kernel on the default stream; errors of the kernel itself come back from
// a later call, or from Launch when debugging is on (SetDebug, or
// KDBUILD_CUDA_DEBUG=1: synchronise after each launch, name the failing
// kernel, accumulate KernelTimes).
//
// Device memory: Buffer[T] (one owner, idempotent Free, views by Slice) over
// Alloc/FreePtr, which track the bytes allocated and their peak; freed
// blocks are kept for reuse by allocations of the same size (memcache.go:
// CachedBytes, SetCacheLimit, FreeCache). An
// allocation the device cannot satisfy wraps ErrOutOfMemory and says how
// much was asked and how much is free. Driver statuses are Result values,
// named from a table that works without the driver.
package cuda
