package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// renderFlags are the flags of kdbuild render.
type renderFlags struct {
	out, size, camera, device string
	ao                        int
	heat, force, json, quiet  bool
	builder                   builderFlags
}

// Render defaults.
const (
	defaultRenderSize = "800x600"
	maxRenderPixels   = 1 << 26 // 8192×8192
	maxAORays         = 1024
)

func newRenderFlagSet(f *renderFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("kdbuild render", flag.ContinueOnError)
	fs.StringVar(&f.out, "out", "", "write the image to `file.png` (required)")
	fs.StringVar(&f.size, "size", defaultRenderSize, "image size `WxH`")
	fs.StringVar(&f.camera, "camera", "", "pinhole camera `ex,ey,ez,lx,ly,lz,ux,uy,uz,fov`: eye, look-at point, up, vertical field of view in degrees (default: a view chosen from the scene)")
	fs.IntVar(&f.ao, "ao", 0, fmt.Sprintf("ambient occlusion with `N` rays per pixel, 0..%d (0: none)", maxAORays))
	fs.BoolVar(&f.heat, "heat", false, "draw the traversal cost per pixel (nodes visited + 1.5 x triangles tested) as a heat map with a colour bar")
	fs.StringVar(&f.device, "device", "", "executor of the build: auto, cpu or gpu (default $KDBUILD_DEVICE, else auto)")
	fs.BoolVar(&f.force, "force", false, "let --out replace an existing file")
	fs.BoolVar(&f.json, "json", false, "print one JSON object on stdout (stable keys)")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no progress bars, no notes on stderr")
	return fs
}

// renderJSON is the --json output of kdbuild render. Its keys are stable.
type renderJSON struct {
	Scene    string        `json:"scene"` // the scene or tree file as given
	Out      string        `json:"out"`
	Width    int           `json:"width"`
	Height   int           `json:"height"`
	Mode     string        `json:"mode"` // "shaded", "ao" or "heat"
	AORays   int           `json:"ao_rays"`
	Camera   [10]float32   `json:"camera"` // eye, look, up, fov as --camera takes them
	Device   string        `json:"device"` // where the tree was built ("cpu" or the GPU's name)
	BuildMs  float64       `json:"build_ms"`
	TraceMs  float64       `json:"trace_ms"` // every ray of the image, wall time
	Rays     int64         `json:"rays"`
	MRaysPS  float64       `json:"mrays_per_s"`
	Heat     *heatJSON     `json:"heat,omitempty"`
	TreeFile *treeFileJSON `json:"tree_file,omitempty"`
}

// runRender is kdbuild render <scene or .kdt> --out image.png [flags].
// Ctrl-C ends it like the scene command (interruptContext): exit 130, no
// image and no report.
func runRender(e *env, args []string) int {
	var f renderFlags
	fs := newRenderFlagSet(&f)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(e.stdout)
		fmt.Fprintf(e.stdout, "\nFlags of kdbuild render:\n%s", flagDefaults(fs))
		return exitOK
	}
	var w, h int
	var cam *kdtree.Camera
	var mode string
	if err == nil {
		w, h, cam, mode, err = f.check(e, pos)
	}
	if err != nil {
		return fail(e, f.json || jsonRequested(args), "", err)
	}
	arg := pos[0]
	quiet := f.quiet || f.json
	ctx, stop := interruptContext(e)
	defer stop()

	tree, out, closeEx, err := renderTree(ctx, e, &f, mode, arg, quiet)
	if ctx.Err() != nil {
		if err == nil {
			closeEx()
		}
		return interrupted(e)
	}
	if err != nil {
		return fail(e, f.json, arg, err)
	}
	defer closeEx()
	c := chooseCamera(tree)
	if cam != nil {
		c = *cam
	}
	out.Scene, out.Out, out.Width, out.Height, out.Mode, out.AORays = arg, f.out, w, h, mode, f.ao
	out.Camera = [10]float32{c.Eye[0], c.Eye[1], c.Eye[2], c.Look[0], c.Look[1], c.Look[2], c.Up[0], c.Up[1], c.Up[2], c.FovY}

	bar := newRowBar(e, quiet, h)
	t0 := time.Now()
	var img image.Image
	var rays int64
	if f.heat {
		var hm *heatMap
		hm, err = traceHeat(ctx, tree, c, w, h, bar.update)
		if err == nil {
			img, out.Heat, rays = hm.image(), hm.summary(), int64(w*h)
		}
	} else {
		img, rays, err = renderShaded(ctx, tree, c, w, h, f.ao, bar.update)
	}
	bar.done()
	if ctx.Err() != nil {
		return interrupted(e) // no image, no report
	}
	if err != nil {
		return fail(e, f.json, arg, fmt.Errorf("render: %w", err))
	}
	out.TraceMs, out.Rays = round3(msSince(t0)), rays
	if out.TraceMs > 0 {
		out.MRaysPS = round3(float64(rays) / (out.TraceMs * 1e3))
	}
	if _, err := writeNewFile(f.out, "--out", f.force, func(wr io.Writer) error { return png.Encode(wr, img) }); err != nil {
		return fail(e, f.json, arg, err)
	}
	if f.json {
		if err := writeJSON(e.stdout, out); err != nil {
			fmt.Fprintf(e.stderr, "kdbuild: %v\n", err)
			return exitError
		}
		return exitOK
	}
	writeRenderText(e.stdout, out)
	return exitOK
}

