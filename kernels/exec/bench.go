package exec

import (
	"sort"
	"time"
)

// Timing summarises repeated runs of one piece of work, in milliseconds.
type Timing struct {
	Median, Min, Max float64
	Runs             int
}

// Time runs fn once to warm up, then runs times more and returns the median.
// On the CUDA executor every run is timed with events recorded around it on
// the default stream (fn must enqueue its work there); on the Go executor with
// the wall clock.
func Time(ex Executor, runs int, fn func() error) (Timing, error) {
	if runs < 1 {
		runs = 1
	}
	if err := fn(); err != nil {
		return Timing{}, err
	}
	ms := make([]float64, 0, runs)
	if ctx := ex.CUDA(); ctx != nil {
		if err := ctx.Synchronize(); err != nil {
			return Timing{}, err
		}
		start, err := ctx.NewEvent()
		if err != nil {
			return Timing{}, err
		}
		defer start.Destroy()
		end, err := ctx.NewEvent()
		if err != nil {
			return Timing{}, err
		}
		defer end.Destroy()
		for i := 0; i < runs; i++ {
			if err := start.Record(); err != nil {
				return Timing{}, err
			}
			if err := fn(); err != nil {
				return Timing{}, err
			}
			if err := end.Record(); err != nil {
				return Timing{}, err
			}
			if err := end.Synchronize(); err != nil {
				return Timing{}, err
			}
			e, err := cudaElapsed(start, end)
			if err != nil {
				return Timing{}, err
			}
			ms = append(ms, e)
		}
	} else {
		for i := 0; i < runs; i++ {
			t0 := time.Now()
			if err := fn(); err != nil {
				return Timing{}, err
			}
			ms = append(ms, float64(time.Since(t0).Nanoseconds())/1e6)
		}
	}
	return Summarise(ms), nil
}

// Summarise returns the median, minimum and maximum of ms (not modified).
func Summarise(ms []float64) Timing {
	if len(ms) == 0 {
		return Timing{}
	}
	s := append([]float64(nil), ms...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Timing{Median: med, Min: s[0], Max: s[len(s)-1], Runs: len(s)}
}

// BenchRow is one measurement of a benchmark table: a variant of an
// operation at one size. Bytes is the traffic one run must move at least
// (each input read once, each output written once); GBps = Bytes/Ms;
// PctCopy compares GBps with the device-to-device copy bandwidth measured
// in the same run (0 when unknown).
type BenchRow struct {
	Op      string  `json:"op"`
	Variant string  `json:"variant"`
	N       int     `json:"n"`
	Bytes   int64   `json:"bytes"`
	Ms      float64 `json:"ms"`
	GBps    float64 `json:"gb_per_s"`
	PctCopy float64 `json:"pct_copy"`
	Note    string  `json:"note,omitempty"`
}

// NewRow fills GBps and PctCopy from the timing.
func NewRow(op, variant string, n int, bytes int64, t Timing, copyGBps float64) BenchRow {
	r := BenchRow{Op: op, Variant: variant, N: n, Bytes: bytes, Ms: t.Median}
	if t.Median > 0 {
		r.GBps = float64(bytes) / (t.Median * 1e6)
		if copyGBps > 0 {
			r.PctCopy = 100 * r.GBps / copyGBps
		}
	}
	return r
}
