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

// asmInstr is one instruction of a Go assembly file.
type asmInstr struct {
	line     int
	mnemonic string
	operands string
}

// asmMacro is a #define with parameters and instructions.
type asmMacro struct {
	params []string
	body   []asmInstr
}

var macroHead = regexp.MustCompile(`^#define\s+(\w+)(?:\(([^)]*)\))?`)

// asmFuncs splits a Go assembly file into its TEXT blocks' instructions,
// with the #define macros they call expanded (their arguments put in) and
// comments, labels and directives left out.
func asmFuncs(src string) [][]asmInstr {
	var funcs [][]asmInstr
	macros := map[string]*asmMacro{}
	var def *asmMacro // the macro whose lines these are
	for i, l := range strings.Split(src, "\n") {
		if c := strings.Index(l, "//"); c >= 0 {
			l = l[:c]
		}
		l = strings.TrimSpace(l)
		more := strings.HasSuffix(l, "\\")
		l = strings.TrimSpace(strings.TrimSuffix(l, "\\"))
		if m := macroHead.FindStringSubmatch(l); m != nil {
			def = &asmMacro{}
			for _, p := range strings.Split(m[2], ",") {
				def.params = append(def.params, strings.TrimSpace(p))
			}
			macros[m[1]] = def
			l = strings.TrimSpace(l[len(m[0]):])
		}
		var ins []asmInstr
		for _, st := range strings.Split(l, ";") {
			st = strings.TrimSpace(st)
			if st == "" || strings.HasSuffix(st, ":") || strings.HasPrefix(st, "#") {
				continue
			}
			mn, ops, _ := strings.Cut(st, " ")
			ins = append(ins, asmInstr{i + 1, mn, strings.TrimSpace(ops)})
		}
		switch {
		case def != nil:
			def.body = append(def.body, ins...)
			if !more {
				def = nil
			}
		case strings.HasPrefix(l, "TEXT "):
			funcs = append(funcs, nil)
		case len(funcs) > 0:
			last := len(funcs) - 1
			for _, in := range ins {
				funcs[last] = append(funcs[last], expand(in, macros)...)
			}
		}
	}
	return funcs
}

// expand returns in, or the body of the macro it calls with the call's
// arguments in place of the parameters, at the call's line.
func expand(in asmInstr, macros map[string]*asmMacro) []asmInstr {
	name, args, _ := strings.Cut(in.mnemonic+" "+in.operands, "(")
	m := macros[strings.TrimSpace(name)]
	if m == nil {
		return []asmInstr{in}
	}
	vals := strings.Split(strings.TrimSuffix(strings.TrimSpace(args), ")"), ",")
	var out []asmInstr
	for _, b := range m.body {
		ops := b.operands
		for j, p := range m.params {
			if j < len(vals) && p != "" {
				ops = regexp.MustCompile(`\b`+p+`\b`).ReplaceAllString(ops, strings.TrimSpace(vals[j]))
			}
		}
		out = append(out, asmInstr{in.line, b.mnemonic, ops})
	}
	return out
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
		{"macro", "#define M(R) \\\n\tVMOVUPS (SI), R; \\\n\tMOVL AX, X1\nTEXT ·f(SB), $0\n\tM(Y0)\n\tVZEROUPPER\n\tRET\n", 1},
		{"macro argument", "#define M(R) \\\n\tMOVSS (SI), R\nTEXT ·f(SB), $0\n\tVMOVUPS (SI), Y0\n\tM(X2)\n\tVZEROUPPER\n\tRET\n", 1},
		{"macro last", "#define M(R) \\\n\tVMOVUPS R, (DI)\nTEXT ·f(SB), $0\n\tVMOVUPS (SI), Y0\n\tVZEROUPPER\n\tM(Y0)\n\tRET\n", 1},
		{"per function", "TEXT ·f(SB), $0\n\tVMOVUPS (SI), Y0\n\tVZEROUPPER\n\tRET\nTEXT ·g(SB), $0\n\tMOVSS (SI), X0\n\tRET\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := vexProblems(c.src); len(got) != c.want {
				t.Errorf("%d problems, want %d: %q", len(got), c.want, got)
			}
		})
	}
}
