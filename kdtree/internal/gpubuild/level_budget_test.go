package gpubuild

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
)

// levelBook.budgets follows the budget as book and levelGo do: the next
// level's budgets in lb.nextB are those book gives the children it makes,
// and the leaves over their budget are counted with their references.
func TestLevelBookBudgets(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, nn := range []int{1, 7, bookGrain + 5} {
		l := makeBookLevel(rng, nn, 1, 0.5)
		bud := make([]uint32, nn)
		var wantLeaves, wantRefs int64
		for i := range l.nodes {
			bud[i] = uint32(rng.Intn(300))
			if rng.Intn(10) == 0 {
				bud[i] = refbuild.NoBudget
			}
			l.nodes[i].Budget = bud[i]
			if l.h[3*i] == refbuild.FateLeaf && l.nodes[i].Cnt > bud[i] {
				wantLeaves++
				wantRefs += int64(l.nodes[i].Cnt)
			}
		}
		lb := &levelBook{h: append([]uint32(nil), l.h...)}
		require.NoError(t, lb.count(4, nodeCounts(l.nodes), 0))
		leaves, refs := lb.budgets(nodeCounts(l.nodes), bud, func(c, a uint32) bool { return c > a })
		require.Equal(t, wantLeaves, leaves, "nn %d", nn)
		require.Equal(t, wantRefs, refs, "nn %d", nn)
		rs := &refbuild.Records{}
		for range nn + 1 {
			rs.Add()
		}
		next, _ := lb.book(4, l.nodes, rs, nil, nil)
		require.Len(t, lb.nextB, len(next))
		for j := range next {
			require.Equal(t, next[j].Budget, lb.nextB[j], "nn %d, child %d", nn, j)
			require.Equal(t, next[j].Cnt, lb.next[j], "nn %d, child %d", nn, j)
		}
	}
}
