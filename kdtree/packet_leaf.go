package kdtree

import (
	"math/bits"

	"github.com/go-gl/mathgl/mgl32"
)

// packetPre is the part of a packet's rayPre that packetTri reads, one
// row per field and a float per lane, with the lanes' best T, scratch rows
// for packetTriAVX2, and its answers (t, u, w). packetTriAVX2 reads it at
// fixed offsets (TestPacketClipLayout).
type packetPre struct {
	ox, oy, oz, sx, sy, sz, tmin, tmax, bestT [packetSize]float32
	scratch                                   [8][packetSize]float32
	t, u, w                                   [packetSize]float32
}

// triGammas are deltaT's constants, passed to packetTriAVX2.
var triGammas = [4]float32{gamma2, gamma3, gamma5, 3}

// packetTriMin is the fewest rays at a leaf that test its triangles
// together (testLeafPacket); fewer test them one ray at a time.
const packetTriMin = 2

// shareAxes sets p.kperm to the permuted axes of the first lane of live,
// p.sameKz to the lanes of live with those axes, and their rows of p.spre
// from p.pre and p.best; the bestT row for every lane of live.
func (p *packet) shareAxes(live uint32) {
	p.sameKz = 0
	if live == 0 {
		return
	}
	first := &p.pre[bits.TrailingZeros32(live)%packetSize]
	p.kperm = [4]uint32{uint32(first.kx), uint32(first.ky), uint32(first.kz)}
	s := &p.spre
	for m := live; m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m) % packetSize
		s.bestT[k] = p.best[k].T
		r := &p.pre[k]
		if r.kz != first.kz {
			continue
		}
		p.sameKz |= 1 << k
		s.ox[k], s.oy[k], s.oz[k], s.sx[k], s.sy[k], s.sz[k] = r.ox, r.oy, r.oz, r.sx, r.sy, r.sz
		s.tmin[k], s.tmax[k] = r.tmin, r.tmax
	}
}

// packetTriGo is the watertight test (testLeaf's operations) of one
// triangle for the lanes of lanes, whose rayPre has the axes k and pre's
// fields and whose best hit so far is at pre.bestT. A lane where an edge
// function is zero is in slow (testLeaf decides it, with its float64
// edges); a lane where finish accepts a t is in hit, with t, u and w in
// pre's rows. packetTriAVX2 gives the same masks and bits.
func packetTriGo(v *triVerts, k *[4]uint32, pre *packetPre, lanes uint32) (hit, slow uint32) {
	kx, ky, kz := k[0]%3, k[1]%3, k[2]%3
	for m := lanes; m != 0; m &= m - 1 {
		i := bits.TrailingZeros32(m) % packetSize
		r := rayPre{kx: uint(kx), ky: uint(ky), kz: uint(kz), ox: pre.ox[i], oy: pre.oy[i], oz: pre.oz[i],
			sx: pre.sx[i], sy: pre.sy[i], sz: pre.sz[i], tmin: pre.tmin[i], tmax: pre.tmax[i]}
		p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z := r.sheared(v)
		e0 := float32(p1x*p2y) - float32(p1y*p2x)
		e1 := float32(p2x*p0y) - float32(p2y*p0x)
		e2 := float32(p0x*p1y) - float32(p0y*p1x)
		if e0 == 0 || e1 == 0 || e2 == 0 {
			slow |= 1 << i
			continue
		}
		if mixedSigns(e0, e1, e2) {
			continue
		}
		if t, u, w, ok := r.finish(e0, e1, e2, p0x, p0y, p1x, p1y, p2x, p2y, p0z, p1z, p2z, pre.bestT[i]); ok {
			hit |= 1 << i
			pre.t[i], pre.u[i], pre.w[i] = t, u, w
		}
	}
	return hit, slow
}

// testLeafPacket runs testLeaf on the leaf's triangles for the lanes of
// vec (which share p.kperm, with p.spre set), a triangle at a time for all
// of them (packetTri), and sets the normal of each new best hit (not with
// anyHit). It returns the lanes that found a hit with anyHit (they stop
// there). Each lane tests the triangles testLeaf would and
// keeps the same best hit: Hit.closer does not depend on the order.
func (p *packet) testLeafPacket(leaf []uint32, tris []triVerts, vec uint32, anyHit bool) (found uint32) {
	s := &p.spre
	for j, prim := range leaf {
		hit, slow := packetTri(&tris[prim], &p.kperm, s, vec)
		var n mgl32.Vec3 // the triangle's normal, once per triangle
		haveN := false
		for m := hit; m != 0; m &= m - 1 {
			k := bits.TrailingZeros32(m) % packetSize
			if b := &p.best[k]; b.closer(s.t[k], prim) {
				*b = Hit{T: s.t[k], U: s.u[k], V: s.w[k], Prim: prim}
				s.bestT[k] = s.t[k]
				if anyHit {
					found |= 1 << k
					vec &^= 1 << k
					continue
				}
				if !haveN {
					v := &tris[prim]
					n, haveN = geometricNormal(v[0], v[1], v[2]), true
				}
				b.N = n
			}
		}
		for m := slow; m != 0; m &= m - 1 {
			k := bits.TrailingZeros32(m) % packetSize
			if p.testOne(leaf[j:j+1], tris, k, anyHit) {
				found |= 1 << k
				vec &^= 1 << k
			}
		}
		if vec == 0 {
			break
		}
	}
	return found
}

// testOne runs testLeaf on prims for lane k, keeping p.spre.bestT and,
// without anyHit, the best hit's normal up to date (the walk of a packet
// sets each lane's normal when its best hit changes, with the triangle's
// vertices fresh in cache). It returns whether testLeaf found a hit with
// anyHit.
func (p *packet) testOne(prims []uint32, tris []triVerts, k int, anyHit bool) bool {
	b := &p.best[k]
	before := b.Prim
	_, found, _ := testLeaf(prims, tris, &p.pre[k], b, anyHit, false)
	if !anyHit && b.Prim != before {
		v := &tris[b.Prim]
		b.N = geometricNormal(v[0], v[1], v[2])
	}
	p.spre.bestT[k] = b.T
	return found
}