// check validates the flags and positionals before any work: the image
// size, camera, --ao, and that --out is a new PNG (or --force).
func (f *renderFlags) check(e *env, pos []string) (w, h int, cam *kdtree.Camera, mode string, err error) {
	switch {
	case len(pos) != 1:
		return 0, 0, nil, "", usagef("render: want one scene or tree file, got %d arguments", len(pos))
	case f.out == "":
		return 0, 0, nil, "", usagef("render: --out image.png is required")
	case !strings.EqualFold(filepath.Ext(f.out), ".png"):
		return 0, 0, nil, "", usagef("--out %s: the image is a PNG, name it *.png", f.out)
	case f.ao < 0 || f.ao > maxAORays:
		return 0, 0, nil, "", usagef("--ao %d: want 0..%d rays per pixel", f.ao, maxAORays)
	case f.heat && f.ao > 0:
		return 0, 0, nil, "", usagef("--heat and --ao: choose one")
	}
	if w, h, err = parseSize(f.size); err != nil {
		return 0, 0, nil, "", err
	}
	if f.camera != "" {
		c, err := parseCamera(f.camera)
		if err != nil {
			return 0, 0, nil, "", err
		}
		cam = &c
	}
	if _, err := deviceMode(e, f.device); err != nil {
		return 0, 0, nil, "", err
	}
	mode = "shaded"
	if f.heat {
		mode = "heat"
	} else if f.ao > 0 {
		mode = "ao"
	}
	return w, h, cam, mode, checkNewFile(f.out, "--out", f.force)
}

// parseSize reads "WxH".
func parseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(strings.TrimSpace(ws))
	h, err2 := strconv.Atoi(strings.TrimSpace(hs))
	if !ok || err1 != nil || err2 != nil || w < 1 || h < 1 {
		return 0, 0, usagef("--size %q: want WxH with positive integers, such as 800x600", s)
	}
	if int64(w)*int64(h) > maxRenderPixels {
		return 0, 0, usagef("--size %q: %d pixels, at most %d", s, int64(w)*int64(h), maxRenderPixels)
	}
	return w, h, nil
}

// parseCamera reads "ex,ey,ez,lx,ly,lz,ux,uy,uz,fov".
func parseCamera(s string) (kdtree.Camera, error) {
	parts := strings.Split(s, ",")
	bad := usagef("--camera %q: want 10 numbers ex,ey,ez,lx,ly,lz,ux,uy,uz,fov (eye, look-at point, up, field of view in degrees)", s)
	if len(parts) != 10 {
		return kdtree.Camera{}, bad
	}
	var v [10]float32
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 32)
		if err != nil || x != x || x > 3e38 || x < -3e38 {
			return kdtree.Camera{}, bad
		}
		v[i] = float32(x)
	}
	c := kdtree.Camera{Eye: mgl32.Vec3{v[0], v[1], v[2]}, Look: mgl32.Vec3{v[3], v[4], v[5]}, Up: mgl32.Vec3{v[6], v[7], v[8]}, FovY: v[9]}
	switch {
	case !(c.FovY > 0 && c.FovY < 180):
		return c, usagef("--camera %q: field of view %v must be in (0, 180) degrees", s, c.FovY)
	case c.Eye == c.Look:
		return c, usagef("--camera %q: the eye and the look-at point are the same", s)
	case c.Up.Len() == 0 || c.Up.Cross(c.Look.Sub(c.Eye)).Len() == 0:
		return c, usagef("--camera %q: the up vector is zero or along the view", s)
	}
	return c, nil
}

