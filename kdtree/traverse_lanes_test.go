package kdtree

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// laneRays is a mix that reaches every path of traceLanes: hard rays, random
// rays, rays with an odd direction component (zero, tiny, huge: trace's
// descendSafe), unusable rays (NaN, zero direction) and short intervals.
func laneRays(s *scenes.Scene, n int, seed uint64) []Ray {
	rays := append(hardRays(s, n, seed), RandomRays(s.Bounds, n)...)
	rng := rand.New(rand.NewPCG(seed, 3))
	nan := float32(math.NaN())
	for i := 0; i < n/4; i++ {
		r := rays[rng.IntN(len(rays))]
		switch i % 6 {
		case 0, 1, 2:
			r.Dir[i%3] = []float32{0, 0x1p-140, 0x1p110}[i%3]
		case 3:
			r.Dir = mgl32.Vec3{}
		case 4:
			r.Org[1] = nan
		case 5:
			r.TMin, r.TMax = 0.25, 0.5
		}
		rays = append(rays, r)
	}
	rng.Shuffle(len(rays), func(i, j int) { rays[i], rays[j] = rays[j], rays[i] })
	return rays
}

// groupWalk is traceLanes or tracePackets with its state bound.
type groupWalk func(tree *Tree, rays []Ray, lo, hi int, anyHit bool, out *answers)

// groupWalks are the walks checkLanes checks, by name: the lanes and the
// packets, each with AVX2 where the CPU has it and in Go.
func groupWalks() map[string]groupWalk {
	var ls lanes
	var p packet
	packets := func(avx2 bool) groupWalk {
		return func(tree *Tree, rays []Ray, lo, hi int, anyHit bool, out *answers) {
			defer setAVX2(avx2)()
			tree.tracePackets(&p, rays, lo, hi, anyHit, out)
		}
	}
	lanesWalk := func(avx2 bool) groupWalk {
		return func(tree *Tree, rays []Ray, lo, hi int, anyHit bool, out *answers) {
			defer setAVX2(avx2)()
			tree.traceLanes(&ls, rays, lo, hi, anyHit, out)
		}
	}
	return map[string]groupWalk{
		"lanes":      lanesWalk(true),
		"lanes-go":   lanesWalk(false),
		"packets":    packets(true),
		"packets-go": packets(false),
	}
}

// setAVX2 sets packetAVX2 to on where the CPU has AVX2 and returns what
// puts it back.
func setAVX2(on bool) func() {
	saved := packetAVX2
	packetAVX2 = on && saved
	return func() { packetAVX2 = saved }
}

// checkLanes traces rays[lo:hi] through every group walk and fails unless
// every ray of the range gets trace's hit bit for bit, and no other ray
// an answer.
func checkLanes(t *testing.T, tree *Tree, rays []Ray, lo, hi int, what string) {
	t.Helper()
	for name, walk := range groupWalks() {
		checkWalk(t, tree, walk, rays, lo, hi, what+" "+name)
	}
}

func checkWalk(t *testing.T, tree *Tree, walk groupWalk, rays []Ray, lo, hi int, what string) {
	t.Helper()
	unset := Hit{T: -1, Prim: 0xABCDEF}
	for _, anyHit := range []bool{false, true} {
		hits := make([]Hit, len(rays))
		for i := range hits {
			hits[i] = unset
		}
		walk(tree, rays, lo, hi, anyHit, &answers{hits: hits})
		for i, h := range hits {
			if i < lo || i >= hi {
				if h != unset {
					t.Fatalf("%s any=%v: ray %d outside %d-%d answered", what, anyHit, i, lo, hi)
				}
				continue
			}
			want := tree.trace(&rays[i], anyHit, nil, true)
			if math.Float32bits(h.T) != math.Float32bits(want.T) || h.U != want.U || h.V != want.V || h.Prim != want.Prim || h.N != want.N {
				t.Fatalf("%s any=%v ray %d %+v: walk %+v, trace %+v", what, anyHit, i, rays[i], h, want)
			}
		}
		occ := make([]bool, len(rays))
		walk(tree, rays, lo, hi, anyHit, &answers{occluded: occ})
		for i := lo; i < hi; i++ {
			if occ[i] != (hits[i].Prim != NoHit) {
				t.Fatalf("%s any=%v ray %d: occluded %v, hit %+v", what, anyHit, i, occ[i], hits[i])
			}
		}
	}
}

