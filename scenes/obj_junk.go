package scenes

import "fmt"

// maxJunk is how many statements of unknown keywords an OBJ file may have
// before its first `v` or `f`: past it the input is not OBJ (junk, a binary
// file, the wrong extension) and the load stops early instead of reading it
// all.
const maxJunk = 1000

// maxSkippedKinds caps the keywords Stats.Skipped counts by name; further
// kinds are counted under otherSkipped, so that junk cannot grow the map.
const maxSkippedKinds = 64

// otherSkipped is the Stats.Skipped key of the kinds past maxSkippedKinds.
const otherSkipped = "(other)"

// objKeywords are the statements of the OBJ specification (and its common
// extensions) that are not geometry the loader reads.
var objKeywords = map[string]bool{
	"vt": true, "vn": true, "vp": true, "g": true, "o": true, "s": true, "usemtl": true, "mtllib": true,
	"l": true, "p": true, "curv": true, "curv2": true, "surf": true, "cstype": true, "deg": true,
	"bmat": true, "step": true, "parm": true, "trim": true, "hole": true, "scrv": true, "sp": true,
	"end": true, "con": true, "mg": true, "lod": true, "bevel": true, "c_interp": true, "d_interp": true,
	"trace_obj": true, "shadow_obj": true, "ctech": true, "stech": true, "maplib": true, "usemap": true,
	"call": true, "csh": true,
}

// objJunk watches an OBJ file's statements for input that is not OBJ and
// for the scene limit.
type objJunk struct {
	guard      sceneGuard
	statements int  // statements seen (not blank lines or comments)
	geometry   bool // a `v` or `f` statement was seen
	unknown    int  // statements of keywords unknown to OBJ before any geometry
	firstLine  int  // line of the first of them
	first      string
}

// see looks at one statement's keyword (empty for blank lines and
// comments).
func (j *objJunk) see(p *objParser, kw []byte, line int) error {
	if len(kw) == 0 {
		return nil
	}
	j.statements++
	if err := j.guard.grow(p.s, 0, line); err != nil {
		return err
	}
	if j.geometry || (len(kw) == 1 && (kw[0] == 'v' || kw[0] == 'f')) {
		j.geometry = true
		return nil
	}
	if objKeywords[string(kw)] {
		return nil
	}
	if j.unknown == 0 {
		j.first, j.firstLine = clip(kw), line
	}
	j.unknown++
	if j.unknown > maxJunk {
		return parseErr(p.name, line, "not an OBJ file: %d statements of unknown keywords before any v or f (the first %q on line %d)",
			j.unknown, j.first, j.firstLine)
	}
	return nil
}

// checkGeometry is the end-of-file check of a file without a `v` or `f`:
// an error when a statement's keyword is unknown to OBJ (the input is not
// OBJ), else a warning (an empty or comment-only file, or one of material
// and group statements only).
func (p *objParser) checkGeometry() error {
	j := &p.junk
	switch {
	case j.geometry:
		return nil
	case j.unknown > 0:
		return parseErr(p.name, j.firstLine, "not an OBJ file: no v or f statement, and %d statements of unknown keywords (the first %q)",
			j.unknown, j.first)
	case j.statements == 0:
		p.s.Warnings = append(p.s.Warnings, fmt.Sprintf("%s: no statements (empty or comments only): 0 triangles", p.name))
	default:
		p.s.Warnings = append(p.s.Warnings, fmt.Sprintf("%s: no v or f statement: 0 triangles", p.name))
	}
	return nil
}

// readErr is the load's error for a failed read at line.
func (p *objParser) readErr(err error, line int) error { return inputErr(p.name, line, err) }

// skippedKey is the Stats.Skipped key for keyword kw: kw itself while
// fewer than maxSkippedKinds kinds are counted, else otherSkipped.
func skippedKey(m map[string]int, kw []byte) string {
	if _, ok := m[string(kw)]; ok {
		return string(kw)
	}
	if len(m) >= maxSkippedKinds {
		return otherSkipped
	}
	return clip(kw)
}
