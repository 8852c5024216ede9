package gpubuild

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// KDBUILD_GPU_OFF's names, "all", spaces and empty entries; an unknown
// name is an error that lists the known ones.
func TestParseGPUOff(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Paths
	}{
		{"", 0},
		{"pipeline", PathPipeline},
		{" early-small , device-top,", PathEarlySmall | PathDeviceTop},
		{"queued-prepare,device-small,mapped-log,fused-choose", PathQueuedPrepare | PathDeviceSmall | PathMappedLog | pathFusedChoose},
		{"all", 1<<NumPaths - 1},
		{"pipeline,all", 1<<NumPaths - 1},
	} {
		got, err := parseGPUOff(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{"pipe", "layout", "Pipeline", "pipeline;early-small"} {
		_, err := parseGPUOff(bad)
		require.ErrorContains(t, err, "known: pipeline, queued-prepare", bad)
	}
}

// The paths that need another path are off with it.
func TestGPUConfigDependencies(t *testing.T) {
	c := DefaultConfig()
	require.True(t, c.earlySmall() && c.deviceTop())
	c.Off = PathDeviceSmall
	require.False(t, c.earlySmall() || c.deviceTop())
	c.Off = PathEarlySmall
	require.False(t, c.deviceTop())
	c.Off = PathDeviceTop
	require.True(t, c.earlySmall())
	require.False(t, c.deviceTop())
}
