// Package gputrace traces rays through a kd-tree on the GPU (the kernels of
// kernels/trace.cu): closest hit and any hit, for rays and hits in device
// memory or in host slices. It knows the tree only as plain arrays (the
// 8-byte node words of kdtree.Node, the reference list, each triangle's
// corners, the root box), so it depends on no builder package. On the
// device the nodes are in the pair layout (PairLayout), made on the host.
//
// The kernels repeat kdtree's watertight test and traversal operation for
// operation (kernels/trace.cu says how), so that every hit has the bits of
// kdtree.Tree.Intersect's and every any-hit answer equals Occluded's.
package gputrace

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/kdbuild/kdbuild/kernels/cuda"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/kernels/launch"
)

// MaxDepth is the deepest tree the kernels trace (their stack holds
// MaxDepth+1 entries; kdtree.MaxTreeDepth).
const MaxDepth = 64

// NoHit is Hit.Prim of a miss.
const NoHit = ^uint32(0)

// Ray has the memory layout of kdtree.Ray (32 bytes): the kernels read it
// as two 16-byte loads.
type Ray struct {
	Org, Dir   [3]float32
	TMin, TMax float32
}

// Hit is the device's hit record (32 bytes): T, U, V and Prim as in
// kdtree.Hit, N the geometric normal (B−A)×(C−A) with every product
// rounded on its own. A miss is T = +Inf, Prim = NoHit, the rest zero.
type Hit struct {
	T, U, V float32
	Prim    uint32
	N       [3]float32
	_       uint32
}

// HostHit has the memory layout of kdtree.Hit (28 bytes): what the
// host-slice calls have the kernels write, so that the hits need no
// conversion.
type HostHit struct {
	T, U, V float32
	Prim    uint32
	N       [3]float32
}

// Words per ray and per hit record in device buffers of float32, and per
// HostHit.
const (
	RayWords     = int(unsafe.Sizeof(Ray{}) / 4)
	HitWords     = int(unsafe.Sizeof(Hit{}) / 4)
	HostHitWords = int(unsafe.Sizeof(HostHit{}) / 4)
)

// Input is a kd-tree as plain arrays.
type Input struct {
	// Nodes holds two words per node, W0 then W1 of kdtree.Node.
	Nodes []uint32
	// Refs are triangle indices; a leaf holds Refs[W0 : W0+W1>>2].
	Refs []uint32
	// Tris is the number of triangles; every reference is below it.
	Tris int
	// Corners returns triangle prim's vertices A, B, C.
	Corners func(prim uint32) [3][3]float32
	// Box is the root box: lo.xyz, hi.xyz.
	Box [6]float32
}

// Tree is a kd-tree in device memory, owned by the Tree: Close frees it.
// Its tracing methods may be called from one goroutine at a time.
type Tree struct {
	ctx     *cuda.Context
	nodes   *cuda.Buffer[uint32] // the pair layout (PairLayout)
	tris    *cuda.Buffer[float32]
	box     *cuda.Buffer[float32]
	counter *cuda.Buffer[uint32]
	nnodes  uint32
	// Kernel is the traversal variant of rays in device memory
	// (DefaultKernel unless set), HostKernel that of host slices
	// (DefaultKernel: the dynamic-fetch kernels write a hit record when
	// its ray ends, word by word, which is slow into mapped memory).
	Kernel, HostKernel Kernel
	// Host is how the host-slice calls move rays and results (HostMapped
	// unless a benchmark sets another).
	Host HostMode
}

// ErrNoDevice is returned by Upload for an executor without a device.
var ErrNoDevice = errors.New("gputrace: the executor has no GPU")

