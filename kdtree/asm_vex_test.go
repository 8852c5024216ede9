package kdtree

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	vecReg = regexp.MustCompile(`\b[XY]([0-9]|1[0-5])\b`)
	ymmReg = regexp.MustCompile(`\bY([0-9]|1[0-5])\b`)
)

// asmInstr is one instruction line of a Go assembly file.
type asmInstr struct {
	line     int
	mnemonic string
	operands string
}

// asmFuncs splits a Go assembly file into its TEXT blocks' instructions,
// comments, labels and directives left out.
func asmFuncs(src string) [][]asmInstr {
	var funcs [][]asmInstr
	for i, l := range strings.Split(src, "\n") {
		if c := strings.Index(l, "//"); c >= 0 {
			l = l[:c]
		}
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "TEXT ") {
			funcs = append(funcs, nil)
			continue
		}
		if l == "" || strings.HasSuffix(l, ":") || strings.HasPrefix(l, "#") || len(funcs) == 0 {
			continue
		}
		mn, ops, _ := strings.Cut(l, " ")
		last := len(funcs) - 1
		funcs[last] = append(funcs[last], asmInstr{i + 1, mn, ops})
	}
	return funcs
}

// vexProblems lists, for one assembly file, the places that mix 256-bit
// AVX with legacy SSE: in a function that uses a YMM register, an
// instruction on an X or Y register without the VEX encoding (MOVL AX, X4
// rather than VMOVD AX, X4), and a RET whose last vector instruction
// before it is not VZEROUPPER. Zen 2 and Zen 3 take a fault of about 100
// cycles at each such change between the two encodings while the upper
// halves hold data, and the Go code around these functions is SSE.
func vexProblems(src string) []string {
	var out []string
	for _, fn := range asmFuncs(src) {
		ymm := false
		for _, in := range fn {
			ymm = ymm || ymmReg.MatchString(in.operands)
		}
		if !ymm {
			continue
		}
		lastVec := ""
		for _, in := range fn {
			vec := vecReg.MatchString(in.operands)
			switch {
			case vec && !strings.HasPrefix(in.mnemonic, "V"):
				out = append(out, fmt.Sprintf("line %d: %s is SSE in a function that uses YMM registers", in.line, in.mnemonic))
			case in.mnemonic == "RET" && lastVec != "VZEROUPPER":
				out = append(out, fmt.Sprintf("line %d: RET without VZEROUPPER after the last vector instruction", in.line))
			}
			if vec || in.mnemonic == "VZEROUPPER" {
				lastVec = in.mnemonic
			}
		}
	}
	return out
}

// TestAsmFilesVEX holds the project's amd64 assembly (this package's and
// scan's) to vexProblems' rules.
func TestAsmFilesVEX(t *testing.T) {
	files, err := filepath.Glob("*.s")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join("..", "scan", "*.s"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found %d assembly files, want the kdtree and scan ones: %v", len(files), files)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range vexProblems(string(src)) {
			t.Errorf("%s %s", f, p)
		}
	}
}

func TestVexProblems(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int
	}{
		{"clean", "TEXT ·f(SB), $0\n\tVMOVD AX, X4\n\tVPBROADCASTD X4, Y4\n\tVZEROUPPER\n\tMOVL AX, ret+8(FP)\n\tRET\n", 0},
		{"sse after ymm", "TEXT ·f(SB), $0\n\tVMOVUPS (SI), Y0\n\tMOVL AX, X4 // legacy\n\tVZEROUPPER\n\tRET\n", 1},
		{"no vzeroupper", "TEXT ·f(SB), $0\n\tVMOVUPS (SI), Y0\n\tVMOVUPS Y0, (DI)\n\tRET\n", 1},
		{"second exit", "TEXT ·f(SB), $0\n\tVMOVUPS (SI), Y0\n\tJEQ out\n\tVZEROUPPER\n\tRET\nout:\n\tVMOVUPS Y0, (DI)\n\tRET\n", 1},
		{"xmm only", "TEXT ·f(SB), $0\n\tMOVSS (SI), X0\n\tVADDSS X0, X1, X2\n\tRET\n", 0},
		{"per function", "TEXT ·f(SB), $0\n\tVMOVUPS (SI), Y0\n\tVZEROUPPER\n\tRET\nTEXT ·g(SB), $0\n\tMOVSS (SI), X0\n\tRET\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := vexProblems(c.src); len(got) != c.want {
				t.Errorf("%d problems, want %d: %q", len(got), c.want, got)
			}
		})
	}
}
