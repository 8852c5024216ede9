package scenes

import (
	"bytes"
	"fmt"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	data := readShared(t, "scenes/sponza-dabrovic.obj.gz")
	opts := []LoadOptions{{}, {Names: true}, {Normals: true}, {UVs: true}, {Normals: true, UVs: true, Names: true}}
	cpu := make([][]float64, len(opts))
	for i := 0; i < 30; i++ {
		for k, o := range opts {
			runtime.GC()
			c0 := cpuNow()
			s, err := loadOBJ(bytes.NewReader(data), "s", &o)
			if err != nil || len(s.Tris) != 66454 {
				t.Fatal(err)
			}
			cpu[k] = append(cpu[k], float64(cpuNow()-c0)/1e6)
		}
	}
	for k, o := range opts {
		sort.Float64s(cpu[k])
		fmt.Printf("%+v: cpu ms min %.1f q1 %.1f median %.1f\n", o, cpu[k][0], cpu[k][7], cpu[k][15])
	}
}