// TestLanesMatchTrace: traceLanes gives trace's hits on procedural scenes
// and tree shapes, for ranges shorter than, equal to and longer than the
// lanes, and with the lanes reused from range to range.
func TestLanesMatchTrace(t *testing.T) {
	cases := []struct {
		name  string
		scene *scenes.Scene
	}{
		{"empty", newScene(nil, nil)},
		{"coplanar-65", scenes.Coplanar(65, 2)},
		{"soup-1000", scenes.Soup(1000, 6)},
		{"icosphere-2", scenes.Icosphere(2)},
		{"slivers-200", scenes.Slivers(200, 8)},
		{"huge-among-tiny-200", scenes.HugeAmongTiny(200, 7)},
	}
	for _, c := range cases {
		for _, p := range []struct{ leaf, depth int }{{1, 20}, {4, 3}, {1 << 20, 0}, {1, MaxTreeDepth}} {
			tree := refBuild(c.scene, p.leaf, p.depth)
			rays := laneRays(c.scene, 600, 31)
			for _, r := range [][2]int{{0, 0}, {0, 1}, {3, 3 + packetSize}, {5, 5 + packetSize + 1}, {0, len(rays)}} {
				checkLanes(t, tree, rays, r[0], r[1], c.name)
			}
			// Camera rays: packets whose rays point the same way, some
			// of them missing the box.
			cam := PrimaryRays(c.scene.Bounds)
			cam = cam[len(cam)/2-1500 : len(cam)/2+1500]
			checkLanes(t, tree, cam, 1, len(cam)-2, c.name+" camera")
		}
	}
}

// TestLanesMatchTraceShared: the same on the shared scenes' ANCHORS ray
// sets (a stride of them), where the walks are long.
func TestLanesMatchTraceShared(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, sc := range traceBenchScenes {
		tree, sets := benchTreeRays(t, sc.file)
		for name, rays := range sets {
			if name == "primary" {
				// Whole rows: the packets' neighbours are the image's.
				rays = rays[len(rays)/2-50_000 : len(rays)/2+50_000]
			} else {
				rays = strided(rays, 50_000)
			}
			checkLanes(t, tree, rays, 0, len(rays), sc.name+" "+name)
		}
	}
}

