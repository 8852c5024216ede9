package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kdbuild/kdbuild/scenes"
)

// meshJSON is one mesh of scene.meshes.
type meshJSON struct {
	Name      string `json:"name"`
	FirstTri  int    `json:"first_triangle"`
	Triangles int    `json:"triangles"`
}

// attrJSON counts one kind of attribute of scene.attributes.
type attrJSON struct {
	Present int `json:"present"` // in the files
	Kept    int `json:"kept"`    // in the scene (--attributes)
	Skipped int `json:"skipped"` // present - kept
}

// sceneExtras returns the meshes, attribute counts and welded vertices of s
// for the report.
func sceneExtras(s *scenes.Scene) ([]meshJSON, map[string]attrJSON, int) {
	meshes := make([]meshJSON, 0, len(s.Meshes))
	for _, m := range s.Meshes {
		meshes = append(meshes, meshJSON{Name: m.Name, FirstTri: m.FirstTri, Triangles: m.NumTris})
	}
	if len(s.Meshes) == 0 {
		meshes = append(meshes, meshJSON{Name: s.Name, Triangles: len(s.Tris)})
	}
	attrs := map[string]attrJSON{}
	for k, a := range s.Stats.Attributes {
		attrs[k] = attrJSON{Present: a.Present, Kept: a.Kept, Skipped: a.Present - a.Kept}
	}
	return meshes, attrs, s.Stats.WeldedVertices
}

// writeSceneExtras prints the meshes (when more than one), the attributes
// and the welded vertices, each only when there is something to say.
func writeSceneExtras(w io.Writer, s *sceneJSON) {
	if n := len(s.Meshes); n > 1 {
		var names []string
		for i, m := range s.Meshes {
			if i == 4 {
				names = append(names, fmt.Sprintf("... %d more", n-i))
				break
			}
			names = append(names, fmt.Sprintf("%s (%s)", termSafe(m.Name), commas(m.Triangles)))
		}
		fmt.Fprintf(w, "meshes      %d: %s\n", n, strings.Join(names, ", "))
	}
	if len(s.Attributes) > 0 {
		kinds := make([]string, 0, len(s.Attributes))
		for k := range s.Attributes {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		var parts []string
		for _, k := range kinds {
			a := s.Attributes[k]
			parts = append(parts, fmt.Sprintf("%s %s of %s kept", k, commas(a.Kept), commas(a.Present)))
		}
		fmt.Fprintf(w, "attributes  %s\n", strings.Join(parts, ", "))
	}
	if s.WeldedVertices > 0 {
		fmt.Fprintf(w, "welded      %s vertices removed\n", commas(s.WeldedVertices))
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintf(w, "skipped     %s\n", termSafe(skippedList(s.Skipped)))
	}
}

// skippedJSON is Stats.Skipped, never null.
func skippedJSON(s *scenes.Scene) map[string]int {
	m := map[string]int{}
	for k, v := range s.Stats.Skipped {
		m[k] = v
	}
	return m
}
