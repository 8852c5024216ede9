// Command treecut draws the picture at the top of README.md: a scene seen
// along −Z, its triangles shaded by how much they face the viewer, with the
// x and y split planes of the top levels of its kd-tree drawn where they cut
// their nodes (the z planes face the viewer and are left out). The tree is
// the one kdtree.Build makes with the default options on the Go executor.
//
//	go run ./docs/treecut -scene ../shared/scenes/stanford-bunny.obj -o docs/treecut.png
//
// It never replaces an existing file unless -force is given.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"sort"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/scenes"
)

func main() {
	scenePath := flag.String("scene", "../shared/scenes/stanford-bunny.obj", "scene file or proc:<spec>")
	out := flag.String("o", "docs/treecut.png", "PNG file to write")
	depth := flag.Int("depth", 11, "draw the split planes of nodes shallower than this")
	width := flag.Int("width", 960, "image width in pixels")
	force := flag.Bool("force", false, "replace the output file if it exists")
	flag.Parse()
	if err := run(*scenePath, *out, *depth, *width, *force); err != nil {
		fmt.Fprintln(os.Stderr, "treecut:", err)
		os.Exit(1)
	}
}

func run(scenePath, out string, depth, width int, force bool) error {
	var s *scenes.Scene
	var err error
	if len(scenePath) > 5 && scenePath[:5] == "proc:" {
		s, err = scenes.Procedural(scenePath[5:])
	} else {
		s, err = scenes.Load(scenePath)
	}
	if err != nil {
		return err
	}
	tree, err := kdtree.Build(context.Background(), s, kdtree.Options{})
	if err != nil {
		return err
	}
	img := draw(s, tree, depth, width)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(out, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists (use -force to replace it)", out)
	}
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// view maps scene x, y to pixel coordinates (y up in the scene, down in
// the image).
type view struct {
	minX, maxY, scale, margin float64
}

func (v view) px(x, y float64) (float64, float64) {
	return v.margin + (x-v.minX)*v.scale, v.margin + (v.maxY-y)*v.scale
}

func draw(s *scenes.Scene, t *kdtree.Tree, depth, width int) *image.NRGBA {
	b := t.Bounds
	const margin = 12
	v := view{minX: float64(b.Min[0]), maxY: float64(b.Max[1]), margin: margin,
		scale: float64(width-2*margin) / float64(b.Max[0]-b.Min[0])}
	height := int(float64(b.Max[1]-b.Min[1])*v.scale) + 2*margin
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	shadeTriangles(img, s, v)
	drawSplits(img, t, v, depth)
	return img
}

// shadeTriangles fills the triangles back to front (by the z of their
// centroids), grey by |n.z| / |n|.
func shadeTriangles(img *image.NRGBA, s *scenes.Scene, v view) {
	order := make([]int, len(s.Tris))
	cz := make([]float32, len(s.Tris))
	for i, tr := range s.Tris {
		order[i] = i
		cz[i] = s.Verts[tr[0]][2] + s.Verts[tr[1]][2] + s.Verts[tr[2]][2]
	}
	sort.Slice(order, func(a, b int) bool { return cz[order[a]] < cz[order[b]] })
	for _, i := range order {
		tr := s.Tris[i]
		a, b, c := s.Verts[tr[0]], s.Verts[tr[1]], s.Verts[tr[2]]
		n := b.Sub(a).Cross(c.Sub(a))
		l := n.Len()
		if !(l > 0) {
			continue
		}
		g := uint8(120 + 125*abs(float64(n[2]/l)))
		var p [3][2]float64
		for k, w := range [3][3]float32{a, b, c} {
			p[k][0], p[k][1] = v.px(float64(w[0]), float64(w[1]))
		}
		fillTriangle(img, p, color.NRGBA{g, g, g, 255})
	}
}

// fillTriangle sets the pixels whose centres lie inside p (either winding).
func fillTriangle(img *image.NRGBA, p [3][2]float64, c color.NRGBA) {
	minX, maxX := min(p[0][0], p[1][0], p[2][0]), max(p[0][0], p[1][0], p[2][0])
	minY, maxY := min(p[0][1], p[1][1], p[2][1]), max(p[0][1], p[1][1], p[2][1])
	edge := func(a, b [2]float64, x, y float64) float64 {
		return (b[0]-a[0])*(y-a[1]) - (b[1]-a[1])*(x-a[0])
	}
	area := edge(p[0], p[1], p[2][0], p[2][1])
	if area == 0 {
		return
	}
	r := img.Bounds()
	for y := max(int(minY), r.Min.Y); y <= min(int(maxY), r.Max.Y-1); y++ {
		for x := max(int(minX), r.Min.X); x <= min(int(maxX), r.Max.X-1); x++ {
			cx, cy := float64(x)+0.5, float64(y)+0.5
			w0, w1, w2 := edge(p[1], p[2], cx, cy), edge(p[2], p[0], cx, cy), edge(p[0], p[1], cx, cy)
			if area < 0 {
				w0, w1, w2 = -w0, -w1, -w2
			}
			if w0 >= 0 && w1 >= 0 && w2 >= 0 {
				img.SetNRGBA(x, y, c)
			}
		}
	}
}

type box struct{ lo, hi [3]float64 }

// drawSplits walks the tree to depth limit and draws each x or y split as
// a segment across its node's box, red at the root turning blue deeper.
func drawSplits(img *image.NRGBA, t *kdtree.Tree, v view, limit int) {
	type item struct {
		node  uint32
		depth int
		b     box
	}
	var root box
	for a := 0; a < 3; a++ {
		root.lo[a], root.hi[a] = float64(t.Bounds.Min[a]), float64(t.Bounds.Max[a])
	}
	stack := []item{{0, 0, root}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := t.Nodes[it.node]
		if n.IsLeaf() || it.depth >= limit {
			continue
		}
		ax, split := n.Axis(), float64(n.Split())
		if ax < 2 {
			f := float64(it.depth) / float64(max(limit-1, 1))
			c := color.NRGBA{uint8(210 - 170*f), uint8(40 + 60*f), uint8(40 + 180*f), uint8(255 - 150*f)}
			x0, y0 := v.px(it.b.lo[0], it.b.lo[1])
			x1, y1 := v.px(it.b.hi[0], it.b.hi[1])
			w := max(3-it.depth/2, 1) // thicker near the root
			if ax == 0 {
				x, _ := v.px(split, 0)
				segment(img, int(x)-w/2, int(y1), int(x)-w/2+w-1, int(y0), c)
			} else {
				_, y := v.px(0, split)
				segment(img, int(x0), int(y)-w/2, int(x1), int(y)-w/2+w-1, c)
			}
		}
		below, above := it.b, it.b
		below.hi[ax], above.lo[ax] = split, split
		stack = append(stack, item{n.AboveChild(), it.depth + 1, above}, item{it.node + 1, it.depth + 1, below})
	}
}

// segment blends c over the pixels of the rectangle (x0, y0)–(x1, y1).
func segment(img *image.NRGBA, x0, y0, x1, y1 int, c color.NRGBA) {
	r := img.Bounds()
	for y := min(y0, y1); y <= max(y0, y1); y++ {
		for x := min(x0, x1); x <= max(x0, x1); x++ {
			if !(image.Point{x, y}.In(r)) {
				continue
			}
			o := img.NRGBAAt(x, y)
			a := float64(c.A) / 255
			mix := func(p, q uint8) uint8 { return uint8(float64(p)*(1-a) + float64(q)*a) }
			img.SetNRGBA(x, y, color.NRGBA{mix(o.R, c.R), mix(o.G, c.G), mix(o.B, c.B), 255})
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
