package scenes

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/qmuntal/gltf"
)

// mat4 is a 4×4 affine transform in float64, column-major as glTF stores
// it: element (row r, column c) is m[4*c+r].
type mat4 [16]float64

// mul returns m·o.
func (m mat4) mul(o mat4) mat4 {
	var out mat4
	for c := 0; c < 4; c++ {
		for r := 0; r < 4; r++ {
			var x float64
			for k := 0; k < 4; k++ {
				x += m[4*k+r] * o[4*c+k]
			}
			out[4*c+r] = x
		}
	}
	return out
}

// localTransform is node n's transform: its matrix when given, else
// T·R·S from translation, rotation (unit quaternion x, y, z, w) and scale.
func localTransform(n *gltf.Node) mat4 {
	if m := n.MatrixOrDefault(); m != gltf.DefaultMatrix {
		return mat4(m)
	}
	t, q, s := n.TranslationOrDefault(), n.RotationOrDefault(), n.ScaleOrDefault()
	x, y, z, w := q[0], q[1], q[2], q[3]
	// Rotation matrix of the quaternion, columns scaled by s, then t.
	r := [9]float64{ // column-major 3×3
		1 - 2*(y*y+z*z), 2 * (x*y + z*w), 2 * (x*z - y*w),
		2 * (x*y - z*w), 1 - 2*(x*x+z*z), 2 * (y*z + x*w),
		2 * (x*z + y*w), 2 * (y*z - x*w), 1 - 2*(x*x+y*y),
	}
	var m mat4
	for c := 0; c < 3; c++ {
		for row := 0; row < 3; row++ {
			m[4*c+row] = r[3*c+row] * s[c]
		}
	}
	m[12], m[13], m[14], m[15] = t[0], t[1], t[2], 1
	return m
}

// point transforms a position (float64 arithmetic, one rounding to float32).
func (m mat4) point(x, y, z float32) mgl32.Vec3 {
	X, Y, Z := float64(x), float64(y), float64(z)
	return mgl32.Vec3{
		float32(m[0]*X + m[4]*Y + m[8]*Z + m[12]),
		float32(m[1]*X + m[5]*Y + m[9]*Z + m[13]),
		float32(m[2]*X + m[6]*Y + m[10]*Z + m[14]),
	}
}

// det3 is the determinant of the linear part; negative when m mirrors.
func (m mat4) det3() float64 {
	return m[0]*(m[5]*m[10]-m[9]*m[6]) - m[4]*(m[1]*m[10]-m[9]*m[2]) + m[8]*(m[1]*m[6]-m[5]*m[2])
}

// normal transforms a normal by the inverse transpose of the linear part
// (the cofactor matrix, sign-corrected by the determinant) and normalises
// it; a zero or degenerate result stays as computed (zero).
func (m mat4) normal(x, y, z float32) mgl32.Vec3 {
	a := [3][3]float64{{m[0], m[4], m[8]}, {m[1], m[5], m[9]}, {m[2], m[6], m[10]}} // a[row][col]
	var cof [3][3]float64
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			r1, r2 := (r+1)%3, (r+2)%3
			c1, c2 := (c+1)%3, (c+2)%3
			cof[r][c] = a[r1][c1]*a[r2][c2] - a[r1][c2]*a[r2][c1]
		}
	}
	X, Y, Z := float64(x), float64(y), float64(z)
	n := [3]float64{}
	for r := 0; r < 3; r++ {
		n[r] = cof[r][0]*X + cof[r][1]*Y + cof[r][2]*Z
	}
	l := math.Sqrt(n[0]*n[0] + n[1]*n[1] + n[2]*n[2])
	if m.det3() < 0 {
		l = -l
	}
	if l == 0 || math.IsNaN(l) || math.IsInf(l, 0) {
		return mgl32.Vec3{}
	}
	return mgl32.Vec3{float32(n[0] / l), float32(n[1] / l), float32(n[2] / l)}
}
