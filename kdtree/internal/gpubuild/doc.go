// Package gpubuild is kdtree's builder on the CUDA executor: the host side
// of the kernels of kernels/kdtree.cu, one file per phase, making the tree
// that refbuild's Go reference makes, node for node.
//
// Build runs buildCUDA (build_cuda.go) on a refbuild.Builder: prepareCUDA
// (prepare_cuda.go: upload, gather and drop, boxes, root box), the large
// levels (large_cuda.go level by level, or large_pipe.go pipelined, with
// decide_cuda.go's decisions and the host's records kept by level_book.go,
// large_booker.go and host_room.go), the small phase (small_cuda.go,
// small_early.go) and the layout (layout_cuda.go, top_cuda.go, with their
// Go references and host plan in layout_device.go and layout_plan.go).
// devLevel (dev_level.go) owns the build's device buffers. Config
// (gpu_config.go) holds the fast paths and thresholds, read from the
// environment once (EnvConfig) or passed by tests; every fast path has a
// fallback that makes the same tree.
package gpubuild
