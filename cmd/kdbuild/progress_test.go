package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kdbuild/kdbuild/kdtree"
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
			if c.wantBar {
				// The rate is over the whole load (at least a second
				// here), never bytes over the bar's first instant.
				assert.Contains(t, stderr.String(), " 0.0 MB/s", "stderr: %q", stderr.String())
			}
		})
	}
}

func TestLevelBar(t *testing.T) {
	var stderr bytes.Buffer
	assert.Nil(t, newLevelBar(&env{stderr: &stderr, tty: false}, false), "no bar without a terminal")
	assert.Nil(t, newLevelBar(&env{stderr: &stderr, tty: true}, true), "no bar when quiet")
	var nilBar *levelBar
	nilBar.begin()
	nilBar.update(kdtree.Progress{Phase: "large", Level: 1, Nodes: 2}) // a nil bar is a valid "no progress"
	nilBar.done()

	l := newLevelBar(&env{stderr: &stderr, tty: true}, false)
	require.NotNil(t, l)
	l.begin()
	l.update(kdtree.Progress{Phase: "prepare"})
	assert.Empty(t, stderr.String(), "a quick build shows nothing")
	l.start = time.Now().Add(-time.Second)
	l.update(kdtree.Progress{Phase: "large", Fraction: 0.25, Level: 7, Nodes: 123})
	l.update(kdtree.Progress{Phase: "small", Fraction: 0.5, Nodes: 4567})
	time.Sleep(60 * time.Millisecond) // past the bar's throttle
	l.update(kdtree.Progress{Phase: "layout", Fraction: 0.97})
	l.done()
	out := stderr.String()
	assert.Contains(t, out, "level 7, 123 active nodes")
	assert.Contains(t, out, "25%")
	assert.Contains(t, out, "97%")
	assert.Contains(t, out, "building: layout")

	// Without a fraction: a spinner, never a bar stuck at 0%.
	stderr.Reset()
	l.begin()
	l.start = time.Now().Add(-time.Second)
	l.update(kdtree.Progress{Phase: "large", Level: 3, Nodes: 8})
	l.done()
	assert.Contains(t, stderr.String(), "level 3, 8 active nodes")
	assert.NotContains(t, stderr.String(), "0%")
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
