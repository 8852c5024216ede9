package scan

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Value is the set of element types the scans add: 32-bit integers, whose
// sums wrap modulo 2^32 (two's complement for int32, so int32 and uint32
// share kernels and give bitwise identical results), and float32, whose sums
// are rounded after every addition in an order that depends on the variant
// (only cpu-serial adds strictly left to right).
type Value interface {
	int32 | uint32 | float32
}

// isFloat reports whether T is float32.
func isFloat[T Value]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}

// suffix is the kernel name suffix for T: "u32" for both 32-bit integer
// types (the same bits), "f32" for float32.
func suffix[T Value]() string {
	if isFloat[T]() {
		return "f32"
	}
	return "u32"
}

// checkLen panics when two buffers that must have the same length do not:
// a mismatch is a programmer error (gonum's convention).
func checkLen(op string, a, b int) {
	if a != b {
		panic(fmt.Sprintf("scan: %s: length mismatch %d != %d", op, a, b))
	}
}

// sameExec reports an error when a buffer lives on the other side of the
// executor (a device buffer given to the Go executor or the reverse).
func sameExec[T Value](ex exec.Executor, op string, bufs ...*exec.Buf[T]) error {
	onDev := ex.CUDA() != nil
	for _, b := range bufs {
		if b == nil {
			continue
		}
		if b.OnDevice() != onDev {
			where := "host"
			if b.OnDevice() {
				where = "device"
			}
			return fmt.Errorf("scan: %s: %s buffer given to the %s executor", op, where, ex.Name())
		}
	}
	return nil
}
