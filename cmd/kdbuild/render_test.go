package main

import (
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite the render tests' stored images in testdata/render")

// Tolerances of the image comparison: renders differ across platforms only
// by float rounding in the shading (fused multiply-adds on some CPUs).
const (
	goldenMeanDiff  = 1.5  // mean absolute channel difference, of 255
	goldenBadPixels = 0.01 // share of pixels with a channel off by more than goldenBadDiff
	goldenBadDiff   = 24
)

// defaultSceneView looks at the spheres of the default scene from above
// its ground.
const defaultSceneView = "1,6,13,0.5,1.5,0,0,1,0,45"

// TestRenderGolden renders small scenes and compares them with the images
// in testdata/render (go test -run RenderGolden -update rewrites them;
// look at them before committing).
func TestRenderGolden(t *testing.T) {
	bunny := filepath.Join("..", "..", "..", "shared", "scenes", "stanford-bunny.obj")
	cases := []struct {
		name  string
		args  []string
		slow  bool
		needs string
	}{
		{"default-shaded", []string{"proc:default", "--camera", defaultSceneView}, false, ""},
		{"default-ao", []string{"proc:default", "--camera", defaultSceneView, "--ao", "8"}, false, ""},
		{"default-heat", []string{"proc:default", "--camera", defaultSceneView, "--heat"}, false, ""},
		{"icosphere", []string{"proc:icosphere:2"}, false, ""},
		{"bunny-shaded", []string{bunny}, true, bunny},
		{"bunny-heat", []string{bunny, "--heat"}, true, bunny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.needs != "" {
				if _, err := os.Stat(c.needs); err != nil {
					t.Skipf("shared scene not available: %v", err)
				}
			}
			if c.slow && testing.Short() {
				t.Skip("-short")
			}
			out := filepath.Join(t.TempDir(), c.name+".png")
			args := append([]string{"render", "--size", "64x48", "--device", "cpu", "-q", "--out", out}, c.args...)
			r := kdbuild(t, args...)
			require.Equal(t, 0, r.code, r.stderr)
			golden := filepath.Join("testdata", "render", c.name+".png")
			if *updateGolden {
				data, err := os.ReadFile(out)
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, data, 0o644))
				return
			}
			compareImages(t, readPNG(t, golden), readPNG(t, out))
		})
	}
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, path)
	return img
}

// compareImages fails when got differs from want beyond the tolerances.
func compareImages(t *testing.T, want, got image.Image) {
	t.Helper()
	require.Equal(t, want.Bounds(), got.Bounds(), "image size")
	mean, bad := imageDiff(want, got)
	assert.LessOrEqual(t, mean, goldenMeanDiff, "mean channel difference")
	assert.LessOrEqual(t, bad, goldenBadPixels, "share of pixels off by more than %d", goldenBadDiff)
}

// imageDiff returns the mean absolute channel difference (of 255) of two
// images of the same size and the share of pixels with a channel off by
// more than goldenBadDiff.
func imageDiff(want, got image.Image) (mean, bad float64) {
	b := want.Bounds()
	var sum float64
	nbad := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r0, g0, b0, _ := want.At(x, y).RGBA()
			r1, g1, b1, _ := got.At(x, y).RGBA()
			worst := 0
			for _, d := range []int{int(r0>>8) - int(r1>>8), int(g0>>8) - int(g1>>8), int(b0>>8) - int(b1>>8)} {
				d = max(d, -d)
				sum += float64(d)
				worst = max(worst, d)
			}
			if worst > goldenBadDiff {
				nbad++
			}
		}
	}
	n := float64(b.Dx() * b.Dy())
	return sum / (3 * n), float64(nbad) / n
}

// TestImageDiff: the comparison sees a change.
func TestImageDiff(t *testing.T) {
	a := image.NewRGBA(image.Rect(0, 0, 20, 10))
	b := image.NewRGBA(image.Rect(0, 0, 20, 10))
	mean, bad := imageDiff(a, b)
	assert.Zero(t, mean)
	assert.Zero(t, bad)
	for i := 0; i < len(b.Pix)/4; i += 4 { // a quarter of the pixels, red +200
		b.Pix[i] = 200
	}
	mean, bad = imageDiff(a, b)
	assert.InDelta(t, 200.0/3/4, mean, 1e-9)
	assert.InDelta(t, 0.25, bad, 1e-9)
}

// TestRenderErrors: usage mistakes exit 2, refused or failing work 1, and
// nothing is written.
func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.png")
	require.NoError(t, os.WriteFile(exists, []byte("mine"), 0o644))
	out := filepath.Join(dir, "new.png")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"proc:icosphere:1"}, 2, "--out image.png is required"},
		{[]string{"--out", out}, 2, "want one scene"},
		{[]string{"proc:icosphere:1", "--out", filepath.Join(dir, "x.jpg")}, 2, "name it *.png"},
		{[]string{"proc:icosphere:1", "--out", out, "--size", "0x5"}, 2, "--size"},
		{[]string{"proc:icosphere:1", "--out", out, "--size", "100000x100000"}, 2, "pixels, at most"},
		{[]string{"proc:icosphere:1", "--out", out, "--camera", "1,2,3"}, 2, "want 10 numbers"},
		{[]string{"proc:icosphere:1", "--out", out, "--camera", "0,0,5,0,0,0,0,0,1,45"}, 2, "along the view"},
		{[]string{"proc:icosphere:1", "--out", out, "--camera", "0,0,5,0,0,0,0,1,0,180"}, 2, "field of view"},
		{[]string{"proc:icosphere:1", "--out", out, "--ao", "-1"}, 2, "--ao"},
		{[]string{"proc:icosphere:1", "--out", out, "--ao", "4", "--heat"}, 2, "choose one"},
		{[]string{"proc:icosphere:1", "--out", exists}, 1, "file exists"},
		{[]string{filepath.Join(dir, "missing.obj"), "--out", out}, 1, "no such file"},
	}
	for _, c := range cases {
		r := kdbuild(t, append([]string{"render", "--device", "cpu"}, c.args...)...)
		assert.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.want, c.args)
	}
	data, err := os.ReadFile(exists)
	require.NoError(t, err)
	assert.Equal(t, "mine", string(data))
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "an image was written")
}

// TestRenderTreeFile: rendering a saved tree gives the image of the scene.
func TestRenderTreeFile(t *testing.T) {
	dir := t.TempDir()
	kdt := filepath.Join(dir, "ico.kdt")
	require.Equal(t, 0, kdbuild(t, "proc:icosphere:2", "--device", "cpu", "-o", kdt, "-q").code)
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.png")
	for _, c := range [][]string{{"proc:icosphere:2", "--out", a}, {kdt, "--out", b, "--json"}} {
		r := kdbuild(t, append([]string{"render", "--size", "40x30", "--device", "cpu", "-q", "--heat"}, c...)...)
		require.Equal(t, 0, r.code, r.stderr)
	}
	compareExact(t, readPNG(t, a), readPNG(t, b))
}

func compareExact(t *testing.T, a, b image.Image) {
	t.Helper()
	require.Equal(t, a.Bounds(), b.Bounds())
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r0, g0, b0, a0 := a.At(x, y).RGBA()
			r1, g1, b1, a1 := b.At(x, y).RGBA()
			if r0 != r1 || g0 != g1 || b0 != b1 || a0 != a1 {
				t.Fatalf("pixel (%d, %d) differs", x, y)
			}
		}
	}
}
