package kdtree

// walker is one goroutine's state in a Go batch: the lanes of traceLanes
// and the packet of tracePackets.
type walker struct {
	ls lanes
	p  packet
}

// walk traces rays[lo:hi] and sets out's answer for each ray i to the
// hit of trace (anyHit: Occluded's walk), choosing the walk walkChunk rays
// at a time: packets of packetSize (tracePackets) for coherent chunks,
// else laneCount at a time (traceLanes); a run of chunks of one kind goes
// to one call. Both give trace's hits. Packets pay where consecutive rays
// follow the same path (camera rays, a light's rays), lanes where they
// part ways (bounces, random rays); docs/performance.md, "CPU tracing",
// has the figures.
func (w *walker) walk(t *Tree, rays []Ray, lo, hi int, anyHit bool, out *answers) {
	diag := t.Bounds.Max.Sub(t.Bounds.Min).Len()
	coh := coherent(rays[lo:min(lo+walkChunk, hi)], diag)
	for lo < hi {
		// Each chunk is looked at once; the lanes drain only at the end
		// of a run.
		end, next := min(lo+walkChunk, hi), coh
		for end < hi {
			e := min(end+walkChunk, hi)
			if next = coherent(rays[end:e], diag); next != coh {
				break
			}
			end = e
		}
		if coh {
			t.tracePackets(&w.p, rays, lo, end, anyHit, out)
		} else {
			t.traceLanes(&w.ls, rays, lo, end, anyHit, out)
		}
		lo, coh = end, next
	}
}

// walkChunk is the number of consecutive rays walk chooses a walk for:
// few enough that a batch mixing camera rays and bounces gets each its
// own.
const walkChunk = 256

// coherentSamples is how many pairs of consecutive rays coherent looks at.
const coherentSamples = 16

// coherent reports whether rays look like a camera's or a light's: at least
// half of coherentSamples pairs of consecutive rays, spread over the slice,
// start within diag/256 of each other (diag: the scene box's diagonal) and
// point within about 2.6 degrees (cosine at least 0.999). Rays with NaN
// components count as apart.
func coherent(rays []Ray, diag float32) bool {
	if len(rays) < 2 {
		return true
	}
	near := diag / 256
	near2, cos2 := near*near, float32(0.999*0.999)
	close := 0
	for k := 0; k < coherentSamples; k++ {
		i := k * (len(rays) - 1) / coherentSamples
		a, b := &rays[i], &rays[i+1]
		// Squared: no square root or division per pair, which cost
		// 4% of a camera-ray batch.
		d := a.Org.Sub(b.Org)
		dot := a.Dir.Dot(b.Dir)
		if d.Dot(d) <= near2 && dot > 0 && dot*dot >= cos2*a.Dir.Dot(a.Dir)*b.Dir.Dot(b.Dir) {
			close++
		}
		switch {
		case 2*close >= coherentSamples:
			return true
		case 2*(k+1-close) > coherentSamples:
			return false
		}
	}
	return false
}
