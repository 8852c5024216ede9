// Package reduce owns min/max reductions: the thesis kernels Reduce0–Reduce4
// and faster ones beyond them, box reductions over triangles and segmented
// (per-node) reductions, each on the Go and the CUDA executor.
package reduce
