package scan

import "testing"

// MadeStateWords: one word per 1024-item tile and one, at the tile edges.
func TestMadeStateWords(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{0, 1}, {1, 2}, {1023, 2}, {1024, 2}, {1025, 3}, {2048, 3}, {2049, 4}, {1 << 20, 1025},
	} {
		if got := MadeStateWords(c.n); got != c.want {
			t.Errorf("MadeStateWords(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
