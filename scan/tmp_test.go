package scan
import ("testing";"time";"github.com/kdbuild/kdbuild/kernels/exec")
func TestTmpSpeed(t *testing.T){
	n := 1<<24
	src := benchInput(n, 1); dst := make([]uint32, n)
	ex := exec.Go(2)
	for _, tile := range []int{1<<16, 1<<18, 1<<20, 1<<23, 1<<16, 1<<18, 1<<20, 1<<23} {
	parallelTile = tile
	for _, v := range []string{"cpu-serial","cpu-parallel"} {
		best := time.Hour
		for r := 0; r < 15; r++ {
			t0 := time.Now(); ExclusiveVariant(ex, v, exec.Wrap(dst), exec.Wrap(src)); d := time.Since(t0)
			best = min(best, d)
		}
		t.Log(tile, v, best)
	}
	}
}
