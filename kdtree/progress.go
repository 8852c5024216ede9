package kdtree

// Progress is one report of a build's progress (Options.Progress in the
// phase-and-fraction form): Phase is "prepare", "large", "small" or
// "layout"; Fraction in [0, 1] never decreases over a build; Level and
// Nodes are the large-phase level and its nodes (the small roots in the
// small phase).
type Progress struct {
	Phase    string
	Fraction float64
	Level    int
	Nodes    int
}

// LevelProgress adapts a Progress callback to the per-level form of
// Options.Progress: every call reports the large phase's level (or the
// small phase, once the levels end) with no fraction known.
func LevelProgress(f func(Progress)) func(level, activeNodes int) {
	if f == nil {
		return nil
	}
	return func(level, nodes int) { f(Progress{Phase: "large", Level: level, Nodes: nodes}) }
}
