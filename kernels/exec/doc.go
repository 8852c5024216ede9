// Package exec owns the executor interface through which scan, reduce,
// split and kdtree run their data-parallel steps, and the two executors
// behind it: the Go executor (goroutines; the reference every kernel is
// checked against) and the CUDA executor (kernels from the embedded image,
// launched through package launch, typed, over package cuda).
//
// A primitive is written once per executor inside the package that owns it:
//
//	func Exclusive(ex exec.Executor, dst, src *exec.Buf[uint32]) error {
//		if ctx := ex.CUDA(); ctx != nil {
//			return launch.ScanX.Launch(ctx, grid, block, 0, launch.ScanXArgs{...}) // device path
//		}
//		... // Go path over dst.Host(), src.Host()
//	}
//
// and callers such as the kd-tree builder see only the executor and Buf.
package exec
