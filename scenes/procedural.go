package scenes

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
)

// rng is splitmix64: tiny, fast and fixed forever, so that procedural scenes
// are identical for a seed across Go versions and platforms.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// f32 returns a float32 uniform in [0, 1).
func (r *rng) f32() float32 { return float32(r.next()>>40) / (1 << 24) }

func (r *rng) vec() mgl32.Vec3 { return mgl32.Vec3{r.f32(), r.f32(), r.f32()} }

// newProcedural makes a Scene from verts and tris; triangle i is face i.
func newProcedural(name string, verts []mgl32.Vec3, tris [][3]uint32) *Scene {
	faces := make([]uint32, len(tris))
	for i := range faces {
		faces[i] = uint32(i)
	}
	s := &Scene{Name: name, Format: "procedural", Verts: verts, Tris: tris, Faces: faces}
	s.Stats.Faces = len(tris)
	return s.finish()
}

// Icosphere returns the unit sphere at the origin as an icosahedron whose
// triangles are split into four subdiv times, the new vertices pushed onto
// the sphere: 20*4^subdiv triangles, 10*4^subdiv+2 vertices, no duplicates.
// subdiv < 0 counts as 0.
func Icosphere(subdiv int) *Scene {
	verts, tris := icosphere(max(subdiv, 0))
	return newProcedural(fmt.Sprintf("icosphere:%d", max(subdiv, 0)), verts, tris)
}

func icosphere(subdiv int) ([]mgl32.Vec3, [][3]uint32) {
	t := float32((1 + math.Sqrt(5)) / 2)
	verts := []mgl32.Vec3{
		{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0},
		{0, -1, t}, {0, 1, t}, {0, -1, -t}, {0, 1, -t},
		{t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1},
	}
	for i := range verts {
		verts[i] = verts[i].Normalize()
	}
	tris := [][3]uint32{
		{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11},
		{1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
		{3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8}, {3, 8, 9},
		{4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1},
	}
	for l := 0; l < subdiv; l++ {
		mid := make(map[uint64]uint32, len(tris)*3/2)
		midpoint := func(a, b uint32) uint32 {
			key := uint64(min(a, b))<<32 | uint64(max(a, b))
			if m, ok := mid[key]; ok {
				return m
			}
			m := uint32(len(verts))
			verts = append(verts, verts[a].Add(verts[b]).Normalize())
			mid[key] = m
			return m
		}
		next := make([][3]uint32, 0, 4*len(tris))
		for _, tr := range tris {
			ab, bc, ca := midpoint(tr[0], tr[1]), midpoint(tr[1], tr[2]), midpoint(tr[2], tr[0])
			next = append(next, [3]uint32{tr[0], ab, ca}, [3]uint32{tr[1], bc, ab}, [3]uint32{tr[2], ca, bc}, [3]uint32{ab, bc, ca})
		}
		tris = next
	}
	return verts, tris
}

// Soup returns n independent random triangles in the unit cube: each has a
// uniformly random first vertex and two more within an edge length of about
// 3/cbrt(n) (clamped to the cube), so the soup is dense but overlapping.
func Soup(n int, seed uint64) *Scene {
	n = max(n, 0)
	r := rng{seed}
	size := float32(3 / math.Cbrt(float64(max(n, 1))))
	verts := make([]mgl32.Vec3, 0, 3*n)
	tris := make([][3]uint32, n)
	for i := 0; i < n; i++ {
		a := r.vec()
		verts = append(verts, a)
		for k := 0; k < 2; k++ {
			var p mgl32.Vec3
			for ax := 0; ax < 3; ax++ {
				p[ax] = mgl32.Clamp(a[ax]+(r.f32()-0.5)*size, 0, 1)
			}
			verts = append(verts, p)
		}
		tris[i] = [3]uint32{uint32(3 * i), uint32(3*i + 1), uint32(3*i + 2)}
	}
	return newProcedural(fmt.Sprintf("soup:%d:%d", n, seed), verts, tris)
}

// gridGap is the space Grid leaves between neighbouring copies, as a
// fraction of the source scene's extent on that axis.
const gridGap = 0.1

// Grid returns nx*ny*nz copies of s with a gap of 0.1 × s's extent
// between neighbours: the grid the reference figures of the bunny 8×8×2 grid
// are for. On each axis, with e = float64(Max) − float64(Min) the extent of
// s.Bounds (1 where it is zero or s is empty) and pitch = e × (1 + gridGap)
// in float64, copy (i, j, k) moves a vertex v to
// float32(float64(v.x) + float64(i)×pitch.x) (j on y, k on z): float64
// arithmetic rounded to float32 once. Copies are ordered x fastest, then y,
// then z; faces of the copies keep the source face indices of s. Counts below
// 1 count as 1.
func Grid(s *Scene, nx, ny, nz int) *Scene {
	nx, ny, nz = max(nx, 1), max(ny, 1), max(nz, 1)
	var pitch [3]float64
	for a := 0; a < 3; a++ {
		e := float64(s.Bounds.Max[a]) - float64(s.Bounds.Min[a])
		if s.Bounds.Empty() || !(e > 0) {
			e = 1
		}
		pitch[a] = e * (1 + gridGap)
	}
	copies := nx * ny * nz
	verts := make([]mgl32.Vec3, 0, copies*len(s.Verts))
	tris := make([][3]uint32, 0, copies*len(s.Tris))
	faces := make([]uint32, 0, copies*len(s.Tris))
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			for i := 0; i < nx; i++ {
				off := [3]float64{float64(i) * pitch[0], float64(j) * pitch[1], float64(k) * pitch[2]}
				base := uint32(len(verts))
				for _, v := range s.Verts {
					verts = append(verts, mgl32.Vec3{
						float32(float64(v[0]) + off[0]),
						float32(float64(v[1]) + off[1]),
						float32(float64(v[2]) + off[2]),
					})
				}
				for _, t := range s.Tris {
					tris = append(tris, [3]uint32{t[0] + base, t[1] + base, t[2] + base})
				}
				faces = append(faces, s.Faces...)
			}
		}
	}
	g := &Scene{Name: fmt.Sprintf("grid:%d:%d:%d:%s", nx, ny, nz, s.Name), Format: "procedural", Verts: verts, Tris: tris, Faces: faces}
	g.Stats.Faces = copies * s.Stats.Faces
	return g.finish()
}

