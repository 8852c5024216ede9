package kdtree

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestPacketClipLayout checks the offsets packet_clip_amd64.s and
// packet_tri_amd64.s use.
func TestPacketClipLayout(t *testing.T) {
	var c packetClip
	var d traceData
	var pp packetPre
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"org", unsafe.Offsetof(c.org), 0},
		{"inv", unsafe.Offsetof(c.inv), 192},
		{"wide", unsafe.Offsetof(c.wide), 384},
		{"tmin", unsafe.Offsetof(c.tmin), 576},
		{"tmax", unsafe.Offsetof(c.tmax), 640},
		{"signs", unsafe.Offsetof(c.signs), 704},
		{"in", unsafe.Offsetof(c.in), 716},
		{"fin", unsafe.Offsetof(c.fin), 720},
		{"odd", unsafe.Offsetof(c.odd), 724},
		{"pox", unsafe.Offsetof(c.pox), 728},
		{"poy", unsafe.Offsetof(c.poy), 792},
		{"poz", unsafe.Offsetof(c.poz), 856},
		{"psx", unsafe.Offsetof(c.psx), 920},
		{"psy", unsafe.Offsetof(c.psy), 984},
		{"psz", unsafe.Offsetof(c.psz), 1048},
		{"kz", unsafe.Offsetof(c.kz), 1112},
		{"packetPre.oz", unsafe.Offsetof(pp.oz), 128},
		{"packetPre.sx", unsafe.Offsetof(pp.sx), 192},
		{"packetPre.tmin", unsafe.Offsetof(pp.tmin), 384},
		{"packetPre.tmax", unsafe.Offsetof(pp.tmax), 448},
		{"packetPre.bestT", unsafe.Offsetof(pp.bestT), 512},
		{"packetPre.scratch", unsafe.Offsetof(pp.scratch), 576},
		{"packetPre.t", unsafe.Offsetof(pp.t), 1088},
		{"packetPre.u", unsafe.Offsetof(pp.u), 1152},
		{"packetPre.w", unsafe.Offsetof(pp.w), 1216},
		{"traceData.hi after lo", unsafe.Offsetof(d.hi) - unsafe.Offsetof(d.lo), 16},
		{"traceData.mag after lo", unsafe.Offsetof(d.mag) - unsafe.Offsetof(d.lo), 32},
		{"Ray size", unsafe.Sizeof(Ray{}), 32},
	} {
		if tc.got != tc.want {
			t.Errorf("%s at %d, packet_clip_amd64.s has %d", tc.name, tc.got, tc.want)
		}
	}
}

