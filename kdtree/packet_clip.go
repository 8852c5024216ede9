package kdtree

import (
	"math"
	"math/bits"
)

// packetClip is a group of sixteen rays set up for tracePackets: per axis
// and lane the origin, 1/Dir and the widened slack of rayAxes, and each
// lane's interval in the root box, with masks (bit k for lane k) that say
// what to do with each ray. packetClipAVX2 writes it at fixed offsets
// (TestPacketClipLayout).
type packetClip struct {
	org, inv, wide [3][packetSize]float32
	tmin, tmax     [packetSize]float32
	// signs has per axis the sign bits of the lanes' Dir components.
	signs [3]uint32
	// in: the ray's interval in the box is not empty and ends above 0.
	// fin: rayAxes.finite holds. odd: the ray has a NaN, or a zero Dir
	// component: the other fields of the lane mean nothing, and the ray
	// goes through trace.
	in, fin, odd uint32
	// prepare's fields for each lane not in odd: the origin's and the
	// direction's components permuted, and kz − 2 (pre).
	pox, poy, poz, psx, psy, psz [packetSize]float32
	kz                           [packetSize]int32
}

// setPre sets *pre to lane k's rayPre, prepare(r) for its ray r (field by
// field: a rayPre value built and copied cost 9 ns a ray).
func (c *packetClip) setPre(k int, r *Ray, pre *rayPre) {
	kz := uint(2+c.kz[k]) & 3
	kx := next3[kz]
	pre.kx, pre.ky, pre.kz = kx, next3[kx], kz
	pre.ox, pre.oy, pre.oz = c.pox[k], c.poy[k], c.poz[k]
	pre.sx, pre.sy, pre.sz = c.psx[k], c.psy[k], c.psz[k]
	pre.tmin, pre.tmax = r.TMin, r.TMax
}

// packetClipGo fills c for rays with rayAxes.start, one lane at a time.
// For a lane not in odd, signs is set; for a lane in in (and not odd),
// fin, tmin, tmax, org, inv and wide are start's, and the prepare fields
// prepare's. packetClipAVX2 gives the
// same bits for those fields and lanes (TestPacketClip).
func packetClipGo(rays *[packetSize]Ray, d *traceData, c *packetClip) {
	c.signs, c.in, c.fin, c.odd = [3]uint32{}, 0, 0, 0
	var ax rayAxes
	for k := range packetSize {
		r := &rays[k]
		if unusable(r) || r.TMin != r.TMin || r.TMax != r.TMax || r.Dir[0] == 0 || r.Dir[1] == 0 || r.Dir[2] == 0 {
			c.odd |= 1 << k
			continue
		}
		for a := range 3 {
			c.signs[a] |= math.Float32bits(r.Dir[a]) >> 31 << k
		}
		t0, t1, in := ax.start(d, r)
		if !in || !(t1 > 0) {
			continue
		}
		c.in |= 1 << k
		if ax.finite() {
			c.fin |= 1 << k
		}
		pre := prepare(r)
		c.kz[k] = int32(pre.kz) - 2
		c.pox[k], c.poy[k], c.poz[k], c.psx[k], c.psy[k], c.psz[k] = pre.ox, pre.oy, pre.oz, pre.sx, pre.sy, pre.sz
		c.tmin[k], c.tmax[k] = t0, t1
		for a := range 3 {
			c.org[a][k], c.inv[a][k], c.wide[a][k] = ax.org[a], ax.inv[a], ax.wide[a]
		}
	}
}

// fillPacketClip is fillPacket with the rays' setup done by clipPacket, a
// group at a time (AVX2). The lanes that join the packet are the finite
// rays in the box that point the same way as the first of them; the
// others are answered here: a miss, or trace's answer.
func (t *Tree) fillPacketClip(p *packet, d *traceData, rays []Ray, lo, hi int, anyHit bool, out *answers) int {
	c := &p.packetClip
	valid := clipRays(rays[lo:hi], d, c)
	odd := c.odd & valid
	in := c.in & valid &^ odd
	var accept uint32
	if cand := in & c.fin; cand != 0 {
		k := bits.TrailingZeros32(cand)
		accept = cand
		for a := range 3 {
			ref := -(c.signs[a] >> k & 1) // all ones where lane k's Dir is negative
			accept &^= c.signs[a] ^ ref
			p.flip[a] = ref
		}
	}
	if miss := valid &^ odd &^ in; miss == valid {
		out.missRun(lo, hi)
	} else {
		for ; miss != 0; miss &= miss - 1 {
			out.put(lo+bits.TrailingZeros32(miss), missHit())
		}
	}
	for m := odd | in&^accept; m != 0; m &= m - 1 {
		i := lo + bits.TrailingZeros32(m)
		out.put(i, t.trace(&rays[i], anyHit, nil, true))
	}
	if accept == 0 {
		return 0
	}
	p.ray = [packetSize]int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	for m := accept; m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m) % packetSize
		i := lo + k
		p.ray[k] = i
		c.setPre(k, &rays[i], &p.pre[k])
		p.best[k] = missHit()
	}
	inf := float32(math.Inf(1))
	for m := ^accept & (1<<packetSize - 1); m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m) % packetSize
		c.tmin[k], c.tmax[k] = inf, -inf
		for a := range 3 {
			c.org[a][k], c.inv[a][k], c.wide[a][k] = 0, 0, 0
		}
	}
	return bits.OnesCount32(accept)
}
