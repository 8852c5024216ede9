package kdtree

import "time"

// walker is one goroutine's state in a Go batch: the lanes of traceLanes
// and the choice between the two walks.
type walker struct {
	ls     lanes
	choice walkChoice
}

// walk traces rays[lo:hi] and calls done(i, hit) for each ray i with the
// hit of trace (anyHit: Occluded's walk): one ray at a time, or laneCount
// at a time through traceLanes, as w.choice picks; both give the same
// hits. It times the chunk for the next pick.
func (w *walker) walk(t *Tree, rays []Ray, lo, hi int, anyHit bool, done func(i int, h Hit)) {
	lanesWalk := w.choice.pick()
	start := time.Now()
	if lanesWalk {
		t.traceLanes(&w.ls, rays, lo, hi, anyHit, done)
	} else {
		for i := lo; i < hi; i++ {
			done(i, t.trace(&rays[i], anyHit, nil, true))
		}
	}
	w.choice.record(lanesWalk, hi-lo, time.Since(start))
}

// walkChoice picks for each chunk of a batch whichever walk has lately
// taken less time per ray: rays one at a time win where consecutive rays
// follow the same path (camera rays: the branches are predicted and the
// nodes are in cache), lanes where they part ways (bounces, random rays;
// docs/performance.md, "CPU tracing"). The rays tell which they are only
// by how long they take, so the choice is measured: one chunk each way
// first, then the faster way, trying the other again every
// walkRetryEvery chunks in case the rays changed character.
type walkChoice struct {
	chunks   int
	nsPerRay [2]float64 // one at a time, lanes; 0 until measured
	last     bool
}

// walkRetryEvery is how often, in chunks, walkChoice tries the walk that
// lost: often enough to follow a batch whose rays change character, rare
// enough that trying costs under a few percent.
const walkRetryEvery = 16

func (c *walkChoice) pick() bool {
	k := c.chunks
	c.chunks++
	switch {
	case c.nsPerRay[0] == 0:
		c.last = false
	case c.nsPerRay[1] == 0:
		c.last = true
	default:
		c.last = c.nsPerRay[1] < c.nsPerRay[0]
		if k%walkRetryEvery == 0 {
			c.last = !c.last
		}
	}
	return c.last
}

// record folds a chunk of n rays that took d into the estimate of its walk
// (half the old estimate, half the new chunk).
func (c *walkChoice) record(lanesWalk bool, n int, d time.Duration) {
	if n <= 0 {
		return
	}
	k := 0
	if lanesWalk {
		k = 1
	}
	ns := float64(d.Nanoseconds())/float64(n) + 1e-3 // never 0: measured
	if c.nsPerRay[k] == 0 {
		c.nsPerRay[k] = ns
	} else {
		c.nsPerRay[k] = (c.nsPerRay[k] + ns) / 2
	}
}
