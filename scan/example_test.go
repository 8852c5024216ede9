package scan_test

import (
	"fmt"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scan"
)

func ExampleExclusive() {
	ex := exec.Go(0)
	src := exec.Wrap([]uint32{3, 1, 4, 1, 5})
	dst := exec.Wrap(make([]uint32, 5))
	if err := scan.Exclusive(ex, dst, src); err != nil {
		fmt.Println(err)
	}
	fmt.Println(dst.Host())
	// Output: [0 3 4 8 9]
}

func ExampleSegmentedInclusive() {
	ex := exec.Go(0)
	src := exec.Wrap([]int32{1, 2, 3, 4, 5, 6})
	heads := exec.Wrap([]uint32{1, 0, 1, 1, 0, 0})
	dst := exec.Wrap(make([]int32, 6))
	if err := scan.SegmentedInclusive(ex, dst, src, heads); err != nil {
		fmt.Println(err)
	}
	fmt.Println(dst.Host())
	// Output: [1 3 3 4 9 15]
}

func ExampleCompact() {
	ex := exec.Go(0)
	src := exec.Wrap([]uint32{10, 11, 12, 13, 14})
	flags := exec.Wrap([]uint32{1, 0, 0, 7, 1})
	dst := exec.Wrap(make([]uint32, 5))
	k, err := scan.Compact(ex, dst, src, flags)
	fmt.Println(dst.Host()[:k], err)
	// Output: [10 13 14] <nil>
}

func ExampleSortPairs() {
	ex := exec.Go(0)
	keys := exec.Wrap([]uint32{5, 1, 5, 0})
	vals := exec.Wrap([]uint32{0, 1, 2, 3})
	if err := scan.SortPairs(ex, keys, vals); err != nil {
		fmt.Println(err)
	}
	fmt.Println(keys.Host(), vals.Host())
	// Output: [0 1 5 5] [3 1 0 2]
}

// A Scanner keeps the scratch of repeated calls: the kd-tree builder's
// pattern of one scan per level with no allocation once it is warm.
func ExampleNewScanner() {
	ex := exec.Go(0)
	sc, err := scan.NewScanner(ex, 1<<10)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sc.Free()
	counts := exec.Wrap([]uint32{2, 0, 3, 1})
	offsets := exec.Wrap(make([]uint32, 4))
	total := exec.Wrap(make([]uint32, 1))
	for level := 0; level < 2; level++ {
		if err := scan.ExclusiveTotalTo(sc, offsets, counts, total); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(offsets.Host(), total.Host()[0])
	// Output: [0 2 2 5] 6
}
