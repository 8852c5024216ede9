package kdtree

import (
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

var (
	traceAB     = flag.String("trace-ab", "", "TestTraceAB: scenes to time (bunny, sponza, conference, comma-separated, or all)")
	traceABWhat = flag.String("trace-ab-walks", "safe,finite", "TestTraceAB: the two walks to compare, A,B, of safe (descendSafe), finite (descendFinite, one ray at a time), lanes (traceLanes) and packets (tracePackets), and lanes-go and packets-go (the same without AVX2)")
)

// threadCPU returns the calling thread's CPU time in nanoseconds (the
// goroutine must be locked to its thread).
func threadCPU() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// TestTraceAB times two walks (-trace-ab-walks A,B; default descendSafe
// against descendFinite) on the shared scenes' ray sets, one thread, in 41
// rounds of 20,000 rays that alternate A-B and B-A, and prints the median
// Mrays/s of each in thread CPU time and the median and quartiles of the
// per-round ratio B/A. It runs only with -trace-ab (go test ./kdtree -run
// TestTraceAB -v -args -trace-ab=all -trace-ab-walks=finite,lanes).
func TestTraceAB(t *testing.T) {
	if *traceAB == "" {
		t.Skip("pass -trace-ab to time the traversals")
	}
	walks := strings.Split(*traceABWhat, ",")
	if len(walks) != 2 {
		t.Fatalf("-trace-ab-walks %q: want two walks A,B", *traceABWhat)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const rounds, chunk = 41, 20_000
	var ls lanes
	var p packet
	sink := answers{occluded: make([]bool, chunk)}
	walk := func(tree *Tree, rs []Ray, anyHit bool, name string) {
		switch name {
		case "safe", "finite":
			for i := range rs {
				tree.trace(&rs[i], anyHit, nil, name == "finite")
			}
		case "lanes", "lanes-go":
			defer setAVX2(name == "lanes")()
			tree.traceLanes(&ls, rs, 0, len(rs), anyHit, &sink)
		case "packets", "packets-go":
			defer setAVX2(name == "packets")()
			tree.tracePackets(&p, rs, 0, len(rs), anyHit, &sink)
		default:
			t.Fatalf("-trace-ab-walks: unknown walk %q", name)
		}
	}
	for _, sc := range traceBenchScenes {
		if *traceAB != "all" && !strings.Contains(*traceAB, sc.name) {
			continue
		}
		tree, sets := benchTreeRays(t, sc.file)
		for _, set := range []string{"primary", "random"} {
			rays := sets[set]
			for _, anyHit := range []bool{false, true} {
				var a, b, ratio []float64
				for r := 0; r < rounds; r++ {
					lo := (r * chunk * 7) % (len(rays) - chunk)
					rs := rays[lo : lo+chunk]
					run := func(name string) float64 {
						t0 := threadCPU()
						walk(tree, rs, anyHit, name)
						return float64(threadCPU() - t0)
					}
					var ta, tb float64
					if r%2 == 0 {
						ta = run(walks[0])
						tb = run(walks[1])
					} else {
						tb = run(walks[1])
						ta = run(walks[0])
					}
					a = append(a, chunk/ta*1e3)
					b = append(b, chunk/tb*1e3)
					ratio = append(ratio, ta/tb)
				}
				slices.Sort(a)
				slices.Sort(b)
				slices.Sort(ratio)
				fmt.Printf("%-10s %-7s any=%-5v %s %6.2f %s %6.2f Mrays/s  %s/%s %.2f (quartiles %.2f-%.2f)\n", sc.name, set, anyHit,
					walks[0], a[rounds/2], walks[1], b[rounds/2], walks[1], walks[0], ratio[rounds/2], ratio[rounds/4], ratio[3*rounds/4])
			}
		}
	}
}
