package exec

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// Buf is an array owned by an executor: a host slice for the Go executor, a
// device buffer for the CUDA executor. Free is idempotent.
type Buf[T cuda.Elem] struct {
	host []T
	dev  *cuda.Buffer[T]
}

// Alloc returns a buffer of n elements. Host buffers are zeroed; device
// buffers are uninitialised.
func Alloc[T cuda.Elem](ex Executor, n int) (*Buf[T], error) {
	if ctx := ex.CUDA(); ctx != nil {
		d, err := cuda.NewBuffer[T](ctx, n)
		if err != nil {
			return nil, err
		}
		return &Buf[T]{dev: d}, nil
	}
	return &Buf[T]{host: make([]T, n)}, nil
}

// FromHost returns a buffer holding a copy of src.
func FromHost[T cuda.Elem](ex Executor, src []T) (*Buf[T], error) {
	b, err := Alloc[T](ex, len(src))
	if err != nil {
		return nil, err
	}
	if err := b.CopyFromHost(src); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// Wrap makes a host buffer that uses s itself (no copy), for the Go executor.
func Wrap[T cuda.Elem](s []T) *Buf[T] { return &Buf[T]{host: s} }

// WrapDevice makes a buffer around a device buffer (ownership moves to it).
func WrapDevice[T cuda.Elem](d *cuda.Buffer[T]) *Buf[T] { return &Buf[T]{dev: d} }

// Len returns the number of elements.
func (b *Buf[T]) Len() int {
	if b.dev != nil {
		return b.dev.Len()
	}
	return len(b.host)
}

// OnDevice reports whether the buffer lives in device memory.
func (b *Buf[T]) OnDevice() bool { return b.dev != nil }

// Host returns the host slice. Calling it on a device buffer is a programmer
// error and panics.
func (b *Buf[T]) Host() []T {
	if b.dev != nil {
		panic("exec: Host() on a device buffer")
	}
	return b.host
}

// Dev returns the device buffer. Calling it on a host buffer panics.
func (b *Buf[T]) Dev() *cuda.Buffer[T] {
	if b.dev == nil {
		panic("exec: Dev() on a host buffer")
	}
	return b.dev
}

// Ptr returns the device address (device buffers only).
func (b *Buf[T]) Ptr() cuda.DevPtr { return b.Dev().Ptr() }

// Slice returns a view of [off, off+n) that shares the storage.
func (b *Buf[T]) Slice(off, n int) *Buf[T] {
	if b.dev != nil {
		return &Buf[T]{dev: b.dev.Slice(off, n)}
	}
	if off < 0 || n < 0 || off+n > len(b.host) {
		panic(fmt.Sprintf("exec: Slice(%d, %d) of buffer of length %d", off, n, len(b.host)))
	}
	return &Buf[T]{host: b.host[off : off+n : off+n]}
}

// CopyFromHost copies src to the start of the buffer.
func (b *Buf[T]) CopyFromHost(src []T) error {
	if b.dev != nil {
		return b.dev.CopyFromHost(src)
	}
	if len(src) > len(b.host) {
		panic(fmt.Sprintf("exec: CopyFromHost of %d elements into buffer of %d", len(src), len(b.host)))
	}
	copy(b.host, src)
	return nil
}

// CopyToHost copies the start of the buffer into dst.
func (b *Buf[T]) CopyToHost(dst []T) error {
	if b.dev != nil {
		return b.dev.CopyToHost(dst)
	}
	if len(dst) > len(b.host) {
		panic(fmt.Sprintf("exec: CopyToHost of %d elements from buffer of %d", len(dst), len(b.host)))
	}
	copy(dst, b.host)
	return nil
}

// ToHost returns a new slice with the contents.
func (b *Buf[T]) ToHost() ([]T, error) {
	out := make([]T, b.Len())
	return out, b.CopyToHost(out)
}

// CopyFrom copies src (at most Len elements) into the start of b; both must
// belong to the same executor.
func (b *Buf[T]) CopyFrom(src *Buf[T]) error {
	if b.dev != nil {
		return b.dev.CopyFrom(src.Dev())
	}
	copy(b.host, src.Host())
	return nil
}

// Free releases the storage. It is idempotent.
func (b *Buf[T]) Free() error {
	if b == nil {
		return nil
	}
	b.host = nil
	if b.dev != nil {
		err := b.dev.Free()
		b.dev = nil
		return err
	}
	return nil
}
