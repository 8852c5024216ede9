package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

const (
	launchPath = "kernels/launch/kernels_gen.go"
	driverH    = "kernels/cuda/driver.h"
)

// param is one kernel parameter: its C name and type, and the Go field
// that carries it.
type param struct {
	name, ctype   string
	field, gotype string
}

// kernel is one extern "C" __global__ function of the image.
type kernel struct {
	name   string
	params []param
}

// goName turns a C identifier into an exported Go one: scan_copy_u32 is
// ScanCopyU32, tkeyNext is TkeyNext.
func goName(c string) string {
	var b strings.Builder
	up := true
	for _, r := range c {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scalarTypes maps the C scalar types a kernel may take to the Go types of
// the same size and signedness that cuda.Context.Launch accepts (never Go
// int or uint).
var scalarTypes = map[string]string{
	"unsigned int": "uint32", "unsigned": "uint32", "int": "int32",
	"unsigned long long": "uint64", "unsigned long long int": "uint64",
	"long long": "int64", "long long int": "int64",
	"float": "float32", "double": "float64",
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseParam parses C parameter i's declaration ("const float *nbox"). An
// unnamed parameter (one the kernel does not read) becomes field Unused<i>.
func parseParam(decl string, i int) (param, error) {
	decl = strings.TrimSpace(strings.ReplaceAll(decl, "*", " * "))
	f := strings.Fields(decl)
	if len(f) == 0 {
		return param{}, fmt.Errorf("empty parameter %d", i)
	}
	if last := f[len(f)-1]; len(f) == 1 || last == "*" || scalarTypes[strings.Join(f, " ")] != "" || !identRe.MatchString(last) || last == "int" || last == "float" || last == "double" || last == "unsigned" {
		if !identRe.MatchString(last) && last != "*" {
			return param{}, fmt.Errorf("parameter %q: cannot parse", decl)
		}
		f = append(f, fmt.Sprintf("unused%d", i))
	}
	p := param{name: f[len(f)-1], field: goName(f[len(f)-1])}
	var base []string
	ptr := 0
	for _, t := range f[:len(f)-1] {
		switch t {
		case "*":
			ptr++
		case "const", "volatile", "__restrict__", "__restrict":
		default:
			base = append(base, t)
		}
	}
	p.ctype = strings.Join(f[:len(f)-1], " ")
	p.ctype = strings.ReplaceAll(p.ctype, " *", "*")
	switch {
	case ptr > 0:
		p.gotype = "cuda.DevPtr"
	case scalarTypes[strings.Join(base, " ")] != "":
		p.gotype = scalarTypes[strings.Join(base, " ")]
	default:
		return param{}, fmt.Errorf("parameter %q: no Go type for C type %q", decl, strings.Join(base, " "))
	}
	return p, nil
}

// skipSpace returns the index of the first non-space byte of s at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// closing returns the index just past the parenthesis that closes the one
// at s[i].
func closing(s string, i int) (int, error) {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced parentheses at %.40q", s[i:])
}

// parseKernels finds every kernel of preprocessed CUDA source: extern "C",
// then __attribute__((global)) (what __global__ becomes), void, any more
// attributes (__launch_bounds__), the name and the parameter list.
func parseKernels(src string) ([]kernel, error) {
	var lines []string
	for _, l := range strings.Split(src, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	s := strings.Join(lines, "\n")
	const ext, glob, attr = `extern "C"`, "__attribute__((global))", "__attribute__"
	var ks []kernel
	seen := map[string]bool{}
	for i := strings.Index(s, ext); i >= 0; {
		j := skipSpace(s, i+len(ext))
		next := func() { i = indexFrom(s, ext, j) }
		if !strings.HasPrefix(s[j:], glob) {
			next()
			continue
		}
		j = skipSpace(s, j+len(glob))
		if !strings.HasPrefix(s[j:], "void") {
			return nil, fmt.Errorf("a kernel that does not return void at %.60q", s[j:])
		}
		j = skipSpace(s, j+len("void"))
		for strings.HasPrefix(s[j:], attr) {
			e, err := closing(s, skipSpace(s, j+len(attr)))
			if err != nil {
				return nil, err
			}
			j = skipSpace(s, e)
		}
		k := j
		for k < len(s) && (s[k] == '_' || unicode.IsLetter(rune(s[k])) || unicode.IsDigit(rune(s[k]))) {
			k++
		}
		name := s[j:k]
		k = skipSpace(s, k)
		if name == "" || k >= len(s) || s[k] != '(' {
			return nil, fmt.Errorf("no kernel name and parameters at %.60q", s[j:])
		}
		e, err := closing(s, k)
		if err != nil {
			return nil, err
		}
		kn := kernel{name: name}
		if list := strings.TrimSpace(s[k+1 : e-1]); list != "" && list != "void" {
			for i, d := range strings.Split(list, ",") {
				p, err := parseParam(d, i)
				if err != nil {
					return nil, fmt.Errorf("kernel %s: %w", name, err)
				}
				kn.params = append(kn.params, p)
			}
		}
		if !seen[name] {
			seen[name] = true
			ks = append(ks, kn)
		}
		j = e
		next()
	}
	sort.Slice(ks, func(a, b int) bool { return ks[a].name < ks[b].name })
	return ks, nil
}

func indexFrom(s, sub string, from int) int {
	if k := strings.Index(s[from:], sub); k >= 0 {
		return from + k
	}
	return -1
}

// checkKernels refuses what the launch code could not pass: more than
// maxArgs parameters, two parameters or two kernels with one Go name.
func checkKernels(ks []kernel, maxArgs int) error {
	names := map[string]string{}
	for _, k := range ks {
		if len(k.params) > maxArgs {
			return fmt.Errorf("kernel %s has %d parameters; a launch passes at most %d (KD_MAX_ARGS): pass a struct of them", k.name, len(k.params), maxArgs)
		}
		g := goName(k.name)
		if o, ok := names[g]; ok {
			return fmt.Errorf("kernels %s and %s both make Go name %s", o, k.name, g)
		}
		names[g] = k.name
		fields := map[string]string{}
		for _, p := range k.params {
			if o, ok := fields[p.field]; ok {
				return fmt.Errorf("kernel %s: parameters %s and %s both make field %s", k.name, o, p.name, p.field)
			}
			fields[p.field] = p.name
		}
	}
	return nil
}

// signature is the Go shape of a kernel's arguments: kernels of one shape
// share one struct type.
func signature(k kernel) string {
	var b strings.Builder
	for _, p := range k.params {
		fmt.Fprintf(&b, "%s %s;", p.field, p.gotype)
	}
	return b.String()
}

// launchSource is package launch's generated file: per kernel an argument
// struct (a type alias where an earlier kernel has the same fields) and a
// Kernel value, and the table Named looks names up in.
func launchSource(ks []kernel) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by kernels/gen from the kernels' signatures; DO NOT EDIT.\n\n")
	b.WriteString("package launch\n\nimport \"github.com/kdbuild/kdbuild/kernels/cuda\"\n\n")
	canon := map[string]string{}
	for _, k := range ks {
		g := goName(k.name)
		var sig []string
		for _, p := range k.params {
			sig = append(sig, p.ctype+" "+p.name)
		}
		fmt.Fprintf(&b, "// %s launches %s(%s).\nvar %s = Kernel[%sArgs]{name: %q}\n\n", g, k.name, strings.Join(sig, ", "), g, g, k.name)
		if c, ok := canon[signature(k)]; ok {
			fmt.Fprintf(&b, "// %sArgs are %s's arguments, the same fields as %sArgs.\ntype %sArgs = %sArgs\n\n", g, k.name, c, g, c)
			continue
		}
		canon[signature(k)] = g
		fmt.Fprintf(&b, "// %sArgs are %s's arguments, named like its parameters.\ntype %sArgs struct {\n", g, k.name, g)
		for _, p := range k.params {
			fmt.Fprintf(&b, "\t%s %s // %s\n", p.field, p.gotype, p.ctype)
		}
		b.WriteString("}\n\n")
		fmt.Fprintf(&b, "func (a %sArgs) args() []any {\n\treturn []any{", g)
		for i, p := range k.params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("a." + p.field)
		}
		b.WriteString("}\n}\n\n")
	}
	b.WriteString("// byName maps each kernel's name to its Kernel value.\nvar byName = map[string]any{\n")
	for _, k := range ks {
		fmt.Fprintf(&b, "\t%q: %s,\n", k.name, goName(k.name))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

var maxArgsRe = regexp.MustCompile(`(?m)^#define KD_MAX_ARGS (\d+)`)

// maxArgs reads KD_MAX_ARGS, the most arguments a launch passes.
func maxArgs() (int, error) {
	h, err := os.ReadFile(driverH)
	if err != nil {
		return 0, err
	}
	m := maxArgsRe.FindSubmatch(h)
	if m == nil {
		return 0, fmt.Errorf("%s: no #define KD_MAX_ARGS", driverH)
	}
	var n int
	fmt.Sscan(string(m[1]), &n)
	return n, nil
}

// writeLaunch preprocesses the unity file with nvcc -E and writes package
// launch's generated file from the kernels' signatures.
func writeLaunch(nvcc string) error {
	out, err := exec.Command(nvcc, "-E", "-x", "cu", "-std=c++17", unityPath).Output()
	if err != nil {
		return fmt.Errorf("%s -E %s: %w", nvcc, unityPath, err)
	}
	ks, err := parseKernels(string(out))
	if err != nil {
		return err
	}
	if len(ks) == 0 {
		return fmt.Errorf("no kernels found in %s", unityPath)
	}
	n, err := maxArgs()
	if err != nil {
		return err
	}
	if err := checkKernels(ks, n); err != nil {
		return err
	}
	src, err := launchSource(ks)
	if err != nil {
		return err
	}
	if err := os.MkdirAll("kernels/launch", 0o755); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %s: %d kernels\n", launchPath, len(ks))
	return writeFile(launchPath, src)
}
