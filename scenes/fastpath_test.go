package scenes

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

// TestOBJFastPathsAgree checks vertexFast and faceFast against the general
// vertex and face parsers on random statements: where a fast path accepts,
// the general parser must accept with the same result.
func TestOBJFastPathsAgree(t *testing.T) {
	r := rng{3}
	pick := func(xs []string) string { return xs[r.next()%uint64(len(xs))] }
	nums := []string{"0", "-0", "1", "1.5", "-2.25", ".5", "1.", "1e3", "1E-5", "+3", "0.100000001", "1e40", "nan", "x", "1.#INF", "3e", "0x1p3", "123456789012345678901234", "7#", "1e-50"}
	idx := []string{"1", "2", "3", "-1", "-2", "-4", "0", "9", "1/1", "2//3", "3/4/5", "1/0", "1//0", "1/", "1//", "1/2/", "x", "1/x", "+2", "1/1/1/1", "-0", "99999999999999", "2#"}
	seps := []string{" ", "\t", "  ", " \t"}
	base := func() *objParser {
		p := &objParser{name: "t", s: &Scene{Stats: Stats{Skipped: map[string]int{}}}}
		for i := 0; i < 5; i++ {
			p.s.Verts = append(p.s.Verts, mgl32.Vec3{float32(i), 0, 0})
		}
		return p
	}
	accepted := [2]int{}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		isV := i%2 == 0
		n := int(r.next() % 9)
		for k := 0; k < n; k++ {
			b.WriteString(pick(seps))
			if isV {
				b.WriteString(pick(nums))
			} else {
				b.WriteString(pick(idx))
			}
		}
		switch r.next() % 4 {
		case 0:
			b.WriteString(" # comment")
		case 1:
			b.WriteString("\r")
		}
		line := []byte(b.String())
		fast, slow := base(), base()
		var ok bool
		var err error
		if isV {
			ok = fast.vertexFast(line)
			err = slow.vertex(line, 1)
		} else {
			ok = fast.faceFast(line)
			err = slow.face(line, 1)
		}
		if !ok {
			if !reflect.DeepEqual(fast.s, base().s) {
				t.Fatalf("%q: fast path refused but changed the scene", line)
			}
			continue
		}
		if isV {
			accepted[0]++
		} else {
			accepted[1]++
		}
		if err != nil {
			t.Fatalf("%q: fast path accepted, general parser: %v", line, err)
		}
		if !reflect.DeepEqual(fast.s, slow.s) {
			t.Fatalf("%q: fast %+v, general %+v", line, fast.s, slow.s)
		}
	}
	if accepted[0] < 100 || accepted[1] < 100 {
		t.Fatalf("fast paths accepted too few statements: %v", accepted)
	}
}
