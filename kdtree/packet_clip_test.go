package kdtree

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestPacketClipLayout checks the offsets packet_clip_amd64.s uses.
func TestPacketClipLayout(t *testing.T) {
	var c packetClip
	var d traceData
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
		same := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
		for k := range packetSize {
			if want.in>>k&1 == 0 {
				continue
			}
			ok := same(got.tmin[k], want.tmin[k]) && same(got.tmax[k], want.tmax[k]) && got.kz[k] == want.kz[k] &&
				same(got.psx[k], want.psx[k]) && same(got.psy[k], want.psy[k]) && same(got.psz[k], want.psz[k]) &&
				same(got.pox[k], want.pox[k]) && same(got.poy[k], want.poy[k]) && same(got.poz[k], want.poz[k])
			for a := range 3 {
				ok = ok && same(got.org[a][k], want.org[a][k]) && same(got.inv[a][k], want.inv[a][k]) && same(got.wide[a][k], want.wide[a][k])
			}
			if !ok {
				t.Fatalf("iteration %d lane %d (ray %+v): [%v, %v] inv %v wide %v, want [%v, %v] %v %v", it, k, rays[k],
					got.tmin[k], got.tmax[k], got.inv[0][k], got.wide[0][k], want.tmin[k], want.tmax[k], want.inv[0][k], want.wide[0][k])
			}
		}
	}
}
