package scenes

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/qmuntal/gltf"
)

// accessor is a bounds-checked view of one glTF accessor: element i,
// component j lies at data[off + i*stride + j*csize].
type accessor struct {
	index  int // accessor index, for errors
	ctype  gltf.ComponentType
	norm   bool
	comps  int
	csize  int
	stride int
	off    int
	count  int
	data   []byte // nil for an accessor without bufferView (all zeros)
	// sparse substitutions, applied by floats and ints
	sparseIdx []uint32
	sparseVal *accessor
}

// componentName is the glTF name of a component type, for errors.
func componentName(c gltf.ComponentType) string {
	return [...]string{"FLOAT", "BYTE", "UNSIGNED_BYTE", "SHORT", "UNSIGNED_SHORT", "UNSIGNED_INT"}[c]
}

// maxZeroAccessorBytes bounds accessors without a bufferView, whose size
// the file does not pay for: 16 times the file plus 1 MiB.
func maxZeroAccessorBytes(fileBytes int) int64 { return 16*int64(fileBytes) + 1<<20 }

// view checks accessor ai against its buffer view and buffer and returns it.
func (g *gltfLoader) view(ai int) (*accessor, error) {
	if ai < 0 || ai >= len(g.doc.Accessors) {
		return nil, fmt.Errorf("accessor %d does not exist (%d accessors)", ai, len(g.doc.Accessors))
	}
	acc := g.doc.Accessors[ai]
	a := &accessor{index: ai, ctype: acc.ComponentType, norm: acc.Normalized, comps: acc.Type.Components(),
		csize: acc.ComponentType.ByteSize(), count: acc.Count}
	if acc.Count < 1 {
		return nil, fmt.Errorf("accessor %d: count %d (want >= 1)", ai, acc.Count)
	}
	elem := a.comps * a.csize
	if int64(acc.Count) > maxZeroAccessorBytes(g.size) { // also keeps the products below from overflowing
		return nil, fmt.Errorf("accessor %d: count %d, more than a %d-byte file justifies", ai, acc.Count, g.size)
	}
	if acc.BufferView == nil {
		if int64(acc.Count)*int64(elem) > maxZeroAccessorBytes(g.size) {
			return nil, fmt.Errorf("accessor %d: %d elements without a bufferView, more than a %d-byte file justifies", ai, acc.Count, g.size)
		}
	} else {
		data, stride, err := g.bufferView(*acc.BufferView, elem)
		if err != nil {
			return nil, fmt.Errorf("accessor %d: %v", ai, err)
		}
		need := int64(acc.ByteOffset) + int64(stride)*int64(acc.Count-1) + int64(elem)
		if acc.ByteOffset < 0 || need > int64(len(data)) {
			return nil, fmt.Errorf("accessor %d: byteOffset %d + %d elements of %d bytes (stride %d) need %d bytes, bufferView %d has %d",
				ai, acc.ByteOffset, acc.Count, elem, stride, need, *acc.BufferView, len(data))
		}
		a.data, a.stride, a.off = data, stride, acc.ByteOffset
	}
	if acc.Sparse != nil {
		if err := g.sparse(a, acc); err != nil {
			return nil, fmt.Errorf("accessor %d: sparse: %v", ai, err)
		}
	}
	return a, nil
}

// bufferView returns view vi's bytes and the stride of elem-byte elements.
func (g *gltfLoader) bufferView(vi, elem int) ([]byte, int, error) {
	if vi < 0 || vi >= len(g.doc.BufferViews) {
		return nil, 0, fmt.Errorf("bufferView %d does not exist (%d bufferViews)", vi, len(g.doc.BufferViews))
	}
	bv := g.doc.BufferViews[vi]
	buf, err := g.bufs.get(bv.Buffer)
	if err != nil {
		return nil, 0, fmt.Errorf("bufferView %d: %v", vi, err)
	}
	if bv.ByteOffset < 0 || bv.ByteLength < 1 || int64(bv.ByteOffset)+int64(bv.ByteLength) > int64(len(buf)) {
		return nil, 0, fmt.Errorf("bufferView %d: bytes %d..%d outside buffer %d of %d bytes", vi, bv.ByteOffset, int64(bv.ByteOffset)+int64(bv.ByteLength), bv.Buffer, len(buf))
	}
	stride := bv.ByteStride
	if stride == 0 {
		stride = elem
	}
	if stride < elem || stride > 252 {
		return nil, 0, fmt.Errorf("bufferView %d: byteStride %d for %d-byte elements (want %d..252)", vi, bv.ByteStride, elem, elem)
	}
	return buf[bv.ByteOffset : bv.ByteOffset+bv.ByteLength], stride, nil
}

