package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// report is the --json output of kdbuild [scene]. Its keys are stable:
// scripts may rely on them; new keys may be added, none removed or renamed.
// build, tree and memory are null with --no-build.
type report struct {
	Scene    sceneJSON `json:"scene"`
	Load     loadJSON  `json:"load"`
	Warnings []string  `json:"warnings"` // never null
	Device   string    `json:"device"`   // "cpu" or the GPU's name; "none" with --no-build
	// DeviceFallback is why --device auto runs the Go executor ("" when
	// it runs on a GPU, was asked for cpu, or did not build).
	DeviceFallback string      `json:"device_fallback"`
	Build          *buildJSON  `json:"build"`
	Tree           *treeJSON   `json:"tree"`
	Memory         *memoryJSON `json:"memory"`
	// TreeFile is the tree file written with -o or loaded in place of a
	// scene; absent otherwise.
	TreeFile *treeFileJSON `json:"tree_file,omitempty"`
	Parts    *partsJSON    `json:"parts,omitempty"` // a build in parts only (--parts, --devices, --memory-budget)
}

type sceneJSON struct {
	File                string              `json:"file"`   // path, proc:<spec>, or "" for the default scene
	Name                string              `json:"name"`   // the scene's own name
	Format              string              `json:"format"` // obj, ply, stl, gltf, procedural or mixed
	Vertices            int                 `json:"vertices"`
	Triangles           int                 `json:"triangles"`
	Faces               int                 `json:"faces"`
	SkippedFaces        int                 `json:"skipped_faces"`
	DegenerateTriangles int                 `json:"degenerate_triangles"`
	Bounds              boundsJSON          `json:"bounds"`
	Meshes              []meshJSON          `json:"meshes"`          // the scene's meshes in triangle order
	Attributes          map[string]attrJSON `json:"attributes"`      // by kind; {} when the files had none
	WeldedVertices      int                 `json:"welded_vertices"` // removed by --weld
	Skipped             map[string]int      `json:"skipped"`         // statements, elements or glTF primitives skipped, by keyword
}

// boundsJSON holds the scene box; an empty scene has null corners (JSON
// cannot carry the infinities of an empty box).
type boundsJSON struct {
	Min *[3]float32 `json:"min"`
	Max *[3]float32 `json:"max"`
}

type loadJSON struct {
	Ms       float64 `json:"ms"`
	MBPerSec float64 `json:"mb_per_s"` // decompressed input MB (10^6 bytes) per second; 0 for procedural scenes
}

type buildJSON struct {
	Ms float64 `json:"ms"` // median over runs
	// DeviceMs is ms less the phases upload and download, of the median
	// build (kdtree.Stats.DeviceMs): the build from the triangles on the
	// device to the tree on the device; equal to ms on the CPU.
	DeviceMs float64            `json:"device_ms"`
	Runs     int                `json:"runs"`
	Phases   map[string]float64 `json:"phases"` // phase name -> ms, of the median build
}

type treeJSON struct {
	Nodes                 int     `json:"nodes"`
	Leaves                int     `json:"leaves"`
	EmptyLeaves           int     `json:"empty_leaves"`
	MaxDepth              int     `json:"max_depth"`
	References            int     `json:"references"`
	ReferencesPerTriangle float64 `json:"references_per_triangle"`
	SAHCost               float64 `json:"sah_cost"`
	DroppedTriangles      int     `json:"dropped_triangles"`
	// Limited is "" or why a guard of the builder cut the tree short
	// (kdtree.Stats.Limited).
	Limited string `json:"limited"`
}

type memoryJSON struct {
	HostPeakBytes   uint64 `json:"host_peak_bytes"`
	DevicePeakBytes uint64 `json:"device_peak_bytes"`
}

// errorReport is the --json output when a command fails.
type errorReport struct {
	Error    string   `json:"error"` // "file:line: message" for parse errors
	File     string   `json:"file,omitempty"`
	Usage    bool     `json:"usage_error,omitempty"`
	Warnings []string `json:"warnings"`
}

func newReport(l *loaded, device string, b *built) *report {
	s := l.scene
	r := &report{
		Scene: sceneJSON{
			File:                l.file,
			Name:                s.Name,
			Format:              s.Format,
			Vertices:            len(s.Verts),
			Triangles:           len(s.Tris),
			Faces:               s.Stats.Faces,
			SkippedFaces:        s.Stats.SkippedFaces,
			DegenerateTriangles: s.Stats.DegenerateTriangles,
			Skipped:             map[string]int{},
		},
		Load:     loadJSON{Ms: round3(l.ms), MBPerSec: round3(l.mbPerSec())},
		Warnings: append([]string{}, s.Warnings...),
		Device:   device,
	}
	r.Scene.Meshes, r.Scene.Attributes, r.Scene.WeldedVertices = sceneExtras(s)
	r.Scene.Skipped = skippedJSON(s)
	if !s.Bounds.Empty() {
		lo, hi := [3]float32(s.Bounds.Min), [3]float32(s.Bounds.Max)
		r.Scene.Bounds = boundsJSON{Min: &lo, Max: &hi}
	}
	if b != nil {
		st := b.stats
		phases := map[string]float64{}
		for k, v := range st.Phases {
			phases[k] = round3(v)
		}
		r.Build = &buildJSON{Ms: round3(b.ms), DeviceMs: round3(st.DeviceMs()), Runs: b.runs, Phases: phases}
		r.Tree = &treeJSON{
			Nodes:                 st.Nodes,
			Leaves:                st.Leaves,
			EmptyLeaves:           st.EmptyLeaves,
			MaxDepth:              st.MaxDepth,
			References:            st.References,
			ReferencesPerTriangle: round3(st.ReferencesPerTriangle),
			SAHCost:               finite(st.SAHCost),
			DroppedTriangles:      st.DroppedTriangles,
			Limited:               st.Limited,
		}
		r.Memory = &memoryJSON{HostPeakBytes: st.HostPeakBytes, DevicePeakBytes: st.DevicePeakBytes}
	}
	return r
}