// Coplanar returns n random triangles all in the plane z = 0, inside the
// unit square: the case where every split candidate on z coincides.
func Coplanar(n int, seed uint64) *Scene {
	n = max(n, 0)
	r := rng{seed}
	size := float32(2 / math.Sqrt(float64(max(n, 1))))
	verts := make([]mgl32.Vec3, 0, 3*n)
	tris := make([][3]uint32, n)
	for i := 0; i < n; i++ {
		a := mgl32.Vec3{r.f32(), r.f32(), 0}
		verts = append(verts, a,
			mgl32.Vec3{mgl32.Clamp(a[0]+r.f32()*size, 0, 1), mgl32.Clamp(a[1]+(r.f32()-0.5)*size, 0, 1), 0},
			mgl32.Vec3{mgl32.Clamp(a[0]+(r.f32()-0.5)*size, 0, 1), mgl32.Clamp(a[1]+r.f32()*size, 0, 1), 0})
		tris[i] = [3]uint32{uint32(3 * i), uint32(3*i + 1), uint32(3*i + 2)}
	}
	return newProcedural(fmt.Sprintf("coplanar:%d:%d", n, seed), verts, tris)
}

// Identical returns n copies of one triangle, all referring to the same
// three vertices: no split separates them.
func Identical(n int) *Scene {
	n = max(n, 0)
	verts := []mgl32.Vec3{{0, 0, 0}, {1, 0, 0}, {0, 1, 0.5}}
	tris := make([][3]uint32, n)
	for i := range tris {
		tris[i] = [3]uint32{0, 1, 2}
	}
	return newProcedural(fmt.Sprintf("identical:%d", n), verts, tris)
}