// renderTree loads the tree file or loads the scene and builds its tree
// (with the level bar), filling the build fields of the report. The
// returned func closes the executor.
func renderTree(ctx context.Context, e *env, f *renderFlags, mode, arg string, quiet bool) (*kdtree.Tree, *renderJSON, func(), error) {
	out := &renderJSON{}
	if isTreeFile(arg) {
		tree, tf, err := loadTree(arg)
		if err != nil {
			return nil, nil, nil, err
		}
		st := tree.BuildStats()
		out.Device, out.BuildMs, out.TreeFile = st.Device, round3(st.BuildMs), tf
		return tree, out, func() {}, nil
	}
	devMode, _ := deviceMode(e, f.device)
	// The file's normals shade smoothly (shadingNormal); a tree file keeps
	// no attributes, so its scene shades with the geometric normals.
	l, err := loadScene(e, arg, quiet, scenes.LoadOptions{Normals: true})
	if err != nil {
		return nil, nil, nil, err
	}
	ex, _, _, err := openExecutor(e, devMode, quiet)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := buildTree(ctx, l.scene, ex, f.builder, 1, newLevelBar(e, quiet))
	if err != nil {
		ex.Close()
		return nil, nil, nil, fmt.Errorf("%s: build: %w", sceneLabel(l), err)
	}
	out.Device, out.BuildMs = executorName(ex), round3(b.ms)
	closeTree := keepOnDevice(b.tree, ex)
	return b.tree, out, func() { closeTree(); ex.Close() }, nil
}

// keepOnDevice gives the tree a device copy on a GPU executor when the
// tree supports one (the batch queries then run there) and returns the
// func that frees it.
func keepOnDevice(tree *kdtree.Tree, ex exec.Executor) func() {
	type deviceTree interface {
		Upload(exec.Executor) error
		Close() error
	}
	d, ok := any(tree).(deviceTree)
	if !ok || ex.CUDA() == nil || d.Upload(ex) != nil {
		return func() {}
	}
	return func() { _ = d.Close() }
}

// writeRenderText prints what render did.
func writeRenderText(w io.Writer, r *renderJSON) {
	what := r.Mode
	if r.Mode == "ao" {
		what = fmt.Sprintf("ambient occlusion, %d rays per pixel", r.AORays)
	}
	fmt.Fprintf(w, "image       %s (%dx%d, %s)\n", r.Out, r.Width, r.Height, what)
	c := r.Camera
	fmt.Fprintf(w, "camera      --camera %s\n", cameraText(c))
	if r.TreeFile != nil {
		fmt.Fprintf(w, "tree        from %s (%s), loaded in %.2f ms\n", r.TreeFile.Path, bytesText(uint64(r.TreeFile.Bytes)), r.TreeFile.Ms)
	} else {
		fmt.Fprintf(w, "tree        built on %s in %.2f ms\n", r.Device, r.BuildMs)
	}
	fmt.Fprintf(w, "trace       %s rays in %.1f ms (%.2f Mrays/s)\n", commas(int(r.Rays)), r.TraceMs, r.MRaysPS)
	if hm := r.Heat; hm != nil {
		fmt.Fprintf(w, "heat        cost %.0f .. %.0f (mean %.1f); per ray %.1f nodes, %.1f triangles on average\n",
			hm.Min, hm.Max, hm.Mean, hm.MeanNodes, hm.MeanTris)
	}
}

// cameraText writes the camera as --camera takes it.
func cameraText(c [10]float32) string {
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = strconv.FormatFloat(float64(v), 'g', 6, 32)
	}
	return strings.Join(parts, ",")
}
