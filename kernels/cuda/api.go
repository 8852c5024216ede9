package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// DevPtr is a device address (CUdeviceptr).
type DevPtr uint64

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Linear returns the one-dimensional shape {n, 1, 1}.
func Linear(n int) Dim3 { return Dim3{uint32(n), 1, 1} }

// GridFor returns the number of blocks of blockSize threads that cover n
// items, at least 1 so that a launch over 0 items is still well formed.
func GridFor(n, blockSize int) Dim3 {
	g := (n + blockSize - 1) / blockSize
	if g < 1 {
		g = 1
	}
	return Linear(g)
}

// Errors that say why no GPU can be used. They wrap the reason (dlerror text,
// driver message) and can be tested with errors.Is.
var (
	ErrNoDriver      = errors.New("cuda: no driver")
	ErrNoDevice      = errors.New("cuda: no device")
	ErrNoKernelImage = errors.New("cuda: no kernel image for this device")
	ErrOutOfMemory   = errors.New("cuda: out of device memory")
)

// DeviceInfo describes one GPU as the driver reports it.
type DeviceInfo struct {
	Ordinal           int
	Name              string
	SMs               int
	TotalMem          uint64
	Major, Minor      int // compute capability
	L2Bytes           int
	MaxSharedPerBlock int // bytes of shared memory a block gets without opting in
	// MaxSharedPerBlockOptin is the most a block may use after
	// Context.SetMaxDynamicShared.
	MaxSharedPerBlockOptin int
	ClockKHz               int
	MemClockKHz            int
	MemBusWidth            int
	Usable                 bool  // false when Problem says why it cannot be used
	Problem                error // why this device cannot be used, nil when usable
}

// Elem is the set of element types a Buffer may hold.
type Elem interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Buffer is a typed array in device memory with one owner. Free is
// idempotent; views made by Slice share the memory and never free it.
type Buffer[T Elem] struct {
	ctx  *Context
	ptr  DevPtr
	n    int
	view bool
}

func elemSize[T Elem]() uint64 { var z T; return uint64(unsafe.Sizeof(z)) }

// NewBuffer allocates n elements (uninitialised). An allocation the device
// cannot satisfy returns an error wrapping ErrOutOfMemory that states the size.
func NewBuffer[T Elem](c *Context, n int) (*Buffer[T], error) {
	if n < 0 {
		panic(fmt.Sprintf("cuda: NewBuffer with negative length %d", n))
	}
	b := &Buffer[T]{ctx: c, n: n}
	if n == 0 {
		return b, nil
	}
	p, err := c.Alloc(uint64(n) * elemSize[T]())
	if err != nil {
		return nil, err
	}
	b.ptr = p
	return b, nil
}

// Len returns the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// Ptr returns the device address of element 0.
func (b *Buffer[T]) Ptr() DevPtr { return b.ptr }

// Bytes returns the size in bytes.
func (b *Buffer[T]) Bytes() uint64 { return uint64(b.n) * elemSize[T]() }

// Context returns the context that owns the memory.
func (b *Buffer[T]) Context() *Context { return b.ctx }

// Slice returns a view of elements [off, off+n) that shares the memory.
func (b *Buffer[T]) Slice(off, n int) *Buffer[T] {
	if off < 0 || n < 0 || off+n > b.n {
		panic(fmt.Sprintf("cuda: Slice(%d, %d) of buffer of length %d", off, n, b.n))
	}
	return &Buffer[T]{ctx: b.ctx, ptr: b.ptr + DevPtr(uint64(off)*elemSize[T]()), n: n, view: true}
}

// Free releases the memory; calling it again, or on a view, does nothing.
func (b *Buffer[T]) Free() error {
	if b == nil || b.view || b.ptr == 0 {
		if b != nil {
			b.n = 0
		}
		return nil
	}
	err := b.ctx.FreePtr(b.ptr)
	b.ptr, b.n = 0, 0
	return err
}

// CopyFromHost copies len(src) elements (at most Len) to the start of the buffer.
func (b *Buffer[T]) CopyFromHost(src []T) error {
	if len(src) > b.n {
		panic(fmt.Sprintf("cuda: CopyFromHost of %d elements into buffer of %d", len(src), b.n))
	}
	if len(src) == 0 {
		return nil
	}
	return b.ctx.htod(b.ptr, unsafe.Pointer(&src[0]), uint64(len(src))*elemSize[T]())
}

// CopyToHost copies len(dst) elements (at most Len) from the start of the buffer.
func (b *Buffer[T]) CopyToHost(dst []T) error {
	if len(dst) > b.n {
		panic(fmt.Sprintf("cuda: CopyToHost of %d elements from buffer of %d", len(dst), b.n))
	}
	if len(dst) == 0 {
		return nil
	}
	return b.ctx.dtoh(unsafe.Pointer(&dst[0]), b.ptr, uint64(len(dst))*elemSize[T]())
}

// ToHost returns a new slice with the whole buffer's contents.
func (b *Buffer[T]) ToHost() ([]T, error) {
	out := make([]T, b.n)
	return out, b.CopyToHost(out)
}

// CopyFrom copies src.Len() elements (at most Len) device to device.
func (b *Buffer[T]) CopyFrom(src *Buffer[T]) error {
	if src.n > b.n {
		panic(fmt.Sprintf("cuda: CopyFrom of %d elements into buffer of %d", src.n, b.n))
	}
	if src.n == 0 {
		return nil
	}
	return b.ctx.dtod(b.ptr, src.ptr, uint64(src.n)*elemSize[T]())
}

// Memset8 sets every byte of the buffer to v.
func (b *Buffer[T]) Memset8(v byte) error {
	if b.n == 0 {
		return nil
	}
	return b.ctx.memsetD8(b.ptr, v, b.Bytes())
}

// Memset32 sets every 32-bit word of the buffer to v. The buffer's size must
// be a multiple of 4 bytes.
func (b *Buffer[T]) Memset32(v uint32) error {
	if b.Bytes()%4 != 0 {
		panic("cuda: Memset32 on a buffer whose size is not a multiple of 4 bytes")
	}
	if b.n == 0 {
		return nil
	}
	return b.ctx.memsetD32(b.ptr, v, b.Bytes()/4)
}
