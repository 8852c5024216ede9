package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// checkWritable fails when path exists and force is false, so that a
// benchmark never runs for minutes only to refuse its output at the end.
func checkWritable(path string, force bool) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return usagef("--plot %s: the chart is a PNG, name it *.png", path)
	}
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: not overwriting it (use --force to replace it)", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writePlot draws time against size with log axes, one line per variant,
// and writes it as a PNG to path; an existing file is replaced only with
// force.
func writePlot(path string, force bool, title string, rows []exec.BenchRow) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "elements"
	p.Y.Label.Text = "time (ms, median)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = powerOfTwoTicks{}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true

	var order []string
	series := map[string]plotter.XYs{}
	for _, r := range rows {
		if r.N <= 0 || !(r.Ms > 0) {
			continue // a log axis cannot show zero
		}
		if _, ok := series[r.Variant]; !ok {
			order = append(order, r.Variant)
		}
		series[r.Variant] = append(series[r.Variant], plotter.XY{X: float64(r.N), Y: r.Ms})
	}
	if len(order) == 0 {
		return fmt.Errorf("--plot %s: no measurement with a positive time and size to draw", path)
	}
	var args []any
	for _, v := range order {
		args = append(args, v, series[v])
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	// Explicit ranges: gonum widens a zero-width range around its value,
	// which a log axis cannot show when the value is small.
	p.X.Min, p.X.Max = logRange(series, func(q plotter.XY) float64 { return q.X })
	p.Y.Min, p.Y.Max = logRange(series, func(q plotter.XY) float64 { return q.Y })
	return savePlot(p, path, force)
}

// savePlot writes p as an 8×5 inch PNG to path; an existing file is
// replaced only with force.
func savePlot(p *plot.Plot, path string, force bool) error {
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists: not overwriting it (use --force to replace it)", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// logRange returns the range of the positive values get picks from every
// series, widened by a factor of two each way when all values are equal.
func logRange(series map[string]plotter.XYs, get func(plotter.XY) float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, xys := range series {
		for _, q := range xys {
			lo, hi = min(lo, get(q)), max(hi, get(q))
		}
	}
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	return lo, hi
}

// powerOfTwoTicks labels a log axis of sizes at powers of two: 2^10, 2^12, …
type powerOfTwoTicks struct{}

func (powerOfTwoTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	k0 := 0
	for float64(uint64(1)<<k0) < lo && k0 < 62 {
		k0++
	}
	var ks []int
	for k := k0; k < 63 && float64(uint64(1)<<k) <= hi; k++ {
		ks = append(ks, k)
	}
	step := 1
	for len(ks)/step > 10 {
		step++
	}
	for i, k := range ks {
		t := plot.Tick{Value: float64(uint64(1) << k)}
		if i%step == 0 {
			t.Label = fmt.Sprintf("2^%d", k)
		}
		ticks = append(ticks, t)
	}
	if len(ticks) == 0 {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	return ticks
}
