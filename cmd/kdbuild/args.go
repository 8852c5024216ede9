package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// isUsage reports whether err is a command-line mistake (exit code 2).
func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}

// parseInterspersed parses args with fs, allowing flags after the positional
// arguments (kdbuild scene.obj --json): flags and their values are moved in
// front of the positionals before the standard parser sees them. "--" ends
// the flags; everything after it is positional. It returns the positionals.
// Help requested with -h/--help is returned as flag.ErrHelp.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || isBoolFlag(f) {
			continue // unknown flags are reported by fs.Parse
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	fs.SetOutput(io.Discard)
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{msg: err.Error()}
	}
	return append(fs.Args(), pos...), nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagDefaults returns fs's flag help as text.
func flagDefaults(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	return b.String()
}

// deviceMode returns the --device value to use: the flag when given, else
// $KDBUILD_DEVICE, else auto. Bad values are usage errors.
func deviceMode(e *env, flagValue string) (string, error) {
	v, from := flagValue, "--device"
	if v == "" {
		v, from = e.getenv("KDBUILD_DEVICE"), "$KDBUILD_DEVICE"
	}
	v = strings.ToLower(strings.TrimSpace(v))
	switch v {
	case "":
		return "auto", nil
	case "auto", "cpu", "gpu":
		return v, nil
	}
	return "", usagef("%s: unknown device %q (want auto, cpu or gpu)", from, v)
}

// parseSizes reads a ladder of sizes given as powers of two: "10..28"
// (every exponent in the range), "16" or "10,16,20". It returns element counts.
func parseSizes(s string) ([]int, error) {
	var exps []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "..")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, usagef("--sizes %q: want exponents of two such as 10..28 or 10,16,20", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, usagef("--sizes %q: want exponents of two such as 10..28 or 10,16,20", s)
			}
		}
		if a < 0 || b > 30 || a > b {
			return nil, usagef("--sizes %q: exponents must satisfy 0 <= lo <= hi <= 30", s)
		}
		for k := a; k <= b; k++ {
			exps = append(exps, k)
		}
	}
	sizes := make([]int, len(exps))
	for i, k := range exps {
		sizes[i] = 1 << k
	}
	return sizes, nil
}
