package reduce_test

import (
	"fmt"
	"math"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
)

func ExampleMinMax() {
	ex := exec.Go(1)
	nan := float32(math.NaN())
	lo, hi, _ := reduce.MinMax(ex, exec.Wrap([]float32{3, nan, float32(math.Copysign(0, -1)), 0, -2.5}))
	fmt.Println(lo, hi)
	lo, hi, _ = reduce.MinMax(ex, exec.Wrap([]float32{nan}))
	fmt.Println(lo, hi)
	// Output:
	// -2.5 3
	// +Inf -Inf
}

func ExampleSegmentedMin() {
	ex := exec.Go(1)
	src := exec.Wrap([]float32{5, 1, 7, 2, 9})
	dst := exec.Wrap(make([]float32, 3))
	_ = reduce.SegmentedMin(ex, dst, src, exec.Wrap([]uint32{0, 2, 2, 5}))
	fmt.Println(dst.Host())
	// Output: [1 +Inf 2]
}
