package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadProgressOnlyOnTerminalAndWhenSlow(t *testing.T) {
	data := strings.Repeat("v 0 0 0\n", 1000)
	cases := []struct {
		name       string
		tty, quiet bool
		slow       bool
		wantBar    bool
	}{
		{"not a terminal", false, false, true, false},
		{"quiet", true, true, true, false},
		{"quick load", true, false, false, false},
		{"slow load on a terminal", true, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			e := &env{stderr: &stderr, tty: c.tty}
			p := newLoadProgress(e, c.quiet, strings.NewReader(data), int64(len(data)), "x.obj")
			if c.slow {
				p.start = time.Now().Add(-time.Second)
			}
			got, err := io.ReadAll(p)
			require.NoError(t, err)
			p.done()
			assert.Equal(t, data, string(got), "the reader passes bytes through")
			assert.Equal(t, int64(len(data)), p.n)
			assert.Equal(t, c.wantBar, strings.Contains(stderr.String(), "loading x.obj"), "stderr: %q", stderr.String())
		})
	}
}

func TestLevelBar(t *testing.T) {
	var stderr bytes.Buffer
	assert.Nil(t, newLevelBar(&env{stderr: &stderr, tty: false}, false), "no bar without a terminal")
	assert.Nil(t, newLevelBar(&env{stderr: &stderr, tty: true}, true), "no bar when quiet")
	var nilBar *levelBar
	nilBar.begin()
	nilBar.update(1, 2) // a nil bar is a valid "no progress"
	nilBar.done()

	l := newLevelBar(&env{stderr: &stderr, tty: true}, false)
	require.NotNil(t, l)
	l.begin()
	l.update(0, 1)
	assert.Empty(t, stderr.String(), "a quick build shows nothing")
	l.start = time.Now().Add(-time.Second)
	l.update(7, 123)
	l.done()
	assert.Contains(t, stderr.String(), "level 7, 123 active nodes")
}

func TestTextWarningsAreCapped(t *testing.T) {
	r := &report{Scene: sceneJSON{Format: "obj"}}
	for i := 0; i < maxTextWarnings+5; i++ {
		r.Warnings = append(r.Warnings, "w"+itoa(i))
	}
	var out bytes.Buffer
	writeText(&out, r, "")
	assert.Equal(t, maxTextWarnings+1, strings.Count(out.String(), "warning "))
	assert.Contains(t, out.String(), "... and 5 more")
	assert.NotContains(t, out.String(), "w"+itoa(maxTextWarnings))
}
