package scan
import ("testing";"time")
func TestTmpParts(t *testing.T){
	n := 1<<24
	src := benchInput(n, 1); dst := make([]uint32, n)
	best := func(f func()) time.Duration { b := time.Hour; for r:=0;r<15;r++ { t0:=time.Now(); f(); b=min(b,time.Since(t0)) }; return b }
	for k := 0; k < 2; k++ {
	t.Log("serial", best(func(){ serialExclusive(dst, src, 0) }))
	t.Log("parallel", best(func(){ parallelScan(2, dst, src, false) }))
	t.Log("pass1 only", best(func(){ twoPass(2, n, func(c, lo, hi int){ _ = sum(src[lo:hi]) }, func(int){}, func(c, lo, hi int){}) }))
	t.Log("pass2 only", best(func(){ twoPass(2, n, func(c, lo, hi int){}, func(int){}, func(c, lo, hi int){ serialExclusive(dst[lo:hi], src[lo:hi], 0) }) }))
	t.Log("copy", best(func(){ copy(dst, src) }))
	}
}
