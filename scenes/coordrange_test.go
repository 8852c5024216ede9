package scenes

import (
	"strings"
	"testing"
)

func TestRangeWarning(t *testing.T) {
	for _, c := range []struct {
		name, in string
		warn     string
	}{
		{"unit", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", ""},
		{"at the top", "v 0 0 0\nv 1099511627776 0 0\nv 0 1 0\nf 1 2 3\n", ""},
		{"above", "v 0 0 0\nv 1e16 0 0\nv 0 1 0\nf 1 2 3\n", "overflow"},
		{"at the bottom", "v 0 0 0\nv 2.3283064365386963e-10 0 0\nv 0 2.3283064365386963e-10 0\nf 1 2 3\n", ""},
		{"below", "v 0 0 0\nv 1e-14 0 0\nv 0 1e-14 0\nf 1 2 3\n", "underflow"},
		{"far but large", "v 1e6 1e6 1e6\nv 1e6 2e6 1e6\nv 2e6 1e6 1e6\nf 1 2 3\n", ""},
		{"one point", "v 1 1 1\nf 1 1 1\n", ""},
	} {
		s, err := LoadOBJ(strings.NewReader(c.in), c.name)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(s.Warnings, "\n")
		if c.warn == "" && got != "" || !strings.Contains(got, c.warn) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.warn)
		}
	}
}
