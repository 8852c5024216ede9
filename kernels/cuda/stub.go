//go:build !(cgo && linux)

package cuda

import (
	"fmt"
	"unsafe"
)

// Without cgo (or off Linux) there is no way to open the driver: every entry
// point reports ErrNoDriver and the callers fall back to the Go executor.

var errNoCgo = fmt.Errorf("%w: built without cgo (CGO_ENABLED=0) or not on Linux", ErrNoDriver)

// Cgo reports whether this build has the driver binding (cgo on Linux).
// Without it every call returns ErrNoDriver.
const Cgo = false

// Context is an opened device with its kernel module.
type Context struct{}

// Event is a CUDA event for timing.
type Event struct{}

// Pinned is page-locked host memory.
type Pinned struct{}

func (b *Pinned) U32(n int) []uint32                    { return nil }
func (b *Pinned) Bytes() uint64                         { return 0 }
func (b *Pinned) Dev() DevPtr                           { return 0 }
func (c *Context) Pinned(bytes uint64) (*Pinned, error) { return nil, errNoCgo }
func (c *Context) PutPinned(b *Pinned)                  {}
func (c *Context) CopyToHostAsync(dst *Pinned, off uint64, src DevPtr, bytes uint64) error {
	return errNoCgo
}
func (c *Context) CopyToDeviceAsync(dst DevPtr, src *Pinned, off uint64, bytes uint64) error {
	return errNoCgo
}

func DriverVersion() (int, error)                                     { return 0, errNoCgo }
func Devices() ([]DeviceInfo, error)                                  { return nil, errNoCgo }
func Open(ordinal int) (*Context, error)                              { return nil, errNoCgo }
func (c *Context) Info() DeviceInfo                                   { return DeviceInfo{} }
func (c *Context) Close() error                                       { return nil }
func (c *Context) Synchronize() error                                 { return errNoCgo }
func (c *Context) MemInfo() (free, total uint64, err error)           { return 0, 0, errNoCgo }
func (c *Context) Alloc(bytes uint64) (DevPtr, error)                 { return 0, errNoCgo }
func (c *Context) FreePtr(p DevPtr) error                             { return errNoCgo }
func (c *Context) AllocatedBytes() uint64                             { return 0 }
func (c *Context) PeakBytes() uint64                                  { return 0 }
func (c *Context) ResetPeak()                                         {}
func (c *Context) CachedBytes() uint64                                { return 0 }
func (c *Context) SetCacheLimit(bytes uint64) error                   { return errNoCgo }
func (c *Context) FreeCache() error                                   { return errNoCgo }
func (c *Context) HostAlloc(bytes uint64) (unsafe.Pointer, error)     { return nil, errNoCgo }
func (c *Context) HostFree(p unsafe.Pointer) error                    { return errNoCgo }
func (c *Context) CopyDtoD(dst, src DevPtr, bytes uint64) error       { return errNoCgo }
func (c *Context) SetMaxDynamicShared(kernel string, bytes int) error { return errNoCgo }
func (c *Context) SetDebug(on bool)                                   {}
func (c *Context) Debug() bool                                        { return false }
func (c *Context) KernelTimes() []KernelTime                          { return nil }
func (c *Context) ResetKernelTimes()                                  {}
func (c *Context) NewEvent() (*Event, error)                          { return nil, errNoCgo }
func (c *Context) NewSyncEvent() (*Event, error)                      { return nil, errNoCgo }
func (c *Context) SyncEvent() (*Event, error)                         { return nil, errNoCgo }
func (c *Context) PutEvent(e *Event) error                            { return nil }
func (e *Event) Record() error                                        { return errNoCgo }
func (e *Event) Synchronize() error                                   { return errNoCgo }
func (e *Event) Destroy() error                                       { return nil }
func Elapsed(start, end *Event) (float32, error)                      { return 0, errNoCgo }
func (c *Context) Flush() error                                       { return errNoCgo }
func (c *Context) Launch(kernel string, grid, block Dim3, sharedBytes uint32, args ...any) error {
	return errNoCgo
}
func (c *Context) LaunchDependent(kernel string, grid, block Dim3, sharedBytes uint32, args ...any) error {
	return errNoCgo
}
func (c *Context) htod(dst DevPtr, src unsafe.Pointer, n uint64) error { return errNoCgo }
func (c *Context) dtoh(dst unsafe.Pointer, src DevPtr, n uint64) error { return errNoCgo }
func (c *Context) dtod(dst, src DevPtr, n uint64) error                { return errNoCgo }
func (c *Context) memsetD8(dst DevPtr, v byte, n uint64) error         { return errNoCgo }
func (c *Context) memsetD32(dst DevPtr, v uint32, n uint64) error      { return errNoCgo }
