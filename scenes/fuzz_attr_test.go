package scenes

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// minimalGLTF is a .gltf with one data-URI buffer: 4 float positions, 6
// unsigned short indices, a node with TRS above a node with a matrix, and
// primitives in TRIANGLES, TRIANGLE_STRIP and POINTS mode.
func minimalGLTF() []byte {
	var buf []byte
	for _, v := range []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0} {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	for _, i := range []uint16{0, 1, 2, 0, 2, 3} {
		buf = binary.LittleEndian.AppendUint16(buf, i)
	}
	return []byte(fmt.Sprintf(`{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
"nodes":[{"children":[1],"translation":[1,2,3],"rotation":[0,0,0.7071068,0.7071068],"scale":[1,-1,1]},
 {"mesh":0,"matrix":[2,0,0,0,0,2,0,0,0,0,2,0,0,0,0,1]}],
"meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1},{"attributes":{"POSITION":0},"indices":1,"mode":5},{"attributes":{"POSITION":0},"mode":0}]}],
"accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3"},{"bufferView":1,"componentType":5123,"count":6,"type":"SCALAR"}],
"bufferViews":[{"buffer":0,"byteLength":48},{"buffer":0,"byteOffset":48,"byteLength":12}],
"buffers":[{"byteLength":60,"uri":"data:application/octet-stream;base64,%s"}]}`, base64.StdEncoding.EncodeToString(buf)))
}

// FuzzLoadGLTF feeds JSON and GLB input to the glTF loader (external
// buffers refused, so only the input is read), keeping every attribute.
func FuzzLoadGLTF(f *testing.F) {
	f.Add(minimalGLTF())
	if dir, err := findShared(); err == nil {
		for _, name := range []string{"BoxInterleaved.glb", "MultipleScenes.gltf", "OrientationTest.glb", "unsupported/BoxDraco.glb"} {
			if data, err := os.ReadFile(filepath.Join(dir, "scenes", "gltf", name)); err == nil {
				f.Add(data)
			}
		}
	}
	load := func(r io.Reader, name string) (*Scene, error) {
		opt := AllAttributes()
		return loadGLTF(r, name, &opt)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, load, data) })
}

// FuzzLoadOBJAttributes is FuzzLoadOBJ keeping every attribute.
func FuzzLoadOBJAttributes(f *testing.F) {
	for _, s := range []string{
		"v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\ng a\nusemtl m\no x\nf 1/1/1 2/1/1 3/1/1\n",
		"v 0 0 0 1 0 0\nv 1 0 0\nv 0 1 0\nvt 0.5\nf -3/-1 -2//9 -1/1/\n", "vn 1 2\nvt\nf 1//1\n",
	} {
		f.Add([]byte(s))
	}
	load := func(r io.Reader, name string) (*Scene, error) {
		opt := AllAttributes()
		opt.Weld = true
		return loadOBJ(r, name, &opt)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, load, data) })
}

// FuzzLoadPLYAttributes is FuzzLoadPLY keeping every attribute.
func FuzzLoadPLYAttributes(f *testing.F) {
	for _, format := range plyFormats {
		f.Add(buildPLY(f, format, []testElem{
			{"vertex", []string{"float x", "float y", "float z", "float nx", "float ny", "float nz", "float s", "float t", "uchar red", "uchar green", "uchar blue", "uchar alpha"},
				[][]float64{{0, 0, 0, 0, 0, 1, 0, 0, 255, 0, 0, 255}, {1, 0, 0, 0, 0, 1, 1, 0, 0, 255, 0, 128}, {0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 255, 0}}},
			{"face", []string{"list uchar int vertex_indices"}, [][]float64{{3, 0, 1, 2}}},
		}))
	}
	load := func(r io.Reader, name string) (*Scene, error) {
		opt := AllAttributes()
		return loadPLY(r, name, &opt)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, load, data) })
}
