package refbuild

import (
	"fmt"
	"sync/atomic"

	"github.com/kdbuild/kdbuild/kernels/consts"
)

// The duplication budget bounds the references of the large-node phase.
// The root may hold MaxDuplication references per triangle; a split node
// shares its budget A between its children in proportion to the
// references each holds after clipping,
//
//	A_child = ⌊A · c_child / (c_left + c_right)⌋,
//
// and a large node holding more references than its budget becomes a
// leaf (decide). The budgets of a level's nodes sum to at most the root's,
// and a node splits only within its budget (each of its references going
// to at most both children), so every level of the large phase holds at
// most 2 · MaxDuplication references per triangle and the phase costs
// O(MaxDuplication · n) per level; at the default (32) the memory guard
// (64 per triangle at one level) never acts. Ordinary scenes stay far inside the budget (the product of the
// duplication factors along any root-to-node path is small), so their
// trees are those of an unbounded build; scenes whose references multiply
// level after level (long thin triangles in every direction) get larger
// leaves instead of n^1.5 references. Integer arithmetic, so the CUDA
// kernels (kdtree_tail_f32's next_node) compute the same bits.

// NoBudget is a budget without limit: a node holding it never becomes a
// leaf for its budget, and its children inherit it. A root budget at or
// above it (MaxDuplication · n ≥ 2^32 − 2, or MaxDuplication < 0) is none.
const NoBudget = consts.PadBudget - 1

// RootBudget is the root's budget for n references and maxDup references
// per triangle (negative: no budget).
func RootBudget(n int, maxDup int) uint32 {
	if maxDup < 0 || n <= 0 {
		return NoBudget
	}
	return uint32(min(uint64(n)*uint64(maxDup), uint64(NoBudget)))
}

// ChildBudget is the budget of a child holding c of the sum references
// both children of a node of budget a hold (sum > 0; c <= sum).
func ChildBudget(a, c, sum uint32) uint32 {
	if a == NoBudget || sum == 0 {
		return a
	}
	return uint32(uint64(a) * uint64(c) / uint64(sum))
}

// RootBudgetOf is the root's budget for n references with the build's
// MaxDuplication.
func (b *Builder) RootBudgetOf(n int) uint32 { return RootBudget(n, b.Opt.MaxDuplication) }

// OverBudget reports whether decide makes a large-phase node at depth,
// holding cnt references with budget a, a leaf for its budget alone:
// more than SmallNode references, above MaxDepth, more than its budget.
func (b *Builder) OverBudget(cnt, a uint32, depth int) bool {
	return int(cnt) > b.Opt.SmallNode && depth < b.Opt.MaxDepth && cnt > a
}

// AddBudgetLeaves adds leaves nodes holding refs references to the nodes
// the budget made leaves (safe from several goroutines).
func (b *Builder) AddBudgetLeaves(leaves, refs int64) {
	if leaves > 0 {
		b.budget.leaves.Add(leaves)
		b.budget.refs.Add(refs)
	}
}

// ResetBudgetLeaves forgets the nodes counted so far (a CUDA build that
// starts its large phase again).
func (b *Builder) ResetBudgetLeaves() {
	b.budget.leaves.Store(0)
	b.budget.refs.Store(0)
}

// budgetTally counts the nodes the budget made leaves and their
// references (Stats.Limited).
type budgetTally struct {
	leaves, refs atomic.Int64
}

// CountBudget adds the large-phase nodes that the budget made leaves to
// the build's tally (both executors call it on every level's nodes).
func (b *Builder) CountBudget(nodes []LNode) {
	var l, r int64
	for i := range nodes {
		if x := &nodes[i]; b.OverBudget(x.Cnt, x.Budget, x.Depth) {
			l++
			r += int64(x.Cnt)
		}
	}
	b.AddBudgetLeaves(l, r)
}

// LimitedText returns Stats.Limited: "" when no guard acted, else what
// the duplication budget and the memory guard did.
func (b *Builder) LimitedText() string {
	s := ""
	if l := b.budget.leaves.Load(); l > 0 {
		s = fmt.Sprintf("duplication budget: %d large nodes holding %d references became leaves, "+
			"over their share of the budget of %d references per triangle (Options.MaxDuplication)",
			l, b.budget.refs.Load(), b.Opt.MaxDuplication)
	}
	if b.Limited != "" {
		if s != "" {
			s += "; "
		}
		s += b.Limited
	}
	return s
}
