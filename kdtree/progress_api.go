package kdtree

// Progress is how far a build is, as Options.Progress receives it.
type Progress struct {
	// Phase is "prepare", "large" (the large-node levels), "small" (the
	// small-node subtrees) or "layout" (the final arrays).
	Phase string
	// Fraction estimates the part of the whole build done, in [0, 1],
	// never lower than the call before; the last call of a build that
	// succeeds has 1.
	Fraction float64
	// Level is the large phase's level (the root's is 0); in the small
	// phase and after, the number of large levels.
	Level int
	// Nodes is the large level's nodes; in the small phase the small
	// roots (their subtrees built so far on the Go executor, all of them
	// on the CUDA one), and 0 elsewhere.
	Nodes int
}
