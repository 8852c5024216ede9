// Package kernels holds the CUDA sources (*.cu, *.cuh) and the compiled
// kernel image embedded with go:embed. Package kernels/cuda, the only one in
// the module that uses cgo, opens the driver and loads this image; package
// kernels/exec defines the executors that every other package runs on.
package kernels