// round3 keeps three decimals: timings and ratios need no more, and the
// JSON stays readable.
func round3(x float64) float64 { return finite(math.Round(x*1000) / 1000) }

// finite maps NaN and ±Inf (which JSON cannot carry) to 0.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// maxTextWarnings is how many warnings the text report lists.
const maxTextWarnings = 10

// writeText prints the report for people.
func writeText(w io.Writer, r *report, deviceNote string) {
	s := r.Scene
	name := s.File
	if name == "" {
		name = "built-in default scene"
	}
	fmt.Fprintf(w, "scene       %s (%s)\n", termSafe(name), s.Format)
	fmt.Fprintf(w, "triangles   %s from %s faces (%s skipped, %s degenerate)\n",
		commas(s.Triangles), commas(s.Faces), commas(s.SkippedFaces), commas(s.DegenerateTriangles))
	fmt.Fprintf(w, "vertices    %s\n", commas(s.Vertices))
	writeSceneExtras(w, &s)
	if s.Bounds.Min != nil {
		fmt.Fprintf(w, "bounds      %s .. %s\n", vec3(*s.Bounds.Min), vec3(*s.Bounds.Max))
	} else {
		fmt.Fprintf(w, "bounds      empty\n")
	}
	if r.Load.MBPerSec > 0 {
		fmt.Fprintf(w, "load        %.1f ms, %.1f MB/s\n", r.Load.Ms, r.Load.MBPerSec)
	} else {
		fmt.Fprintf(w, "load        %.1f ms (generated)\n", r.Load.Ms)
	}
	for i, warn := range r.Warnings {
		if i == maxTextWarnings {
			fmt.Fprintf(w, "warning     ... and %s more (--json lists them all)\n", commas(len(r.Warnings)-i))
			break
		}
		fmt.Fprintf(w, "warning     %s\n", termSafe(warn))
	}
	if r.Build == nil {
		return
	}
	if tf := r.TreeFile; tf != nil && !tf.Written {
		fmt.Fprintf(w, "tree file   %s (%s) loaded in %.2f ms; the figures below are of the build that made it\n", tf.Path, bytesText(uint64(tf.Bytes)), tf.Ms)
	}
	dev := r.Device
	if deviceNote != "" {
		dev += " (" + deviceNote + ")"
	}
	fmt.Fprintf(w, "device      %s\n", dev)
	onDevice := ""
	if r.Build.DeviceMs != r.Build.Ms {
		onDevice = fmt.Sprintf(", %.2f ms on the device (without upload and download)", r.Build.DeviceMs)
	}
	if r.Build.Runs > 1 {
		fmt.Fprintf(w, "build       %.2f ms (median of %d builds)%s\n", r.Build.Ms, r.Build.Runs, onDevice)
	} else {
		fmt.Fprintf(w, "build       %.2f ms%s\n", r.Build.Ms, onDevice)
	}
	if len(r.Build.Phases) > 0 {
		fmt.Fprintf(w, "phases      %s\n", phaseList(r.Build.Phases))
	}
	t := r.Tree
	fmt.Fprintf(w, "nodes       %s (%s leaves, %s empty), max depth %d\n",
		commas(t.Nodes), commas(t.Leaves), commas(t.EmptyLeaves), t.MaxDepth)
	fmt.Fprintf(w, "references  %s (%.2f per triangle), %s triangles dropped\n",
		commas(t.References), t.ReferencesPerTriangle, commas(t.DroppedTriangles))
	fmt.Fprintf(w, "SAH cost    %.2f\n", t.SAHCost)
	if t.Limited != "" {
		fmt.Fprintf(w, "limited     %s\n", t.Limited)
	}
	fmt.Fprintf(w, "peak memory host %s, device %s\n", bytesText(r.Memory.HostPeakBytes), bytesText(r.Memory.DevicePeakBytes))
	if tf := r.TreeFile; tf != nil && tf.Written {
		fmt.Fprintf(w, "tree file   %s written (%s, %.2f ms)\n", tf.Path, bytesText(uint64(tf.Bytes)), tf.Ms)
	}
}

// skippedList prints skipped statements by kind, most first:
// "1,024 vt, 12 l, 3 curv".
func skippedList(m map[string]int) string {
	kinds := byValue(m)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = commas(m[k]) + " " + k
	}
	return strings.Join(parts, ", ")
}

// phaseList prints phases longest first: "split 12.1 ms, bounds 3.0 ms".
func phaseList(p map[string]float64) string {
	names := byValue(p)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %.2f ms", k, p[k])
	}
	return strings.Join(parts, ", ")
}

// byValue returns m's keys, largest value first, equal values by key.
func byValue[V int | float64](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if m[keys[a]] != m[keys[b]] {
			return m[keys[a]] > m[keys[b]]
		}
		return keys[a] < keys[b]
	})
	return keys
}

func vec3(v [3]float32) string {
	return fmt.Sprintf("(%.6g, %.6g, %.6g)", v[0], v[1], v[2])
}

// commas writes n with thousands separators: 69451 -> "69,451".
func commas(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// bytesText writes a byte count in binary units: "12.3 MiB".
func bytesText(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	x, u := float64(n), 0
	for x >= unit && u < 4 {
		x /= unit
		u++
	}
	return fmt.Sprintf("%.1f %s", x, [...]string{"B", "KiB", "MiB", "GiB", "TiB"}[u])
}
