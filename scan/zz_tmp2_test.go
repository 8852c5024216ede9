package scan
import ("testing";"time";"sync/atomic")
func TestTmpHelper(t *testing.T){
	n := 1<<24
	src := benchInput(n, 1); dst := make([]uint32, n)
	p := newPool(1)
	var mine atomic.Int64
	t0 := time.Now()
	for r := 0; r < 100; r++ {
		j := &job{chunks: 16}
		base := (r % 16) * 16 * 65536
		j.fn = func(c int) { lo := base + c*65536; serialExclusive(dst[lo:lo+65536], src[lo:lo+65536], 0) }
		p.cur.Store(j)
		for _, ch := range p.wake { select { case ch <- struct{}{}: default: } }
		for { c := int(j.next.Add(1)-1); if c >= j.chunks { break }; j.fn(c); j.done.Add(1); mine.Add(1) }
		for j.done.Load() < 16 { }
	}
	p.close()
	t.Log(time.Since(t0), "caller did", mine.Load(), "of", 1600)
}
