package kdtree

import "math/bits"

// laneFeed hands traceLanes' lanes their rays, rays[next:hi] in turn, and
// answers on the way the rays that need no walk. (A struct with methods
// rather than a closure: the closure reloaded and spilled every captured
// variable on each call, 60 instructions a ray.)
type laneFeed struct {
	t        *Tree
	d        *traceData
	rays     []Ray
	next, hi int
	anyHit   bool
	out      *answers
	// With AVX2 the rays are set up sixteen at a time (clipPacket, the
	// same bits as rayAxes.start): blk holds the setup of rays
	// base..base+15, todo the ones of them not handed out yet.
	blk  packetClip
	base int
	todo uint32
}

// fill starts in l the next ray that needs a walk, answering on the way
// the ones that do not; false (and l idle) when none is left.
func (f *laneFeed) fill(l *lane) bool {
	for {
		if !packetAVX2 {
			if f.next >= f.hi {
				break
			}
			f.next++
			if f.start(l, f.next-1) {
				return true
			}
			continue
		}
		if f.todo == 0 {
			if f.next >= f.hi {
				break
			}
			f.base, f.todo = f.next, clipRays(f.rays[f.next:min(f.next+packetSize, f.hi)], f.d, &f.blk)
		}
		k := bits.TrailingZeros32(f.todo) % packetSize
		f.todo &= f.todo - 1
		i := f.base + k
		f.next = i + 1
		switch {
		case f.blk.odd>>k&1 != 0:
			if f.start(l, i) {
				return true
			}
		case l.fromClip(&f.blk, k):
			l.ray, l.node, l.sp = i, 0, 0
			l.best = missHit()
			f.blk.setPre(k, &f.rays[i], &l.pre)
			return true
		case f.blk.in>>k&1 == 0:
			f.out.put(i, missHit())
		default:
			f.out.put(i, f.t.trace(&f.rays[i], f.anyHit, nil, true))
		}
	}
	l.park()
	return false
}

// start starts l on ray i when descendFinite takes it, with rayAxes.start
// and prepare, and reports whether it did; else it answers the ray.
func (f *laneFeed) start(l *lane, i int) bool {
	r := &f.rays[i]
	if unusable(r) {
		f.out.put(i, missHit())
		return false
	}
	tmin, tmax, ok := l.ax.start(f.d, r)
	if !ok {
		f.out.put(i, missHit())
		return false
	}
	if !(tmax > 0) {
		// No hit: every accepted t is above 0 (the watertight test's
		// t > deltaT ≥ 0). Past this the lanes' intervals hold no −0
		// (see the interior step).
		f.out.put(i, missHit())
		return false
	}
	if !l.ax.finite() {
		f.out.put(i, f.t.trace(r, f.anyHit, nil, true))
		return false
	}
	l.ray, l.node, l.tmin, l.tmax, l.sp = i, 0, tmin, tmax, 0
	l.best = missHit()
	l.pre = prepare(r)
	return true
}

// clipRays sets up rays (at most packetSize) with clipPacket and returns
// the mask of their lanes.
func clipRays(rays []Ray, d *traceData, c *packetClip) uint32 {
	if len(rays) == packetSize {
		clipPacket((*[packetSize]Ray)(rays), d, c)
	} else {
		var buf [packetSize]Ray
		copy(buf[:], rays)
		clipPacket(&buf, d, c)
	}
	return uint32(1)<<len(rays) - 1
}

// fromClip starts l's walk from lane k of c when the ray is in the box and
// finite (descendFinite takes it): its interval and the rayAxes fields the
// interior step reads (org, inv, wide, flip; not dir and slack). It
// reports whether it did. c.odd must not have bit k.
func (l *lane) fromClip(c *packetClip, k int) bool {
	if (c.in&c.fin)>>k&1 == 0 {
		return false
	}
	k %= packetSize // no bounds checks below
	l.ax.org = [4]float32{c.org[0][k], c.org[1][k], c.org[2][k]}
	l.ax.inv = [4]float32{c.inv[0][k], c.inv[1][k], c.inv[2][k]}
	l.ax.wide = [4]float32{c.wide[0][k], c.wide[1][k], c.wide[2][k]}
	l.ax.flip = [4]uint32{-(c.signs[0] >> k & 1), -(c.signs[1] >> k & 1), -(c.signs[2] >> k & 1)}
	l.tmin, l.tmax = c.tmin[k], c.tmax[k]
	return true
}
