// Package kdtree builds SAH kd-trees over triangle scenes, breadth first and
// data parallel, on either executor, and traverses them for ray tracers.
//
// # The algorithm
//
// Build drops degenerate triangles, then splits nodes level by level, all
// the nodes of a level at once. A large node (more than Options.SmallNode
// references) first cuts off empty space (a side more than 25% empty), else
// splits at the best of Options.Bins binned SAH planes over its tight
// bounds; a reference that straddles the plane is clipped to each child
// (the triangle, not its box), and each child gets the tight bounds of its
// clipped references. A node whose split costs more than a leaf, or at
// Options.MaxDepth, becomes a leaf. Once a node holds few enough
// references it is a small root: its subtree is built on its own by exact
// SAH over every face of its references' boxes, the reference sets as
// 64-bit masks. The layout then writes the nodes depth first (the below
// child next to its parent) into Tree.Nodes and the leaves' references into
// Tree.Refs. SAHCost defines the cost the builder minimises.
//
// # One algorithm, two executors
//
// The Go executor (Options.Executor nil or exec.Go) runs the reference
// code; the CUDA executor runs every per-reference step as a kernel of
// kernels/kdtree.cu, the host keeping only what the Go code keeps. Both
// make the same tree, node for node and reference for reference, on every
// scene: each kernel computes what its Go reference computes, in the same
// float32 operations, and every order that decides a result (the bins'
// sums, the references of a leaf, the small roots) is fixed. The tests
// below compare the two executors step by step and tree by tree.
//
// The CUDA build has fast paths with fallbacks that make the same tree
// (a pipelined large phase, the small phase started from the device's
// list of small roots, the layout on the device...): the builder takes the
// fallback by size or on overflow, and the environment variable
// KDBUILD_GPU_OFF (GPUOffEnv) turns fast paths off to compare them.
//
// # Files
//
// kdtree holds the public API; the two builders live in internal packages
// that kdtree alone imports, and only gpubuild reaches kernels/cuda.
//
//	build_api.go, options.go,           Build (the executor's builder chosen), Options,
//	progress_api.go                     Progress
//	tree.go, node.go, stats.go, sah.go  Tree, Node, Stats, SAHCost
//	traverse.go, intersect.go, ray.go   ray traversal and the watertight test
//	validate.go, rays.go, workload.go   Validate; the shared ray sets; ReductionWorkload
//
//	internal/refbuild: the Go reference, and the types both builders share
//	build.go, progress.go               Builder (one build's state), the Go build's driver
//	level.go, bins.go, clip.go,         a large-phase level (decide, bin, clip)
//	overlap.go
//	small.go                            a small root's subtree
//	layout.go, node.go                  Records to Nodes and Refs; the node encoding
//
//	internal/gpubuild: the CUDA host side, one file per phase
//	build_cuda.go                       Build: the CUDA build's driver, phase by phase
//	gpu_config.go                       Config: the paths and thresholds; gpuBuild
//	dev_level.go                        the build's device buffers, launches
//	prepare_cuda.go                     upload, gather, drop, boxes, root box
//	large_cuda.go, large_pipe.go        the large levels, level by level or pipelined
//	decide_cuda.go                      a level's decisions (binned SAH)
//	level_book.go, large_booker.go,     the host's records of the levels
//	host_room.go
//	small_cuda.go, small_early.go       the small phase
//	layout_cuda.go, top_cuda.go         the layout on the device
//	layout_device.go, layout_plan.go    the device layout's Go references and host plan
//
// From Build to the first kernel: Build (build_api.go) resolves Options,
// makes a refbuild.Builder and calls gpubuild.Build on a CUDA executor
// (refbuild's Builder.BuildGo otherwise); gpubuild.Build runs buildCUDA
// (build_cuda.go), whose first phase, prepareCUDA (prepare_cuda.go),
// launches kdtree_gather_f32.
//
// # Go reference, kernel, test
//
// Go references are in refbuild (r.) or gpubuild (g.); the tests are in
// kdtree unless marked r. or g.
//
//	step                   Go reference                    kernel(s)                                    test
//	drop, boxes, root      r.Builder.prepare, tightBounds  kdtree_gather_f32, kdtree_boxes_f32,         TestBuildGPUPrepareEqualsGo
//	                                                       kdtree_root_box_f32
//	decide, bin, SAH       r.levelGo (level.go, bins.go)   kdtree_choose_f32, or kdtree_decide_f32 +    TestBuildGPULevelsEqualGo,
//	                                                       kdtree_bin_u32 + kdtree_sah_f32              TestLargeGPULevelsEqualGo,
//	                                                                                                    r.TestSAHWarpSearchMatchesSequential
//	classify, clip         r.levelGo, clip.go              kdtree_classify_f32                          r.TestClipSplitContainsTriangle
//	children's addresses   r.levelGo                       kdtree_addresses_u32                         TestBuildGPULevelsEqualGo
//	scatter, park, bounds  r.levelGo, g.levelBook.book     kdtree_tail_f32                              TestBuildGPUPipelineFallback,
//	                                                                                                    g.TestLevelBookEqualsSequential
//	small subtrees         r.smallBuilder (small.go)       kdtree_small_order_u32, kdtree_small_w_f32   TestBuildGPUSmallKernelsEqualGo,
//	                                                                                                    g.TestLargestFirst
//	layout                 r.LayoutGo; g.smallSizes,       kdtree_small_place_u32,                      g.TestBuildLayoutDeviceEqualsGo,
//	                       g.smallEmit, g.layoutTop        kdtree_small_emit_u32,                       g.TestBuildSmallSizes
//	                                                       kdtree_copy_ranges_u32, kdtree_top_*_u32
//	whole tree             Build on exec.Go                every one                                    TestBuildGPUEqualsGo
//
// # Progress and cancellation
//
// Build reports Progress on the calling goroutine and returns ctx.Err()
// when ctx is cancelled, in every phase on both executors, with nothing of
// the build left running and its device memory freed.
//
// # Coordinate range
//
// The float32 watertight ray-triangle test (intersect.go)
// multiplies up to three coordinate differences, so its hits are exact
// (a scene scaled by a power of two has the same hits, T scaled alike) for
// coordinates up to scenes.MaxExactCoordinate (2^40 ≈ 1.1e12) in magnitude
// and scene extents down to scenes.MinExactExtent (2^-32 ≈ 2.3e-10); beyond,
// products over- or underflow and hits are lost. scenes documents the
// arithmetic and warns at load time.
//
// # Tree files and cameras
//
// A built tree is saved with Tree.WriteTo and loaded with ReadTree, or
// ReadTreeFile, which maps the file read-only where the system allows and
// copies nothing (.kdt tree files, the layout in treefile.go; the mapped
// tree's contract at ReadTreeFile), with its scene's geometry,
// meshes and statistics but not its attributes (normals, texture
// coordinates, names); Camera makes primary rays. Tree.MeshOf names the
// mesh, and the triangle within it, of a Hit.
package kdtree
