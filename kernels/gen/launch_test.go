package main

import (
	"os"
	"strings"
	"testing"
)

func TestParseKernels(t *testing.T) {
	src := `# 1 "x.cu"
extern "C" {
int not_a_kernel(int);
}
extern "C"
# 3 "x.cu" 3 4
  __attribute__((global))
# 3 "x.cu"
  void __attribute__((launch_bounds(
# 4 "x.cu"
 256, 3
 ))) b_kernel(const float *nbox, unsigned int nodes, int depth,
   unsigned long long *state, unsigned*, float w) { }
extern "C" __attribute__((global)) void a_kernel(void) { }
extern "C" __attribute__((global)) void a_kernel(void) { }
`
	ks, err := parseKernels(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].name != "a_kernel" || ks[1].name != "b_kernel" {
		t.Fatalf("kernels %+v", ks)
	}
	if len(ks[0].params) != 0 {
		t.Errorf("a_kernel params %+v", ks[0].params)
	}
	want := []param{
		{"nbox", "const float*", "Nbox", "cuda.DevPtr"},
		{"nodes", "unsigned int", "Nodes", "uint32"},
		{"depth", "int", "Depth", "int32"},
		{"state", "unsigned long long*", "State", "cuda.DevPtr"},
		{"unused4", "unsigned*", "Unused4", "cuda.DevPtr"},
		{"w", "float", "W", "float32"},
	}
	if len(ks[1].params) != len(want) {
		t.Fatalf("b_kernel params %+v", ks[1].params)
	}
	for i, p := range ks[1].params {
		if p != want[i] {
			t.Errorf("param %d: %+v, want %+v", i, p, want[i])
		}
	}
}

func TestParseParamRefuses(t *testing.T) {
	for _, decl := range []string{"size_t n", "struct Box b", "long n"} {
		if _, err := parseParam(decl, 0); err == nil {
			t.Errorf("%q: no error", decl)
		}
	}
}

func TestCheckKernels(t *testing.T) {
	many := kernel{name: "many"}
	for i := 0; i < 33; i++ {
		many.params = append(many.params, param{name: "p" + strings.Repeat("x", i), field: "P" + strings.Repeat("x", i), gotype: "uint32"})
	}
	cases := []struct {
		name string
		ks   []kernel
		want string
	}{
		{"over the limit", []kernel{many}, "33 parameters"},
		{"field clash", []kernel{{name: "k", params: []param{{name: "n", field: "N"}, {name: "N", field: "N"}}}}, "both make field N"},
		{"name clash", []kernel{{name: "a_b"}, {name: "aB"}}, "both make Go name AB"},
	}
	for _, c := range cases {
		err := checkKernels(c.ks, 32)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if err := checkKernels([]kernel{{name: "ok", params: many.params[:32]}}, 32); err != nil {
		t.Errorf("32 parameters: %v", err)
	}
}

func TestReadConsts(t *testing.T) {
	cs, err := readConsts("../consts")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sharedConst{}
	for _, c := range cs {
		got[c.name] = c
	}
	for name, want := range map[string][2]string{
		"NodeBytes":   {"unsigned int", "8u"},
		"FateSmall":   {"int", "2"},
		"EmptyCutoff": {"float", "2.5e-01f"},
	} {
		if c := got[name]; c.ctype != want[0] || c.value != want[1] {
			t.Errorf("%s: %s %s, want %s %s", name, c.ctype, c.value, want[0], want[1])
		}
	}
}

// TestConstsHeaderCurrent fails when package consts changed since
// kernels/consts_gen.cuh was written (run make kernels).
func TestConstsHeaderCurrent(t *testing.T) {
	cs, err := readConsts("../consts")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../consts_gen.cuh")
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != string(constsHeader(cs)) {
		t.Fatal("kernels/consts_gen.cuh is stale (run make kernels)")
	}
}