// TestCoherent: camera rays and rays from nearby points in nearly the same
// direction are coherent; random rays, rays from spread points and rays
// with NaN are not.
func TestCoherent(t *testing.T) {
	b := scenes.Bounds{Max: mgl32.Vec3{10, 10, 10}}
	diag := b.Max.Len()
	spread := func(n int, org func(i int) mgl32.Vec3, dir func(i int) mgl32.Vec3) []Ray {
		rays := make([]Ray, n)
		for i := range rays {
			rays[i] = Ray{Org: org(i), Dir: dir(i), TMax: float32(math.Inf(1))}
		}
		return rays
	}
	at := func(p mgl32.Vec3) func(int) mgl32.Vec3 { return func(int) mgl32.Vec3 { return p } }
	fan := func(i int) mgl32.Vec3 { return mgl32.Vec3{float32(i) * 1e-3, 0, 1} }
	nan := float32(math.NaN())
	cases := []struct {
		name string
		rays []Ray
		want bool
	}{
		{"none", nil, true},
		{"one", spread(1, at(mgl32.Vec3{}), fan), true},
		{"camera", PrimaryRays(b)[:256], true},
		{"fan from a point", spread(256, at(mgl32.Vec3{1, 2, 3}), fan), true},
		{"fan from nearby points", spread(256, func(i int) mgl32.Vec3 { return mgl32.Vec3{float32(i) * 1e-4, 0, 0} }, fan), true},
		{"random", RandomRays(b, 256), false},
		{"same direction, spread points", spread(256, func(i int) mgl32.Vec3 { return mgl32.Vec3{float32(i % 2), 0, 0} }, at(mgl32.Vec3{0, 0, 1})), false},
		{"same point, directions apart", spread(256, at(mgl32.Vec3{}), func(i int) mgl32.Vec3 { return mgl32.Vec3{float32(i % 2), 0, 1} }), false},
		{"zero directions", spread(256, at(mgl32.Vec3{}), at(mgl32.Vec3{})), false},
		{"NaN origins", spread(256, at(mgl32.Vec3{nan, 0, 0}), fan), false},
	}
	for _, c := range cases {
		if got := coherent(c.rays, diag); got != c.want {
			t.Errorf("%s: coherent %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPacketStep: one interior step of packetWalkAVX2 (where the CPU
// has AVX2) and of descendGo gives packetStepGo's bits and masks, on a
// root over two leaves, random values and the edge values the walk
// passes: dead lanes (tmin +Inf, tmax −Inf), lo of −0 against tmin +0,
// equal bounds, empty lanes (all zero).
func TestPacketStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	pick := func() float32 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return negZero
		case 2:
			return 1
		default:
			return float32(rng.NormFloat64() * 10)
		}
	}
	for it := 0; it < 20000; it++ {
		var p packet
		var tmin, tmax [packetSize]float32
		split, axis := pick(), rng.IntN(3)
		o, inv, w := &p.org[axis], &p.inv[axis], &p.wide[axis]
		for k := range packetSize {
			o[k], inv[k], w[k] = pick(), pick(), float32(math.Abs(float64(pick())))
			tmin[k] = float32(math.Abs(float64(pick())))
			tmax[k] = tmin[k] + float32(math.Abs(float64(pick())))
			switch rng.IntN(6) {
			case 0:
				tmin[k], tmax[k] = inf, -inf
			case 1:
				o[k], inv[k], w[k] = 0, 0, 0
			case 2:
				// lo = tp − w exactly −0 against tmin +0.
				o[k], inv[k], w[k], tmin[k] = split, 1, 0, 0
				if split == 0 {
					o[k] = negZero
				}
			}
		}
		if it%4 == 0 {
			// No ray with a first part: tmin takes smin.
			for k := range packetSize {
				o[k], inv[k], w[k] = split, 1, 0
				tmin[k] = 1 + float32(math.Abs(float64(pick())))
				tmax[k] = tmin[k] + float32(math.Abs(float64(pick())))
			}
		}
		p.flip[axis] = -uint32(rng.IntN(2))
		nodes := []Node{InteriorNode(axis, split, 2), LeafNode(0, 1), LeafNode(1, 1)}
		first, second := uint32(1), uint32(2)
		if p.flip[axis] != 0 {
			first, second = second, first
		}
		// The step's own answer.
		var fmax, smin, stmax [packetSize]float32
		tminW := tmin
		in1, in2 := packetStepGo(split, o, inv, w, &tminW, &tmax, &fmax, &smin, &stmax)
		if it%4 == 0 && in1 != 0 {
			t.Fatalf("first %016b, want none", in1)
		}
		wantNode, wantLive, wantMax, wantSP := second, in2, tmax, 0
		if in1 != 0 {
			wantNode, wantLive, wantMax = first, in1, fmax
			if in2 != 0 {
				wantSP = 1
			}
		}
		for _, asm := range []bool{false, true} {
			if asm && !packetAVX2 {
				continue
			}
			q := p
			sp, lo, hi := 0, tmin, tmax
			var node, live uint32
			if asm {
				node, live = packetWalkAVX2(&nodes[0], &q, 0, &sp, &lo, &hi, 0xffff, 0, false)
			} else {
				node, live = q.descendGo(nodes, 0, &sp, &lo, &hi, 0xffff)
			}
			if node != wantNode || live != wantLive || sp != wantSP {
				t.Fatalf("asm %v: node %d live %016b sp %d, want %d %016b %d", asm, node, live, sp, wantNode, wantLive, wantSP)
			}
			e := &q.stack[0]
			if sp == 1 && (e.node != second || e.live != in2 || e.direct != in2&^in1) {
				t.Fatalf("asm %v: pushed %d %016b %016b, want %d %016b %016b", asm, e.node, e.live, e.direct, second, in2, in2&^in1)
			}
			for k := range packetSize {
				if !sameBits(lo[k], tminW[k]) || !sameBits(hi[k], wantMax[k]) {
					t.Fatalf("asm %v lane %d (split %v o %v inv %v w %v [%v, %v]): [%v, %v], want [%v, %v]",
						asm, k, split, o[k], inv[k], w[k], tmin[k], tmax[k], lo[k], hi[k], tminW[k], wantMax[k])
				}
				if sp == 1 && (!sameBits(e.tmin[k], smin[k]) || !sameBits(e.tmax[k], tmax[k])) {
					t.Fatalf("asm %v lane %d: pushed [%v, %v], want [%v, %v]", asm, k, e.tmin[k], e.tmax[k], smin[k], tmax[k])
				}
			}
		}
	}
	if !packetAVX2 {
		t.Log("no AVX2 here: descendGo alone")
	}
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
