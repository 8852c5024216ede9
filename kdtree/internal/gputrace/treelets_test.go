package gputrace

import (
	"math/rand/v2"
	"testing"
)

// randomTree returns the depth-first node words of a random tree of at
// most depth levels (leaves with up to 3 references each).
func randomTree(r *rand.Rand, depth int) []uint32 {
	var w []uint32
	refs := uint32(0)
	var grow func(d int)
	grow = func(d int) {
		i := len(w) / 2
		if d == depth || r.IntN(4) == 0 {
			k := uint32(r.IntN(4))
			w = append(w, refs, k<<2|3)
			refs += k
			return
		}
		w = append(w, r.Uint32(), uint32(r.IntN(3)))
		grow(d + 1)
		w[2*i+1] |= uint32(len(w)/2) << 2
		grow(d + 1)
	}
	grow(0)
	return w
}

// The treelet layout holds the same tree (every node's words, the same
// children) with each pair of children next to each other, the children
// of a treelet's three levels in one aligned 16-node block.
func TestTreelets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	trees := [][]uint32{nil, {0, 3}, {5, 2<<2 | 3}, chain(70, 2)}
	for k := 0; k < 20; k++ {
		trees = append(trees, randomTree(r, 3+k))
	}
	for ti, src := range trees {
		dst, err := treelets(src)
		if err != nil {
			t.Fatal(err)
		}
		if len(src) == 0 {
			if len(dst) != 0 {
				t.Fatalf("tree %d: empty tree laid out as %d words", ti, len(dst))
			}
			continue
		}
		if len(dst)%(2*treeletBlock) != 0 {
			t.Errorf("tree %d: %d words, not whole blocks", ti, len(dst))
		}
		// walk checks node s of src against node d of dst; level is d's
		// level in its treelet, block its treelet's block.
		var walk func(s, d, level, block uint32)
		walk = func(s, d, level, block uint32) {
			sw0, sw1 := src[2*s], src[2*s+1]
			dw0, dw1 := dst[2*d], dst[2*d+1]
			if sw1&3 == 3 {
				if dw0 != sw0 || dw1 != sw1 {
					t.Fatalf("tree %d: leaf %d is (%d, %#x) at %d, want (%d, %#x)", ti, s, dw0, dw1, d, sw0, sw1)
				}
				return
			}
			c := dw1 >> 2
			if dw0 != sw0 || dw1&3 != sw1&3 || c == 0 {
				t.Fatalf("tree %d: interior %d is (%d, %#x) at %d, want split %d axis %d", ti, s, dw0, dw1, d, sw0, sw1&3)
			}
			if level == treeletLevels {
				level, block = 0, c-c%treeletBlock
			}
			if c/treeletBlock != block/treeletBlock || (c+1)/treeletBlock != block/treeletBlock {
				t.Fatalf("tree %d: children of node %d at %d, outside its treelet's block %d", ti, s, c, block)
			}
			walk(s+1, c, level+1, block)
			walk(sw1>>2, c+1, level+1, block)
		}
		walk(0, 0, treeletLevels, 0)
	}
}
