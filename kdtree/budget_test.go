package kdtree

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/scenes"
)

// budgetOrdinary lists the scenes the duplication budget must leave alone:
// the builder tests' procedural scenes, larger ordinary procedural ones
// and every shared scene present.
func budgetOrdinary(t *testing.T) []*scenes.Scene {
	list := btProcedural()
	for _, spec := range []string{"coplanar:20000:3", "huge:20000:9", "soup:50000:2", "identical:5000", "icosphere:5",
		"grid:2:2:2:proc:icosphere:3"} {
		s, err := scenes.Procedural(spec)
		require.NoError(t, err, spec)
		list = append(list, s)
	}
	for _, file := range sharedFiles {
		if s := btTrySharedScene(t, file); s != nil {
			list = append(list, s)
		}
	}
	return list
}

// The default budget changes no ordinary scene's tree: node for node and
// reference for reference the tree of a build without a budget, and
// Stats.Limited empty.
func TestBudgetLeavesOrdinaryScenesAlone(t *testing.T) {
	for _, s := range budgetOrdinary(t) {
		if testing.Short() && len(s.Tris) > 100_000 {
			continue
		}
		want, err := Build(context.Background(), s, Options{MaxDuplication: -1})
		require.NoError(t, err, s.Name)
		got, err := Build(context.Background(), s, Options{})
		require.NoError(t, err, s.Name)
		require.Equal(t, len(want.Nodes), len(got.Nodes), "%s: node count", s.Name)
		require.True(t, slices.Equal(want.Nodes, got.Nodes), "%s: nodes differ", s.Name)
		require.True(t, slices.Equal(want.Refs, got.Refs), "%s: references differ", s.Name)
		require.Empty(t, got.Stats().Limited, s.Name)
		require.Empty(t, want.Stats().Limited, s.Name)
	}
}

// On slivers the budget acts: every large-phase level holds at most
// 2·MaxDuplication references per triangle, the tree is
// valid, has fewer references than without a budget, and Stats.Limited
// says what the budget did.
func TestBudgetBoundsSlivers(t *testing.T) {
	s := scenes.Slivers(8000, 5)
	free, err := Build(context.Background(), s, Options{MaxDuplication: -1})
	require.NoError(t, err)
	require.Empty(t, free.Stats().Limited)
	for _, dup := range []int{2, 8, DefaultMaxDuplication} {
		var worst float64
		tr, err := build(context.Background(), s, Options{MaxDuplication: dup}, func(nodes []refbuild.LNode, _ []refbuild.Decision) {
			refs := 0
			for _, x := range nodes {
				refs += int(x.Cnt)
			}
			worst = max(worst, float64(refs)/float64(len(s.Tris)))
		})
		require.NoError(t, err)
		require.NoError(t, tr.Validate())
		st := tr.Stats()
		require.LessOrEqual(t, worst, float64(2*dup), "MaxDuplication %d", dup)
		require.Less(t, st.References, free.Stats().References, "MaxDuplication %d", dup)
		require.True(t, strings.HasPrefix(st.Limited, "duplication budget: "), "MaxDuplication %d: Limited %q", dup, st.Limited)
		require.Contains(t, st.Limited, "Options.MaxDuplication")
		t.Logf("MaxDuplication %d: %.2f refs/tri at the fullest level, %.2f in the tree, SAH %.1f (no budget: %.2f, %.1f); %s",
			dup, worst, st.ReferencesPerTriangle, st.SAHCost, free.Stats().ReferencesPerTriangle, free.Stats().SAHCost, st.Limited)
	}
}

// A tree file keeps MaxDuplication; a version 1 file, written before the
// budget existed, reads as -1 (no budget).
func TestBudgetInTreeFile(t *testing.T) {
	s := scenes.Slivers(300, 2)
	for _, dup := range []int{-1, 3, DefaultMaxDuplication} {
		tr, err := Build(context.Background(), s, Options{MaxDuplication: dup})
		require.NoError(t, err)
		var buf bytes.Buffer
		_, err = tr.WriteTo(&buf)
		require.NoError(t, err)
		got, err := ReadTree(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err)
		require.Equal(t, dup, got.Options().MaxDuplication)
		require.Equal(t, tr.Stats().Limited, got.Stats().Limited)
		if dup == 3 {
			b := buf.Bytes()
			binary.LittleEndian.PutUint32(b[8:], 1)
			binary.LittleEndian.PutUint32(b[112:], 0)
			binary.LittleEndian.PutUint32(b[124:], crc32.Checksum(b[:124], crc32.MakeTable(crc32.Castagnoli)))
			old, err := ReadTree(bytes.NewReader(b))
			require.NoError(t, err)
			require.Equal(t, -1, old.Options().MaxDuplication)
		}
	}
}