// TestPacketClip compares clipPacket (AVX2 where the CPU has it) with
// packetClipGo lane by lane, bit for bit, on rays that cross, touch and
// miss a box, with signed zeros, tiny and huge components, infinities
// and NaN in every field.
func TestPacketClip(t *testing.T) {
	if !packetAVX2 {
		t.Skip("no AVX2 here: clipPacket is packetClipGo")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	odd := []float32{0, negZero, 1, -1, 0x1p-140, -0x1p-130, 0x1p110, -0x1p120, inf, -inf, float32(math.NaN()), 2, -2, 0.5}
	pick := func(scale float64) float32 {
		if rng.IntN(10) == 0 {
			return odd[rng.IntN(len(odd))]
		}
		return float32(rng.NormFloat64() * scale)
	}
	d := &traceData{lo: [4]float32{-1, -2, -0.5}, hi: [4]float32{1, 2, 0.5}, mag: [4]float32{1, 2, 3}}
	for it := 0; it < 20000; it++ {
		if it%1000 == 0 { // boxes of other sizes and places, an empty one among them
			for a := range 3 {
				c := float32(rng.NormFloat64() * 10)
				e := float32(math.Abs(rng.NormFloat64())) * []float32{1, 0, 1e-6, 1e6}[it/1000%4]
				d.lo[a], d.hi[a] = c-e, c+e
				d.mag[a] = max(abs32(d.lo[a]), abs32(d.hi[a]))
			}
		}
		var rays [packetSize]Ray
		for k := range rays {
			r := &rays[k]
			for a := range 3 {
				r.Org[a], r.Dir[a] = pick(3), pick(1)
			}
			r.TMin, r.TMax = 0, inf
			switch rng.IntN(5) {
			case 0:
				r.TMin, r.TMax = pick(1), pick(4)
			case 1:
				r.TMin = negZero
			}
		}
		var got, want packetClip
		clipPacket(&rays, d, &got)
		packetClipGo(&rays, d, &want)
		if got.odd != want.odd || got.in&^want.odd != want.in {
			t.Fatalf("iteration %d: odd %016b in %016b, want %016b %016b", it, got.odd, got.in&^want.odd, want.odd, want.in)
		}
		for a := range 3 {
			if got.signs[a]&^want.odd != want.signs[a] {
				t.Fatalf("iteration %d axis %d: signs %016b, want %016b", it, a, got.signs[a]&^want.odd, want.signs[a])
			}
		}
		if got.fin&want.in != want.fin {
			t.Fatalf("iteration %d: fin %016b, want %016b", it, got.fin&want.in, want.fin)
		}
		for k := range packetSize {
			if want.in>>k&1 == 0 {
				continue
			}
			ok := sameBits(got.tmin[k], want.tmin[k]) && sameBits(got.tmax[k], want.tmax[k]) && got.kz[k] == want.kz[k] &&
				sameBits(got.psx[k], want.psx[k]) && sameBits(got.psy[k], want.psy[k]) && sameBits(got.psz[k], want.psz[k]) &&
				sameBits(got.pox[k], want.pox[k]) && sameBits(got.poy[k], want.poy[k]) && sameBits(got.poz[k], want.poz[k])
			for a := range 3 {
				ok = ok && sameBits(got.org[a][k], want.org[a][k]) && sameBits(got.inv[a][k], want.inv[a][k]) && sameBits(got.wide[a][k], want.wide[a][k])
			}
			if !ok {
				t.Fatalf("iteration %d lane %d (ray %+v): [%v, %v] inv %v wide %v, want [%v, %v] %v %v", it, k, rays[k],
					got.tmin[k], got.tmax[k], got.inv[0][k], got.wide[0][k], want.tmin[k], want.tmax[k], want.inv[0][k], want.wide[0][k])
			}
		}
	}
}

// TestPacketTri compares packetTri (AVX2 where the CPU has it) with
// packetTriGo on random rays and triangles: triangles crossed, missed,
// touched at an edge or a vertex (zero edge functions), degenerate, behind
// the ray, beyond TMax or the best hit, and lanes left out of the mask.
func TestPacketTri(t *testing.T) {
	if !packetAVX2 {
		t.Skip("no AVX2 here: packetTri is packetTriGo")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	inf := float32(math.Inf(1))
	coord := func() float32 {
		if rng.IntN(8) == 0 {
			return float32(rng.IntN(3) - 1) // lattice points: exact zeros
		}
		return float32(rng.NormFloat64())
	}
	hits := 0
	for it := 0; it < 100000; it++ {
		var pre packetPre
		var lanes uint32
		var k [4]uint32
		dir := [3]float32{coord(), coord(), 1 + float32(math.Abs(rng.NormFloat64()))} // kz = z mostly
		// Every third packet starts at one height with the triangle a
		// hair above it, at a scale where t is near deltaT's bound.
		near, scale := it%3 == 0, float32(1+rng.IntN(2)*1000)
		oz := coord() * scale
		for l := range packetSize {
			var r Ray
			for a := range 3 {
				r.Org[a], r.Dir[a] = coord()*scale, dir[a]+0.1*coord()
			}
			if near {
				r.Org[2] = oz
			}
			r.TMin, r.TMax = 0, inf
			if rng.IntN(4) == 0 {
				r.TMin, r.TMax = float32(rng.Float64()), float32(rng.Float64()*4)
			}
			rp := prepare(&r)
			if l == 0 {
				k = [4]uint32{uint32(rp.kx), uint32(rp.ky), uint32(rp.kz)}
			}
			if uint32(rp.kz) != k[2] || rng.IntN(6) == 0 {
				continue
			}
			lanes |= 1 << l
			pre.ox[l], pre.oy[l], pre.oz[l], pre.sx[l], pre.sy[l], pre.sz[l] = rp.ox, rp.oy, rp.oz, rp.sx, rp.sy, rp.sz
			pre.tmin[l], pre.tmax[l], pre.bestT[l] = rp.tmin, rp.tmax, []float32{inf, 1, 0.5, 4}[rng.IntN(4)]
		}
		var v triVerts
		for i := range v {
			for a := range 3 {
				v[i][a] = coord() * scale
			}
			v[i][2] += 2 * scale
			if near {
				v[i][2] = oz + float32(rng.NormFloat64())*scale*0x1p-20
			}
		}
		if it%7 == 0 {
			v[2] = v[1] // degenerate
		}
		want := pre
		gh, gs := packetTri(&v, &k, &pre, lanes)
		wh, ws := packetTriGo(&v, &k, &want, lanes)
		if gh != wh || gs != ws {
			t.Fatalf("iteration %d: hit %016b slow %016b, want %016b %016b (lanes %016b, triangle %v)", it, gh, gs, wh, ws, lanes, v)
		}
		for l := range packetSize {
			if wh>>l&1 != 0 && !(sameBits(pre.t[l], want.t[l]) && sameBits(pre.u[l], want.u[l]) && sameBits(pre.w[l], want.w[l])) {
				t.Fatalf("iteration %d lane %d: t %v u %v w %v, want %v %v %v", it, l, pre.t[l], pre.u[l], pre.w[l], want.t[l], want.u[l], want.w[l])
			}
		}
		hits += bits.OnesCount32(wh)
	}
	if hits < 1000 {
		t.Fatalf("only %d hits: the test does not reach finish's accepting path", hits)
	}
}