// HugeAmongTiny returns one triangle spanning [-1000, 1000] on x and z
// (triangle 0) followed by n-1 tiny random triangles (edges about 1e-3)
// inside the unit cube: the huge one overlaps every cell.
func HugeAmongTiny(n int, seed uint64) *Scene {
	n = max(n, 1)
	r := rng{seed}
	verts := []mgl32.Vec3{{-1000, 0.5, -1000}, {1000, 0.5, -1000}, {0, 0.5, 1000}}
	tris := [][3]uint32{{0, 1, 2}}
	for i := 1; i < n; i++ {
		a := r.vec()
		b := a.Add(mgl32.Vec3{r.f32() * 1e-3, r.f32() * 1e-3, 0})
		c := a.Add(mgl32.Vec3{0, r.f32() * 1e-3, r.f32() * 1e-3})
		base := uint32(len(verts))
		verts = append(verts, a, b, c)
		tris = append(tris, [3]uint32{base, base + 1, base + 2})
	}
	return newProcedural(fmt.Sprintf("huge:%d:%d", n, seed), verts, tris)
}

// Slivers returns n long thin triangles: each has length 1 along a random
// direction and width 1e-4, centred at a random point of the unit cube, so
// its box is large while its area is tiny.
func Slivers(n int, seed uint64) *Scene {
	n = max(n, 0)
	r := rng{seed}
	verts := make([]mgl32.Vec3, 0, 3*n)
	tris := make([][3]uint32, n)
	for i := 0; i < n; i++ {
		c := r.vec()
		d := mgl32.Vec3{r.f32() - 0.5, r.f32() - 0.5, r.f32() - 0.5}
		if d.Len() < 1e-3 {
			d = mgl32.Vec3{1, 0, 0}
		}
		d = d.Normalize().Mul(0.5)
		w := d.Cross(mgl32.Vec3{0.3, 0.5, 0.8})
		if w.Len() < 1e-6 {
			w = d.Cross(mgl32.Vec3{1, 0, 0})
		}
		w = w.Normalize().Mul(1e-4)
		verts = append(verts, c.Sub(d), c.Add(d), c.Add(w))
		tris[i] = [3]uint32{uint32(3 * i), uint32(3*i + 1), uint32(3*i + 2)}
	}
	return newProcedural(fmt.Sprintf("slivers:%d:%d", n, seed), verts, tris)
}

// Default returns the built-in scene the tool uses when given no file:
// a 40 x 40 ground quad at y = 0, three icospheres of subdivision 5 (20,480
// triangles each; radii 1, 1.5 and 2.5) resting on it, and a soup of 20,000
// small random triangles floating in a 4 x 3 x 4 box above them: 81,442
// triangles in all, built in a few milliseconds, identical on every run.
func Default() *Scene {
	sv, st := icosphere(5)
	verts := []mgl32.Vec3{{-20, 0, -20}, {20, 0, -20}, {20, 0, 20}, {-20, 0, 20}}
	tris := [][3]uint32{{0, 2, 1}, {0, 3, 2}}
	spheres := []struct {
		c mgl32.Vec3
		r float32
	}{{mgl32.Vec3{-4, 1, 0}, 1}, {mgl32.Vec3{0, 1.5, -3}, 1.5}, {mgl32.Vec3{5, 2.5, 2}, 2.5}}
	for _, sp := range spheres {
		base := uint32(len(verts))
		for _, v := range sv {
			verts = append(verts, v.Mul(sp.r).Add(sp.c))
		}
		for _, t := range st {
			tris = append(tris, [3]uint32{t[0] + base, t[1] + base, t[2] + base})
		}
	}
	soup := Soup(20000, 1)
	base := uint32(len(verts))
	for _, v := range soup.Verts {
		verts = append(verts, mgl32.Vec3{v[0]*4 - 2, v[1]*3 + 5, v[2]*4 - 2})
	}
	for _, t := range soup.Tris {
		tris = append(tris, [3]uint32{t[0] + base, t[1] + base, t[2] + base})
	}
	return newProcedural("default", verts, tris)
}

// maxProceduralTriangles bounds what a spec may ask for (about 24 GB of
// triangles and vertices), so a typo fails cleanly instead of exhausting memory.
const maxProceduralTriangles = 1 << 30

