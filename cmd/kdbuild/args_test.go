package main

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInterspersed(t *testing.T) {
	cases := []struct {
		args     []string
		pos      []string
		json     bool
		device   string
		bins     int
		bonus    float64
		errUsage bool
	}{
		{args: nil, pos: []string{}},
		{args: []string{"a.obj"}, pos: []string{"a.obj"}},
		{args: []string{"a.obj", "--json"}, pos: []string{"a.obj"}, json: true},
		{args: []string{"--device", "cpu", "a.obj", "--bins", "8"}, pos: []string{"a.obj"}, device: "cpu", bins: 8},
		{args: []string{"a.obj", "--device=gpu", "-json"}, pos: []string{"a.obj"}, device: "gpu", json: true},
		{args: []string{"--empty-bonus", "-0.5", "a.obj"}, pos: []string{"a.obj"}, bonus: -0.5},
		{args: []string{"--", "--json"}, pos: []string{"--json"}},
		{args: []string{"a.obj", "--", "-b.obj"}, pos: []string{"a.obj", "-b.obj"}},
		{args: []string{"-"}, pos: []string{"-"}},
		{args: []string{"a.obj", "b.obj", "--json"}, pos: []string{"a.obj", "b.obj"}, json: true},
		{args: []string{"--nope"}, errUsage: true},
		{args: []string{"a.obj", "--bins"}, errUsage: true},
		{args: []string{"--json=maybe"}, errUsage: true},
	}
	for _, c := range cases {
		var f sceneFlags
		fs := newSceneFlagSet(&f)
		pos, err := parseInterspersed(fs, c.args)
		if c.errUsage {
			assert.True(t, isUsage(err), "%v: err %v", c.args, err)
			continue
		}
		require.NoError(t, err, "%v", c.args)
		if len(c.pos) == 0 {
			assert.Empty(t, pos, "%v", c.args)
		} else {
			assert.Equal(t, c.pos, pos, "%v", c.args)
		}
		assert.Equal(t, c.json, f.json, "%v", c.args)
		assert.Equal(t, c.device, f.device, "%v", c.args)
		assert.Equal(t, c.bins, f.builder.bins, "%v", c.args)
		assert.Equal(t, c.bonus, f.builder.emptyBonus, "%v", c.args)
	}
}

func TestHelpIsNotAUsageError(t *testing.T) {
	var f sceneFlags
	_, err := parseInterspersed(newSceneFlagSet(&f), []string{"a.obj", "-h"})
	assert.ErrorIs(t, err, flag.ErrHelp)
}

func TestParseSizes(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "0", want: []int{1}},
		{in: "10..12", want: []int{1 << 10, 1 << 11, 1 << 12}},
		{in: "5,7", want: []int{32, 128}},
		{in: " 3 .. 3 , 30", want: []int{8, 1 << 30}},
		{in: "12..10", bad: true},
		{in: "31", bad: true},
		{in: "-1", bad: true},
		{in: "", bad: true},
		{in: "1..", bad: true},
		{in: "a..b", bad: true},
	}
	for _, c := range cases {
		got, err := parseSizes(c.in)
		if c.bad {
			assert.True(t, isUsage(err), "%q: %v", c.in, err)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestDeviceMode(t *testing.T) {
	cases := []struct {
		flag, env, want string
		bad             bool
	}{
		{"", "", "auto", false},
		{"", "cpu", "cpu", false},
		{"", "GPU", "gpu", false},
		{"cpu", "gpu", "cpu", false},
		{"auto", "bogus", "auto", false},
		{"", "bogus", "", true},
		{"cuda", "", "", true},
	}
	for _, c := range cases {
		e := &env{getenv: func(string) string { return c.env }}
		got, err := deviceMode(e, c.flag)
		if c.bad {
			assert.True(t, isUsage(err), "%+v: %v", c, err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%+v", c)
	}
}

func TestCommas(t *testing.T) {
	cases := map[int]string{0: "0", 1: "1", 999: "999", 1000: "1,000", 69451: "69,451", 1234567: "1,234,567", -1000: "-1,000", -12: "-12"}
	for n, want := range cases {
		assert.Equal(t, want, commas(n), "%d", n)
	}
}

func TestSizeText(t *testing.T) {
	cases := map[int]string{1: "2^0", 2: "2^1", 1 << 28: "2^28", 3: "3", 1000: "1,000", (1 << 20) + 1: "1,048,577"}
	for n, want := range cases {
		assert.Equal(t, want, sizeText(n), "%d", n)
	}
}
