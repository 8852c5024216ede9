package scenes

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// checker is a small stand-in for testify's assert/require (testify's yaml
// dependency is missing from go.sum): assert reports and goes on, require
// stops the test.
type checker struct{ fatal bool }

var (
	assert  = checker{false}
	require = checker{true}
)

func (c checker) fail(t testing.TB, what string, msg []any) bool {
	t.Helper()
	if len(msg) > 0 {
		if f, ok := msg[0].(string); ok {
			what += ": " + fmt.Sprintf(f, msg[1:]...)
		}
	}
	if c.fatal {
		t.Fatal(what)
	}
	t.Error(what)
	return false
}

func (c checker) Equal(t testing.TB, want, got any, msg ...any) bool {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		return c.fail(t, fmt.Sprintf("want %v, got %v", want, got), msg)
	}
	return true
}

func (c checker) Len(t testing.TB, x any, n int, msg ...any) bool {
	t.Helper()
	if l := reflect.ValueOf(x).Len(); l != n {
		return c.fail(t, fmt.Sprintf("len %d, want %d", l, n), msg)
	}
	return true
}

func (c checker) NoError(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err != nil {
		return c.fail(t, fmt.Sprintf("unexpected error: %v", err), msg)
	}
	return true
}

func (c checker) Error(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err == nil {
		return c.fail(t, "expected an error", msg)
	}
	return true
}

func (c checker) True(t testing.TB, ok bool, msg ...any) bool {
	t.Helper()
	if !ok {
		return c.fail(t, "expected true", msg)
	}
	return true
}

func (c checker) Nil(t testing.TB, x any, msg ...any) bool {
	t.Helper()
	if x != nil && !reflect.ValueOf(x).IsNil() {
		return c.fail(t, fmt.Sprintf("expected nil, got %v", x), msg)
	}
	return true
}

func (c checker) Contains(t testing.TB, s, sub string, msg ...any) bool {
	t.Helper()
	if !strings.Contains(s, sub) {
		return c.fail(t, fmt.Sprintf("%q does not contain %q", s, sub), msg)
	}
	return true
}
