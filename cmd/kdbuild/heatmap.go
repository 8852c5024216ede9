package main

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kdbuild/kdbuild/kdtree"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// heatTrisWeight weighs a triangle test against a node visit in the heat
// map's cost: the builder's default SAH costs (kdtree.DefaultIntersectCost
// over kdtree.DefaultTraversalCost), the same metric the tree minimises.
const heatTrisWeight = kdtree.DefaultIntersectCost / kdtree.DefaultTraversalCost

// heatMap is the traversal cost of every pixel's primary ray.
type heatMap struct {
	w, h        int
	nodes, tris []uint32
}

// heatJSON is the "heat" object of kdbuild render --json.
type heatJSON struct {
	Min       float64 `json:"min"`  // lowest pixel cost: nodes + 1.5 × triangles
	Max       float64 `json:"max"`  // highest pixel cost
	Mean      float64 `json:"mean"` // mean pixel cost
	MeanNodes float64 `json:"mean_nodes"`
	MeanTris  float64 `json:"mean_tris"`
}

func (m *heatMap) cost(i int) float64 { return float64(m.nodes[i]) + heatTrisWeight*float64(m.tris[i]) }

// traceHeat traces the camera's w×h primary rays with
// kdtree.Tree.IntersectStats on every core (rows from a shared counter,
// ctx checked between rows) and keeps each ray's nodes and triangles.
func traceHeat(ctx context.Context, tree *kdtree.Tree, c kdtree.Camera, w, h int, progress func(rows int)) (*heatMap, error) {
	m := &heatMap{w: w, h: h, nodes: make([]uint32, w*h), tris: make([]uint32, w*h)}
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			rays := make([]kdtree.Ray, w)
			for ctx.Err() == nil {
				y := int(next.Add(1) - 1)
				if y >= h {
					return
				}
				c.RaysInto(rays, w, h, y)
				for x, r := range rays {
					var st kdtree.RayStats
					tree.IntersectStats(r, &st)
					m.nodes[y*w+x], m.tris[y*w+x] = st.Nodes, st.Tris
				}
				if progress != nil {
					mu.Lock()
					progress(1)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// summary returns the cost range and means.
func (m *heatMap) summary() *heatJSON {
	s := &heatJSON{Min: math.Inf(1), Max: math.Inf(-1)}
	var sn, st float64
	for i := range m.nodes {
		c := m.cost(i)
		s.Min, s.Max = min(s.Min, c), max(s.Max, c)
		s.Mean += c
		sn += float64(m.nodes[i])
		st += float64(m.tris[i])
	}
	n := float64(len(m.nodes))
	s.Mean, s.MeanNodes, s.MeanTris = round3(s.Mean/n), round3(sn/n), round3(st/n)
	return s
}

// Colour bar layout under the heat map, in pixels.
const (
	barMargin = 6
	barHeight = 10
	barText   = 13 // basicfont.Face7x13 line height
	barArea   = barMargin + barHeight + 2 + barText + 2
)

// image draws the heat map over the inferno colour map on a logarithmic
// scale from the image's lowest to its highest cost (the cost is heavy
// tailed: a few rays along silhouettes cost tens of times the mean), with
// a colour bar below it labelled with both values.
func (m *heatMap) image() *image.RGBA {
	s := m.summary()
	img := image.NewRGBA(image.Rect(0, 0, m.w, m.h+barArea))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{16, 16, 20, 255}}, image.Point{}, draw.Src)
	span := math.Log1p(s.Max - s.Min)
	for i := range m.nodes {
		f := 0.0
		if span > 0 {
			f = math.Log1p(m.cost(i)-s.Min) / span
		}
		img.SetRGBA(i%m.w, i/m.w, inferno(f))
	}
	drawColourBar(img, m.h, s.Min, s.Max)
	return img
}

// drawColourBar draws the colour map from lo to hi (log scale) as a
// horizontal bar below row top, with lo at its left end, hi at its right
// end and the metric's name between them when there is room.
func drawColourBar(img *image.RGBA, top int, lo, hi float64) {
	w := img.Bounds().Dx()
	x0, x1 := barMargin, w-barMargin
	if x1-x0 < 2 {
		x0, x1 = 0, w
	}
	y0 := top + barMargin
	for x := x0; x < x1; x++ {
		c := inferno(float64(x-x0) / float64(max(x1-x0-1, 1)))
		for y := y0; y < y0+barHeight; y++ {
			img.SetRGBA(x, y, c)
		}
	}
	base := y0 + barHeight + 2 + 10 // the font's ascent is 10 of its 13 rows
	left, right := fmt.Sprintf("%.0f", lo), fmt.Sprintf("%.0f", hi)
	drawText(img, x0, base, left)
	rw := textWidth(right)
	drawText(img, x1-rw, base, right)
	for _, caption := range []string{"cost per ray, log scale: nodes + 1.5 x triangles", "cost per ray (log): nodes + 1.5 x tris", "nodes + 1.5 x tris (log)", "cost (log)"} {
		cw := textWidth(caption)
		if x0+textWidth(left)+cw+16 <= x1-rw {
			drawText(img, (x0+x1-cw)/2, base, caption)
			break
		}
	}
}

func textWidth(s string) int { return font.MeasureString(basicfont.Face7x13, s).Ceil() }

// drawText writes s in light grey with its baseline at y.
func drawText(img *image.RGBA, x, y int, s string) {
	d := font.Drawer{
		Dst:  img,
		Src:  &image.Uniform{color.RGBA{230, 230, 230, 255}},
		Face: basicfont.Face7x13,
		Dot:  fixed.P(x, y),
	}
	d.DrawString(s)
}

// infernoStops are matplotlib's inferno colour map at 0, 0.1, ..., 1 (a
// perceptually uniform map, readable in grey and by colour-blind eyes).
var infernoStops = [...][3]uint8{
	{0x00, 0x00, 0x04}, {0x16, 0x0b, 0x39}, {0x42, 0x0a, 0x68}, {0x6a, 0x17, 0x6e},
	{0x93, 0x26, 0x67}, {0xbc, 0x37, 0x54}, {0xdd, 0x51, 0x3a}, {0xf3, 0x78, 0x19},
	{0xfc, 0xa5, 0x0a}, {0xf6, 0xd7, 0x46}, {0xfc, 0xff, 0xa4},
}

// inferno returns the colour of f in [0, 1] (clamped; NaN is 0),
// interpolated linearly between the stops.
func inferno(f float64) color.RGBA {
	if !(f > 0) {
		f = 0
	}
	f = min(f, 1) * float64(len(infernoStops)-1)
	i := min(int(f), len(infernoStops)-2)
	t := f - float64(i)
	a, b := infernoStops[i], infernoStops[i+1]
	var c [3]uint8
	for k := range c {
		c[k] = uint8(math.Round(float64(a[k])*(1-t) + float64(b[k])*t))
	}
	return color.RGBA{c[0], c[1], c[2], 255}
}
