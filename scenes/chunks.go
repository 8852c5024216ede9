package scenes

// chunks is an append-only list stored in fixed-size blocks, so that growing
// it never copies what it holds; all returns one slice of the exact length
// (one copy). Streaming loaders use it for attribute arrays whose final size
// is unknown.
type chunks[T any] struct {
	full []([]T)
	cur  []T
	n    int
}

// chunkLen is the number of elements per block.
const chunkLen = 1 << 14

func (c *chunks[T]) add(v T) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, chunkLen)
	}
	c.cur = append(c.cur, v)
	c.n++
}

// all returns the elements in order (nil when there are none).
func (c *chunks[T]) all() []T {
	if c.n == 0 {
		return nil
	}
	out := make([]T, 0, c.n)
	for _, b := range c.full {
		out = append(out, b...)
	}
	return append(out, c.cur...)
}