// Procedural builds a scene from a spec "name[:arg...]":
//
//	default
//	icosphere:<subdiv>            (0..11)
//	soup:<n>[:<seed>]             (seed defaults to 1)
//	coplanar:<n>[:<seed>]
//	identical:<n>
//	huge:<n>[:<seed>]             (HugeAmongTiny)
//	slivers:<n>[:<seed>]
//	grid:<nx>:<ny>:<nz>:<scene>   (scene is a file path or proc:<spec>)
//
// A leading "proc:" is accepted and ignored. Errors name the spec.
func Procedural(spec string) (*Scene, error) {
	spec = strings.TrimPrefix(spec, "proc:")
	parts := strings.Split(spec, ":")
	bad := func(format string, args ...any) error {
		return fmt.Errorf("procedural scene %q: %s", spec, fmt.Sprintf(format, args...))
	}
	num := func(i int, def uint64, what string) (uint64, error) {
		if i >= len(parts) {
			if def == math.MaxUint64 {
				return 0, bad("missing %s", what)
			}
			return def, nil
		}
		v, err := strconv.ParseUint(parts[i], 10, 64)
		if err != nil {
			return 0, bad("%s %q is not a non-negative integer", what, parts[i])
		}
		return v, nil
	}
	const required = math.MaxUint64
	nargs := func(lo, hi int) error {
		if len(parts)-1 < lo || len(parts)-1 > hi {
			return bad("want %d to %d arguments, got %d", lo, hi, len(parts)-1)
		}
		return nil
	}
	count := func() (int, uint64, error) {
		if err := nargs(1, 2); err != nil {
			return 0, 0, err
		}
		n, err := num(1, required, "triangle count")
		if err != nil {
			return 0, 0, err
		}
		if n > maxProceduralTriangles {
			return 0, 0, bad("triangle count %d above %d", n, maxProceduralTriangles)
		}
		seed, err := num(2, 1, "seed")
		return int(n), seed, err
	}
	switch parts[0] {
	case "default":
		if err := nargs(0, 0); err != nil {
			return nil, err
		}
		return Default(), nil
	case "icosphere":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		d, err := num(1, required, "subdivision")
		if err != nil {
			return nil, err
		}
		if d > 11 {
			return nil, bad("subdivision %d above 11", d)
		}
		return Icosphere(int(d)), nil
	case "soup", "coplanar", "huge", "slivers", "identical":
		n, seed, err := count()
		if err != nil {
			return nil, err
		}
		switch parts[0] {
		case "soup":
			return Soup(n, seed), nil
		case "coplanar":
			return Coplanar(n, seed), nil
		case "huge":
			return HugeAmongTiny(n, seed), nil
		case "slivers":
			return Slivers(n, seed), nil
		default:
			if len(parts) > 2 {
				return nil, bad("identical takes only a count")
			}
			return Identical(n), nil
		}
	case "grid":
		if len(parts) < 5 {
			return nil, bad("want grid:<nx>:<ny>:<nz>:<scene>")
		}
		var d [3]int
		for i := range d {
			v, err := num(1+i, required, "grid size")
			if err != nil {
				return nil, err
			}
			if v < 1 || v > 1024 {
				return nil, bad("grid size %d outside 1..1024", v)
			}
			d[i] = int(v)
		}
		inner := strings.Join(parts[4:], ":")
		var s *Scene
		var err error
		if strings.HasPrefix(inner, "proc:") {
			s, err = Procedural(inner)
		} else {
			s, err = Load(inner)
		}
		if err != nil {
			return nil, err
		}
		if uint64(d[0]*d[1]*d[2])*uint64(len(s.Tris)) > maxProceduralTriangles {
			return nil, bad("%d copies of %d triangles is too many", d[0]*d[1]*d[2], len(s.Tris))
		}
		return Grid(s, d[0], d[1], d[2]), nil
	}
	return nil, bad("unknown generator %q (want default, icosphere, soup, coplanar, identical, huge, slivers or grid)", parts[0])
}
