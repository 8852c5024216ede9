package refbuild

import "testing"

func TestRootBudget(t *testing.T) {
	for _, c := range []struct {
		n, dup int
		want   uint32
	}{
		{0, 32, NoBudget}, {1, 32, 32}, {1000, 32, 32000}, {1000, -1, NoBudget}, {1000, 0, 0},
		{1 << 27, 32, NoBudget}, {1<<27 - 1, 32, NoBudget - 30},
	} {
		if got := RootBudget(c.n, c.dup); got != c.want {
			t.Errorf("RootBudget(%d, %d) = %d, want %d", c.n, c.dup, got, c.want)
		}
	}
}

// Children's budgets: the parent's shared in proportion, rounded down, so
// that they never sum above it; NoBudget passes on unchanged; a child
// holding c of a split within budget (sum <= a) gets at least c.
func TestChildBudget(t *testing.T) {
	for _, c := range []struct{ a, cl, cr, wantL, wantR uint32 }{
		{100, 30, 70, 30, 70}, {100, 50, 50, 50, 50}, {10, 3, 4, 4, 5}, {7, 0, 7, 0, 7},
		{NoBudget, 5, 9, NoBudget, NoBudget}, {NoBudget - 1, 1 << 30, 1 << 30, NoBudget/2 - 1, NoBudget/2 - 1},
		{5, 6, 6, 2, 2},
	} {
		l, r := ChildBudget(c.a, c.cl, c.cl+c.cr), ChildBudget(c.a, c.cr, c.cl+c.cr)
		if l != c.wantL || r != c.wantR {
			t.Errorf("ChildBudget(%d, %d|%d) = %d, %d; want %d, %d", c.a, c.cl, c.cr, l, r, c.wantL, c.wantR)
		}
		if c.a != NoBudget && uint64(l)+uint64(r) > uint64(c.a) {
			t.Errorf("budget %d: children %d + %d exceed it", c.a, l, r)
		}
		if c.a != NoBudget && c.cl+c.cr <= c.a && (l < c.cl || r < c.cr) {
			t.Errorf("budget %d, split %d|%d within it: children's budgets %d, %d below their counts", c.a, c.cl, c.cr, l, r)
		}
	}
}