// Upload checks in (child and reference indices in range, depth at most
// MaxDepth) and copies it to ex's device: the nodes in the pair layout,
// and the triangles re-laid out in reference order with their index (see
// kernels/trace.cu).
func Upload(ex exec.Executor, in Input) (*Tree, error) {
	ctx := ex.CUDA()
	if ctx == nil {
		return nil, ErrNoDevice
	}
	if err := check(in); err != nil {
		return nil, err
	}
	t, err := newTree(ctx, in)
	if err != nil {
		return nil, err
	}
	tris := make([]float32, 12*len(in.Refs))
	for i, prim := range in.Refs {
		c := in.Corners(prim)
		w := tris[12*i : 12*i+12]
		w[0], w[1], w[2], w[3] = c[0][0], c[0][1], c[0][2], math.Float32frombits(prim)
		w[4], w[5], w[6] = c[1][0], c[1][1], c[1][2]
		w[8], w[9], w[10] = c[2][0], c[2][1], c[2][2]
	}
	if t.tris, err = cuda.NewBuffer[float32](ctx, max(len(tris), 12)); err == nil {
		err = t.tris.CopyFromHost(tris)
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// FromDevice makes the Tree of a tree whose triangles are already on the
// device (a GPU build's output), with no upload of triangles: in is the
// host copy (checked as by Upload; its Corners is not used), whose nodes
// are laid out in the pair layout and uploaded (the kernels do not read
// kdtree.Node's layout); refs (len(in.Refs) references at least) and tv
// (9 floats per scene triangle: its corners A, B, C) are the build's, from
// which kd_trace_gather_f32 lays the triangles out on the device. refs and
// tv stay the caller's: it may free them once FromDevice returns (the
// context's frees wait for the queued gather).
func FromDevice(ctx *cuda.Context, in Input, refs *cuda.Buffer[uint32], tv *cuda.Buffer[float32]) (*Tree, error) {
	if err := check(in); err != nil {
		return nil, err
	}
	if refs.Len() < len(in.Refs) || tv.Len() < 9*in.Tris {
		return nil, fmt.Errorf("gputrace: FromDevice: %d references, %d corner words for a tree of %d and %d",
			refs.Len(), tv.Len(), len(in.Refs), 9*in.Tris)
	}
	t, err := newTree(ctx, in)
	if err != nil {
		return nil, err
	}
	if t.tris, err = cuda.NewBuffer[float32](ctx, max(12*len(in.Refs), 12)); err == nil && len(in.Refs) > 0 {
		const block = 256
		err = launch.KdTraceGatherF32.Launch(ctx, cuda.GridFor(len(in.Refs), block), cuda.Linear(block), 0,
			launch.KdTraceGatherF32Args{Tv: tv.Ptr(), Refs: refs.Ptr(), Nrefs: uint32(len(in.Refs)), Tris: t.tris.Ptr()})
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// newTree makes the Tree of in with its nodes in the pair layout (made
// from in.Nodes and uploaded), box words and work counter, without
// triangles.
func newTree(ctx *cuda.Context, in Input) (*Tree, error) {
	t := &Tree{ctx: ctx, nnodes: uint32(len(in.Nodes) / 2), Kernel: DefaultKernel, HostKernel: DefaultKernel}
	pairs, err := PairLayout(in.Nodes)
	if err == nil {
		t.nodes, err = cuda.NewBuffer[uint32](ctx, max(len(pairs), 4))
	}
	if err == nil {
		err = t.nodes.CopyFromHost(pairs)
	}
	if err == nil {
		t.box, err = cuda.NewBuffer[float32](ctx, 9)
	}
	if err == nil {
		box := traceBox(in)
		err = t.box.CopyFromHost(box[:])
	}
	if err == nil {
		t.counter, err = cuda.NewBuffer[uint32](ctx, 1)
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// traceBox returns the kernels' box words: the root box, then per axis the
// largest |coordinate| of the box and of every split plane on that axis
// (the bound kdtree's traversal puts in a plane crossing's slack).
func traceBox(in Input) [9]float32 {
	var b [9]float32
	copy(b[:6], in.Box[:])
	for a := 0; a < 3; a++ {
		b[6+a] = max(abs32(in.Box[a]), abs32(in.Box[3+a]))
	}
	for i := 0; i+1 < len(in.Nodes); i += 2 {
		if a := in.Nodes[i+1] & 3; a != 3 {
			b[6+a] = max(b[6+a], abs32(math.Float32frombits(in.Nodes[i])))
		}
	}
	return b
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// check validates the tree so that the kernels never read outside it nor
// overflow their stack: nodes in depth-first order (the below child of
// node i is i+1, the above child after it), leaves inside Refs, references
// below Tris, depth at most MaxDepth.
func check(in Input) error {
	if len(in.Nodes)%2 != 0 {
		return fmt.Errorf("gputrace: %d node words, not two per node", len(in.Nodes))
	}
	n := len(in.Nodes) / 2
	if uint64(n) >= 1<<32 || uint64(len(in.Refs)) >= 1<<32/12 {
		return fmt.Errorf("gputrace: %d nodes, %d references: too many", n, len(in.Refs))
	}
	for i, r := range in.Refs {
		if uint64(r) >= uint64(in.Tris) {
			return fmt.Errorf("gputrace: reference %d is triangle %d of %d", i, r, in.Tris)
		}
	}
	depth := make([]uint8, n)
	for i := 0; i < n; i++ {
		w0, w1 := in.Nodes[2*i], in.Nodes[2*i+1]
		if w1&3 == 3 {
			if uint64(w0)+uint64(w1>>2) > uint64(len(in.Refs)) {
				return fmt.Errorf("gputrace: leaf %d holds references %d..%d of %d", i, w0, uint64(w0)+uint64(w1>>2), len(in.Refs))
			}
			continue
		}
		above := uint64(w1 >> 2)
		if uint64(i)+1 >= uint64(n) || above <= uint64(i)+1 || above >= uint64(n) {
			return fmt.Errorf("gputrace: node %d has children %d and %d of %d nodes", i, i+1, above, n)
		}
		d := depth[i] + 1
		if d > MaxDepth {
			return fmt.Errorf("gputrace: node %d is deeper than %d", i+1, MaxDepth)
		}
		depth[i+1] = max(depth[i+1], d)
		depth[above] = max(depth[above], d)
	}
	return nil
}

// Close frees the device memory; it is idempotent.
func (t *Tree) Close() error {
	if t == nil {
		return nil
	}
	return errors.Join(t.nodes.Free(), t.tris.Free(), t.box.Free(), t.counter.Free())
}

// Context returns the device context that holds the tree.
func (t *Tree) Context() *cuda.Context { return t.ctx }

// DeviceBytes returns the device memory the tree holds.
func (t *Tree) DeviceBytes() uint64 {
	if t.nodes == nil {
		return 0
	}
	n := t.nodes.Bytes() + t.counter.Bytes() + t.tris.Bytes() + t.box.Bytes()
	return n
}
