package refbuild

import "github.com/kdbuild/kdbuild/kernels/exec"

// Options are kdtree.Options resolved (every default filled in and every
// value in range), the part both builders read.
type Options struct {
	Executor                                 exec.Executor
	TraversalCost, IntersectCost, EmptyBonus float32
	SmallNode, Bins, MaxDepth                int
	// MaxDuplication is the root's duplication budget in references per
	// triangle (RootBudget; negative: none).
	MaxDuplication int
	// Progress, when not nil, receives the build's progress (see Builder.Report).
	Progress func(Progress)
}

// Progress is kdtree.Progress (same fields, converted at the boundary).
type Progress struct {
	Phase    string
	Fraction float64
	Level    int
	Nodes    int
}