// sparse reads the substitutions of a sparse accessor.
func (g *gltfLoader) sparse(a *accessor, acc *gltf.Accessor) error {
	sp := acc.Sparse
	if sp.Count < 1 || sp.Count > acc.Count {
		return fmt.Errorf("count %d (want 1..%d)", sp.Count, acc.Count)
	}
	switch sp.Indices.ComponentType {
	case gltf.ComponentUbyte, gltf.ComponentUshort, gltf.ComponentUint:
	default:
		return fmt.Errorf("indices component type %s (want an unsigned integer type)", componentName(sp.Indices.ComponentType))
	}
	idx := &accessor{index: a.index, ctype: sp.Indices.ComponentType, comps: 1, csize: sp.Indices.ComponentType.ByteSize(), count: sp.Count}
	val := &accessor{index: a.index, ctype: a.ctype, norm: a.norm, comps: a.comps, csize: a.csize, count: sp.Count}
	for _, v := range []struct {
		a      *accessor
		view   int
		offset int
		what   string
	}{{idx, sp.Indices.BufferView, sp.Indices.ByteOffset, "indices"}, {val, sp.Values.BufferView, sp.Values.ByteOffset, "values"}} {
		elem := v.a.comps * v.a.csize
		data, _, err := g.bufferView(v.view, elem)
		if err != nil {
			return fmt.Errorf("%s: %v", v.what, err)
		}
		need := int64(v.offset) + int64(elem)*int64(sp.Count)
		if v.offset < 0 || need > int64(len(data)) {
			return fmt.Errorf("%s: byteOffset %d + %d elements of %d bytes need %d bytes, bufferView %d has %d", v.what, v.offset, sp.Count, elem, need, v.view, len(data))
		}
		v.a.data, v.a.stride, v.a.off = data, elem, v.offset
	}
	a.sparseIdx = make([]uint32, sp.Count)
	for k := range a.sparseIdx {
		i := idx.uint(k, 0)
		if int64(i) >= int64(acc.Count) {
			return fmt.Errorf("index %d at element %d out of range [0, %d)", i, k, acc.Count)
		}
		a.sparseIdx[k] = i
	}
	a.sparseVal = val
	return nil
}

// raw returns component j of element i as a float64 before normalisation.
func (a *accessor) raw(i, j int) float64 {
	if a.data == nil {
		return 0
	}
	p := a.data[a.off+i*a.stride+j*a.csize:]
	switch a.ctype {
	case gltf.ComponentByte:
		return float64(int8(p[0]))
	case gltf.ComponentUbyte:
		return float64(p[0])
	case gltf.ComponentShort:
		return float64(int16(binary.LittleEndian.Uint16(p)))
	case gltf.ComponentUshort:
		return float64(binary.LittleEndian.Uint16(p))
	case gltf.ComponentUint:
		return float64(binary.LittleEndian.Uint32(p))
	default:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
	}
}

// value is component j of element i as glTF defines it: normalised integers
// mapped to [0, 1] or [-1, 1], other values as stored.
func (a *accessor) value(i, j int) float32 {
	x := a.raw(i, j)
	if a.norm {
		switch a.ctype {
		case gltf.ComponentByte:
			x = max(x/127, -1)
		case gltf.ComponentUbyte:
			x /= 255
		case gltf.ComponentShort:
			x = max(x/32767, -1)
		case gltf.ComponentUshort:
			x /= 65535
		}
	}
	return float32(x)
}

// uint is element i, component j of an unsigned integer accessor.
func (a *accessor) uint(i, j int) uint32 { return uint32(a.raw(i, j)) }

// floats decodes the whole accessor, sparse substitutions applied, as count
// rows of comps float32 (row-major), checking every value is finite.
func (a *accessor) floats() ([]float32, error) {
	out := make([]float32, a.count*a.comps)
	for i := 0; i < a.count; i++ {
		for j := 0; j < a.comps; j++ {
			out[i*a.comps+j] = a.value(i, j)
		}
	}
	if a.sparseVal != nil {
		for k, i := range a.sparseIdx {
			for j := 0; j < a.comps; j++ {
				out[int(i)*a.comps+j] = a.sparseVal.value(k, j)
			}
		}
	}
	for k, x := range out {
		if x-x != 0 {
			return nil, fmt.Errorf("accessor %d: element %d: non-finite value %v", a.index, k/a.comps, x)
		}
	}
	return out, nil
}

// uints decodes an unsigned integer SCALAR accessor (indices).
func (a *accessor) uints() []uint32 {
	out := make([]uint32, a.count)
	for i := range out {
		out[i] = a.uint(i, 0)
	}
	if a.sparseVal != nil {
		for k, i := range a.sparseIdx {
			out[i] = a.sparseVal.uint(k, 0)
		}
	}
	return out
}
